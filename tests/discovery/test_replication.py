"""A slice defined by a property of the text (a length band, a question) found on the corpus
is read again on the focus rounds' new sentences, stratified by the candidate each was
generated for: where it fails again it is a confirmed finding, not an unconfirmed slice."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact

from discovery import build_findings
from discovery._finding_sources import MIN_REPLICATION
from discovery._slices import METADATA, property_predicate
from discovery._stats import stratified_excess


def test_property_predicate_reads_every_metadata_name_and_length_band() -> None:
    for name, pred in METADATA.items():
        assert property_predicate(name) is pred
    long, short = property_predicate("long (>= 4 words)"), property_predicate(
        "short (<= 2 words)")
    very = property_predicate("very long (>= 5 words)")
    assert long is not None and short is not None and very is not None
    assert long("one two three four") and not long("one two three")
    assert short("one two") and not short("one two three")
    assert very("a b c d e") and not very("a b c d")
    # a semantic cluster or a labelled file's column has no predicate on text
    assert property_predicate("cluster 3") is None
    assert property_predicate("drug = ibuprofen") is None
    assert property_predicate("long (>= many words)") is None


def test_stratified_excess_is_the_within_stratum_difference() -> None:
    # members fail more within each stratum: significant
    obs, exp, p = stratified_excess([(20, 8, 10, 8), (20, 8, 10, 8)])
    assert (obs, exp) == (16, pytest.approx(8.0)) and p < 0.001
    # confounded: every member is in the failing candidate's stratum and fails there as
    # often as its non-members; pooled, members fail far more (Fisher p < 0.01)
    strata = [(20, 18, 10, 9), (20, 2, 0, 0)]
    assert fisher_exact([[9, 1], [11, 19]], alternative="greater").pvalue < 0.01
    obs, exp, p = stratified_excess(strata)
    assert obs == 9 and exp == pytest.approx(9.0) and p > 0.5
    # exact, not the normal approximation (which gives 2e-6 here): both members of 40
    # sentences fail where 2 of the 40 do, p = 1 / C(40, 2)
    assert stratified_excess([(40, 2, 2, 2)])[2] == pytest.approx(1 / 780)
    # a stratum all members (or none), or all failing (or none), carries nothing
    assert stratified_excess([(5, 3, 5, 3), (1, 1, 1, 1), (6, 0, 3, 0)]) == (0, 0.0, 1.0)


def _sentences(n: int, long_fail: int, long_n: int, short_fail: int) -> list[dict]:
    """A candidate's judged new sentences: ``long_n`` of 12 words (``long_fail`` failing),
    the rest of 3 words (``short_fail`` failing)."""
    out = [{"text": " ".join(["long"] * 12), "failure": i < long_fail} for i in range(long_n)]
    out += [{"text": "short one here", "failure": i < short_fail} for i in range(n - long_n)]
    return out


def _focus_row(name: str, sentences: list[dict]) -> dict:
    fails = sum(s["failure"] for s in sentences)
    return {"ngram": name, "n": len(sentences), "failures": fails, "base_rate": 0.3,
            "q_value": 0.5, "confirmed": False, "source": "word", "examples": [],
            "sentences": sentences}


def _findings(focus: list[dict], alpha: float = 0.05) -> list[dict]:
    texts = ["a b c.", "d e f g h i j k l m n o.", "p q r.", "s t u v w x y z a b c d."]
    corpus_long = {"slice": "long (>= 10 words)", "terms": [], "example_ids": ["c1"],
                   "n": 2, "failures": 2, "rate": 1.0, "low": 0.34, "high": 1.0,
                   "base_rate": 0.0, "p_value": 0.01, "q_value": 0.03, "significant": True}
    return build_findings(texts=texts, ids=[f"c{i}" for i in range(4)],
                          fail=np.array([False, True, False, True]), p_wrong=np.full(4, 0.5),
                          rule="r", rows={"metadata": [corpus_long], "focus": focus},
                          focus_rule="fr", focus_alpha=alpha)


def test_a_length_band_that_fails_again_on_new_sentences_is_confirmed() -> None:
    focus = [_focus_row("alpha", _sentences(20, 6, 6, 2)),
             _focus_row("beta", _sentences(20, 5, 6, 3))]
    rows = _findings(focus)
    head = rows[0]
    assert (head["kind"], head["name"], head["confirmed"]) == (
        "metadata", "long (>= 10 words)", True)
    assert head["status"] == "confirmed" and head["confirmed_by"] == "replication"
    assert (head["n"], head["failures"]) == (12, 11)
    # its base rate: what its new sentences would fail at within their candidates
    assert head["base_rate"] == pytest.approx(head["expected"] / 12)
    assert head["expected"] == pytest.approx(6 * 8 / 20 + 6 * 8 / 20)
    assert "11 of 12 new sentences in this slice fail (fr)" in head["reason"]
    assert len(head["examples"]) == 11
    # the corpus row it replicates is the same slice: folded under it
    assert [(a["kind"], a["n"]) for a in head["also"]] == [("metadata", 2)]
    assert [r["name"] for r in rows].count("long (>= 10 words)") == 1


def test_a_band_explained_by_its_candidates_or_too_rare_stays_unconfirmed() -> None:
    # the long sentences all come from a failing candidate and fail there no more than
    # its short ones: the pooled rate is high, the stratified test is not
    focus = [_focus_row("alpha", _sentences(20, 8, 10, 8)),
             _focus_row("beta", _sentences(20, 0, 0, 1))]
    rows = _findings(focus)
    long = [r for r in rows if r["name"] == "long (>= 10 words)"]
    assert len(long) == 1 and not long[0]["confirmed"] and long[0]["n"] == 2
    # fewer new sentences with the property than MIN_REPLICATION: not read
    few = MIN_REPLICATION - 1
    focus = [_focus_row("alpha", _sentences(20, few, few, 0)),
             _focus_row("beta", _sentences(20, 0, 0, 0))]
    assert not _findings(focus)[0]["confirmed"]
    # ... counted in the strata that say something: a candidate whose every sentence is
    # long is its own evidence, not the band's (with it, 11 long sentences; without, 1)
    focus = [_focus_row("alpha", _sentences(40, 1, 1, 0)),
             _focus_row("beta", _sentences(10, 5, 10, 0))]
    assert not _findings(focus)[0]["confirmed"]
    # the focus rounds' alpha is the bar
    focus = [_focus_row("alpha", _sentences(12, 4, 5, 1)),
             _focus_row("beta", _sentences(12, 3, 5, 1))]
    assert _findings(focus, alpha=0.05)[0]["confirmed"]
    assert not _findings(focus, alpha=0.001)[0]["confirmed"]


def test_focus_rows_list_their_judged_new_sentences() -> None:
    from discovery._focus_stage import _row

    recs = [{"text": "a dull film.", "failure": True, "abstained": "",
             "task_probs": {}, "reference_probs": {}},
            {"text": "dull again.", "failure": False, "abstained": "",
             "task_probs": {}, "reference_probs": {}},
            {"text": "dull, unsure.", "failure": False, "abstained": "margin",
             "task_probs": {}, "reference_probs": {}}]
    row = _row("dull", recs, ["x."], np.array([False]), 5)
    assert row["sentences"] == [{"text": "a dull film.", "failure": True},
                                {"text": "dull again.", "failure": False}]


def test_a_replicated_slice_explains_no_more_than_its_corpus_row_did() -> None:
    # "never" (confirmed, 13/20 against the corpus's 0.25) fails more than the negation
    # slice (0.45 against 0.35), so it is a finding of its own; negation failing again on
    # the new sentences, at a rate measured on another scale, does not change that
    texts = ["not good.", "never again.", "fine.", "ok."]
    negation = {"slice": "negation", "terms": [], "example_ids": ["c0"], "n": 40,
                "failures": 18, "rate": 0.45, "low": 0.3, "high": 0.6, "base_rate": 0.35,
                "p_value": 0.01, "q_value": 0.03, "significant": True}
    never = {**_focus_row("never", [{"text": "never good.", "failure": True}] * 2),
             "n": 20, "failures": 13, "confirmed": True, "q_value": 0.001}
    neg = [{"text": "it is not bad.", "failure": True}] * 9 + \
        [{"text": "it is not bad at all.", "failure": False}]
    other = [{"text": "a fine film.", "failure": i < 2} for i in range(10)]
    focus = [never, _focus_row("alpha", neg + other), _focus_row("beta", neg + other)]
    rows = build_findings(texts=texts, ids=[f"c{i}" for i in range(4)],
                          fail=np.array([True, False, False, False]), p_wrong=np.full(4, 0.5),
                          rule="r", rows={"metadata": [negation], "focus": focus},
                          focus_rule="fr")
    by_name = {r["name"]: r for r in rows}
    assert by_name["negation"]["confirmed_by"] == "replication"
    assert by_name["negation"]["n"] == 20 and by_name["negation"]["failures"] == 18
    assert "explained_by" not in by_name["never"]


def test_length_bands_of_one_direction_are_one_finding() -> None:
    from discovery._findings import fold_bands, merge_same_slice
    from discovery._slices import length_band

    assert [length_band(n) for n in ("long (>= 20 words)", "very long (>= 30 words)",
                                     "short (<= 8 words)", "question", "cluster 2")] == \
        ["long", "long", "short", None, None]

    def band(name: str, data: str = "corpus", **kw: object) -> dict:
        return {"kind": "metadata", "name": name, "terms": [], "data": data, "n": 10,
                "failures": 6, "rate": 0.6, "base_rate": 0.3, "q_value": 0.01,
                "example_ids": [], **kw}

    rows = [band("very long (>= 27 words)", confirmed_by="replication", examples=["new."]),
            {**band("question"), "name": "question"},
            band("long (>= 20 words)"), band("short (<= 8 words)"),
            band("long (>= 25 words)", "labelled"),
            band("very long (>= 27 words)", example_ids=["c3", "c1"])]
    out = fold_bands(merge_same_slice(rows))
    assert [r["name"] for r in out] == ["very long (>= 27 words)", "question",
                                        "short (<= 8 words)"]
    head = out[0]
    assert [a["name"] for a in head["also"]] == ["very long (>= 27 words)",
                                                 "long (>= 20 words)", "long (>= 25 words)"]
    assert head["also"][0]["kind"] == "metadata" and head["data_all"] == ["corpus", "labelled"]
    # the replicated head shows the corpus row's failing sentences too
    assert head["example_ids"] == ["c3", "c1"] and head["examples"] == ["new."]


def test_build_findings_names_one_length_failure_once() -> None:
    # the corpus's two long bands both fail: one finding, the other under its also
    texts = ["a b c.", "d e f g h i j k l m n o.", "p q r.", "s t u v w x y z a b c d."]
    long_rows = [{"slice": name, "terms": [], "example_ids": ["c1"], "n": 2, "failures": 2,
                  "rate": 1.0, "low": 0.34, "high": 1.0, "base_rate": 0.0, "p_value": 0.01,
                  "q_value": q, "significant": True}
                 for name, q in (("long (>= 10 words)", 0.03), ("very long (>= 12 words)", 0.04))]
    rows = build_findings(texts=texts, ids=[f"c{i}" for i in range(4)],
                          fail=np.array([False, True, False, True]), p_wrong=np.full(4, 0.5),
                          rule="r", rows={"metadata": long_rows})
    assert [r["name"] for r in rows] == ["long (>= 10 words)"]
    assert [a["name"] for a in rows[0]["also"]] == ["very long (>= 12 words)"]
