"""Sentence-pair tasks: contrast sets substitute in one field; models score pairs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from formalize import Suite, TemplateRunner
from synth.core import TemplateError, read_jsonl

SUITE = Path(__file__).resolve().parents[2] / "configs" / "suites" / "nli_contrast.yaml"


class PairScorer:
    """Entailment when the hypothesis names a disease the premise hints at; records inputs."""

    labels = ["not_entailment", "entailment"]
    name = "pairs"
    hints = {"inhaler": "asthma", "glucose": "diabetes", "cough": "pneumonia",
             "x-ray": "pneumonia", "headaches": "tuberculosis"}  # wrong about migraine

    def __init__(self) -> None:
        self.seen: list[object] = []

    def predict_proba(self, items):
        out = []
        for item in items:
            self.seen.append(item)
            premise, hypothesis = item  # a python callable gets (premise, hypothesis) tuples
            ok = any(h in premise and d in hypothesis.lower() for h, d in self.hints.items())
            out.append({"not_entailment": 0.2 if ok else 0.8, "entailment": 0.8 if ok else 0.2})
        return out


def test_premise_unchanged_hypothesis_substituted_case_kept():
    suite = Suite.from_yaml(SUITE)
    cases = list(suite.cases())
    assert len(cases) == 4 * 6  # each original and its 5 other diseases
    first = [c for c in cases if c.base_id == "disease-substitution:0"]
    premise = "She uses an inhaler for wheezing and shortness of breath at night."
    assert all(dict(c.pair)["premise"] == premise for c in first)
    assert [dict(c.pair)["hypothesis"] for c in first] == [
        "Asthma is the likely diagnosis.", "Diabetes is the likely diagnosis.",
        "Pneumonia is the likely diagnosis.", "Migraine is the likely diagnosis.",
        "Hypertension is the likely diagnosis.", "Tuberculosis is the likely diagnosis."]
    assert [c.label for c in first] == ["entailment"] + ["not_entailment"] * 5
    assert first[1].to_record()["pair"] == {
        "premise": premise, "hypothesis": "Diabetes is the likely diagnosis."}


def test_pairs_reach_the_model_and_fills_csv_has_per_entity_accuracy(tmp_path):
    suite = Suite.from_yaml(SUITE)
    scorer = PairScorer()
    result = TemplateRunner().run(suite, [scorer], cases_path=tmp_path / "cases.jsonl")
    assert all(isinstance(i, tuple) and len(i) == 2 for i in scorer.seen)
    result.write(tmp_path, config_hash="test")
    fills = pd.read_csv(tmp_path / "fills.csv")
    per = {r.value: (r.n, r.accuracy) for r in fills.itertuples()
           if r.slot == "ENTITY" and r.lexicon == "DISEASE"}
    # Tuberculosis is wrongly entailed by the migraine premise: 3 of 4 right.
    assert per["tuberculosis"] == (4, pytest.approx(0.75))
    assert per["hypertension"] == (4, pytest.approx(1.0))
    rows = read_jsonl(tmp_path / "cases.jsonl")
    assert all(set(r["pair"]) == {"premise", "hypothesis"} for r in rows)


def test_pair_suite_errors():
    base = {"name": "p", "labels": ["no", "yes"], "text_fields": ["premise", "hypothesis"],
            "builtin_lexicons": False}
    item = {"fields": {"premise": "P.", "hypothesis": "Asthma."}, "entity": "asthma",
            "alternatives": ["flu"]}
    test = {"name": "c", "type": "contrast", "label": "yes", "contrast_label": "no",
            "items": [item]}
    with pytest.raises(TemplateError, match=r"needs 'field': one of \['premise', 'hypothesis'\]"):
        Suite.from_dict({**base, "tests": [test]})
    with pytest.raises(TemplateError, match=r"needs 'fields' with exactly"):
        Suite.from_dict({**base, "tests": [{**test, "field": "hypothesis",
                                            "items": [{**item, "fields": {"premise": "P."}}]}]})
    with pytest.raises(TemplateError, match=r"test type 'mft' does not take sentence pairs"):
        Suite.from_dict({**base, "tests": [{"name": "m", "type": "mft", "label": "yes",
                                            "cases": ["x"]}]})
    ok = Suite.from_dict({**base, "tests": [{**test, "field": "hypothesis"}]})
    assert [dict(c.pair)["hypothesis"] for c in ok.cases()] == ["Asthma.", "Flu."]
