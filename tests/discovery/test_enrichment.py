"""The Fisher-enrichment finding source (``slices.sources: [enriched]``): its p-values are
scipy's one-sided Fisher exact test, its rows become findings through its registry entry, and
an unknown source name gets "did you mean"."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control, fisher_exact

from discovery import ScoredCorpus, build_findings, corpus_sources, finding_kinds, kind_words
from discovery._enrichment import enriched_words
from synth.core import ConfigError

TEXTS = ["the plot twist was odd", "an odd ending", "odd and slow", "a fine film",
         "a fine cast", "the plot was fine", "slow but fine", "odd pacing here",
         "fine music", "the cast shines"]
FAIL = np.array([True, True, True, False, False, False, False, True, False, False])


def corpus() -> ScoredCorpus:
    return ScoredCorpus(ids=[f"c{i}" for i in range(len(TEXTS))], texts=TEXTS, fail=FAIL,
                        p_wrong=np.linspace(0.9, 0.1, len(TEXTS)))


def test_p_values_are_scipys_one_sided_fisher_test() -> None:
    rows = {r["word"]: r for r in enriched_words(corpus())}
    assert set(rows) == {"odd", "fine"}  # the only words in >= 3 sentences
    odd = rows["odd"]  # in 4 sentences, all failing; 0 of the 6 others fail
    assert (odd["n"], odd["failures"], odd["base_rate"]) == (4, 4, 0.0)
    _, p = fisher_exact([[4, 0], [0, 6]], alternative="greater")
    assert odd["p_value"] == pytest.approx(p)
    words = sorted(rows)
    ps = []
    for w in words:
        r = rows[w]
        table = [[r["failures"], r["n"] - r["failures"]],
                 [int(FAIL.sum()) - r["failures"], len(TEXTS) - r["n"] - (int(FAIL.sum())
                                                                         - r["failures"])]]
        ps.append(fisher_exact(table, alternative="greater")[1])
        assert r["p_value"] == pytest.approx(ps[-1])
    q = false_discovery_control(ps, method="bh")
    assert [rows[w]["q_value"] for w in words] == pytest.approx(list(q))
    # most significant first; the failing sentences most likely wrong first
    assert next(iter(enriched_words(corpus())))["word"] == "odd"
    assert odd["example_ids"] == ["c0", "c1", "c2", "c7"]
    assert odd["significant"] and not rows["fine"]["significant"]


def test_its_entry_turns_rows_into_findings() -> None:
    assert "enriched" in corpus_sources() and "enriched" in finding_kinds()
    assert kind_words()["enriched"] == "word enriched among failures (Fisher)"
    rows = [r for r in enriched_words(corpus()) if r["significant"]]
    found = build_findings(texts=TEXTS, ids=corpus().ids, fail=FAIL, p_wrong=corpus().p_wrong,
                           rule="r", rows={"enriched": rows})
    assert [(f["kind"], f["name"], f["n"], f["failures"]) for f in found] == [
        ("enriched", "odd", 4, 4)]
    assert found[0]["reason"].startswith("in 4 of the 4 sentences holding it that fail vs "
                                         "0.00 of the others (one-sided Fisher p=")


def test_an_unknown_source_name_says_did_you_mean() -> None:
    from discovery import check_source_names

    with pytest.raises(ConfigError, match=r"unknown finding source 'enrich' "
                                          r"\(slices.sources\): did you mean 'enriched'"):
        check_source_names(["enrich"])
