"""Discovery on labelled data: the gold failure rule, n-gram enrichment with punctuation
tokens (Tarone's count), column and text slices, gold occlusion, which rows the finders read
(the evaluation sample kept apart) and the findings rows they become."""

from __future__ import annotations

import numpy as np
import pytest

from discovery import (
    ErrorEnrichment,
    EvaluationConfig,
    GoldOcclusion,
    LabelledConfig,
    build_findings,
    column_slices,
    find_on_labelled,
    gold_failures,
    labelled_candidate,
    labelled_rows,
    load_evaluation_set,
)
from discovery._focus_rounds import ngram_pattern
from discovery._labelled import tarone_testable
from synth.core import ConfigError, DataError, LabelSpace

LABELS = ["negative", "positive"]


def probs(top: list[int], n_labels: int = 2, p: float = 0.8) -> np.ndarray:
    out = np.full((len(top), n_labels), (1 - p) / (n_labels - 1))
    out[np.arange(len(top)), top] = p
    return out


def test_gold_failures_is_top_label_against_gold_for_any_number_of_labels() -> None:
    labels = ["negative", "neutral", "positive"]
    task = np.array([[0.2, 0.5, 0.3], [0.4, 0.35, 0.25], [0.1, 0.1, 0.8]])
    assert gold_failures(task, ["neutral", "positive", "positive"], labels).tolist() == \
        [False, True, False]


def questions_data() -> tuple[list[str], np.ndarray]:
    """60 rows: the 12 questions all fail, 3 of the 48 statements fail."""
    texts, fail = [], []
    for i in range(12):
        texts.append(f"is movie number {i} any good ?")
        fail.append(True)
    for i in range(48):
        texts.append(f"movie number {i} is fine and the cast works well .")
        fail.append(i < 3)
    return texts, np.array(fail)


def test_enrichment_keeps_the_question_mark_as_a_token() -> None:
    texts, fail = questions_data()
    rows = ErrorEnrichment(min_support=2).fit(texts, fail).rows_
    sig = [r for r in rows if r["significant"]]
    top = sig[0]
    assert top["name"] in ("?", "good?", "any good?", "any", "good", "any good")
    names = {r["name"] for r in sig}
    # "?" and the question's words are one slice: the longest form that holds all 12 rows
    # stays, the shorter ones holding exactly the same rows go
    assert any("?" in n for n in names), names
    q = next(r for r in sig if "?" in r["name"])
    assert (q["n"], q["failures"]) == (12, 12)
    assert q["base_rate"] == pytest.approx(3 / 48)
    # a numeral in one row can never be significant: not counted as a test
    assert all(r["name"] != "7" for r in rows)


def test_enrichment_finds_a_slice_only_its_punctuation_names() -> None:
    # questions and statements differ only in their last mark
    texts = [f"the cast of movie {i} is good {'?' if i < 12 else '.'}" for i in range(60)]
    fail = np.array([i < 12 or i % 16 == 0 for i in range(60)])
    sig = [r for r in ErrorEnrichment().fit(texts, fail).rows_ if r["significant"]]
    # (the longest n-gram holding exactly these rows names them, as mining's drop_subsumed)
    assert [(r["name"], r["n"], r["failures"]) for r in sig] == [("is good?", 12, 12)]
    # with words alone (mining's tokens) nothing tells them apart
    from discovery import NgramMiner

    table = NgramMiner((1, 3), min_support=2).fit(texts, np.flatnonzero(fail)).table_
    assert not (table["q_value"] < 0.05).any()


def test_tarone_leaves_out_tests_that_cannot_reach_significance() -> None:
    min_p = np.array([1e-6, 1e-5, 0.2, 0.3, 0.5, 0.5])
    assert tarone_testable(min_p, 0.05).tolist() == [True, True, False, False, False, False]
    assert tarone_testable(np.zeros(0), 0.05).tolist() == []


def test_column_slices_find_a_failing_value_and_band_numbers() -> None:
    n = 80
    drug = ["Zomig" if i % 8 == 0 else f"drug{i % 5}" for i in range(n)]
    useful = [str(i) for i in range(n)]
    fail = np.array([d == "Zomig" for d in drug]) | (np.arange(n) % 13 == 0)
    rows = column_slices({"drugName": drug, "usefulCount": useful}, fail, min_size=5)
    top = rows[0]
    assert (top["name"], top["terms"], top["significant"]) == \
        ("drugName = Zomig", ["Zomig"], True)
    assert (top["n"], top["failures"]) == (10, 10)
    bands = [r["name"] for r in rows if r["name"].startswith(("usefulCount", "19.75"))
             or "usefulCount" in r["name"]]
    assert len(bands) == 4 and "usefulCount <= 19.75" in bands
    band = next(r for r in rows if r["name"] == "usefulCount <= 19.75")
    assert band["terms"] == [] and band["n"] == 20


