"""The planted-slice benchmark's parts (bench/_planted.py, bench/discovery_power.py) on tiny
inline corpora: slice membership, the choice of slices by counting, the planted task model
through the real ``python:`` loader, reading findings, matching them, and the table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

# bench/'s modules import each other by bare name, as the scripts run from bench/ do: import
# them with bench/ on the path for the import only (the tests below find them in sys.modules).
with pytest.MonkeyPatch.context() as _bench_path:
    _bench_path.syspath_prepend(str(BENCH))
    import _peers  # noqa: F401
    import _power_docs  # noqa: F401
    import discovery_power  # noqa: F401
    from _planted import (
        STRUCTURES,
        Finding,
        PlantedModel,
        Slice,
        choose_slices,
        draw_plan,
        match,
        pick_category,
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
    category = Slice("g", "category", ("mother", "uncle"))
    long = Slice("l", "structure", band="long")
    assert [word.member(t) for t in ["The film, again.", "Two films.", "FILM!"]] == [
        True, False, True]
    assert [phrase.member(t) for t in ["Having seen it", "seen having", "having  seen"]] == [
        True, False, True]
    assert [category.member(t) for t in ["My uncle.", "My mother's", "My aunt."]] == [
        True, False, False]
    assert [long.member(t) for t in [" ".join("w" * 29), " ".join("w" * 30)]] == [False, True]
    structure = {b: Slice(b, "structure", band=b) for b in STRUCTURES}
    cases = {"question": ("Was it good?", "It was good."),
             "digits": ("It ran 2 hours.", "It ran two hours."),
             "negation": ("It wasn't good.", "It was good."),
             "quotes": ('He said "fine".', "He said fine."),
             "first person": ("My view: fine.", "Their view: fine.")}
    for band, (yes, no) in cases.items():
        assert (structure[band].member(yes), structure[band].member(no)) == (True, False), band


def test_named_by() -> None:
    word = Slice("w", "word", ("film",), band="frequent")
    category = Slice("g", "category", ("mother", "uncle", "wife"))
    assert word.named_by(["the film"]) is True
    assert word.named_by(["films"]) is False
    assert category.named_by(["mother"]) is False  # one word of a category is not the category
    assert category.named_by(["mother", "my uncle"]) is True
    assert Slice("l", "structure", band="long").named_by(["long"]) is False


def corpus() -> list[str]:
    """200 sentences: "movie" in 8 (frequent: at least 8), "banana" in 4 (medium: 4-6),
    "zebra" in 3 (rare), "horror movies" in 4, four family words and eight other words once
    each, three questions."""
    filler = [f"we saw it and it was ok {i}" for i in range(166)]
    return filler + [f"the movie {i}" for i in range(8)] + [
        "a banana", "the banana", "one banana", "two banana",
        "a zebra", "the zebra", "our zebra",
        "some horror movies", "all horror movies", "two horror movies", "no horror movies",
        "my mother", "his brother", "her sister", "our father",
        *(f"a {w}" for w in "pencil garden window river candle ladder carpet bottle".split()),
        "was it good?", "why?", "is it?",
    ]


def family_first(words: list[str]) -> np.ndarray:
    """A stand-in encoder: family words on one axis, everything else spread on others."""
    family = {"mother", "brother", "sister", "father"}
    return np.array([[1.0, 0.0, 0.0] if w in family else [0.0, 1.0, (i % 7) / 7]
                     for i, w in enumerate(words)])


PLAN = [("frequent", "flip"), ("medium", "flip"), ("rare", "flip"), ("phrase", "flip"),
        ("category", "flip"), ("structure: question", "force:negative")]


def test_choose_slices_counts_the_corpus() -> None:
    texts = corpus()
    assert len(texts) == 200
    got = [(s.name, s.kind, s.terms, s.band, s.effect) for s in choose_slices(
        texts, seed=0, labels=LABELS, plan=PLAN, embed=family_first)]
    # The category is one k-means cluster of the once-seen words, drawn at random: here the
    # family words or the eight others (six of them: those closest to its centre).
    assert got[4][2] in {("brother", "father", "mother", "sister"),
                         ("candle", "carpet", "garden", "pencil", "river", "window")}
    got[4] = (*got[4][:2], (), *got[4][3:])
    assert got == [
        ("word:frequent", "word", ("movie",), "frequent", "flip"),
        ("word:medium", "word", ("banana",), "medium", "flip"),
        ("word:rare", "word", ("zebra",), "rare", "flip"),
        ("phrase", "phrase", ("horror movies",), "phrase", "flip"),
        ("category", "category", (), "", "flip"),
        ("structure:question", "structure", (), "question", "force:negative"),
    ]
    # Slices are disjoint: a rare word with a sentence in a structural slice is not planted
    # (its trigger would be hidden there), so here no rare word is left.
    texts2 = [t for t in texts if t != "our zebra"] + ["is it a zebra?"]
    got2 = choose_slices(texts2, seed=0, labels=LABELS, plan=PLAN, embed=family_first)
    assert "word:rare" not in [s.name for s in got2]
    # Forcing the label the base model already gives changes nothing: no slice.
    plan = [("rare", "force:negative")]
    top = ["positive"] * len(texts)
    assert [s.name for s in choose_slices(texts, labels=LABELS, plan=plan, base_top=top)] == [
        "word:rare"]
    top = ["negative"] * len(texts)
    assert choose_slices(texts, labels=LABELS, plan=plan, base_top=top) == []
    # No encoder: no category; a kind the plan leaves out is not planted.
    got3 = choose_slices(texts, seed=0, labels=LABELS, plan=PLAN[3:])
    assert [s.name for s in got3] == ["phrase", "structure:question"]


def test_the_plan_is_drawn_per_seed() -> None:
    plans = [draw_plan(seed, LABELS) for seed in range(6)]
    assert all([k for k, _ in p][:5] == ["frequent", "medium", "rare", "phrase", "category"]
               for p in plans)
    structures = {k for p in plans for k, _ in p[5:]}
    assert len(structures) >= 4  # the structural kinds vary from seed to seed
    effects = {e for p in plans for _, e in p}
    assert effects == {"flip", "force:negative", "force:positive"}
    assert draw_plan(3, LABELS) == draw_plan(3, LABELS)


def test_pick_category_draws_a_cluster_of_close_words() -> None:
    pool = ["brother", "father", "mother", "sister"] + [f"w{i}" for i in range(20)]
    family = ["brother", "father", "mother", "sister"]
    drawn = [pick_category(pool, family_first, seed=seed) for seed in range(8)]
    assert all(d == family or (len(d) == 6 and all(w.startswith("w") for w in d))
               for d in drawn), drawn
    assert family in drawn and len({tuple(d) for d in drawn}) > 1  # drawn, not fixed
    assert pick_category(pool[:6], family_first, seed=0) == []  # too few words to cluster


def test_planted_model_flips_or_forces_only_members(tmp_path: Path) -> None:
    sl = [Slice("w", "word", ("film",), band="frequent"),
          Slice("b", "word", ("book",), band="medium", effect="force:negative"),
          Slice("c", "word", ("cake",), band="rare", effect="force:positive")]
    model = PlantedModel(sl, labels=LABELS, base="python:test_planted:leaning_negative")
    assert model.predict_proba(["a film", "a book", "a cake", "a pen"]) == [
        {"negative": 0.2, "positive": 0.8}, {"negative": 0.8, "positive": 0.2},
        {"negative": 0.2, "positive": 0.8}, {"negative": 0.8, "positive": 0.2}]


def test_model_module_loads_through_the_python_spec(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from discovery import load_task_scorer

    sl = [Slice("q", "structure", band="question")]
    spec = write_model_module(tmp_path, "planted_t1", sl, LABELS,
                              base="python:test_planted:leaning_negative")
    assert spec == "python:planted_t1:model"
    monkeypatch.syspath_prepend(str(tmp_path))
    scorer = load_task_scorer(spec, LABELS)
    assert scorer.predict_proba(["one two?", "one two"]) == [
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
    question = Slice("q", "structure", band="question")
    plain, asked = "a b", "a b?"
    findings = [Finding(1, "ngram", "x", ["x"], [asked, plain]),
                Finding(2, "metadata", "question mark", [], [asked, asked, plain, plain]),
                Finding(3, "semantic", "y", ["y"], [asked, asked, asked])]
    # Rank 2 has precision 0.5 over 4 examples: found; rank 3 is more precise (best match).
    assert match(findings, question) == {"found": True, "best_rank": 3, "best_name": "y",
                                         "precision_at_10": 1.0, "first_rank": 2,
                                         "confirmed": False}
    assert match(findings, question, top=1) == {
        "found": False, "best_rank": 1, "best_name": "x", "precision_at_10": 0.5,
        "first_rank": 2, "confirmed": False}
    # Fewer than 3 examples never find a slice by its examples.
    assert match([Finding(1, "ngram", "x", ["x"], [asked, asked])], question)["found"] is False
    word = Slice("w", "word", ("film",), band="frequent")
    assert match(findings + [Finding(4, "ngram", "the film", ["the film"], [], True)],
                 word) == {"found": True, "best_rank": 4, "best_name": "the film",
                           "precision_at_10": None, "first_rank": 4, "confirmed": True}
    # A category is not found by examples that hold one of its words only.
    family = Slice("g", "category", ("uncle", "aunt", "niece"))
    one = Finding(1, "focus", "uncle", ["uncle"], ["my uncle came"] * 5)
    two = Finding(1, "semantic", "z", ["z"], ["my uncle came", "an aunt", "my uncle"])
    assert match([one], family)["found"] is False
    assert match([two], family)["found"] is True


def test_fisher_and_sliceline_on_a_planted_word_and_questions() -> None:
    from _peers import errors_of, fisher_words, sliceline

    rng = np.random.default_rng(0)
    texts = [f"plain words here {w}" for w in rng.integers(0, 30, 300)]
    texts += ["a zany film", "zany again", "so zany", "zany zany", "one zany day",
              "zany stuff", "the zany one", "zany now", "zany end", "zany ten",
              "is it ok?", "why so?", "really?", "how come?", "what now?",
              "who knows?", "and then?", "is that all?", "so what?", "when?"]
    gold = ["positive"] * len(texts)
    predicted = ["negative" if ("zany" in t or "?" in t or i % 10 == 0) else "positive"
                 for i, t in enumerate(texts)]
    errors = errors_of(predicted, gold)
    plain = [f.name for f in fisher_words(texts, errors, question_mark=False)]
    marked = [f.name for f in fisher_words(texts, errors, question_mark=True)]
    assert plain[0] == "zany" and "?" not in plain
    assert marked[:2] == ["?", "zany"] or marked[:2] == ["zany", "?"]
    zany = Slice("w", "word", ("zany",), band="medium")
    found = sliceline(texts, errors, alpha=0.999)
    assert found[0].name == "length quartile 1"  # the short rows: the filler is never short
    assert match(found, zany)["found"]


def test_arms_and_tables() -> None:
    from _power_docs import kinds_table, peers_table, seeds_table
    from discovery_power import CORPUS, LABELLED, arms, field_exists

    from synthcheck._config import RunConfig

    assert field_exists(RunConfig, "focus.enabled") is True
    assert field_exists(RunConfig, "focus.nosuch") is False
    assert field_exists(RunConfig, "nosuch.enabled") is False
    got = arms(RunConfig())
    if field_exists(RunConfig, "labelled.data"):
        assert got[CORPUS] == ["labelled.data=null"] and got[LABELLED] is not None
    else:
        assert got == {CORPUS: [], LABELLED: None}
    m = {"found": True, "best_rank": 3, "confirmed": True, "first_rank": 3}
    miss = {"found": False, "best_rank": 1, "confirmed": False, "first_rank": 14}
    results = {
        "arms": {CORPUS: [], LABELLED: "n/a (this version reads no labelled data)"},
        "seeds": [{"seed": s, "slices": [
            {"name": "word:rare", "label": 'word rare "x" (flip)', "kind": "rare",
             "effect": "flip", "corpus_members": 2, "corpus_changed": 2,
             "labelled_members": 0, "labelled_errors": 0},
            {"name": "structure:question", "label": "structure: question (force:negative)",
             "kind": "structure: question", "effect": "force:negative", "corpus_members": 9,
             "corpus_changed": 4, "labelled_members": 3, "labelled_errors": 1}],
            "arms": {CORPUS: {"slices": {"word:rare": m if s else miss,
                                         "structure:question": m}},
                     LABELLED: {"missing": "n/a (this version reads no labelled data)"}}}
            for s in (0, 1)],
        "peers": {"seed": 0, "methods": {"Fisher per word": {"slices": {
            "word:rare": miss, "structure:question": m}}}}}
    assert kinds_table(results).splitlines() == [
        "| kind | corpus only: found/planted [95% CI] | with labelled data: found/planted "
        "[95% CI] |",
        "|---|---|---|",
        "| rare | 1/2 (50%) [0.09, 0.91] | n/a |",
        "| structure: question | 2/2 (100%) [0.34, 1.00] | n/a |",
        "| effect: flip | 1/2 (50%) [0.09, 0.91] | n/a |",
        "| effect: force | 2/2 (100%) [0.34, 1.00] | n/a |",
        "| **all kinds** | **3/4 (75%) [0.30, 0.95]**; per seed 75% ± 35% (50%-100%, 2 seeds) "
        "| n/a (this version reads no labelled data) |"]
    assert seeds_table(results).splitlines()[2] == (
        '| 0 | word rare "x" (flip) | 2/2 | 0/0 | no (#14) | n/a |')
    assert peers_table(results).splitlines()[2:5] == [
        "| `discover` (corpus only) | 1/2 | no (#14) | yes #3* |",
        "| `discover` (with labelled data) | n/a (this version reads no labelled data) |  |  |",
        "| Fisher per word | 1/2 | no (#14) | yes #3* |"]


def test_the_docs_show_the_committed_result() -> None:
    """docs/discovery.md and README.md hold the tables bench/_power_docs.py renders from
    bench/results/discovery_power.json (rerun it after the bench)."""
    from _power_docs import DOCS, RESULT, block_in, load_heldout, render

    blocks = render(json.loads(RESULT.read_text(encoding="utf-8")), load_heldout())
    for doc, names in DOCS.items():
        text = (BENCH.parent / doc).read_text(encoding="utf-8")
        for name in names:
            assert block_in(text, name) == blocks[name], (
                f"{doc}: block {name} differs from {RESULT.name}: run python bench/_power_docs.py")
