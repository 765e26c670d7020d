"""One slice is one finding: rows naming the same terms (or, without terms, the same name)
from several finders or data fold into the best-ranked of them."""

from __future__ import annotations

import pytest

from discovery._findings import fold_nested, merge_same_slice, slice_key


def row(name: str, kind: str, data: str = "corpus", terms: list[str] | None = None,
        **kw: object) -> dict[str, object]:
    return {"name": name, "kind": kind, "data": data, "terms": terms if terms is not None
            else [name], "n": 10, "failures": 6, "rate": 0.6, "low": 0.31,
            "base_rate": 0.2, "q_value": 0.01, **kw}


def test_same_terms_fold_into_the_first_with_every_data_named() -> None:
    rows = [row("just", "focus"), row("Just", "word", "labelled"),
            row("just", "ngram", "labelled", n=27), row("too", "word"),
            row("quotation", "metadata", terms=[]), row("quotation", "metadata", "labelled",
                                                        terms=[])]
    out = merge_same_slice(rows)
    assert [r["name"] for r in out] == ["just", "too", "quotation"]
    assert out[0]["kind"] == "focus" and out[0]["data_all"] == ["corpus", "labelled"]
    assert [(a["kind"], a["data"], a["n"]) for a in out[0]["also"]] == \
        [("word", "labelled", 10), ("ngram", "labelled", 27)]
    assert "also" not in out[1] and out[1]["data_all"] == ["corpus"]
    assert out[2]["data_all"] == ["corpus", "labelled"] and len(out[2]["also"]) == 1


def test_different_terms_stay_apart() -> None:
    assert slice_key(row("a b", "ngram", terms=["a", "b"])) == \
        slice_key(row("b | a", "group", terms=["B", "a"]))
    assert slice_key(row("a", "word")) != slice_key(row("a b", "ngram", terms=["a", "b"]))
    assert slice_key(row("x", "metadata", terms=[])) != slice_key(row("x", "word"))
    rows = [row("a", "word"), row("b", "word"), row("a b", "ngram", terms=["a", "b"])]
    assert merge_same_slice(rows) == [{**r, "data_all": ["corpus"]} for r in rows]


def test_a_slice_named_coarser_or_finer_folds_into_the_higher_ranked_name() -> None:
    rows = [row("having seen", "focus"), row("too | really", "group", terms=["too", "really"]),
            row("having", "word", n=9), row("too", "word", "labelled"),
            row("seen", "word"), row("fun", "word"),
            # a semantic slice's terms describe it, they do not define it: never folded
            row("too | film", "semantic", terms=["too", "film"]),
            # a sub-slice failing significantly more than its coarser row stays
            row("too much", "ngram", terms=["too much"], rate=0.95, low=0.7)]
    out = fold_nested(merge_same_slice(rows))
    assert [r["name"] for r in out] == ["having seen", "too | really", "fun", "too | film",
                                        "too much"]
    assert [(a["name"], a["kind"]) for a in out[0]["also"]] == [("having", "word"),
                                                                ("seen", "word")]
    assert out[1]["data_all"] == ["corpus", "labelled"]
    assert "also" not in out[2]


def test_a_sub_slice_of_a_folded_row_folds_into_its_finding() -> None:
    # "just" folds under the phrase "just plain" (a finer name); "just too" and "not just"
    # lie inside "just", so they are the same failure too, unless one fails significantly
    # more than "just"; a group holding "just" among other words is no sub-slice of it
    rows = [row("just plain", "focus"), row("range", "word"), row("just", "ngram"),
            row("just too", "phrase", n=2, failures=2, rate=1.0, low=0.34),
            row("not just", "phrase", n=1, failures=1, rate=1.0, low=0.21),
            row("just | only", "group", terms=["just", "only"]),
            row("just so", "ngram", terms=["just so"], rate=0.98, low=0.8),
            row("too much", "ngram", terms=["too much"])]
    out = fold_nested(merge_same_slice(rows))
    assert [r["name"] for r in out] == ["just plain", "range", "just | only", "just so",
                                        "too much"]
    assert [a["name"] for a in out[0]["also"]] == ["just", "just too", "not just"]
    # inside the higher-ranked group itself
    group = [row("too | really", "group", terms=["too", "really"]),
             row("too much", "ngram", terms=["too much"]), row("much", "word")]
    assert [r["name"] for r in fold_nested(group)] == ["too | really", "much"]


