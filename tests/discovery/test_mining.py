"""NgramMiner: a planted phrase that flips a toy task model is the top mined n-gram."""

from __future__ import annotations

import math

import numpy as np
import pytest

from discovery._mining import NgramMiner
from discovery._ranking import DivergenceRanker
from discovery._stats import benjamini_hochberg, log_odds_dirichlet, wilson_interval
from synth.core import DataError
from tests.discovery.discovery_fixtures import planted_corpus, planted_models


def test_planted_phrase_is_the_top_ngram():
    texts = planted_corpus()
    task, ref = planted_models(texts)
    ranker = DivergenceRanker(top_k=10).fit(task, ref)
    miner = NgramMiner(min_support=3).fit(texts, ranker.hard_indices_,
                                          divergence=ranker.divergence_,
                                          disagree=ranker.disagree_)
    top = miner.table_.iloc[0]
    assert top["ngram"] == "not bad at all"
    assert top["hard_count"] == 10 and top["corpus_count"] == 10
    assert top["disagreement_rate"] == pytest.approx(1.0)
    assert top["q_value"] < 0.01
    # Sub-phrases occur in exactly the same sentences: explained by the 4-gram, dropped.
    assert not {"not bad", "bad at all", "not bad at"} & set(miner.table_["ngram"])
    assert len(top["examples"]) == 5
    assert top["hard_frequency_rank"] == 1


def test_stopword_only_ngrams_are_dropped_but_negations_kept():
    texts = ["it is not a film", "it is not a play", "it is not a book", "a b c d"] + [
        f"other {i}" for i in range(10)]
    miner = NgramMiner(min_support=3, drop_subsumed=False).fit(texts, [0, 1, 2])
    grams = set(miner.table_["ngram"])
    assert "it is" not in grams and "it" not in grams
    assert {"not", "is not", "it is not a"} <= grams


def test_statistics_by_hand():
    delta, z = log_odds_dirichlet(np.array([5]), 10, np.array([5]), 90, np.array([0.1]), 10.0)
    a = 1.0
    want = math.log((5 + a) / (10 - 5 + 10 - a)) - math.log((5 + a) / (90 - 5 + 10 - a))
    assert delta[0] == pytest.approx(want)
    assert z[0] == pytest.approx(want / math.sqrt(2 / (5 + a)))
    assert benjamini_hochberg(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.04, 0.04])
    lo, hi = wilson_interval(np.array([5]), np.array([10]))
    assert (lo[0], hi[0]) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_empty_hard_subset_is_refused():
    with pytest.raises(DataError, match="cannot mine an empty hard subset"):
        NgramMiner().fit(["a b", "c d"], [])
