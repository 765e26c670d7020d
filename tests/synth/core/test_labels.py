"""LabelSpace: the one label-membership check the stages word their messages around."""

from __future__ import annotations

import pytest

from synth.core import DataError, LabelSpace

SPACE = LabelSpace.of(["negative", "neutral", "positive"])


def test_unknown_keeps_order_and_names_each_once() -> None:
    assert SPACE.unknown(["pos", "neutral", 1, "pos", None]) == ["pos", 1, None]
    assert SPACE.unknown(SPACE) == []


def test_missing_is_in_task_order() -> None:
    assert SPACE.missing(["positive", "other"]) == ["negative", "neutral"]
    assert SPACE.missing(["positive", "negative", "neutral"]) == []


def test_same_set_ignores_order_and_repeats() -> None:
    assert SPACE.same_set(["positive", "negative", "neutral", "positive"])
    assert not SPACE.same_set(["positive", "negative"])
    assert not SPACE.same_set(["positive", "negative", "neutral", "mixed"])


def test_check_probs_names_both_label_lists() -> None:
    SPACE.check_probs({"positive": 0.5, "negative": 0.25, "neutral": 0.25})
    with pytest.raises(DataError) as err:
        SPACE.check_probs({"positive": 0.5, "negative": 0.5}, where="scores.jsonl, line 3")
    assert str(err.value) == (
        "probabilities have labels ['negative', 'positive'], expected ['negative', 'neutral', "
        "'positive'] (scores.jsonl, line 3): score the run again with this task's labels")