def test_the_summary_names_a_folded_row() -> None:
    from synthcheck._summary import also_text

    head = fold_nested(merge_same_slice([row("having seen", "focus"),
                                         row("having", "word", n=9, failures=4)]))[0]
    assert also_text(head) == "; also corpus word 'having' 4/9"
    group = fold_nested([row("galli", "focus", confirmed=True),
                         _group(galli=(8, 7), milani=(8, 6), thati=(8, 5))])[0]
    assert also_text(group) == ("; per word (failures in new sentences holding it alone): "
                                "galli 7/8, milani 6/8, thati 5/8; also corpus focus "
                                "'galli' 6/10")


def test_build_findings_names_a_slice_once() -> None:
    import numpy as np

    from discovery import build_findings

    texts = ["having seen it.", "having seen that.", "having a go.", "plain.", "more plain."]
    ids = [f"c{i}" for i in range(5)]
    words = [{"kind": "phrase", "word": "having seen", "terms": ["having seen"], "n": 2,
              "failures": 2, "base_rate": 0.0, "task_shift": 0.6, "reference_shift": 0.0,
              "z": 5.0, "q_value": 1e-4, "example_ids": ["c0", "c1"]},
             {"kind": "word", "word": "having", "terms": ["having"], "n": 3, "failures": 2,
              "base_rate": 0.0, "task_shift": 0.4, "reference_shift": 0.0, "z": 3.0,
              "q_value": 1e-3, "example_ids": ["c0", "c1"]}]
    rows = build_findings(texts=texts, ids=ids, fail=np.array([True, True, False, False,
                                                               False]),
                          p_wrong=np.full(5, 0.5), rule="r", rows={"occlusion": words})
    assert [r["name"] for r in rows] == ["having seen"]
    assert [a["name"] for a in rows[0]["also"]] == ["having"]


def test_sub_slices_of_a_failing_metadata_slice_are_one_finding() -> None:
    from discovery._findings import fold_explained
    from synthcheck._summary import also_text

    meta = dict(terms=[], n=100, failures=60, rate=0.6, low=0.5, above_base=True)
    rows = [row("can't believe", "focus", confirmed=True), row("movies", "word"),
            row("never", "word"), row("no | only", "group", terms=["no", "only"]),
            row("nothing", "word", "labelled"),
            # a sub-slice failing significantly worse than the slice is news of its own
            row("not once", "ngram", terms=["not once"], rate=0.95, low=0.85),
            row("2 stars", "ngram", terms=["2 stars"]),
            row("negation", "metadata", **meta), row("digits", "metadata", **meta),
            # how a sentence starts is not a property of its words: never a container
            row("what", "word"), row("question", "metadata", **meta)]
    rows = [{**r, "data_all": [r["data"]]} for r in rows]
    out = fold_explained(rows)
    assert [r["name"] for r in out] == ["can't believe", "movies", "no | only", "not once",
                                        "2 stars", "what", "question"]
    head = out[0]
    assert head["explained_by"] == "negation" and head["data_all"] == ["corpus", "labelled"]
    assert [a["name"] for a in head["also"]] == ["never", "nothing", "negation"]
    assert out[4]["explained_by"] == "digits" and [a["name"] for a in out[4]["also"]] == \
        ["digits"]
    assert also_text(head).startswith("; inside the metadata slice 'negation'; also corpus "
                                      "word 'never' 6/10")
    # a metadata slice that does not fail more than the rest explains nothing, but failing
    # rows whose every word is a negation are still one finding, headed by the best-ranked
    # of them, which names what they share; "can't believe" and "not once" merely hold a
    # negation; "2 stars" is the only digits row
    calm = [{**r, "above_base": False} if r["kind"] == "metadata" else {**r, "above_base": True}
            for r in rows]
    out = fold_explained(calm)
    assert [r["name"] for r in out] == ["can't believe", "movies", "never", "no | only",
                                        "not once", "2 stars", "negation", "digits", "what",
                                        "question"]
    assert out[2]["shared_property"] == "negation" and "explained_by" not in out[2]
    assert [a["name"] for a in out[2]["also"]] == ["nothing"]
    assert out[2]["data_all"] == ["corpus", "labelled"]
    assert also_text(out[2]).startswith(
        "; one finding by the property every term shares: 'negation'; also labelled word")
    assert "shared_property" not in out[0] and "shared_property" not in out[5]
    # without a second row of the property there is nothing to fold
    alone = [r for r in calm if r["name"] not in ("never", "nothing")]
    assert fold_explained(alone) == alone


