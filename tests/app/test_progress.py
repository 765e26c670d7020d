"""Progress bars: drawn on a terminal with rate and ETA, moving per batch; none when stderr
is not a terminal or with --no-progress."""

from __future__ import annotations

import io
import re
import sys

import pytest
from toy_models import write_toy_suite

from synth.core import progress_enabled
from synthcheck.cli import main


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
