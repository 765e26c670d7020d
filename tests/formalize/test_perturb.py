"""Perturbations: each is seeded and deterministic, and does what its name says."""

from __future__ import annotations

import random

import pytest

from formalize import PERTURBATIONS, make_perturbation
from synth.core import TemplateError

TEXT = "I do not think this movie is great."


def make(spec):
    return make_perturbation(spec, lambda name: ["I was wrong.", "I take that back."], "t")


@pytest.mark.parametrize("spec", [
    {"name": "typo"}, {"name": "typo", "kind": "swap"}, {"name": "typo", "kind": "delete"},
    {"name": "typo", "kind": "insert", "n": 2}, {"name": "nonsense", "length": 6},
    {"name": "nonsense", "position": "prefix"}, {"name": "revision"},
    {"name": "add_phrase", "phrases": ["Wow."], "position": "before"},
    {"name": "negation"}, {"name": "contraction"}, {"name": "punctuation"},
])
def test_every_perturbation_is_seeded_and_deterministic(spec):
    pert = make(spec)
    # TEXT is negated already, so negation leaves it out: it gets an affirmative sentence.
    text = "I think this movie is great." if spec["name"] == "negation" else TEXT
    outs = [pert(text, random.Random(f"7|{i}")) for i in range(20)]
    again = [pert(text, random.Random(f"7|{i}")) for i in range(20)]
    assert outs == again
    assert all(o is not None and o != text for o in outs)


def test_typo_kinds():
    rng = random.Random(0)
    swap = make({"name": "typo", "kind": "swap", "word": "longest"})("say wonderful", rng)
    assert swap.startswith("say ") and sorted(swap[4:]) == sorted("wonderful")
    assert swap != "say wonderful"
    delete = make({"name": "typo", "kind": "delete"})("wonderful", rng)
    assert len(delete) == 8
    insert = make({"name": "typo", "kind": "insert", "n": 3})("wonderful", rng)
    assert len(insert) == 12
    assert make({"name": "typo"})("a b", rng) is None  # no word of 3+ letters


def test_nonsense_is_non_alphabetic_and_placed():
    out = make({"name": "nonsense", "length": 8, "position": "prefix"})("hello", random.Random(1))
    noise, rest = out.split(" ", 1)
    assert rest == "hello" and len(noise) == 8 and not any(c.isalpha() for c in noise)


def test_negation_contraction_punctuation():
    rng = random.Random(0)
    neg = make({"name": "negation"})
    assert neg("This movie is great.", rng) == "This movie is not great."
    assert neg("I like it.", rng) == "I do not like it."
    assert neg("She likes it.", rng) == "She does not like it."
    assert neg("You can help.", rng) == "You cannot help."
    assert neg("Great movie!", rng) is None
    con = make({"name": "contraction"})
    assert con(TEXT, rng) == "I don't think this movie is great."
    assert con("It isn't bad.", rng) == "It is not bad."
    assert make({"name": "contraction", "mode": "expand"})("plain", rng) is None
    assert make({"name": "punctuation", "mode": "strip"})("Good!", rng) == "Good"
    assert make({"name": "punctuation", "mode": "add"})("Good", rng) in ("Good.", "Good!")
    assert make({"name": "punctuation", "mode": "swap"})("Good.", rng) in ("Good!", "Good?")


@pytest.mark.parametrize(("text", "negated"), [
    # Affirmative statements: an auxiliary or copula, else the verb after a subject pronoun.
    ("This movie is great.", "This movie is not great."),
    ("The actors were brilliant.", "The actors were not brilliant."),
    ("You can help.", "You cannot help."),
    ("I have seen it twice.", "I have not seen it twice."),
    ("I have a dog.", "I do not have a dog."),
    ("I had a great time.", "I did not have a great time."),
    ("She has been great.", "She has not been great."),
    ("I did it.", "I did not do it."),
    ("I like it.", "I do not like it."),
    ("She loves the film.", "She does not love the film."),
    ("He watches it daily.", "He does not watch it daily."),
    ("She tries hard.", "She does not try hard."),
    ("He goes there often.", "He does not go there often."),
    ("I really like it.", "I do not really like it."),
    ("I liked this movie.", "I did not like this movie."),
    ("She thought it was fine.", "She thought it was not fine."),
    ("It's great.", "It's not great."),
    ("I'm happy with it.", "I'm not happy with it."),
    # Already negated: left out, never negated twice.
    ("It is not what I expected.", None),
    ("This movie isn't great.", None),
    ("I do not think this movie is great.", None),
    ("I never liked it.", None),
    ("I have no complaints.", None),
    ("Nothing about it worked.", None),
    # Questions and tag questions, inversions: left out.
    ("is it?", None),
    ("It's great, is it?", None),
    ("Is this movie good?", None),
    ("May I say it was great.", None),
    # Nothing to negate cleanly: left out.
    ("Great movie!", None),
    ("I walked home.", None),  # a past tense whose base form it does not know
    ("Loved it so much.", None),
])
def test_negation(text, negated):
    assert make({"name": "negation"})(text, random.Random(0)) == negated