def test_build_findings_folds_words_inside_a_failing_metadata_slice() -> None:
    import numpy as np

    from discovery import build_findings

    texts = ["never again.", "not good.", "fine.", "plain.", "more plain.", "ok."]
    ids = [f"c{i}" for i in range(6)]
    words = [{"kind": "word", "word": w, "terms": [w], "n": 1, "failures": 1,
              "base_rate": 0.0, "task_shift": 0.6, "reference_shift": 0.0, "z": 5.0,
              "q_value": q, "example_ids": [i]} for w, q, i in (("never", 1e-4, "c0"),
                                                                ("not", 1e-3, "c1"))]
    meta = [{"slice": "negation", "terms": [], "example_ids": ["c0", "c1"], "n": 2,
             "failures": 2, "rate": 1.0, "low": 0.34, "high": 1.0, "base_rate": 0.0,
             "p_value": 0.07, "q_value": 0.07, "significant": True}]
    rows = build_findings(texts=texts, ids=ids, fail=np.array([True, True] + [False] * 4),
                          p_wrong=np.full(6, 0.5), rule="r",
                          rows={"occlusion": words, "metadata": meta})
    assert [(r["name"], r.get("explained_by")) for r in rows] == [("never", "negation")]
    assert [a["name"] for a in rows[0]["also"]] == ["not", "negation"]


def test_a_focus_row_confirmed_by_invariance_is_a_finding_at_its_own_rate() -> None:
    import numpy as np

    from discovery import build_findings
    from discovery._finding_sources import INVARIANCE_RULE
    from discovery._focus_rounds import confirm_candidates

    # Half the corpus fails (a task model at chance). "having seen" fails 13 of 29 new
    # sentences (below the base rate) but deleting it changes the task model's label alone
    # on 20 of 29, other words on 2 of 29: a finding confirmed by invariance, whose rate
    # and base rate are the invariance test's, above the unconfirmed word "plain".
    texts = ["having seen it.", "plain.", "more plain.", "plain again.", "x.", "y."]
    ids = [f"c{i}" for i in range(6)]
    fail = np.array([True, True, True, False, False, False])
    focus = confirm_candidates([{"ngram": "having seen", "n": 29, "failures": 13,
                                 "flipped": 20, "invariance_n": 29, "control_n": 29,
                                 "control_flipped": 2, "task_shift": 0.3,
                                 "reference_shift": 0.0}], 3, 6, 0.05)
    words = [{"kind": "word", "word": "plain", "terms": ["plain"], "n": 3, "failures": 2,
              "base_rate": 0.5, "task_shift": 0.4, "reference_shift": 0.0, "z": 3.0,
              "q_value": 1e-9, "example_ids": ["c1", "c2"]}]
    rows = build_findings(texts=texts, ids=ids, fail=fail, p_wrong=np.full(6, 0.5),
                          rule="r", rows={"occlusion": words, "focus": focus},
                          focus_rule="f")
    head = rows[0]
    assert head["name"] == "having seen" and head["confirmed"] and head["rank"] == 1
    assert (head["failures"], head["n"]) == (20, 29) and head["rule"] == INVARIANCE_RULE
    assert head["base_rate"] == pytest.approx(2 / 29) and head["above_base"]
    assert (head["error_failures"], head["error_n"], head["error_base_rate"]) == (13, 29, 0.5)
    assert "invariance" in head["reason"] and "13 of 29" in head["reason"]
    assert rows[1]["name"] == "plain" and rows[1]["rule"] == "r"


