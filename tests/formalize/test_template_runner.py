"""The template runner (``formalize/_runner.py``): batching, model labels, outputs and the table.
Each test type's judging is tested in tests/formalize/types/, one file per type."""

from __future__ import annotations

import json
import math

import pytest

from formalize import Suite, TemplateRunner
from synth.core import DataError, read_jsonl
from tests.formalize.conftest import KeywordScorer, LengthScorer, suite_dict


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
