"""The runner: MFT/INV/DIR judging on toy models, test-group deviations, batching, outputs."""

from __future__ import annotations

import json
import math

import pytest

from formalize import Suite, TemplateRunner, group_deviations, judge
from synth.core import DataError, read_jsonl
from tests.formalize.conftest import KeywordScorer, LengthScorer, suite_dict


def test_mft_pass_fail_and_fill_breakdown(keyword):
    suite = Suite.from_dict(suite_dict(
        {"name": "adj", "capability": "Vocab", "type": "mft", "template": "This {NOUN} is {ADJ}.",
         "label": "positive"},
        lexicons={"ADJ": ["good", "great", "fine"], "NOUN": ["film", "book"]}))
    result = TemplateRunner().run(suite, [keyword])
    row = result.summary.query("level == 'test'").iloc[0]
    assert (row.n, row.failures) == (6, 2) and row.fail_rate == pytest.approx(1 / 3)
    acc = result.fills.query("slot == 'ADJ'").set_index("value")["accuracy"].to_dict()
    assert acc == {"good": 1.0, "great": 1.0, "fine": 0.0}
    assert set(result.examples.text) == {"This film is fine.", "This book is fine."}
    assert result.summary.query("level == 'label'").iloc[0].key == "positive"
    assert len(result.cases) == 6 and set(result.cases.columns) >= {"pred", "probs", "passed"}


def test_inv_typos_fail_exactly_when_the_keyword_breaks(keyword):
    suite = Suite.from_dict(suite_dict(
        {"name": "typos", "type": "inv", "template": "This {NOUN} is great.",
         "perturb": [{"name": "typo", "kind": "delete"}], "variants": 3}))
    result = TemplateRunner().run(suite, [keyword])
    cases = result.cases
    assert len(cases) > 100
    for r in cases.itertuples():
        keeps_keyword = "great" in r.text.replace(".", " ").split()
        assert r.passed == keeps_keyword, r.text
    assert 0 < (~cases.passed).sum() < len(cases)


def test_inv_tolerance_forgives_small_flips():
    # 44 characters: p(positive) = 0.44; a 5-char nonsense suffix (+6) makes it 0.50 ->
    # still negative? No: 0.50 ties and ties go to the first label; use 7 chars (+8 = 0.52).
    text = "x" * 44
    data = suite_dict({"name": "n", "type": "inv", "texts": [text],
                       "perturb": [{"name": "nonsense", "length": 7}]})
    strict = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert list(strict.cases.passed) == [False]
    data["tests"][0]["tolerance"] = 0.1
    loose = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert list(loose.cases.passed) == [True]
    data["tests"][0]["tolerance"] = 0.05
    tight = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert list(tight.cases.passed) == [False]


@pytest.mark.parametrize("direction,min_delta,expected", [
    ("up", 0.0, True), ("up", 0.05, True), ("up", 0.2, False), ("down", 0.0, False)])
def test_dir_direction_and_min_delta(direction, min_delta, expected):
    # Adding " Wow, yes." (10 chars) raises p(positive) by exactly 0.10 under LengthScorer.
    data = suite_dict({"name": "d", "type": "dir", "texts": ["a" * 30],
                       "perturb": [{"name": "add_phrase", "phrases": ["Wow, yes."]}],
                       "label": "positive", "direction": direction, "min_delta": min_delta})
    result = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert list(result.cases.passed) == [expected]


def test_judge_directly():
    from formalize import Case

    case = Case(test="t", capability="c", type="inv", case_id="1", text="b", orig_text="a")

    class Spec:
        tolerance = None
    pred, passed, orig_pred = judge(case, {"n": 0.4, "p": 0.6}, {"n": 0.6, "p": 0.4},
                                    ["n", "p"], Spec)
    assert (pred, passed, orig_pred) == ("p", False, "n")


class TableScorer:
    labels = ["negative", "positive"]
    name = "table"
    BASE = {"alpha": 0.2, "beta": 0.5, "gamma": 0.8}

    def predict_proba(self, texts):
        out = []
        for t in texts:
            p = next(v for k, v in self.BASE.items() if k in t.lower()) + (0.1 if "two" in t else 0)
            out.append({"positive": p, "negative": 1 - p})
        return out