def test_gold_occlusion_finds_the_word_the_model_leans_on_wrongly() -> None:
    # the task model calls anything with "frobnicate" positive; gold says negative
    base = ["a dull and slow story", "a bright and warm story", "a dull plot with frobnicate",
            "slow scenes and frobnicate", "warm bright frobnicate cast"]
    texts = [f"{t} number{i}" for i in range(6) for t in base]
    golds = ["negative", "positive", "negative", "negative", "positive"] * 6

    def task_fn(batch: list[str]) -> np.ndarray:
        out = []
        for t in batch:
            pos = ("bright" in t) + ("warm" in t) + 3 * ("frobnicate" in t)
            neg = ("dull" in t) + ("slow" in t)
            p = 1 / (1 + np.exp(-(pos - neg)))
            out.append([1 - p, p])
        return np.array(out)

    task = task_fn(texts)
    occ = GoldOcclusion(max_words=10).fit(texts, golds, LABELS, task, task_fn=task_fn)
    sig = [r for r in occ.rows_ if r["significant"]]
    assert sig and sig[0]["name"] == "frobnicate"
    assert sig[0]["failures"] == 12 and sig[0]["fixed"] == 12
    assert all(r["name"] not in ("dull", "bright") for r in sig)


def test_labelled_rows_keep_the_evaluation_sample_apart() -> None:
    labels = LabelSpace.of(LABELS)
    ev = EvaluationConfig(size=300)
    rows = labelled_rows(labels, LabelledConfig(data="evaluation"), ev)
    held = load_evaluation_set(labels, ev)
    assert rows.info["pool"] == 1706 and rows.info["evaluation_rows"] == 300
    assert rows.info["rows"] == 1406 == len(rows.data) and rows.info["same_as_evaluation"]
    assert not set(rows.data.texts) & set(held.texts)
    # naming the same packaged set is the same data
    same = labelled_rows(labels, LabelledConfig(data="packaged:rotten_tomatoes", size=100),
                         ev)
    assert same.info["evaluation_rows"] == 300 and len(same.data) == 100
    assert set(same.ids) <= set(rows.ids)
    assert same.data.counts() == rows.data.stratified_sample(100, same.info["sample_seed"]).counts()


