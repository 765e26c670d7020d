"""Atomic writes: output files get the permissions a plain open() would give them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from synth.core import append_jsonl, write_json_atomic, write_jsonl
from synth.core._io import atomic_open, current_umask

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)

    def set_umask(value: int) -> None:
        os.umask(value)

    yield set_umask
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600),
                                                (0o002, 0o664)], ids=["022", "077", "002"])
def test_atomic_writes_honour_umask(tmp_path: Path, umask, mask: int, expected: int) -> None:
    umask(mask)
    assert current_umask() == mask
    write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    write_jsonl(tmp_path / "scores" / "task.jsonl", [{"id": "1"}])
    with atomic_open(tmp_path / "model.bin", "wb") as handle:
        handle.write(b"\0")
    append_jsonl(tmp_path / "review" / "decisions.jsonl", {"id": "1"})
    with open(tmp_path / "plain.txt", "w") as handle:
        handle.write("x")
    for name in ["manifest.json", "scores/task.jsonl", "model.bin",
                 "review/decisions.jsonl", "plain.txt"]:
        assert _mode(tmp_path / name) == expected, name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_rewrite_keeps_umask_mode_and_failed_write_leaves_file(tmp_path: Path, umask) -> None:
    umask(0o022)
    target = tmp_path / "hard.jsonl"
    write_jsonl(target, [{"id": "a"}])
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("partial")
        raise RuntimeError("boom")
    assert target.read_text(encoding="utf-8") == '{"id": "a"}\n'
    assert _mode(target) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["hard.jsonl"]


def test_current_umask_without_proc(monkeypatch: pytest.MonkeyPatch, umask) -> None:
    umask(0o027)
    real_open = open

    def no_proc(file, *args, **kwargs):
        if str(file) == "/proc/self/status":
            raise FileNotFoundError(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_proc)
    assert current_umask() == 0o027
    umask(0o022)
    assert current_umask() == 0o022
