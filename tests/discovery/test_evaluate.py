"""Held-out evaluation on a small labeled file with toy scorers."""

from __future__ import annotations

import pytest

from discovery import EvaluationConfig, classification_report, evaluate, format_reports
from synth.core import DataError, LabelSpace, write_jsonl

LABELS = LabelSpace.of(["negative", "positive"])


class Keyword:
    labels = ["negative", "positive"]
    name = "kw"

    def predict_proba(self, texts):
        return [{"negative": 0.2, "positive": 0.8} if "good" in t else
                {"negative": 0.7, "positive": 0.3} for t in texts]


def test_classification_report_by_hand():
    rep = classification_report(["a", "a", "b", "b"], ["a", "b", "b", "b"], ["a", "b"])
    assert rep["accuracy"] == 0.75
    assert rep["per_class"]["a"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3),
                                     "support": 2}
    assert rep["per_class"]["b"]["precision"] == pytest.approx(2 / 3)


def test_evaluate_on_a_labeled_file(tmp_path):
    data = tmp_path / "gold.jsonl"
    write_jsonl(data, [{"text": "good", "label": "positive"}, {"text": "bad", "label": 0},
                       {"text": "not good", "label": "negative"}, {"text": "fine", "label": 1}])
    ev = EvaluationConfig(size=3, include_reference=False)
    reports = evaluate(LABELS, ev, str(data), scorers={"kw": Keyword()}, progress=False)
    assert reports["kw"]["n"] == 3
    assert reports["kw"]["accuracy"] == pytest.approx(2 / 3)
    assert "kw" in format_reports(reports, LABELS.list)


def test_unknown_gold_label(tmp_path):
    data = tmp_path / "gold.csv"
    data.write_text("text,label\ngood,positive\nbad,meh\n")
    with pytest.raises(DataError, match=r"unknown label 'meh' .*row 2"):
        evaluate(LABELS, EvaluationConfig(include_reference=False), str(data),
                 scorers={"kw": Keyword()},
                 progress=False)


def test_evaluate_held_out_keeps_the_probabilities_behind_the_reports(tmp_path):
    from discovery import evaluate_held_out

    data = tmp_path / "gold.jsonl"
    write_jsonl(data, [{"text": "good", "label": "positive"}, {"text": "bad", "label": 0}])
    reports, held = evaluate_held_out(LABELS, EvaluationConfig(include_reference=False),
                                      str(data), scorers={"kw": Keyword()}, progress=False)
    assert reports["kw"]["accuracy"] == 1.0
    assert held.labels == ["negative", "positive"] and held.golds == ["positive", "negative"]
    assert held.probs["kw"].tolist() == [[0.2, 0.8], [0.7, 0.3]]
