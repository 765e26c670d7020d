"""The planted-slice benchmark's parts (bench/_planted.py, bench/discovery_power.py) on tiny
inline corpora: slice membership, the choice of slices by counting, the planted task model
through the real ``python:`` loader, reading findings, matching them, and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

from bench._planted import (  # noqa: E402
    Finding,
    PlantedModel,
    Slice,
    choose_slices,
    match,
    read_findings,
    write_model_module,
)

LABELS = ["negative", "positive"]


def leaning_negative(texts: list[str]) -> list[dict[str, float]]:
    """A base task model for the tests: 0.8 negative on every text."""
    return [{"negative": 0.8, "positive": 0.2} for _ in texts]


def test_membership_by_kind() -> None:
    word = Slice("w", "word", ("film",), band="frequent")
    phrase = Slice("p", "phrase", ("having seen",), band="phrase")
    group = Slice("g", "group", ("mother", "uncle"), band="family")
    long = Slice("l", "long", min_words=5)
    assert [word.member(t) for t in ["The film, again.", "Two films.", "FILM!"]] == [
        True, False, True]
    assert [phrase.member(t) for t in ["Having seen it", "seen having", "having  seen"]] == [
        True, False, True]
    assert [group.member(t) for t in ["My uncle.", "My mother's", "My aunt."]] == [
        True, False, False]
    assert [long.member(t) for t in ["one two three four", "one two three four five"]] == [
        False, True]


def test_named_by() -> None:
    word = Slice("w", "word", ("film",), band="frequent")
    group = Slice("g", "group", ("mother", "uncle", "wife"), band="family")
    assert word.named_by(["the film"]) is True
    assert word.named_by(["films"]) is False
    assert group.named_by(["mother"]) is False  # one word of a group is not the group
    assert group.named_by(["mother", "my uncle"]) is True
    assert Slice("l", "long", min_words=5).named_by(["long"]) is False


def corpus() -> list[str]:
    """200 sentences: "movie" in 8 (4%: frequent), "banana" in 2 (1%: medium), "zebra" in 3
    (rare), "horror movies" in 4, four family words once each, one sentence of 30 words."""
    filler = [f"we saw it and it was ok {i}" for i in range(178)]
    return filler + [f"the movie {i}" for i in range(8)] + [
        "a banana", "the banana", "a zebra", "the zebra", "our zebra",
        "some horror movies", "all horror movies", "two horror movies", "no horror movies",
        "my mother", "his brother", "her wife", "our son",
        " ".join(["word"] * 30),
    ]


def test_choose_slices_counts_the_corpus() -> None:
    texts = corpus()
    assert len(texts) == 200
    got = [(s.name, s.kind, s.terms, s.band) for s in choose_slices(texts, seed=0)]
    assert got == [
        ("word:frequent", "word", ("movie",), "frequent"),
        ("word:medium", "word", ("banana",), "medium"),
        ("word:rare", "word", ("zebra",), "rare"),
        ("phrase", "phrase", ("horror movies",), "phrase"),
        ("group:family", "group", ("mother", "brother", "wife", "son"), "family"),
        ("long", "long", (), "structure"),
    ]
    # Slices are disjoint: a rare word with a sentence in the long slice is not planted
    # (its trigger would be hidden there), so here no rare word is left.
    texts2 = [t for t in texts[:-1] if t != "our zebra"] + [
        "we saw it", " ".join(["zebra"] + ["word"] * 29)]  # "zebra": 3 sentences again
    assert "word:rare" not in [s.name for s in choose_slices(texts2, seed=0)]
    # Leave out a kind; a group of fewer than 4 words is not planted.
    got = choose_slices(texts[:-4], seed=0, kinds=("group", "rare"))
    assert [s.name for s in got] == ["word:rare"]


def test_planted_model_flips_only_members(tmp_path: Path) -> None:
    sl = [Slice("w", "word", ("film",), band="frequent")]
    model = PlantedModel(sl, labels=LABELS, base="python:test_planted:leaning_negative")
    assert model.predict_proba(["a film", "a book"]) == [
        {"negative": 0.2, "positive": 0.8}, {"negative": 0.8, "positive": 0.2}]


def test_model_module_loads_through_the_python_spec(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from discovery import load_task_scorer

    sl = [Slice("l", "long", min_words=3)]
    spec = write_model_module(tmp_path, "planted_t1", sl, LABELS,
                              base="python:test_planted:leaning_negative")
    assert spec == "python:planted_t1:model"
    monkeypatch.syspath_prepend(str(tmp_path))
    scorer = load_task_scorer(spec, LABELS)
    assert scorer.predict_proba(["one two three", "one two"]) == [
        {"negative": 0.2, "positive": 0.8}, {"negative": 0.8, "positive": 0.2}]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_read_findings_focus_then_ngrams_or_the_unified_file(tmp_path: Path) -> None:
    ids = {"q1": "a film", "q2": "the film", "q3": "a book"}
    write_rows(tmp_path / "focus.jsonl", [
        {"rank": 2, "ngram": "book", "examples": [{"text": "new book"}]},
        {"rank": 1, "ngram": "film", "examples": [{"text": "new film"}]}])
    write_rows(tmp_path / "ngrams.jsonl", [
        {"ngram": "film", "examples": ["q1"]}, {"ngram": "the film", "examples": ["q2", "q9"]}])
    source, got = read_findings(tmp_path, ids)
    assert source == "focus.jsonl + ngrams.jsonl"
    assert got == [Finding(1, "focus", "film", ["film"], ["new film"]),
                   Finding(2, "focus", "book", ["book"], ["new book"]),
                   Finding(3, "ngram", "the film", ["the film"], ["the film"])]
    write_rows(tmp_path / "findings.jsonl", [
        {"id": "f0002", "rank": 2, "kind": "metadata", "name": "long", "terms": [],
         "example_ids": ["q3"]},
        {"id": "f0001", "rank": 1, "kind": "semantic", "name": "films", "terms": ["film"],
         "example_ids": ["q1", "q2"]}])
    source, got = read_findings(tmp_path, ids)
    assert source == "findings.jsonl"
    assert got == [Finding(1, "semantic", "films", ["film"], ["a film", "the film"]),
                   Finding(2, "metadata", "long", [], ["a book"])]


def test_match_by_name_or_by_examples() -> None:
    long = Slice("l", "long", min_words=3)
    short, lng = "a b", "a b c"
    findings = [Finding(1, "ngram", "x", ["x"], [lng, short]),
                Finding(2, "metadata", "long", [], [lng, lng, short, short]),
                Finding(3, "semantic", "y", ["y"], [lng, lng, lng])]
    # Rank 2 has precision 0.5 over 4 examples: found; rank 3 is more precise (best match).
    assert match(findings, long) == {"found": True, "best_rank": 3, "best_name": "y",
                                     "precision_at_10": 1.0, "first_rank": 2,
                                     "confirmed": False}
    assert match(findings, long, top=1) == {"found": False, "best_rank": 1, "best_name": "x",
                                            "precision_at_10": 0.5, "first_rank": 2,
                                            "confirmed": False}
    # Fewer than 3 examples never find a slice by its examples.
    assert match([Finding(1, "ngram", "x", ["x"], [lng, lng])], long)["found"] is False
    word = Slice("w", "word", ("film",), band="frequent")
    assert match(findings + [Finding(4, "ngram", "the film", ["the film"], [], True)],
                 word) == {"found": True, "best_rank": 4, "best_name": "the film",
                           "precision_at_10": None, "first_rank": 4, "confirmed": True}
    # A group is not found by examples that hold one of its words only.
    family = Slice("g", "group", ("uncle", "aunt", "niece"), band="family")
    one = Finding(1, "focus", "uncle", ["uncle"], ["my uncle came"] * 5)
    two = Finding(1, "semantic", "z", ["z"], ["my uncle came", "an aunt", "my uncle"])
    assert match([one], family)["found"] is False
    assert match([two], family)["found"] is True


def test_rows_and_table() -> None:
    from bench.discovery_power import field_exists, rows_for, table
    from synthcheck._config import RunConfig

    assert field_exists(RunConfig, "focus.enabled") is True
    assert field_exists(RunConfig, "focus.nosuch") is False
    assert field_exists(RunConfig, "nosuch.enabled") is False
    rows = rows_for(RunConfig(), small=True, budgets=[1.0, 2.0])
    assert [(r.name, r.overrides, r.missing) for r in rows] == [
        ("default 1x budget", ["focus.budget=48"], None),
        ("default 2x budget", ["focus.budget=96"], None),
        ("no focus", ["focus.enabled=false"], None)]
    cfg = RunConfig.model_validate({"ranking": {"metric": "p_wrong"},
                                    "reference": {"model": "packaged:gemma3-270m"},
                                    "focus": {"enabled": False}})
    rows = {r.name: r for r in rows_for(cfg, small=False, budgets=[1.0])}
    assert (rows["reference: plain SmolLM2"].overrides, rows["reference: plain SmolLM2"].missing
            ) == (["reference={model: packaged:smollm2-135m-instruct, calibration: contextual}"],
                  None)
    assert rows["ranking: abs_top (default p_wrong)"].overrides == ["ranking.metric=abs_top"]
    assert rows["no focus"].missing == "n/a (off by default)"
    results = {
        "slices": [{"name": "w", "label": 'word frequent "film"'}],
        "rows": [
            {"name": "default 1x budget", "seconds": 12.4, "findings_source": "ngrams.jsonl",
             "slices": {"w": {"found": True, "best_rank": 3, "precision_at_10": 0.8}},
             "hard": 10, "hard_planted": 4,
             "held_out_precision": {"estimate": 0.5, "low": 0.25, "high": 0.75, "n": 12}},
            {"name": "no occlusion", "missing": "n/a (field missing)"}]}
    assert table(results) == "\n".join([
        '| config | word frequent "film" | found | hard planted | held-out precision | '
        'findings | seconds |',
        "|---|---|---|---|---|---|---|",
        "| default 1x budget | yes #3 p@10 0.80 | 1/1 | 0.40 (4/10) | 0.50 [0.25, 0.75] n=12 | "
        "ngrams.jsonl | 12 |",
        "| no occlusion | n/a (field missing) |  |  |  |  |  |"])
