"""Calibration moves a biased toy reference as expected."""

from __future__ import annotations

import math

import numpy as np
import pytest

from discovery._calibration import Calibrator


def _lp(p_pos):
    return np.log(np.array([[1 - p, p] for p in p_pos]))


def test_contextual_removes_a_constant_bias():
    # A reference that says "positive" 0.8 on content-free input and adds that bias everywhere.
    content_free = _lp([0.8, 0.8, 0.8])
    true = np.array([0.3, 0.5, 0.7])
    odds = true / (1 - true) * 4.0  # bias: odds x 4 towards positive
    biased = _lp(odds / (1 + odds))
    cal = Calibrator("contextual").fit(content_free)
    assert cal.bias_ == pytest.approx(np.log([0.2, 0.8]))
    assert cal.predict_proba(biased)[:, 1] == pytest.approx(true)
    # A 0.5/0.5 output after a positive bias becomes negative.
    assert cal.predict_proba(_lp([0.5]))[0, 1] == pytest.approx(0.2)


def test_prob_average_divides_by_mean_probability():
    cf = _lp([0.9, 0.5])
    cal = Calibrator("contextual", average="prob").fit(cf)
    assert np.exp(cal.bias_) == pytest.approx([0.3, 0.7])
    out = cal.predict_proba(_lp([0.7]))[0]
    want = np.array([0.3 / 0.3, 0.7 / 0.7])
    assert out == pytest.approx(want / want.sum())
    # logprob: the geometric mean (mean of the renormalised log-probabilities).
    assert Calibrator("contextual", average="logprob").fit(cf).bias_ == pytest.approx(
        [0.5 * (math.log(0.1) + math.log(0.5)), 0.5 * (math.log(0.9) + math.log(0.5))])


def test_batch_calibration_centres_the_corpus():
    corpus = _lp([0.9, 0.8, 0.95, 0.6])  # everything reads positive
    cal = Calibrator("batch").fit(corpus)
    out = cal.predict_proba(corpus)
    # After subtracting each label's mean log-prob, the mean log-odds is zero.
    logodds = np.log(out[:, 1] / out[:, 0])
    assert logodds.mean() == pytest.approx(0.0, abs=1e-12)
    assert (out[:, 1] < 0.5).sum() == 2


def test_none_only_renormalises():
    raw = np.log(np.array([[0.1, 0.3]]))
    assert Calibrator("none").fit(raw).predict_proba(raw)[0] == pytest.approx([0.25, 0.75])
