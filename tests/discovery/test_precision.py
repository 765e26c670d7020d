"""Precision of the hard-subset rule on labeled held-out data, and the reliability warnings."""

from __future__ import annotations

import numpy as np
import pytest

from discovery._judge import JudgeRule
from discovery._precision import (
    format_reliability,
    hard_subset_precision,
    hard_subset_reliability,
    held_out_size,
    majority_accuracy,
    precision_by_metric,
    reliability_warnings,
)
from discovery._ranking import METRICS, divergence
from synth.core import DataError

LABELS = ["negative", "positive"]


def _planted():
    """10 held-out examples; the task model says positive with p_task, the reference with
    p_ref. Sorted by |p_task - p_ref| the 5 most divergent are rows 0-4; the task model is
    wrong on rows 0, 2 and 4 of them (and on row 7 outside them)."""
    p_task = np.array([0.9, 0.8, 0.9, 0.2, 0.7, 0.6, 0.5, 0.45, 0.3, 0.4])
    p_ref = np.array([0.1, 0.2, 0.35, 0.8, 0.2, 0.55, 0.52, 0.44, 0.31, 0.41])
    golds = ["negative", "positive", "negative", "negative", "negative",
             "positive", "negative", "positive", "negative", "negative"]
    task = np.stack([1 - p_task, p_task], axis=1)
    ref = np.stack([1 - p_ref, p_ref], axis=1)
    return task, ref, golds


def test_planted_precision_estimate_and_wilson_interval():
    task, ref, golds = _planted()
    out = hard_subset_precision(task, ref, golds, LABELS, metric="abs_top", top_fraction=0.5)
    assert out["n"] == 5
    assert out["estimate"] == pytest.approx(3 / 5)
    # Wilson 95% for 3/5, from the closed form.
    z = 1.959963984540054
    centre = (0.6 + z * z / 10) / (1 + z * z / 5)
    half = z * np.sqrt(0.6 * 0.4 / 5 + z * z / 100) / (1 + z * z / 5)
    assert out["low"] == pytest.approx(centre - half, abs=1e-9)
    assert out["high"] == pytest.approx(centre + half, abs=1e-9)
    assert out["low"] == pytest.approx(0.2307, abs=1e-3)
    assert out["high"] == pytest.approx(0.8824, abs=1e-3)


def test_only_disagreements_and_top_k_scaled_to_held_out():
    task, ref, golds = _planted()
    # Disagreeing rows: 0-4 and 6 (a 0.5/0.5 task row reads negative, the reference
    # positive); the task model is right on row 6. The agreeing rows never enter.
    out = hard_subset_precision(task, ref, golds, LABELS, top_fraction=1.0)
    assert out["n"] == 6 and out["estimate"] == pytest.approx(3 / 6)
    # with a margin of 0.2 row 6 (margin 0.04) abstains: 3 of 5
    out = hard_subset_precision(task, ref, golds, LABELS, top_fraction=1.0,
                                rule=JudgeRule(min_margin=0.2))
    assert (out["n"], out["count"]) == (5, 3) and out["abstained"] == 4  # rows 5, 6, 7, 9
    # top_k=100 on a 1000-sentence corpus keeps 10% of the held-out set: 1 of 10 (row 0).
    assert held_out_size(10, top_k=100, top_fraction=None, corpus_size=1000) == 1
    out = hard_subset_precision(task, ref, golds, LABELS, top_k=100, corpus_size=1000)
    assert out == {"estimate": 1.0, "low": pytest.approx(0.2065, abs=1e-3), "high": 1.0, "n": 1,
                   "count": 1, "abstained": 0}
    assert held_out_size(10, top_k=50, top_fraction=None, corpus_size=None) == 10


def test_every_metric_reported_and_p_wrong_is_one_minus_reference_at_task_top():
    task, ref, golds = _planted()
    by = precision_by_metric(task, ref, golds, LABELS, top_fraction=0.3, metric="kl")
    assert list(by) == list(METRICS) and "p_wrong" in by
    p_wrong = divergence(task, ref, "p_wrong")
    top = task.argmax(axis=1)
    assert p_wrong == pytest.approx(1 - ref[np.arange(10), top])
    # p_wrong's top 3: rows 0 (0.9), then the ties at 0.8 in input order: 1 and 3 (4 is
    # cut); the task model is wrong only on row 0.
    assert by["p_wrong"]["n"] == 3 and by["p_wrong"]["estimate"] == pytest.approx(1 / 3)


def test_three_labels():
    labels = ["negative", "neutral", "positive"]
    task = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    ref = np.array([[0.1, 0.1, 0.8], [0.1, 0.7, 0.2], [0.2, 0.1, 0.7], [0.3, 0.3, 0.4]])
    golds = ["positive", "neutral", "positive", "neutral"]
    out = hard_subset_precision(task, ref, golds, labels, top_fraction=0.25)
    assert out["n"] == 1 and out["estimate"] == 1.0  # row 0: task says negative, gold positive


