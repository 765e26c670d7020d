"""Divergence metrics against hand-computed values; ranking and the hard subset."""

from __future__ import annotations

import math

import numpy as np
import pytest

from discovery._judge import JudgeRule, abstain_warning, judge
from discovery._ranking import DivergenceRanker, HardSubset, divergence
from synth.core import ConfigError, DataError

TASK = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
REF = np.array([[0.3, 0.7], [0.1, 0.9], [0.5, 0.5]])


def test_abs_top_and_signed_by_hand():
    # row 0: task top = 0, 0.9 - 0.3; row 1: task top = 1, 0.8 - 0.9; row 2: tie -> label 0.
    assert divergence(TASK, REF, "abs_top") == pytest.approx([0.6, 0.1, 0.0])
    assert divergence(TASK, REF, "signed") == pytest.approx([0.6, -0.1, 0.0])


def test_tv_kl_js_by_hand():
    assert divergence(TASK, REF, "tv") == pytest.approx([0.6, 0.1, 0.0])
    kl0 = 0.3 * math.log(0.3 / 0.9) + 0.7 * math.log(0.7 / 0.1)  # KL(ref || task)
    assert divergence(TASK, REF, "kl")[0] == pytest.approx(kl0)
    # mixture m = [0.6, 0.4]
    js0 = 0.5 * (0.9 * math.log(0.9 / 0.6) + 0.1 * math.log(0.1 / 0.4)) + 0.5 * (
        0.3 * math.log(0.3 / 0.6) + 0.7 * math.log(0.7 / 0.4))
    assert divergence(TASK, REF, "js")[0] == pytest.approx(js0)
    assert divergence(TASK, REF, "js")[2] == pytest.approx(0.0)


def test_three_labels():
    task = np.array([[0.2, 0.5, 0.3]])
    ref = np.array([[0.6, 0.1, 0.3]])
    assert divergence(task, ref, "abs_top") == pytest.approx([0.4])
    assert divergence(task, ref, "tv") == pytest.approx([0.4])


def test_unknown_metric():
    with pytest.raises(ConfigError, match="The 'metric' parameter of DivergenceRanker must be"):
        divergence(TASK, REF, "l2")


def test_ranker_keeps_only_failures_top_k_and_fraction():
    # Row 1 (task 0.8, ref 0.9 on the same label) and row 2 (a tie) agree: never hard.
    r = DivergenceRanker(top_k=2).fit(TASK, REF)
    assert r.hard_indices_.tolist() == [0]
    assert r.disagree_.tolist() == [True, False, False]
    assert DivergenceRanker(top_fraction=0.34).fit(TASK, REF).hard_indices_.tolist() == [0]
    sub = HardSubset.from_ranker(r, ["a", "b", "c"], ["x", "y", "z"], ["neg", "pos"], TASK, REF)
    rec = sub.records[0]
    assert (rec["id"], rec["rank"], rec["task_label"], rec["reference_label"]) == (
        "a", 1, "neg", "pos")
    assert rec["divergence"] == pytest.approx(0.6)
    assert rec["reference_probs"] == {"neg": 0.3, "pos": 0.7}


def test_top_k_larger_than_corpus():
    with pytest.raises(DataError, match=r"top_k \(10\) is larger than the corpus \(3 sentences\)"):
        DivergenceRanker(top_k=10).fit(TASK, REF)


def test_sentences_without_label_signal_are_kept_out_and_counted():
    # Row 0 would rank first by abs_top (0.9 - 0.45), but the reference reads no label on it
    # (margin 0.1 < 0.2); rows 1 and 2 disagree with signal.
    task = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]])
    ref = np.array([[0.45, 0.55], [0.1, 0.9], [0.3, 0.7]])
    r = DivergenceRanker("abs_top", top_k=2).fit(task, ref, rule=JudgeRule(min_margin=0.2))
    assert r.judgement_.reason.tolist() == ["low margin", "", ""]
    assert r.hard_indices_.tolist() == [1, 2]
    r0 = DivergenceRanker("abs_top", top_k=2).fit(task, ref)
    assert r0.hard_indices_.tolist() == [1, 0]


def test_with_three_labels_an_agreeing_sentence_is_never_hard():
    # The reference's top label is the task model's in rows 0 and 1, however unsure:
    # p_wrong = 1 - 0.4 = 0.6 (the old 'confident' rule called row 0 a failure) and abs_top
    # 0.55 (the largest divergence) do not make them failures. Row 2 disagrees.
    task = np.array([[0.9, 0.05, 0.05], [0.95, 0.03, 0.02], [0.1, 0.2, 0.7]])
    ref = np.array([[0.4, 0.35, 0.25], [0.4, 0.3, 0.3], [0.2, 0.6, 0.2]])
    for metric in ("abs_top", "p_wrong", "kl", "tv"):
        r = DivergenceRanker(metric, top_k=3).fit(task, ref)
        assert r.hard_indices_.tolist() == [2], metric
    assert divergence(task, ref, "p_wrong")[0] == pytest.approx(0.6)


def test_abstain_answer_keeps_a_sentence_out_before_the_margin():
    task = np.array([[0.9, 0.1], [0.9, 0.1], [0.9, 0.1], [0.9, 0.1]])
    ref = np.array([[0.1, 0.9], [0.1, 0.9], [0.45, 0.55], [0.9, 0.1]])
    abstain = np.array([0.7, 0.2, 0.8, 0.1])
    j = judge(task, ref, abstain=abstain, rule=JudgeRule(min_margin=0.2, abstain_threshold=0.5))
    assert j.reason.tolist() == ["no-label answer", "", "no-label answer", ""]
    assert j.fails.tolist() == [False, True, False, False]
    assert j.base_rate == pytest.approx(0.5)  # 1 failure over 2 judged, abstained in neither
    assert j.abstained_info() == {"count": 2, "by_reason": {"no-label answer": 2,
                                                           "low margin": 0},
                                  "of": 4, "share": 0.5}
    # without a threshold the abstain column is ignored; the margin then keeps row 2 out
    j = judge(task, ref, abstain=abstain, rule=JudgeRule(min_margin=0.2))
    assert j.reason.tolist() == ["", "", "low margin", ""]
    r = DivergenceRanker("abs_top", top_k=4).fit(task, ref, abstain=abstain,
                                                  rule=JudgeRule(0.2, 0.5))
    assert r.hard_indices_.tolist() == [1]


def test_gold_labels_judge_everything_and_fail_on_wrong_top_labels():
    task = np.array([[0.9, 0.05, 0.05], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    j = judge(task, gold=[0, 2, 2])
    assert j.judged.all() and j.fails.tolist() == [False, True, False]
    assert j.base_rate == pytest.approx(1 / 3)


def test_most_abstained_warns_with_the_fix():
    info = {"count": 741, "of": 776, "by_reason": {"no-label answer": 0, "low margin": 741}}
    msg = abstain_warning(info)
    assert msg is not None and msg.startswith("741 of 776 sentences (95%) abstained (low "
                                               "margin 741)")
    assert "ranking.min_reference_margin" in msg
    assert abstain_warning({**info, "count": 300}) is None