def test_rows_of_two_rules_fold_by_the_rule_they_share() -> None:
    from discovery._findings import fold_explained

    # '"' is confirmed by invariance: 21 of 23 flips against 0.05 for other words, a rate no
    # row judged by the reference can reach; by the reference it fails 12 of 23 against
    # 0.40, no worse than the quotation slice (0.68 against 0.38): one finding.
    inv = row('"', "focus", n=23, failures=21, rate=21 / 23, low=0.73, base_rate=0.05,
              confirmed=True, error_failures=12, error_n=23, error_base_rate=0.40)
    meta = row("quotation", "metadata", terms=[], n=44, failures=30, rate=0.68, low=0.53,
               base_rate=0.38, above_base=True)
    out = fold_explained([{**r, "data_all": ["corpus"]} for r in (inv, meta)])
    assert [(r["name"], r.get("explained_by")) for r in out] == [('"', "quotation")]
    # ...but one that also fails far more often by the reference stays news of its own
    worse = {**inv, "error_failures": 23}
    assert len(fold_explained([{**r, "data_all": ["corpus"]} for r in (worse, meta)])) == 2
    # and a word judged by the reference folds under an invariance row by their errors
    word = row("having", "word", n=9, failures=6, rate=0.67, low=0.35, base_rate=0.46)
    phrase = row("having seen", "focus", n=29, failures=20, rate=0.69, low=0.51,
                 base_rate=0.07, error_failures=13, error_n=29, error_base_rate=0.47)
    assert [r["name"] for r in fold_nested([phrase, word])] == ["having seen"]
    sure = {**word, "low": 0.6}  # significantly above the phrase's error rate (0.45)
    assert [r["name"] for r in fold_nested([phrase, sure])] == ["having seen", "having"]


def _group(**counts: tuple[int, int]) -> dict[str, object]:
    names = list(counts)
    return row(" | ".join(names), "focus", terms=names, confirmed=True,
               confirmed_by="failure rate",
               term_counts={t: {"n": n, "failures": k} for t, (n, k) in counts.items()})


def test_a_confirmed_group_whose_other_words_fail_names_the_finding() -> None:
    from discovery._findings import generalizes

    word = row("galli", "focus", confirmed=True)
    # milani and thati fail on 14 of 16 new sentences, far above the base rate 0.2
    group = _group(galli=(8, 7), milani=(8, 7), thati=(8, 7))
    assert generalizes(group, frozenset({"galli"}))
    out = fold_nested([word, group, row("fun", "word")])
    assert [r["name"] for r in out] == ["galli | milani | thati", "fun"]
    assert [a["name"] for a in out[0]["also"]] == ["galli"]
    # its other words fail at the base rate: the group is the word's, and folds under it
    weak = _group(galli=(8, 8), milani=(8, 2), thati=(8, 1))
    assert not generalizes(weak, frozenset({"galli"}))
    out = fold_nested([word, weak])
    assert [r["name"] for r in out] == ["galli"]
    assert [a["name"] for a in out[0]["also"]] == ["galli | milani | thati"]
    # not confirmed, or no per-word counts: never
    assert not generalizes({**group, "confirmed": False}, frozenset({"galli"}))
    assert not generalizes({k: v for k, v in group.items() if k != "term_counts"},
                           frozenset({"galli"}))
    # or by the invariance test: milani and thati flip the task model alone on 5 of 6 new
    # sentences, where deleting other words flips it on 0.06
    inv = {**_group(galli=(9, 8), milani=(2, 1), thati=(4, 2)), "invariance_base": 0.06}
    inv["term_counts"] = {t: {**c, "invariance_n": c["n"], "flipped": f}
                          for (t, c), f in zip(inv["term_counts"].items(), (8, 1, 4),
                                               strict=True)}
    assert generalizes(inv, frozenset({"galli"}))
    assert not generalizes({**inv, "invariance_base": 0.5}, frozenset({"galli"}))