def test_group_deviations_match_hand_computation():
    data = suite_dict({"name": "g", "type": "group", "texts": ["alpha one", "Alpha two", "none"],
                       "words": {"a": ["alpha"], "b": ["beta"], "c": ["gamma"]}})
    result = TemplateRunner().run(Suite.from_dict(data), [TableScorer()])
    g = result.groups.set_index(["group", "label"])
    # p_a = (0.2 + 0.3) / 2 = 0.25, p_b = 0.55, p_c = 0.85 ("none" has no mention: skipped)
    assert g.loc[("a", "positive"), "mean_prob"] == pytest.approx(0.25)
    assert g.loc[("b", "positive"), "mean_prob"] == pytest.approx(0.55)
    assert g.loc[("a", "positive"), "deviation"] == pytest.approx(0.25 - (0.55 + 0.85) / 2)
    assert g.loc[("b", "positive"), "deviation"] == pytest.approx(0.0)
    assert g.loc[("c", "positive"), "deviation"] == pytest.approx(0.45)
    assert g.loc[("a", "negative"), "deviation"] == pytest.approx(0.45)
    assert set(g["n"]) == {2}
    variants = set(result.cases.text)
    assert {"Beta two", "gamma one", "Alpha two"} <= variants  # case kept, mention changed


def test_group_deviation_function():
    rows = group_deviations({("t", "m", "x", "p"): 1.0, ("t", "m", "y", "p"): 0.2},
                            {("t", "m", "x"): 2, ("t", "m", "y"): 1}, ["p"])
    assert {r["group"]: round(r["deviation"], 6) for r in rows} == {"x": 0.3, "y": -0.3}


def test_group_add_and_pattern_modes():
    from formalize import GroupVariantMaker

    age = GroupVariantMaker(pattern=r"\b\d+ ?yo\b", values={"young": "25 yo", "old": "85 yo"},
                            add="{mention} patient.")
    assert age.variants("45 yo man with cough") == {"young": "25 yo man with cough",
                                                    "old": "85 yo man with cough"}
    assert age.variants("Man with cough")["old"] == "85 yo patient. Man with cough"
    gender = GroupVariantMaker(words={"m": ["man", "he", "his"], "f": ["woman", "she", "her"]})
    assert gender.variants("He is a man; his leg hurts.")["f"] == "She is a woman; her leg hurts."
    assert gender.variants("No mention.") is None


def test_contrast_set_fixes_articles_and_labels():
    from formalize import substitute_entity

    assert substitute_entity("I got a rash.", "rash", "itch") == "I got an itch."
    assert substitute_entity("An ulcer, then an ulcer.", "ulcer", "cough") == \
        "A cough, then a cough."
    data = {"name": "ade", "labels": ["no_ade", "ade"], "tests": [{
        "name": "c", "type": "contrast", "label": "ade", "contrast_label": "no_ade",
        "items": [{"text": "It gave me an upset stomach.", "entity": "upset stomach",
                   "alternatives": ["better sleep", "calmer mood"]}]}]}
    cases = list(Suite.from_dict(data).cases())
    assert [(c.text, c.label) for c in cases] == [
        ("It gave me an upset stomach.", "ade"), ("It gave me better sleep.", "no_ade"),
        ("It gave me a calmer mood.", "no_ade")]  # no "a better sleep" (issue 12)


def test_each_unique_text_is_scored_once_per_model_in_batches():
    keyword = KeywordScorer()
    data = suite_dict(
        {"name": "a", "type": "mft", "template": "This {NOUN} is good.", "label": "positive"},
        {"name": "b", "type": "mft", "template": "This {NOUN} is good.", "label": "positive"},
        {"name": "c", "type": "inv", "template": "This {NOUN} is good.",
         "perturb": ["punctuation"]})
    other = KeywordScorer(name="other")
    result = TemplateRunner(batch_size=10).run(Suite.from_dict(data), [keyword, other])
    assert sum(keyword.calls) == 83 * 2  # 83 originals + 83 punctuation variants
    assert max(keyword.calls) == 10 and keyword.calls == other.calls
    assert result.meta["cases"] == 83 * 3
    wide = result.side_by_side()
    assert {"keyword fail_rate", "other fail_rate"} <= set(wide.columns)


