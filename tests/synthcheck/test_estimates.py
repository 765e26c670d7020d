"""The estimates' cache (``rates.json``) and load-scaled estimates (issues 27 and 28).

A cache that cannot be read, or an entry that is not a sane rate, is ignored with a warning
naming the file, never a traceback and never "about 0 s"; an estimate is this machine's
measured rate scaled by the load now, with its range said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import synthcheck._estimate as estimate
from synthcheck._estimate import REFERENCE_RATES, estimate_line, record_rate

GOOD = {"rate": 20.0, "unit": "prompt", "work": 1000, "seconds": 50.0,
        "measured": "2026-11-27T06:00:00+00:00"}


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(estimate, "_WARNED", set())
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache" / "rates.json"


BAD_ENTRIES = {
    "rate abc": ({**GOOD, "rate": "abc"}, r"rate 'abc' is not a number"),
    "rate '0'": ({**GOOD, "rate": "0"}, r"rate '0' is not a number"),
    "rate nan": ({**GOOD, "rate": "nan"}, r"rate 'nan' is not a number"),
    "rate 1e-320": ({**GOOD, "rate": 1e-320}, r"rate 1e-320 is not a number of items per "
                                              r"second from 0.001 to 1e\+07"),
    "rate -5": ({**GOOD, "rate": -5}, r"rate -5 is not a number"),
    "rate 0": ({**GOOD, "rate": 0}, r"rate 0 is not a number"),
    "measured 12345": ({**GOOD, "measured": 12345}, r"measured 12345 is not a date"),
    "ANSI in unit": ({**GOOD, "unit": "\x1b[31mprompt"}, r"unit '\\x1b\[31mprompt' is not "
                                                         r"'prompt'"),
    "not an object": ([1, 2], r"the entry is list, not an object"),
}


@pytest.mark.parametrize("name", list(BAD_ENTRIES))
def test_a_bad_entry_is_ignored_with_a_warning_naming_the_file(
        name: str, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry, why = BAD_ENTRIES[name]
    cache.write_text(json.dumps({"generate|m": entry}))
    line = estimate_line("generate", "m", 1024)
    err = capsys.readouterr().err
    assert line is not None and "the default run's rate on a 2-core reference machine" in line
    assert "about 0 s" not in line
    assert err.count("warning: ") == 1, err
    import re

    assert re.search(rf"^warning: ignoring the measured rate 'generate\|m': {why}.* "
                     rf"\({re.escape(str(cache))}\): delete that entry", err), err
    assert "\x1b" not in line
    estimate_line("generate", "m", 1024)  # said once per process
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("content, why", [
    (b"{not json", r"cannot be read \(Expecting property name enclosed in double quotes\)"),
    (b"\xff\xfe", r"cannot be read \(UnicodeDecodeError\)"),
    (b"[1, 2]", r"is a JSON list, not an object"),
    (b"[" * 200_000, r"cannot be read \(RecursionError\)"),
])
def test_an_unreadable_cache_is_ignored_and_rewritten(
        content: bytes, why: str, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache.write_bytes(content)
    line = estimate_line("score", "m", 500)
    err = capsys.readouterr().err
    assert line is not None and "reference machine" in line
    import re

    assert re.search(rf"^warning: the estimates' cache {why} \({re.escape(str(cache))}\): "
                     r"delete it", err), err
    record_rate("score", "m", 500, 10.0)  # the next measurement replaces it
    assert json.loads(cache.read_text())["score|m"]["rate"] == 50.0


def test_a_directory_is_left_alone(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache.mkdir()
    line = estimate_line("generate", "m", 100)
    assert line is not None
    assert "warning: the estimates' cache is a directory, not a file (" in capsys.readouterr().err
    record_rate("generate", "m", 1000, 10.0)
    assert cache.is_dir() and not any(cache.iterdir())


def test_the_estimate_is_scaled_by_the_load_with_its_range(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Measured at 20 prompt/s on an otherwise idle 2-core machine (load 2: the run itself).
    cache.write_text(json.dumps({"generate|m": {**GOOD, "load": 2.0, "cores": 2}}))
    idle = estimate_line("generate", "m", 1000)
    assert idle == ("[generate] estimate: 1,000 prompts at 20.0 prompt/s = about 50 s (50 s to "
                    "1 min 15 s); rate 20.0 prompt/s (measured on this machine 2026-11-27 at a "
                    "load of 2.0), scaled by the load now, 0.0 on 2 core(s)")
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))  # 8 other busy threads
    busy = estimate_line("generate", "m", 1000)
    assert busy is not None and busy.startswith(
        "[generate] estimate: 1,000 prompts at 4.0 prompt/s = about 4 min 10 s (50 s to "
        "6 min 15 s); ")
    assert busy.endswith("scaled by the load now, 8.0 on 2 core(s)")


def test_recorded_rates_keep_the_load(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 0.0, 0.0))
    record_rate("focus", "m", 480, 40.0)
    rec = json.loads(cache.read_text())["focus|m"]
    assert rec["rate"] == 12.0 and rec["load"] == 3.5 and rec["cores"] == 2
    assert rec["unit"] == REFERENCE_RATES["focus"][1]