def test_a_group_names_the_finding_only_on_its_other_words_evidence() -> None:
    from discovery._findings import generalizes

    # "ida galli" holds the head's word: its sentences are the head's evidence, not milani's
    group = _group(**{"ida galli": (18, 17), "milani": (0, 0)})
    assert not generalizes(group, frozenset({"galli"}))
    assert not generalizes(_group(**{"just too": (9, 9), "just plain": (9, 9)}),
                           frozenset({"just"}))
    # a word failing significantly worse than its group keeps the name (its failure is
    # the sharper one), the group folded under it as before
    word = row("galli", "focus", confirmed=True, n=40, failures=39, rate=0.975, low=0.87)
    strong = {**_group(galli=(8, 7), milani=(16, 9), thati=(16, 9)), "rate": 0.55,
              "low": 0.40}
    assert generalizes(strong, frozenset({"galli"}))
    out = fold_nested([word, strong])
    assert [r["name"] for r in out] == ["galli"]
    assert [a["name"] for a in out[0]["also"]] == ["galli | milani | thati"]
    # after the swap, a later finding of another of its words is the same failure
    out = fold_nested([row("galli", "focus", confirmed=True), row("fun", "word"),
                       _group(galli=(8, 7), milani=(8, 7), thati=(8, 7)),
                       row("thati", "word")])
    assert [r["name"] for r in out] == ["galli | milani | thati", "fun"]
    assert [a["name"] for a in out[0]["also"]] == ["galli", "thati"]
    assert out[0]["data_all"] == ["corpus"]


def test_a_rare_row_inside_higher_rows_moves_down_unless_confirmed() -> None:
    from discovery._findings import _covered_last

    texts = ["my uncle and aunt.", "not a grey day.", "not again.", "plain.", "more."]
    rows = [row("uncle | aunt", "group", terms=["uncle", "aunt"]),
            row("not", "focus", confirmed=True), row("uncle", "word"),
            row("grey", "focus", confirmed=True), row("plain", "word")]
    out = _covered_last(rows, texts)
    # "uncle" (one sentence, the group's) is the group's echo: after every other row;
    # "grey" (one sentence, inside "not"'s) was confirmed on new sentences of its own
    assert [r["name"] for r in out] == ["uncle | aunt", "not", "grey", "plain", "uncle"]
    assert out[-1]["covered_by"] == "uncle | aunt" and "covered_by" not in out[2]


def test_one_property_folds_only_failing_rows_whose_every_word_is_its_marker() -> None:
    from discovery._findings import fold_explained

    up = dict(above_base=True)
    rows = [row("not", "focus", confirmed=True), row("my uncle", "word", **up),
            row("i'm | we're", "group", terms=["i'm", "we're"], **up),
            row("it's not", "phrase", **up), row("isn't", "word", "labelled", **up),
            row("i loved", "ngram", **up), row("i'd", "word", **up),
            row("don't", "word", rate=0.1, low=0.05),  # below its base rate: not folded
            row("2020s", "word", **up)]
    rows = [{**r, "data_all": [r["data"]]} for r in rows]
    out = fold_explained(rows)
    # "not" and "isn't" are negations, "i'm | we're" and "i'd" first person; "my uncle",
    # "i loved" and "it's not" merely hold a marker; one digits row is nothing to fold
    assert [r["name"] for r in out] == ["not", "my uncle", "i'm | we're", "it's not",
                                        "i loved", "don't", "2020s"]
    assert out[0]["shared_property"] == "negation" and out[0]["data_all"] == [
        "corpus", "labelled"]
    assert [a["name"] for a in out[0]["also"]] == ["isn't"]
    assert out[2]["shared_property"] == "first person"
    assert [a["name"] for a in out[2]["also"]] == ["i'd"]
    # where the negation slice itself fails, the rows it leaves (worse than it) stay apart
    meta = row("negation", "metadata", terms=[], n=100, failures=60, rate=0.6, low=0.5,
               above_base=True, data_all=["corpus"])
    strong = [{**r, "rate": 0.95, "low": 0.85} if r["name"] in ("not", "isn't") else r
              for r in rows]
    out = fold_explained([*strong, meta])
    assert [r["name"] for r in out][:2] == ["not", "my uncle"]
    assert "shared_property" not in out[0] and "isn't" in [r["name"] for r in out]


