"""Honest progress (issue 27): without a terminal, a long step prints a heartbeat line on a
timer, also while one batch is being scored (`evaluate` once printed nothing for seven
minutes: its heartbeat only printed when a chunk finished); a bad $SYNTHCHECK_HEARTBEAT is a
warning, never a traceback."""

from __future__ import annotations

import io
import re
import sys
import time

import pytest

import synth.core._progress as progress
from synth.core._progress import Heartbeat, heartbeat_interval


def test_a_step_stuck_on_one_batch_still_beats(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from discovery import EvaluationConfig, evaluate
    from synth.core import LabelSpace

    class SlowModel:
        name = "slow"
        labels = ["negative", "positive"]

        def predict_proba(self, texts: list[str]) -> list[dict[str, float]]:
            time.sleep(1.2)  # one long batch: no batch finishes for a while
            return [{"negative": 0.4, "positive": 0.6} for _ in texts]

    monkeypatch.setenv("SYNTHCHECK_HEARTBEAT", "0.3")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a log, not a terminal
    evaluate(LabelSpace.of(["negative", "positive"]),
             EvaluationConfig.model_validate({"include_reference": False, "size": 100}),
             scorers={"slow": SlowModel()})
    out = capsys.readouterr().out
    beats = [x for x in out.splitlines() if x.startswith("[evaluate slow] 0/100 sent")]
    assert len(beats) >= 2, out  # lines while the only batch was still being scored
    assert re.search(r"\(on a batch for \d+ s\)$", beats[-1]), beats


def test_the_timer_stops_when_the_step_ends(capsys: pytest.CaptureFixture[str]) -> None:
    with Heartbeat(10, "t", "it", interval=0.1) as beat:
        time.sleep(0.35)
        beat.update(10)
    n = len(capsys.readouterr().out.splitlines())
    assert n >= 2
    time.sleep(0.35)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("value", ["abc", "-5", "nan", "inf", "1e9"])
def test_a_bad_heartbeat_variable_is_a_warning(value: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTHCHECK_HEARTBEAT", value)
    monkeypatch.setattr(progress, "_WARNED_ENV", set())
    assert heartbeat_interval() == 30.0
    err = capsys.readouterr().err
    assert err == (f"warning: $SYNTHCHECK_HEARTBEAT is not a number of seconds from 0 to "
                   f"86,400 (SYNTHCHECK_HEARTBEAT={value!r}): using 30; set it to e.g. 60, "
                   "or 0 for a line at every step\n")
    assert heartbeat_interval() == 30.0 and capsys.readouterr().err == ""  # said once
    beat = Heartbeat(5, "x")  # the heartbeat itself: no traceback
    assert beat.interval == 30.0
    beat.close()
