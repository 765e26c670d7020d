from __future__ import annotations

import pytest

from synth import Document, QueryConfig, QuerySampler
from synth.core import DataError

DOCS = [Document("alpha beta gamma delta epsilon zeta. Eta theta iota kappa lambda mu nu."),
        Document("one two three four five six seven eight"),
        Document("tiny doc")]


def test_first_k_takes_document_start_and_is_seeded() -> None:
    sampler = QuerySampler(DOCS, QueryConfig(k=3), seed=1)
    queries = sampler.queries(range(20))
    assert all(q.text in {"alpha beta gamma", "one two three"} for q in queries)
    assert queries == QuerySampler(DOCS, QueryConfig(k=3), seed=1).queries(range(20))
    assert queries != QuerySampler(DOCS, QueryConfig(k=3), seed=2).queries(range(20))
    assert sampler.num_eligible == 2  # "tiny doc" is shorter than k


def test_query_depends_only_on_its_index() -> None:
    sampler = QuerySampler(DOCS, QueryConfig(k=3, strategy="random-k"), seed=5)
    assert sampler.query(7) == sampler.queries(range(10))[7]


def test_random_k_stays_inside_one_sentence() -> None:
    sampler = QuerySampler(DOCS[:1], QueryConfig(k=4, strategy="random-k"), seed=0)
    sentences = [s.rstrip(".").split() for s in DOCS[0].text.split(". ")]
    for q in sampler.queries(range(30)):
        words = q.text.rstrip(".").split()
        assert any(" ".join(words) in " ".join(s) + "." or " ".join(words) in " ".join(s)
                   for s in sentences)
    assert len({q.text for q in sampler.queries(range(30))}) > 3


def test_k_larger_than_every_document() -> None:
    with pytest.raises(DataError, match=r"no seed document has 50 words \(the longest has 13\)"):
        QuerySampler(DOCS, QueryConfig(k=50), seed=0)


def test_min_doc_words_filters_short_documents() -> None:
    sampler = QuerySampler(DOCS, QueryConfig(k=2, min_doc_words=9), seed=0)
    assert sampler.num_eligible == 1  # only the 13-word document is long enough
    assert {q.text for q in sampler.queries(range(10))} == {"alpha beta"}
    with pytest.raises(DataError, match=r"queries.k / queries.min_doc_words"):
        QuerySampler(DOCS, QueryConfig(k=2, min_doc_words=14), seed=0)
