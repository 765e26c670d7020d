"""Progress bars: drawn on a terminal with rate and ETA, moving per batch; none when stderr
is not a terminal or with --no-progress."""

from __future__ import annotations

import io
import re
import sys

import pytest

from synth.core import progress_enabled
from synthcheck.cli import main
from tests.synthcheck.toy_models import write_toy_suite


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def files(tmp_path, monkeypatch):
    return write_toy_suite(tmp_path, monkeypatch, "prog_model", {"positive": 0.7, "negative": 0.3})


def test_progress_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress_enabled()
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress_enabled() and not progress_enabled(False)


def verify(files, *extra):
    return main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                 "python:prog_model:predict", "--run", str(files / "run"), "--sample", "40",
                 "--batch-size", "8", *extra])


def test_verify_bar_moves_per_batch_with_rate_and_eta(files, monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert verify(files) == 0
    text = term.getvalue()
    counts = [int(n) for n in re.findall(r"verify toy:.*?\| *(\d+)/40 ", text)]
    assert counts[-1] == 40 and len(set(counts)) >= 2, text
    assert "case/s" in text and "<" in text  # rate and ETA
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert verify(files, "--no-progress") == 0
    assert "verify toy" not in quiet.getvalue()


def test_evaluate_bar_per_batch(monkeypatch):
    from discovery import EvaluationConfig, evaluate
    from synth.core import LabelSpace

    calls = []

    class Model:
        name = "m"
        labels = ["negative", "positive"]

        def predict_proba(self, texts):
            calls.append(len(texts))
            return [{"negative": 0.4, "positive": 0.6} for _ in texts]

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    reports = evaluate(LabelSpace.of(["negative", "positive"]),
                       EvaluationConfig.model_validate({"include_reference": False,
                                                        "size": 300}),
                       scorers={"m": Model()})
    assert reports["m"]["n"] == 300 and calls == [256, 44]
    assert "evaluate m: 100%" in term.getvalue() and "300/300" in term.getvalue()


def test_without_a_terminal_long_steps_print_heartbeat_lines(files, monkeypatch, capsys):
    # A log or CI: no bar, but a line every $SYNTHCHECK_HEARTBEAT seconds (0 here: each
    # batch) with count, share, rate and time left; none with --no-progress.
    monkeypatch.setenv("SYNTHCHECK_HEARTBEAT", "0")
    assert verify(files) == 0
    out, err = capsys.readouterr()
    beats = [x for x in out.splitlines() if x.startswith("[verify toy] ")]
    assert re.fullmatch(r"\[verify toy\] 40/40 case \(100\.0%\), [\d.]+ case/s, about 0 s "
                        r"left", beats[-1]), beats
    assert len(beats) >= 2 and "verify toy" not in err
    assert verify(files, "--no-progress") == 0
    assert "[verify toy]" not in capsys.readouterr().out


def test_heartbeat_line_and_interval():
    from synth.core._progress import Heartbeat

    beat = Heartbeat(1024, "generate", "prompt", interval=3600)
    beat.update(128)  # within the interval: silent
    beat.set_postfix(kept=100)
    assert beat.line(60.0) == ("[generate] 128/1,024 prompt (12.5%), 2.1 prompt/s, about "
                               "7 min 00 s left (kept=100)")


def test_quiet_hides_the_libraries_loading_bars_for_the_command(files, monkeypatch):
    # transformers draws "Loading weights" with its own tqdm: off while a -q command (or one
    # without a terminal) runs, back on after it.
    import os

    from transformers.utils import logging as tf_logging

    seen = []
    (files / "peek_model.py").write_text(
        "import os\nfrom transformers.utils import logging\nSEEN = []\n"
        "def predict(texts):\n"
        "    SEEN.append((logging.is_progress_bar_enabled(),\n"
        "                 os.environ.get('HF_HUB_DISABLE_PROGRESS_BARS')))\n"
        "    return [{'positive': 0.7, 'negative': 0.3} for _ in texts]\n")
    import importlib

    peek = importlib.import_module("peek_model")
    tf_logging.enable_progress_bar()
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(sys, "stderr", Terminal())
    for extra in ([], ["-q"]):
        peek.SEEN.clear()
        assert main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                     "python:peek_model:predict", "--run", str(files / "run"), "--sample",
                     "4", *extra]) == 0
        seen.append(peek.SEEN[0])
        assert tf_logging.is_progress_bar_enabled()  # restored after the command
        assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert seen == [(True, None), (False, "1")]
