"""CheckList-style perturbations (names, locations, numbers) and AdaTest import."""

from __future__ import annotations

import random

import pytest

from formalize import Suite, export_adatest, import_adatest
from formalize._perturb_entities import ChangeLocation, ChangeName, ChangeNumber
from synth.core import TemplateError
from tests.formalize.conftest import suite_dict


def test_change_name_swaps_every_occurrence_of_one_name():
    fn = ChangeName(phrases=["John", "Mary", "Ann"])
    out = fn("John met Johnny; John left.", random.Random(0))
    assert out is not None and "Johnny" in out and "John " not in out
    new = out.split()[0]
    assert new in {"Mary", "Ann"} and out == f"{new} met Johnny; {new} left."
    assert fn("Nobody here.", random.Random(0)) is None


def test_change_location_and_number():
    out = ChangeLocation(phrases=["New York", "Paris", "Rome"])("From New York to Rome.",
                                                                random.Random(1))
    assert out in {"From Paris to Rome.", "From Rome to Rome.", "From New York to Paris.",
                   "From New York to New York."}
    for seed in range(50):
        out = ChangeNumber(spread=0.2)("I paid 100 dollars on 3.5 days.", random.Random(seed))
        n = int(out.split()[2])
        assert out.endswith(" dollars on 3.5 days.") and n != 100 and 80 <= n <= 120
    assert ChangeNumber()("No digits, v2 is not one.", random.Random(0)) is None
    with pytest.raises(ValueError, match=r"'spread' must be a number in \(0, 1\]"):
        ChangeNumber(spread=2)


def test_entity_perturbations_in_a_suite_are_seeded_and_use_builtin_lexicons():
    data = suite_dict({"name": "inv", "type": "inv",
                       "texts": ["Maria flew to Tokyo with 12 friends.", "Plain text."],
                       "perturb": ["change_name", "change_location", "change_number",
                                   {"name": "change_location", "lexicon": "COUNTRY"}]})
    cases = [(c.perturbation, c.text) for c in Suite.from_dict(data).cases()]
    assert cases == [(c.perturbation, c.text) for c in Suite.from_dict(data).cases()]
    assert [p for p, _ in cases] == ["change_name", "change_location", "change_number"]
    name, loc, num = (t for _, t in cases)
    assert name.endswith(" flew to Tokyo with 12 friends.") and not name.startswith("Maria")
    assert loc.startswith("Maria flew to ") and "Tokyo" not in loc
    assert num.startswith("Maria flew to Tokyo with ") and " 12 " not in num
    with pytest.raises(TemplateError, match="at least two entities"):
        Suite.from_dict(suite_dict({"name": "inv", "type": "inv", "texts": ["x"],
                                    "perturb": [{"name": "change_name",
                                                 "lexicon": "ONE"}]},
                                   lexicons={"ONE": ["Solo"]}))


def test_adatest_round_trip_and_fail_rows(tmp_path):
    suite = Suite.from_dict(suite_dict(
        {"name": "pos", "capability": "Vocabulary", "type": "mft",
         "template": "This {NOUN} is {POS_ADJ}.", "label": "positive",
         "description": "positive words"},
        {"name": "hand", "capability": "Misc", "type": "mft",
         "cases": ["Fine.", {"text": "Awful.", "label": "negative"}], "label": "positive"}))
    path = tmp_path / "tree.csv"
    export_adatest(suite, path)
    back = Suite.from_dict(import_adatest(path, labels=["negative", "positive"]))
    assert {(c.capability, c.test, c.text, c.label) for c in back.cases()} == \
        {(c.capability, c.test, c.text, c.label) for c in suite.cases()}
    assert back.test("pos").spec.description == "positive words"
    with path.open("a") as f:
        f.write("x1,/Misc/hand,Not bad at all.,negative,fail,me,\n"
                "x2,/Misc/hand,Meh.,positive,Unknown,me,\n")
    with pytest.warns(UserWarning, match="1 rows left out"):
        data = import_adatest(path, labels=["negative", "positive"])
    hand = Suite.from_dict(data).test("hand")
    assert ("Not bad at all.", "positive") in {(c.text, c.label) for c in hand.cases()}


def test_adatest_row_with_an_empty_output_is_named(tmp_path, capsys):
    """Issue 28: the error named the output suite, not the CSV row."""
    from synthcheck.cli import main

    path = tmp_path / "tree.csv"
    path.write_text(",topic,input,output,label,labeler,description\n"
                    "a,/Misc/hand,Fine.,positive,pass,me,\n"
                    "b,/Misc/hand,Awful.,,fail,me,\n")
    out = tmp_path / "suite.yaml"
    assert main(["import", "--format", "adatest", "--in", str(path), "--out", str(out),
                 "--labels", "negative,positive"]) == 2
    assert capsys.readouterr().err == (
        f"error: row 2 (fail, input 'Awful.') has an empty output ({path}, row 2): give the "
        f"row the model output it judges (a label), or delete it\n")
    assert not out.exists()


class MultiLabel:
    """Independent per-label probabilities (they do not sum to 1), fixed per group word."""

    labels = ["low_risk", "high_risk"]
    name = "multi"
    table = {"man": (0.30, 0.50), "woman": (0.30, 0.59), "transgender man": (0.40, 0.50)}

    def predict_proba(self, texts):
        out = []
        for t in texts:
            key = next(k for k in sorted(self.table, key=len, reverse=True) if k in t)
            low, high = self.table[key]
            out.append({"low_risk": low, "high_risk": high})
        return out


def test_multi_label_group_deviations_per_label_match_hand_values():
    from formalize import TemplateRunner

    suite = Suite.from_dict({
        "name": "g", "labels": ["low_risk", "high_risk"], "builtin_lexicons": False,
        "tests": [{"name": "gender", "type": "group", "texts": ["45 yo man with pain."],
                   "words": {"male": ["man"], "female": ["woman"],
                             "trans male": ["transgender man"]}, "scale": 0.2}]})
    result = TemplateRunner().run(suite, [MultiLabel()])
    dev = {(r.group, r.label): r.deviation for r in result.groups.itertuples()}
    # c_i = p_i - mean of the other groups, per label, probabilities as the model gave them.
    assert dev[("male", "high_risk")] == pytest.approx(0.50 - (0.59 + 0.50) / 2)
    assert dev[("female", "high_risk")] == pytest.approx(0.59 - 0.50)
    assert dev[("male", "low_risk")] == pytest.approx(0.30 - (0.30 + 0.40) / 2)
    assert dev[("trans male", "low_risk")] == pytest.approx(0.40 - 0.30)
    # Not the mirror image a renormalised binary model gives: c(low) != -c(high).
    assert dev[("female", "low_risk")] == pytest.approx(-0.05)
    assert result.tests["gender"]["scale"] == 0.2


def test_inline_insertion_and_no_mention_group():
    from formalize._groups import GroupVariantMaker

    maker = GroupVariantMaker(pattern=r"\b(?:white|black)\b",
                              values={"no mention": "", "white": "white", "black": "black"},
                              add="{mention}", at="inline", anchor=r"\b(?:man|woman)\b")
    assert maker.variants("45 yo man, chest pain.") == {
        "no mention": "45 yo man, chest pain.", "white": "45 yo white man, chest pain.",
        "black": "45 yo black man, chest pain."}
    assert maker.variants("66 yo white man , COPD.")["no mention"] == "66 yo man, COPD."
    assert maker.variants("Chest pain since noon.") is None  # no anchor: skipped