def test_a_weaker_reference_warns_through_its_precision_not_its_accuracy():
    rng = np.random.default_rng(0)
    golds = list(rng.choice(LABELS, size=200))
    gold = np.array([LABELS.index(g) for g in golds])
    # The task model is right 90% of the time, the reference 60%.
    task_right = rng.random(200) < 0.9
    ref_right = rng.random(200) < 0.6
    p_task = np.where(task_right == (gold == 1), 0.9, 0.1)
    p_ref = np.where(ref_right == (gold == 1), 0.8, 0.2)
    task = np.stack([1 - p_task, p_task], axis=1)
    ref = np.stack([1 - p_ref, p_ref], axis=1)
    info = hard_subset_reliability(task, ref, golds, LABELS, top_fraction=0.1,
                                   task_name="demo")
    assert info["accuracy"]["task"] > info["accuracy"]["reference"]
    # Being less accurate is no warning by itself (issue 25: trust by the precision) ...
    assert not any("less accurate than demo" in w for w in info["warnings"])
    # ... but here the disagreements are mostly the reference's errors: precision is low,
    # its bound too, and that warns.
    assert info["hard_subset_precision"]["high"] < 0.5
    assert any("at most" in w and "stronger reference" in w for w in info["warnings"])
    fields = {"hard_subset_precision": {**info["hard_subset_precision"], "metric": "abs_top"},
              "hard_subset_precision_by_metric": info["precision_by_metric"],
              "warnings": info["warnings"]}
    lines = format_reliability(fields)
    assert lines[0].startswith(f"hard-subset precision (abs_top, top 10%): "
                               f"{info['hard_subset_precision']['estimate']:.2f} [")
    assert [line for line in lines if line.startswith("warning: ")] == \
        [f"warning: {w}" for w in info["warnings"]]
    # Swap the roles: a strong reference raises no warning.
    info = hard_subset_reliability(ref, task, golds, LABELS, top_fraction=0.1)
    assert info["warnings"] == []
    assert info["hard_subset_precision"]["estimate"] > 0.8


def test_majority_warning_and_baseline():
    assert majority_accuracy(["a", "a", "b", "a"]) == 0.75
    warnings = reliability_warnings(0.7, 0.3, 0.45, {"estimate": 0.6, "low": 0.5, "high": 0.7,
                                                     "n": 20})
    assert len(warnings) == 1 and "most frequent label (0.300 < 0.450)" in warnings[0]
    assert reliability_warnings(0.7, 0.8, 0.45, {"n": 0, "high": 1.0}) == []
    # A weak precision names the metric that did best on the same held-out data.
    weak = {"estimate": 0.36, "low": 0.2414, "high": 0.4986, "n": 50}
    (only,) = reliability_warnings(0.75, 0.78, 0.52, weak, by_metric={
        "abs_top": weak, "kl": {"estimate": 0.24, "low": 0.14, "high": 0.37, "n": 50},
        "p_wrong": {"estimate": 0.70, "low": 0.5625, "high": 0.809, "n": 50}})
    assert "at most 0.499 of it is (95% upper bound, n=50)" in only
    assert only.endswith("or rank with another ranking.metric (here p_wrong: 0.70 "
                         "[0.56, 0.81], n=50)")


def test_bad_input_is_a_data_error():
    task, ref, golds = _planted()
    with pytest.raises(DataError, match="gold labels \\['mixed'\\] are not task labels"):
        hard_subset_precision(task, ref, golds[:-1] + ["mixed"], LABELS)
    with pytest.raises(DataError, match="one gold label per row"):
        hard_subset_precision(task, ref, golds[:3], LABELS)


def test_held_out_reliability_fields_per_task_model_and_formatted():
    from discovery import HeldOutScores, RankingConfig, held_out_reliability

    task, ref, golds = _planted()
    held = HeldOutScores(LABELS, golds, {"a": task, "b": ref, "reference": ref})
    info = held_out_reliability(held, RankingConfig(top_fraction=0.5), ranked="a")
    assert info["ranked_task_model"] == "a" and set(info["reliability"]) == {"a", "b"}
    assert info["hard_subset_precision"] == {"estimate": pytest.approx(0.6),
                                             "low": pytest.approx(0.2307, abs=1e-3),
                                             "high": pytest.approx(0.8824, abs=1e-3), "n": 5,
                                             "count": 3, "abstained": 4, "metric": "abs_top"}
    # the task model's own error rate on all 10: rows 0, 2, 4 and 7
    assert info["task_error_rate"]["count"] == 4 and info["task_error_rate"]["n"] == 10
    assert info["majority_baseline_accuracy"] == 0.7  # 7 negative golds of 10
    assert info["hard_subset_rule"]["held_out"] == 10
    # Task model b is the reference itself: it agrees everywhere, so nothing is hard.
    assert info["reliability"]["b"]["hard_subset_precision"]["n"] == 0
    assert format_reliability(info)[:5] == [
        "hard-subset precision (abs_top, top 50%): 0.60 [0.23, 0.88] on 5 held-out examples "
        "(of 10)",
        "  (the share of them the task model gets wrong, 95% Wilson interval)",
        "task model's own error rate: 0.40 [0.17, 0.69] on 10 held-out examples (what a "
        "random sentence would give)",
        "  4 held-out examples abstained (the run's rule)",
        "  precision by ranking metric:"]
    # Without the reference there is nothing to measure, and nothing to print.
    assert held_out_reliability(HeldOutScores(LABELS, golds, {"a": task}),
                                RankingConfig(), ranked="a") == {}
    assert format_reliability({}) == []