def test_a_finding_inside_a_failing_row_found_later_is_the_same_failure() -> None:
    from discovery._findings import _refinements_last

    # "a great" ranks above the word "great", which then folds under "great way": only once
    # every row is read is "a great" known to lie inside a failing row of a higher finding
    rows = [row("great way", "focus", confirmed=True, above_base=True),
            row("a great", "focus", confirmed=True, above_base=True),
            row("great", "word", low=0.45, above_base=True),
            # inside "great" too, but failing significantly more than it: a worse sub-slice
            row("great example", "focus", rate=0.95, low=0.7, confirmed=True,
                above_base=True),
            row("plot", "focus", confirmed=True, above_base=True),
            row("dull", "word", confirmed=False, above_base=True)]
    out = fold_nested(merge_same_slice(rows))
    assert [r["name"] for r in out] == ["great way", "great example", "plot", "dull"]
    assert [a["name"] for a in out[0]["also"]] == ["great", "a great"]
    assert out[1]["refines"] == "great way" and "refines" not in out[2]
    from synthcheck._summary import also_text
    assert out[1]["refines_row"] == "great"
    assert also_text(out[1]) == "; a worse sub-slice of 'great' (finding 'great way')"
    # listed after the findings of its standing that refine none, never below a weaker one
    assert [r["name"] for r in _refinements_last(out)] == ["great way", "plot",
                                                           "great example", "dull"]


def test_a_sub_slice_of_a_row_that_does_not_fail_significantly_stays_where_it_ranks() -> None:
    # "great" is confirmed by invariance, but its errors (11/31) are at its base rate
    # (0.38): "great film" failing on every sentence is the failure, not an echo of it;
    # "superb day" lies inside "superb", whose errors (25/31) are well above it
    inv = dict(confirmed=True, above_base=True, confirmed_by="invariance", error_n=31,
               error_base_rate=0.38, rate=0.3, low=0.16, base_rate=0.05)
    rows = [row("great", "focus", error_failures=11, **inv),
            row("superb", "focus", error_failures=25, **inv),
            row("great film", "phrase", rate=1.0, low=0.51, base_rate=0.38,
                above_base=True),
            row("superb day", "phrase", rate=1.0, low=0.85, base_rate=0.38,
                above_base=True)]
    out = fold_nested(merge_same_slice(rows))
    assert [(r["name"], r.get("refines")) for r in out] == [
        ("great", None), ("superb", None), ("great film", None), ("superb day", "superb")]


