"""Mining statistics against scipy, and the sort order of every statistic the config allows."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from scipy.stats import chi2_contingency, false_discovery_control, fisher_exact

from discovery import MiningConfig
from discovery._mining import SORT_KEYS, NgramMiner
from discovery._ranking import DivergenceRanker
from discovery._stats import benjamini_hochberg, fisher_enrichment, g_test
from tests.discovery.discovery_fixtures import planted_corpus, planted_models

# (hard count, hard size, rest count, rest size): small 2x2 tables, enriched and depleted.
TABLES = [(3, 10, 2, 30), (5, 8, 1, 40), (0, 10, 4, 20), (10, 10, 3, 25), (2, 6, 9, 11),
          (1, 1, 0, 3), (7, 12, 7, 12), (4, 50, 1, 500)]


def _table(y_h, n_h, y_r, n_r):
    return [[y_h, n_h - y_h], [y_r, n_r - y_r]]


@pytest.mark.parametrize(("y_h", "n_h", "y_r", "n_r"), TABLES)
def test_fisher_matches_scipy_one_sided(y_h, n_h, y_r, n_r):
    got = fisher_enrichment(np.array([y_h]), n_h, np.array([y_h + y_r]), n_h + n_r)[0]
    want = fisher_exact(_table(y_h, n_h, y_r, n_r), alternative="greater").pvalue
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_fisher_is_vectorised_over_ngrams():
    # One hard subset against one corpus: every n-gram shares n_hard and n_all.
    n_h, n_r = 12, 40
    y_h = np.array([0, 1, 3, 6, 12, 2])
    y_r = np.array([5, 0, 3, 1, 0, 30])
    got = fisher_enrichment(y_h, n_h, y_h + y_r, n_h + n_r)
    want = [fisher_exact(_table(a, n_h, b, n_r), alternative="greater").pvalue
            for a, b in zip(y_h, y_r, strict=True)]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("y_h", "n_h", "y_r", "n_r"),
                         [t for t in TABLES if t[0] + t[2] > 0])  # scipy refuses zero margins
def test_g_test_matches_scipy_log_likelihood(y_h, n_h, y_r, n_r):
    got = g_test(np.array([y_h]), n_h, np.array([y_r]), n_r)[0]
    res = chi2_contingency(_table(y_h, n_h, y_r, n_r), correction=False,
                           lambda_="log-likelihood")
    assert got == pytest.approx(res.pvalue, rel=1e-9, abs=1e-15)


def test_benjamini_hochberg_matches_scipy():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.5, 0.001, 0.04, 1.0])
    assert benjamini_hochberg(p) == pytest.approx(false_discovery_control(p, method="bh"))


def _planted():
    texts = planted_corpus()
    return texts, DivergenceRanker(top_k=15).fit(*planted_models(texts))


def test_g_test_path_of_the_miner_matches_scipy():
    texts, ranker = _planted()
    miner = NgramMiner(min_support=2, test="g").fit(
        texts, ranker.hard_indices_, divergence=ranker.divergence_, disagree=ranker.disagree_)
    table = miner.table_
    n_h = miner.n_hard_
    n_r = miner.n_corpus_ - n_h
    assert len(table) > 10
    for row in table.itertuples():
        y_h, y_r = int(row.hard_count), int(row.corpus_count - row.hard_count)
        want = chi2_contingency(_table(y_h, n_h, y_r, n_r), correction=False,
                                lambda_="log-likelihood").pvalue
        assert row.p_value == pytest.approx(want, rel=1e-9, abs=1e-15), row.ngram
    assert table["q_value"].to_numpy() == pytest.approx(
        false_discovery_control(table["p_value"].to_numpy(), method="bh"))
    fisher = NgramMiner(min_support=2).fit(texts, ranker.hard_indices_).table_
    p = dict(zip(fisher["ngram"], fisher["p_value"], strict=True))
    for row in fisher.itertuples():
        y_h = int(row.hard_count)
        want = fisher_exact(_table(y_h, n_h, int(row.corpus_count) - y_h, n_r),
                            alternative="greater").pvalue
        assert p[row.ngram] == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_every_config_statistic_has_a_sort_key():
    allowed = typing.get_args(MiningConfig.model_fields["statistic"].annotation)
    assert set(allowed) == set(SORT_KEYS)


@pytest.mark.parametrize("statistic", sorted(SORT_KEYS))
def test_sorting_by_each_statistic(statistic):
    texts, ranker = _planted()
    miner = NgramMiner(min_support=2, statistic=statistic).fit(
        texts, ranker.hard_indices_, divergence=ranker.divergence_, disagree=ranker.disagree_)
    column, ascending = SORT_KEYS[statistic]
    table = miner.table_
    # Sorted by the statistic, then by hard count (descending), then alphabetically.
    keys = [((v if ascending else -v), -h, g) for v, h, g in
            zip(table[column], table["hard_count"], table["ngram"], strict=True)]
    assert keys == sorted(keys)
    # The order is decided by the statistic itself. The hard subset holds failures only (the
    # one judging rule), so the planted corpus's hard counts take fewer values.
    assert len(set(table[column])) > (1 if statistic == "frequency" else 3)
    if statistic in ("z", "log_odds", "q_value", "disagreement"):
        assert table["ngram"].iloc[0] == "not bad at all"
    # The same rows whatever the sort key.
    base = NgramMiner(min_support=2).fit(texts, ranker.hard_indices_,
                                         divergence=ranker.divergence_,
                                         disagree=ranker.disagree_).table_
    assert sorted(table["ngram"]) == sorted(base["ngram"])


def test_sorting_by_divergence_or_disagreement_needs_them():
    from synth.core import ConfigError

    texts, ranker = _planted()
    with pytest.raises(ConfigError, match=r"statistic 'divergence' needs per-sentence "
                                          r"divergences \(mining\.statistic\)"):
        NgramMiner(min_support=2, statistic="divergence").fit(texts, ranker.hard_indices_)
