"""Vectorised statistics for n-gram mining (one value per n-gram, numpy arrays in and out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def log_odds_dirichlet(
    y_hard: np.ndarray, n_hard: int, y_rest: np.ndarray, n_rest: int,
    prior_freq: np.ndarray, prior_strength: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-odds ratio with an informative Dirichlet prior and its z-score (Monroe et al. 2008).

    Counts are documents: ``y`` of ``n`` documents in a group contain the n-gram. The prior
    gives the n-gram ``a = prior_strength * prior_freq`` pseudo-documents that contain it
    and ``prior_strength - a`` that do not, in each group.

        delta = log((y_h + a) / (n_h - y_h + a0 - a)) - log((y_r + a) / (n_r - y_r + a0 - a))
        var   = 1 / (y_h + a) + 1 / (y_r + a)
        z     = delta / sqrt(var)

    Returns:
        (delta, z), one value per n-gram.
    """
    a = prior_strength * np.asarray(prior_freq, dtype=np.float64)
    a0 = float(prior_strength)
    y_h = np.asarray(y_hard, dtype=np.float64)
    y_r = np.asarray(y_rest, dtype=np.float64)
    # a <= a0 and y <= n, so the "does not contain" terms are >= 0; clip the all-docs case.
    odds_h = (y_h + a) / np.maximum(n_hard - y_h + a0 - a, 1e-9)
    odds_r = (y_r + a) / np.maximum(n_rest - y_r + a0 - a, 1e-9)
    delta = np.log(odds_h) - np.log(odds_r)
    z = delta / np.sqrt(1.0 / (y_h + a) + 1.0 / (y_r + a))
    return delta, z


def fisher_enrichment(y_hard: np.ndarray, n_hard: int, y_all: np.ndarray, n_all: int
                      ) -> np.ndarray:
    """One-sided Fisher exact p-value that an n-gram is over-represented in the hard subset.

    P(X >= y_hard) for X ~ Hypergeometric(population n_all, y_all successes, n_hard draws).
    """
    from scipy.stats import hypergeom

    return np.clip(hypergeom.sf(np.asarray(y_hard) - 1, n_all, np.asarray(y_all), n_hard),
                   0.0, 1.0)


def g_test(y_hard: np.ndarray, n_hard: int, y_rest: np.ndarray, n_rest: int) -> np.ndarray:
    """Two-sided G-test (log-likelihood ratio, 1 degree of freedom) on the 2x2 tables
    [[y_h, n_h - y_h], [y_r, n_r - y_r]]; returns p-values (scipy's ``power_divergence``
    with ``lambda_="log-likelihood"`` on each table against its independence expectation)."""
    from scipy.stats import chi2, power_divergence

    y_h = np.asarray(y_hard, dtype=np.float64)
    y_r = np.asarray(y_rest, dtype=np.float64)
    obs = np.stack([y_h, n_hard - y_h, y_r, n_rest - y_r], axis=1)
    total = float(n_hard + n_rest)
    col1 = obs[:, 0] + obs[:, 2]
    col2 = obs[:, 1] + obs[:, 3]
    exp = np.stack([n_hard * col1, n_hard * col2, n_rest * col1, n_rest * col2], axis=1) / total
    if len(obs) == 0:
        return np.zeros(0)
    # Cells with nothing expected (a column of zeros) are observed zero too: they add 0.
    empty = exp <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        g, _ = power_divergence(np.where(empty, 1.0, obs), np.where(empty, 1.0, exp), axis=1,
                                lambda_="log-likelihood")
    return np.asarray(chi2.sf(np.maximum(np.nan_to_num(g), 0.0), df=1))


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg q-values (false discovery rate adjusted p-values), scipy's
    ``false_discovery_control(method="bh")``."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=np.float64)
    if len(p) == 0:
        return p
    return np.asarray(false_discovery_control(p, method="bh"), dtype=np.float64)


def wilson_interval(k: np.ndarray, n: np.ndarray, z: float = 1.959963984540054
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for k successes in n trials (95% by default); (lo, hi), and
    (0, 1) where n is 0. Each interval is scipy's ``binomtest(k, n).proportion_ci(
    method="wilson")`` at the confidence level that ``z`` gives."""
    from scipy.stats import binomtest, norm

    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    level = float(1.0 - 2.0 * norm.sf(z))
    # One scipy call per distinct (k, n): n-gram counts repeat a lot.
    pairs, inverse = np.unique(np.stack([k.ravel(), n.ravel()], axis=1), axis=0,
                               return_inverse=True)
    bounds = np.array([[0.0, 1.0] if kn[1] <= 0 else
                       binomtest(int(kn[0]), int(kn[1])).proportion_ci(
                           confidence_level=level, method="wilson")
                       for kn in pairs]).reshape(len(pairs), 2)
    lo = bounds[inverse.ravel(), 0].reshape(k.shape)
    hi = bounds[inverse.ravel(), 1].reshape(k.shape)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def informative(n: int, failures: int, members: int) -> bool:
    """Whether a stratum says anything about members failing more than the others: it has
    both members and non-members, and both failures and sentences that do not fail."""
    return 0 < members < n and 0 < failures < n


def stratified_excess(strata: Sequence[tuple[int, int, int, int]]) -> tuple[int, float, float]:
    """The exact conditional (Cochran-Mantel-Haenszel) test that members fail more than
    non-members within strata: each stratum is ``(n, failures, members, member_failures)``.
    Given every stratum's margins, a stratum's member failures are hypergeometric where
    membership is unrelated to failure; their sum's distribution is the convolution of
    those. Returns the member failures observed and the number expected
    (``sum(members * failures / n)``), both over the :func:`informative` strata only, and
    the one-sided p-value P(sum >= observed) (1.0 with no informative stratum)."""
    from scipy.stats import hypergeom

    dist, offset, used = np.ones(1), 0, False
    observed, expected = 0, 0.0
    for n, f, m, k in strata:
        if not informative(n, f, m):
            continue
        used = True
        lo, hi = max(0, m - (n - f)), min(m, f)
        dist = np.convolve(dist, hypergeom.pmf(np.arange(lo, hi + 1), n, f, m))
        offset += lo
        observed += k
        expected += m * f / n
    if not used:
        return observed, expected, 1.0
    return observed, expected, float(min(1.0, max(0.0, dist[observed - offset:].sum())))
