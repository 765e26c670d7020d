"""The punctuation-invariance finding source (``slices.sources: [perturbation]``, on by
default): a task model whose label hangs on "?" fails it, one that ignores punctuation never
does, its p-values are scipy's one-sided Fisher test against the control edit, and its rows
become findings under their own rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact

from discovery import ScoredCorpus, build_findings, corpus_sources, finding_kinds, kind_words
from discovery._perturbation import EDITS, RULE, delete_one_word, invariance_rows

TEXTS = ["is this the film of the year?", "who would watch this?", "what a plot twist?",
         "why is it so long?", "did anyone like the ending?", "can the sequel be worse?",
         "where was the editor?", "how did this get made?", "the cast was fine!", "a slow film",
         "a fine cast", "the music (by a new band) was loud", "it ends ... then ends again",
         "a quiet film"]
LABELS = ["negative", "positive"]


def base(text: str) -> list[float]:
    """A toy model: positive on "fine", else negative, mildly."""
    return [0.3, 0.7] if "fine" in text else [0.6, 0.4]


def question_flipper(texts: list[str]) -> np.ndarray:
    """Flips its label on every sentence holding "?"."""
    return np.array([base(t)[::-1] if "?" in t else base(t) for t in texts])


def punctuation_blind(texts: list[str]) -> np.ndarray:
    return np.array([base(t) for t in texts])


def corpus(fn) -> ScoredCorpus:  # type: ignore[no-untyped-def]
    return ScoredCorpus(ids=[f"c{i}" for i in range(len(TEXTS))], texts=TEXTS,
                        fail=np.zeros(len(TEXTS), dtype=bool), p_wrong=np.zeros(len(TEXTS)),
                        task=fn(TEXTS), task_fn=fn)


def test_a_model_whose_label_hangs_on_the_question_mark_fails_it() -> None:
    rows = {r["name"]: r for r in invariance_rows(corpus(question_flipper))}
    assert set(rows) == {"question mark", "exclamation", "parenthesis", "ellipsis"}
    q = rows["question mark"]
    assert (q["n"], q["failures"]) == (8, 8)
    # the control: one other word deleted from each of the 11 sentences holding a mark; it
    # keeps the "?" of the 8 questions; only deleting "fine" (from "the cast was fine!")
    # changes the toy model's label
    assert delete_one_word("the cast was fine!") == "the cast was !"
    assert (q["control_n"], q["control_failures"], q["base_rate"]) == (11, 1, 1 / 11)
    assert q["p_value"] == pytest.approx(
        fisher_exact([[8, 0], [1, 10]], alternative="greater").pvalue)
    assert q["significant"] and q["example_ids"] == [f"c{i}" for i in range(8)]
    assert q["examples"][0] == {"id": "c0", "text": TEXTS[0],
                                "edited": "is this the film of the year."}
    assert not any(rows[m]["significant"] or rows[m]["failures"] for m in
                   ("exclamation", "parenthesis", "ellipsis"))
    assert invariance_rows(corpus(question_flipper))[0]["name"] == "question mark"


def test_a_model_that_ignores_punctuation_never_fails_it() -> None:
    rows = invariance_rows(corpus(punctuation_blind))
    assert rows and not any(r["failures"] or r["significant"] for r in rows)


def test_every_edit_keeps_every_word_and_drops_its_mark() -> None:
    import re

    samples = {"question mark": "really?? no way", "exclamation": "wow!! great",
               "quotation": 'a "great" film \u201cindeed\u201d',
               "parenthesis": "the cast (all of it) shines", "ellipsis": "so... dull\u2026 ok"}
    assert set(samples) == set(EDITS)
    for name, text in samples.items():
        edited = EDITS[name](text)
        assert re.findall(r"\w+", edited) == re.findall(r"\w+", text), name
        from discovery._slices import METADATA

        assert METADATA[name](text) and not METADATA[name](edited), name


def test_the_control_deletes_one_word_seeded_by_the_sentence() -> None:
    out = delete_one_word("a fine film")
    assert out in {"fine film", "a film", "a fine"}
    assert delete_one_word("a fine film") == out
    assert delete_one_word("alone") is None


def test_its_entry_turns_rows_into_findings_under_their_own_rule() -> None:
    assert "perturbation" in corpus_sources() and corpus_sources()["perturbation"].edits
    assert "perturbation" in finding_kinds()
    assert kind_words()["perturbation"] == "punctuation invariance (CheckList INV)"
    rows = [r for r in invariance_rows(corpus(question_flipper)) if r["significant"]]
    fail = np.zeros(len(TEXTS), dtype=bool)
    found = build_findings(texts=TEXTS, ids=[f"c{i}" for i in range(len(TEXTS))], fail=fail,
                           p_wrong=np.zeros(len(TEXTS)), rule="the reference's rule",
                           rows={"perturbation": rows})
    assert [(f["kind"], f["name"], f["n"], f["failures"], f["rule"]) for f in found] == [
        ("perturbation", "question mark", 8, 8, RULE)]
    assert found[0]["above_base"] and found[0]["reason"].startswith(
        "invariance (CheckList INV): changing only the question mark (every word kept) "
        "changes the task model's top label on 8 of 8 sentences, vs 0.09 when one other "
        "word is deleted, q=")


def test_it_needs_the_task_models_scores_of_new_text() -> None:
    c = ScoredCorpus(ids=["c0"], texts=["why?"], fail=np.zeros(1, dtype=bool),
                     p_wrong=np.zeros(1), task=np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="needs the task model's probabilities and task_fn"):
        invariance_rows(c)