def test_model_labels_must_match_the_suite(keyword):
    suite = Suite.from_dict({"name": "s", "labels": ["ham", "spam"], "tests": [
        {"name": "t", "type": "mft", "texts": ["x"], "label": "ham"}]})
    with pytest.raises(DataError, match=r"model 'keyword' has labels \['negative', 'positive'\], "
                       r"the suite has \['ham', 'spam'\]"):
        TemplateRunner().run(suite, [keyword])


def test_outputs_written_with_provenance_and_atomically(tmp_path, keyword):
    suite = Suite.from_dict(suite_dict(
        {"name": "t", "type": "mft", "template": "This {NOUN} is {POS_ADJ}.", "label": "positive"}))
    out = tmp_path / "verify" / "toy"
    result = TemplateRunner(keep_cases=False, heldout_recall={"keyword": {"negative": 0.8,
                                                                          "positive": 0.7}}
                            ).run(suite, [keyword], cases_path=out / "cases.jsonl")
    result.write(out, "abc123")
    rows = read_jsonl(out / "cases.jsonl")
    assert len(rows) == 2988 and rows[0]["model"] == "keyword" and "probs" in rows[0]
    meta = json.loads((out / "summary.json").read_text())
    assert meta["config_hash"] == "abc123" and "git_commit" in meta and meta["cases"] == 2988
    assert (out / "summary.csv").read_text().startswith("level,key,capability,type,keyword n")
    table = result.format_table()
    assert "M1 = keyword" in table and "recall positive" in table and "70.0%" in table

    class Boom(KeywordScorer):
        def predict_proba(self, texts):
            raise RuntimeError("model crashed")
    with pytest.raises(RuntimeError):
        TemplateRunner().run(suite, [Boom(name="keyword")], cases_path=out / "cases.jsonl")
    assert len(read_jsonl(out / "cases.jsonl")) == 2988  # the earlier file is intact
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert math.isclose(result.summary.query("level == 'test'").fail_rate.iloc[0],
                        sum(not r["passed"] for r in rows) / 2988)


def test_table_has_one_heading_per_capability_when_the_suite_interleaves_them(keyword):
    suite = Suite.from_dict(suite_dict(
        {"name": "a", "capability": "Vocabulary", "type": "mft", "texts": ["good"],
         "label": "positive"},
        {"name": "b", "capability": "Negation", "type": "mft", "texts": ["not good"],
         "label": "negative"},
        {"name": "c", "capability": "Vocabulary", "type": "mft", "texts": ["bad"],
         "label": "negative"}))
    lines = TemplateRunner().run(suite, [keyword]).format_table().splitlines()
    head = [x for x in lines if x.startswith(("[", "a ", "b ", "c "))]
    assert [x.split()[0] for x in head] == ["[Vocabulary]", "a", "c", "[Negation]", "b"]


def test_a_failing_directional_case_shows_the_direction_checked_not_an_expected_label(
        tmp_path):
    # LengthScorer: appending 10 characters raises p(positive) by 0.10, so "down" fails.
    from synthcheck._gates import gate_rows
    from synthcheck.report._suite_sections import expectation

    data = suite_dict({"name": "d", "type": "dir", "texts": ["a" * 30],
                       "perturb": [{"name": "add_phrase", "phrases": ["Wow, yes."]}],
                       "label": "positive", "direction": "down", "min_delta": 0.05})
    result = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert result.tests["d"] == {"capability": "General", "type": "dir",
                                 "checks": "p(positive) down by >= 0.05"}
    [ex] = result.examples.to_dict(orient="records")
    assert ex["orig_probs"]["positive"] == pytest.approx(0.3)
    assert expectation(ex, result.tests["d"]) == \
        "p(positive) down by >= 0.05 (original 0.300 -> 0.400)"
    [row] = gate_rows(result, {"d": 0.0})
    from synthcheck._gates import _example_line

    line = _example_line(row.examples[0])
    assert line.startswith("'" + "a" * 30 + " Wow, yes.': checked p(positive) down by >= 0.05 "
                           "(0.30 -> 0.40), predicted negative [")
    assert "expected" not in line
