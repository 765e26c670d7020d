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