def test_replacements_keep_the_case_of_what_they_replace():
    rng = random.Random(0)
    assert make({"name": "negation"})("THIS MOVIE IS GREAT.", rng) == "THIS MOVIE IS NOT GREAT."
    assert make({"name": "contraction"})("IT IS NOT BAD.", rng) == "IT ISN'T BAD."
    assert make({"name": "contraction"})("I am fine.", rng) == "I'm fine."  # "I" alone is no shout


def test_negation_never_reads_a_copula_as_a_main_verb():
    # The fallback puts do/does before a verb after a pronoun; "is", "was" and the other
    # auxiliaries are never such verbs ("It does not i ..." was the old garbled output).
    neg = make({"name": "negation"})
    for text in ("It is what I expected.", "It was what I expected.", "He is here.",
                 "It is not what I expected."):
        out = neg(text, random.Random(0))
        assert out is None or ("does not" not in out and "do not" not in out), out
    assert neg("It is what I expected.", random.Random(0)) == "It is not what I expected."


def test_revision_draws_from_its_lexicon():
    out = make({"name": "revision"})("I loved it.", random.Random(3))
    assert out in ("I loved it. I was wrong.", "I loved it. I take that back.")


def test_registry_and_bad_parameters():
    assert "typo" in PERTURBATIONS.names()
    with pytest.raises(TemplateError, match="unknown perturbation 'tpyo'.*did you mean 'typo'"):
        make({"name": "tpyo"})
    with pytest.raises(TemplateError, match="unknown parameter 'knd' for perturbation 'typo'"
                       ".*did you mean 'kind'"):
        make({"name": "typo", "knd": "swap"})
    with pytest.raises(TemplateError, match="'kind' must be one of swap, delete, insert, any"):
        make({"name": "typo", "kind": "flip"})
    with pytest.raises(TemplateError, match="'chars' must be non-empty and non-alphabetic"):
        make({"name": "nonsense", "chars": "abc"})
    with pytest.raises(TemplateError, match="takes no 'lexicon'"):
        make({"name": "typo", "lexicon": "REVISION"})


def test_suite_expansion_of_inv_and_dir_tests_is_seeded():
    from formalize import Suite
    from tests.formalize.conftest import suite_dict

    data = suite_dict(
        {"name": "typos", "type": "inv", "template": "This {NOUN} is {POS_ADJ}.", "sample": 40,
         "perturb": ["typo", {"name": "nonsense", "length": 5}], "variants": 2},
        {"name": "revised", "type": "dir", "template": "I loved this {NOUN}.", "label": "negative",
         "direction": "up", "perturb": ["revision", {"name": "typo", "kind": "swap"}]})

    def expand(seed):
        return [c.to_record() for c in Suite.from_dict({**data, "seed": seed}).cases()]

    first = expand(5)
    assert first == expand(5)  # identical cases: ids, texts, originals, fills, perturbations
    assert {r["test"] for r in first} == {"typos", "revised"} and len(first) > 200
    other = expand(6)
    for test in ("typos", "revised"):
        a = [r["text"] for r in first if r["test"] == test]
        b = [r["text"] for r in other if r["test"] == test]
        assert a != b
        if test == "revised":  # no sampling: the same bases, perturbed differently
            same_base = {r["orig_text"] for r in first if r["test"] == test}
            assert len(same_base) == 83
            assert same_base == {r["orig_text"] for r in other if r["test"] == test}
            assert set(a) != set(b)
    # A seed passed to cases() overrides the suite's, to the same effect.
    suite = Suite.from_dict({**data, "seed": 5})
    assert [c.to_record() for c in suite.cases(seed=6)] == other
