"""Divergence metrics against hand-computed values; ranking and the hard subset."""

from __future__ import annotations

import math

import numpy as np
import pytest

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


def test_ranker_top_k_fraction_and_disagreement():
    r = DivergenceRanker(top_k=2).fit(TASK, REF)
    assert r.hard_indices_.tolist() == [0, 1]
    assert r.disagree_.tolist() == [True, False, False]
    assert DivergenceRanker(top_fraction=0.34).fit(TASK, REF).hard_indices_.tolist() == [0, 1]
    r = DivergenceRanker(top_k=2, require_disagreement=True).fit(TASK, REF)
    assert r.hard_indices_.tolist() == [0]
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
    # (margin 0.1 < 0.2); row 1 (margin 0.8) and row 2 (margin 0.4) carry signal.
    task = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]])
    ref = np.array([[0.45, 0.55], [0.1, 0.9], [0.3, 0.7]])
    r = DivergenceRanker("abs_top", top_k=2, min_margin=0.2).fit(task, ref)
    assert r.no_signal_.tolist() == [True, False, False]
    assert r.hard_indices_.tolist() == [1, 2] and r.no_signal_in_top_ == 1
    r0 = DivergenceRanker("abs_top", top_k=2).fit(task, ref)
    assert r0.hard_indices_.tolist() == [1, 0] and r0.no_signal_in_top_ == 0


def test_focus_failures_need_label_signal():
    from discovery._focus_rounds import failures

    task = np.array([[0.9, 0.1], [0.9, 0.1], [0.9, 0.1]])
    ref = np.array([[0.45, 0.55], [0.1, 0.9], [0.9, 0.1]])  # no signal, disagrees, agrees
    assert failures(task, ref, "disagreement").tolist() == [True, True, False]
    assert failures(task, ref, "disagreement", min_margin=0.2).tolist() == [False, True, False]
    assert failures(task, ref, "hard_rule", metric="p_wrong", threshold=0.5,
                    min_margin=0.2).tolist() == [False, True, False]
