"""The scipy-backed statistics equal the hand-written formulas they replaced (to 1e-12)."""

from __future__ import annotations

import numpy as np
import pytest

from discovery._calibration import log_normalize
from discovery._ranking import divergence
from discovery._stats import benjamini_hochberg, g_test, wilson_interval

# Values the hand-written formulas gave before the switch to scipy (captured on commit 5173191).
P = np.array([0.01, 0.04, 0.03, 0.2, 0.5, 0.001, 1.0, 0.04])
BH_BEFORE = [0.04, 0.064, 0.064, 0.26666666666666666, 0.5714285714285714, 0.008, 1.0, 0.064]
YH, YR = np.array([3, 0, 10, 5, 20]), np.array([1, 4, 30, 0, 20])
G_BEFORE = [0.030477645970917528, 0.12362085593915116, 1.0, 0.00011256898918296094,
            4.214935075880593e-09]
K, N = np.array([0, 1, 5, 10, 3]), np.array([0, 3, 10, 10, 7])
WILSON_BEFORE = ([0.0, 0.06149194472039621, 0.236593090512564, 0.7224672001371107,
                  0.15821985525146975],
                 [1.0, 0.7923403991979522, 0.7634069094874361, 0.9999999999999999,
                  0.7495416354723428])
T = np.array([[0.2, 0.8], [0.5, 0.5], [0.99, 0.01], [0.3, 0.7]])
R = np.array([[0.6, 0.4], [0.5, 0.5], [0.01, 0.99], [0.25, 0.75]])
DIV_BEFORE = {"kl": [0.3819085009768876, 0.0, 4.5032174531318985, 0.006164264416725046],
              "js": [0.08630462173553417, 0.0, 0.637145646205098, 0.0015690540173397913]}


# --- the formulas as they were written by hand -----------------------------------------
def _old_bh(p):
    n = len(p)
    order = np.argsort(p)
    q = np.minimum.accumulate((p[order] * n / np.arange(1, n + 1))[::-1])[::-1]
    out = np.empty(n)
    out[order] = np.clip(q, 0.0, 1.0)
    return out


def _old_g(y_hard, n_hard, y_rest, n_rest):
    from scipy.stats import chi2

    obs = np.stack([y_hard, n_hard - y_hard, y_rest, n_rest - y_rest], axis=1).astype(float)
    total = float(n_hard + n_rest)
    col1, col2 = obs[:, 0] + obs[:, 2], obs[:, 1] + obs[:, 3]
    exp = np.stack([n_hard * col1, n_hard * col2, n_rest * col1, n_rest * col2], axis=1) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(obs > 0, obs * np.log(obs / exp), 0.0)
    return chi2.sf(np.maximum(2.0 * terms.sum(axis=1), 0.0), df=1)


def _old_wilson(k, n, z=1.959963984540054):
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(n, 1.0)
    p = k / safe
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z * np.sqrt(p * (1 - p) / safe + z * z / (4 * safe * safe)) / denom
    return (np.where(n > 0, np.clip(centre - half, 0.0, 1.0), 0.0),
            np.where(n > 0, np.clip(centre + half, 0.0, 1.0), 1.0))


def _old_log_normalize(x):
    top = x.max(axis=1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))


def test_captured_values_are_unchanged():
    assert np.allclose(benjamini_hochberg(P), BH_BEFORE, rtol=0, atol=1e-12)
    assert np.allclose(g_test(YH, 20, YR, 60), G_BEFORE, rtol=0, atol=1e-12)
    lo, hi = wilson_interval(K, N)
    assert np.allclose(lo, WILSON_BEFORE[0], rtol=0, atol=1e-12)
    assert np.allclose(hi, WILSON_BEFORE[1], rtol=0, atol=1e-12)
    for metric, want in DIV_BEFORE.items():
        assert np.allclose(divergence(T, R, metric), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scipy_wrappers_equal_the_hand_written_formulas(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, 50) ** 3
    assert np.allclose(benjamini_hochberg(p), _old_bh(p), rtol=0, atol=1e-12)
    n_hard, n_rest = 30, 200
    y_hard = rng.integers(0, n_hard + 1, 40)
    y_rest = rng.integers(0, n_rest + 1, 40)
    y_hard[:3], y_rest[:3] = 0, 0  # an n-gram nowhere: a column of zeros
    assert np.allclose(g_test(y_hard, n_hard, y_rest, n_rest),
                       _old_g(y_hard, n_hard, y_rest, n_rest), rtol=0, atol=1e-12)
    n = rng.integers(0, 40, 60)
    k = np.minimum(rng.integers(0, 40, 60), n)
    for got, want in zip(wilson_interval(k, n), _old_wilson(k, n), strict=True):
        assert np.allclose(got, want, rtol=0, atol=1e-12)
    x = rng.normal(0, 5, (20, 3))
    assert np.array_equal(log_normalize(x), _old_log_normalize(x))  # bit for bit


def test_a_wrong_interval_is_caught():
    lo, hi = wilson_interval(np.array([5]), np.array([10]))
    assert not np.isclose(hi[0], _old_wilson(np.array([6]), np.array([10]))[1][0])
    assert 0 <= lo[0] < 0.5 < hi[0] <= 1