def test_a_finding_folded_in_the_second_pass_brings_its_rows_and_data() -> None:
    # "a great" (with a labelled row under it) folds into "great way" through "great",
    # folded there later; "a great deal" lies inside "a great", now a row of that finding
    rows = [row("great way", "focus", above_base=True),
            row("a great", "focus", above_base=True),
            row("a great", "word", "labelled", above_base=True),
            row("great", "word", low=0.45, above_base=True),
            row("a great deal", "ngram", rate=0.95, low=0.7, above_base=True)]
    out = fold_nested(merge_same_slice(rows))
    assert [(r["name"], r.get("refines")) for r in out] == [
        ("great way", None), ("a great deal", "great way")]
    assert out[0]["data_all"] == ["corpus", "labelled"]
    assert [(a["name"], a["data"]) for a in out[0]["also"]] == [
        ("great", "corpus"), ("a great", "corpus"), ("a great", "labelled")]
    assert out[1]["refines_row"] in ("great", "a great")
    # the rows a finding brings are checked too: "a lot" (failing worse) lies inside the
    # word "a", which came to "great way" with "a great"
    rows = [row("great way", "focus", above_base=True), row("a great", "focus", above_base=True),
            row("a", "word", low=0.45, above_base=True),
            row("great", "word", low=0.45, above_base=True),
            row("a lot", "ngram", rate=0.95, low=0.7, above_base=True)]
    out = fold_nested(merge_same_slice(rows))
    assert [a["name"] for a in out[0]["also"]] == ["great", "a great", "a"]
    assert [(r["name"], r.get("refines"), r.get("refines_row")) for r in out[1:]] == [
        ("a lot", "great way", "a")]


def test_refines_names_the_finding_that_holds_the_row_after_every_fold() -> None:
    from discovery._findings import _refinements_last, fold_explained

    up = dict(confirmed=False, above_base=True)
    meta = dict(terms=[], n=100, failures=90, rate=0.9, low=0.8, **up)
    # "not" folds under the failing metadata slice "negation"; "not funny" fails worse than
    # both: it refines the finding that now holds "not", "negation"
    rows = [row("negation", "metadata", **meta), row("not", "word", low=0.45, **up),
            row("not funny", "ngram", rate=1.0, low=0.95, **up), row("plot", "word", **up)]
    out = _refinements_last(fold_explained(fold_nested(merge_same_slice(rows))))
    assert [(r["name"], r.get("refines")) for r in out] == [
        ("negation", None), ("plot", None), ("not funny", "negation")]
    assert out[2]["refines_row"] == "not"
    # "not great" refines "great", but heads the failing negation slice that folds under
    # it: a failure of its own, it refines nothing and keeps its rank above "plot"
    rows = [row("great", "word", low=0.45, **up),
            row("not great", "ngram", rate=0.95, low=0.7, **up),
            row("plot", "word", **up), row("negation", "metadata", **meta)]
    nested = fold_nested(merge_same_slice(rows))
    assert nested[1]["refines"] == "great"
    out = _refinements_last(fold_explained(nested))
    assert [(r["name"], r.get("explained_by"), r.get("refines")) for r in out] == [
        ("great", None, None), ("not great", "negation", None), ("plot", None, None)]


def test_build_findings_lists_a_worse_sub_slice_after_the_findings_it_does_not_refine() -> None:
    import numpy as np

    from discovery import build_findings

    words = [{"kind": "phrase" if " " in w else "word", "word": w, "terms": [w], "n": n,
              "failures": k, "base_rate": 0.35, "task_shift": 0.6, "reference_shift": 0.0,
              "z": 5.0, "q_value": q, "example_ids": []}
             for w, n, k, q in (("great way", 4, 4, 1e-6), ("a great", 4, 2, 1e-5),
                                ("great example", 8, 8, 1e-4), ("great", 26, 16, 1e-3),
                                ("boring", 3, 3, 1e-2))]
    rows = build_findings(texts=["plain."] * 4, ids=[f"c{i}" for i in range(4)],
                          fail=np.zeros(4, dtype=bool), p_wrong=np.full(4, 0.5), rule="r",
                          rows={"occlusion": words})
    # "great" (16/26 against a base rate of 0.35) folds under "great way", and "a great"
    # (2/4) with it; "great example" (8/8) fails significantly more than "great": it stays,
    # after "boring", which refines nothing
    assert [(r["name"], r.get("refines")) for r in rows] == [
        ("great way", None), ("boring", None), ("great example", "great way")]
    assert [a["name"] for a in rows[0]["also"]] == ["great", "a great"]