def test_labelled_rows_of_a_file_with_metadata(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mine.tsv"
    path.write_text("review\tstars\tdrug\n" + "".join(
        f"text {i}\t{'positive' if i % 2 else 'negative'}\td{i % 3}\n" for i in range(20)))
    labels = LabelSpace.of(LABELS)
    cfg = LabelledConfig(data=str(path), text_field="review", label_field="stars",
                         metadata_fields=["drug"])
    rows = labelled_rows(labels, cfg, EvaluationConfig(size=5))
    assert rows.info == {"source": str(path), "pool": 20, "evaluation_rows": 0, "rows": 20,
                         "same_as_evaluation": False, "sample_seed": None}
    assert rows.data.metadata["drug"][:4] == ["d0", "d1", "d2", "d0"]
    assert rows.ids[:2] == ["L0", "L1"]
    bad = cfg.model_copy(update={"metadata_fields": ["condition"]})
    with pytest.raises(DataError, match=r"CSV has no column 'condition' \(its columns: "
                                        r"review, stars, drug\).*labelled.metadata_fields"):
        labelled_rows(labels, bad, EvaluationConfig())
    # the file as evaluation data too: its sample is kept apart, and all of it is refused
    both = EvaluationConfig(data=str(path), text_field="review", label_field="stars", size=5)
    assert labelled_rows(labels, cfg, both).info["rows"] == 15
    with pytest.raises(DataError, match="the evaluation sample takes all 20 rows"):
        labelled_rows(labels, cfg, both.model_copy(update={"size": 20}))


def test_labelled_rows_errors() -> None:
    labels = LabelSpace.of(LABELS)
    with pytest.raises(ConfigError, match="unknown packaged labelled set 'packaged:nope'"):
        labelled_rows(labels, LabelledConfig(data="packaged:nope"), EvaluationConfig())
    with pytest.raises(ConfigError, match="labelled negative/neutral/positive, but the task"):
        labelled_rows(labels, LabelledConfig(data="packaged:drugreviews"), EvaluationConfig())
    with pytest.raises(DataError, match="packaged:rotten_tomatoes set has no column 'drug'"):
        labelled_rows(labels, LabelledConfig(data="evaluation", metadata_fields=["drug"]),
                      EvaluationConfig())


def test_drug_reviews_are_read_with_their_columns() -> None:
    labels = LabelSpace.of(["negative", "neutral", "positive"])
    rows = labelled_rows(labels, LabelledConfig(data="packaged:drugreviews",
                                                metadata_fields=["drugName", "condition"]),
                         EvaluationConfig(data="packaged:drugreviews", size=150))
    assert rows.info["pool"] == 379 and rows.info["rows"] == 229
    assert "&#039;" not in " ".join(rows.data.texts)
    assert not rows.data.texts[0].startswith('"')
    assert rows.data.metadata["condition"].count("Birth Control") > 10


def test_find_on_labelled_rows_become_findings_with_their_data() -> None:
    texts, fail = questions_data()
    labels = LabelSpace.of(LABELS)
    golds = ["positive"] * len(texts)
    task = probs([0 if f else 1 for f in fail])
    from discovery import LabelledRows
    from discovery._data import LabeledSet

    rows = LabelledRows(LabeledSet(texts, golds), [f"L{i}" for i in range(len(texts))], {})
    found = find_on_labelled(rows, labels, task, LabelledConfig(data="x", min_size=5))
    assert all(r["data"] == "labelled" for r in found)
    q = next(r for r in found if r["kind"] == "ngram" and r["significant"])
    assert q["examples"][0] == {"id": "L0", "text": texts[0], "gold": "positive",
                                "predicted": "negative"}
    out = build_findings(texts=["a corpus sentence"], ids=["c1"], fail=np.array([False]),
                         p_wrong=np.array([0.1]), rule="r", rows={"labelled": found})
    lab = [r for r in out if r["data"] == "labelled"]
    assert lab and all(r["reason"].startswith("labelled data: the task model is wrong on")
                       for r in lab)
    assert {r["kind"] for r in lab} >= {"ngram", "metadata"}
    assert labelled_candidate(q) == q["name"]
    assert labelled_candidate({"terms": []}) == ""


def test_ngram_pattern_finds_punctuation_terms() -> None:
    assert ngram_pattern("?").search("is it good?")
    assert ngram_pattern("good?").search("is it good ?")
    assert not ngram_pattern("?").search("it is good.")
    assert ngram_pattern("film").search("the film.") and not ngram_pattern("film").search(
        "films")


def test_draw_shots_is_stratified_seeded_and_short() -> None:
    from discovery import draw_shots
    from discovery._data import LabeledSet

    texts = [f"short review number {i} here" for i in range(30)] + \
        ["a long one " * 30] * 5 + ["only two", "neutral words in a row"]
    golds = ["negative", "positive"] * 15 + ["neutral"] * 7
    data = LabeledSet(texts, golds)
    labels = ["negative", "neutral", "positive"]
    shots = draw_shots(data, labels, 7, seed=0, max_words=10)
    assert [s.label for s in shots] == ["negative", "neutral", "positive"] * 2 + ["negative"]
    # the neutral label has one fitting row: it gets it, then its shortest other row
    assert {s.text for s in shots if s.label == "neutral"} == {"neutral words in a row",
                                                               "only two"}
    assert all(len(s.text.split()) <= 10 for s in shots if s.label != "neutral")
    assert shots == draw_shots(data, labels, 7, seed=0, max_words=10)
    assert shots != draw_shots(data, labels, 7, seed=1, max_words=10)
    with pytest.raises(DataError, match="the labelled data has no 'other' row"):
        draw_shots(data, [*labels, "other"], 4, seed=0)


def test_shots_from_never_takes_an_evaluation_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import yaml

    from synthcheck import load_run_config

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"evaluation": {"size": 300},
                                    "reference": {"shots_from": {"k": 6, "seed": 3}}}))
    cfg = load_run_config(path)
    labels = LabelSpace.of(LABELS)
    held = set(load_evaluation_set(labels, cfg.evaluation).texts)
    texts = [s.text for s in cfg.reference.shots]
    assert len(texts) == 6 and not set(texts) & held
    assert [s.label for s in cfg.reference.shots] == LABELS * 3
    pool = set(labelled_rows(labels, LabelledConfig(data="evaluation"), cfg.evaluation)
               .data.texts)
    assert set(texts) <= pool
    # the drawn shots are what the reference hash covers
    from discovery import reference_hash

    other = load_run_config(path, ["reference.shots_from.seed=4"])
    assert reference_hash(cfg.reference, labels) != reference_hash(other.reference, labels)


def test_labelled_candidates_take_a_turn_even_where_the_corpus_has_none() -> None:
    from discovery import FocusBase, FocusConfig, MiningConfig, pool_candidates

    texts = ["my uncle and aunt.", "an odd zorb.", "zorb twice."] + [
        f"the movie number {i}." for i in range(8)] + [f"plain line {i}." for i in range(6)]
    fail = [True] * 3 + [True] * 4 + [False] * 4 + [False] * 6
    task = np.array([[0.9, 0.1]] * len(texts))
    ref = np.array([[0.1, 0.9] if f else [0.9, 0.1] for f in fail])
    base = FocusBase(texts=texts, task=task, reference=ref,
                     hard_indices=[i for i, f in enumerate(fail) if f])
    pool = {"uncle": "word", "zorb": "word", "Zomig": "labelled", "nowhere": "word"}
    chosen, sources = pool_candidates(base, FocusConfig(candidates=3, min_support=3),
                                      MiningConfig(), pool)
    # word, then labelled (no corpus sentence holds "Zomig": kept, generation brings them),
    # then the n-gram; a word in no sentence is still skipped
    assert chosen == ["uncle", "Zomig", "the movie number"]
    assert sources["Zomig"] == "labelled" and "nowhere" not in chosen
