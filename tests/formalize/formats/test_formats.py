"""Import/export: native cases, HateCheck, capability CSV, AdaTest; round trips keep every case."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from formalize import (
    Suite,
    export_adatest,
    export_capability_csv,
    export_hatecheck,
    export_native_cases,
    import_capability_csv,
    import_hatecheck,
)
from synth.core import DataError, read_jsonl
from tests.formalize.conftest import suite_dict


def native_suite() -> Suite:
    return Suite.from_dict(suite_dict(
        {"name": "pos", "capability": "Vocabulary", "type": "mft",
         "templates": ["This {NOUN} is {POS_ADJ}.", "I bought {a:NOUN}, {{really}}."],
         "label": "positive"},
        {"name": "negated", "capability": "Negation", "type": "mft",
         "template": "This {NOUN} is not {ADJ}.",
         "label": {"by": "ADJ", "map": {"POS_ADJ": "negative", "NEG_ADJ": "positive"}}},
        {"name": "hand", "capability": "Misc", "type": "mft",
         "cases": ["Fine.", {"text": "Awful, truly.", "label": "negative"}], "label": "positive"},
        {"name": "robust", "type": "inv", "template": "This {NOUN} is good.", "perturb": ["typo"]},
        slots={"ADJ": ["POS_ADJ", "NEG_ADJ"]}))


def case_set(suite: Suite) -> set[tuple[str, str]]:
    return {(c.text, c.label) for c in suite.cases() if c.type == "mft"}


def test_native_cases_jsonl_loads_with_pandas(tmp_path):
    path = tmp_path / "cases.jsonl"
    n = export_native_cases(native_suite(), path)
    rows = read_jsonl(path)
    assert n == len(rows) and set(rows[0]) >= {"test", "capability", "type", "case_id", "text",
                                                "label", "fills"}
    df = pd.read_json(path, lines=True)
    assert len(df) == n and df.case_id.is_unique
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset("json", data_files=str(path), split="train")
    assert len(ds) == n


def test_round_trip_native_hatecheck_native(tmp_path):
    suite = native_suite()
    skipped = export_hatecheck(suite, tmp_path)
    assert skipped == ["robust"]
    with (tmp_path / "test_suite_cases.csv").open() as f:
        header = next(csv.reader(f))
    assert header == ["", "functionality", "case_id", "test_case", "label_gold", "target_ident",
                      "direction", "focus_words", "focus_lemma", "ref_case_id", "ref_templ_id",
                      "templ_id", "case_templ"]
    df = pd.read_csv(tmp_path / "test_suite_cases.csv", index_col=0)
    assert "This [NOUN] is [POS_ADJ]." in set(df.case_templ)
    data = import_hatecheck(tmp_path / "test_suite_cases.csv",
                            tmp_path / "template_placeholders.csv", labels=["negative", "positive"])
    back = Suite.from_dict(data)
    assert case_set(back) == case_set(suite)
    pos = back.test("pos").spec
    assert pos.templates == ["This {NOUN} is {POS_ADJ}.", "I bought {a:NOUN}, {{really}}."]


def test_hatecheck_import_keeps_partial_templates_as_cases(tmp_path):
    (tmp_path / "cases.csv").write_text(
        ",functionality,case_id,test_case,label_gold,target_ident,direction,focus_words,"
        "focus_lemma,ref_case_id,ref_templ_id,templ_id,case_templ\n"
        "0,derog_h,1,I hate Alphans.,hateful,Alphans,,,,,,1,I hate [IDENTITY_P].\n"
        "1,derog_h,2,I hate Betans.,hateful,Betans,,,,,,1,I hate [IDENTITY_P].\n"
        "2,counter_nh,3,Hating Alphans is wrong.,non-hateful,Alphans,,,,,,2,"
        "Hating [IDENTITY_P] is wrong.\n")
    (tmp_path / "ph.csv").write_text('Placeholder,Values\n[IDENTITY_P],"Alphans,Betans"\n')
    data = import_hatecheck(tmp_path / "cases.csv", tmp_path / "ph.csv")
    suite = Suite.from_dict(data)
    assert suite.labels == ["hateful", "non-hateful"]
    assert suite.test("derog_h").spec.templates == ["I hate {IDENTITY_P}."]
    assert suite.test("counter_nh").spec.templates == []  # Betans case missing -> kept verbatim
    assert {(c.text, c.label) for c in suite.cases()} == {
        ("I hate Alphans.", "hateful"), ("I hate Betans.", "hateful"),
        ("Hating Alphans is wrong.", "non-hateful")}


def test_round_trip_native_capability_csv_native(tmp_path):
    suite = native_suite()
    path = tmp_path / "templates.csv"
    assert export_capability_csv(suite, path) == ["robust"]
    df = pd.read_csv(path, index_col=0)
    assert list(df.columns) == ["capability", "label", "template"]
    assert set(df.label) == {0, 1} and "This {noun} is not {pos_adj}." in set(df.template)
    back = Suite.from_dict(import_capability_csv(path, labels=["negative", "positive"]))
    assert case_set(back) == case_set(suite)
    assert {t.capability for t in back.tests} == {"Vocabulary", "Negation", "Misc"}


def test_capability_csv_published_style(tmp_path):
    path = tmp_path / "ade.csv"
    path.write_text(",capability,label,template\n0,Temporal,1,I took {drug} and got {ade}.\n"
                    "1,Negation,0,{drug} did not cause {ade}.\n")
    suite = Suite.from_dict(import_capability_csv(path, labels=["no_ade", "ade"]))
    assert suite.counts() == {"Temporal: ade": 30 * 25, "Negation: no_ade": 30 * 25}
    first = next(iter(suite.cases()))
    assert first.text == "I took ibuprofen and got nausea." and first.label == "ade"


def test_csv_without_a_required_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(",capability,template\n0,x,y\n")
    with pytest.raises(DataError, match=r"capability CSV has no column 'label'"):
        import_capability_csv(bad)
    with pytest.raises(DataError, match=r"HateCheck cases CSV has no column 'functionality', "
                       r"'test_case', 'label_gold', 'case_templ'"):
        import_hatecheck(bad)
    (tmp_path / "idx.csv").write_text(",capability,label,template\n0,x,7,y\n")
    with pytest.raises(DataError, match=r"label '7' is not an index into \['a', 'b'\].*line 2"):
        import_capability_csv(tmp_path / "idx.csv", labels=["a", "b"])


def test_adatest_export(tmp_path):
    path = tmp_path / "tree.csv"
    assert export_adatest(native_suite(), path) == ["robust"]
    df = pd.read_csv(path, index_col=0, keep_default_na=False)
    assert list(df.columns) == ["topic", "input", "output", "label", "labeler", "description"]
    markers = df[df.label == "topic_marker"]
    assert set(markers.topic) == {"/Vocabulary/pos", "/Negation/negated", "/Misc/hand"}
    tests = df[df.label == "pass"]
    assert len(tests) == len(case_set(native_suite())) and df.index.is_unique
    assert tests.set_index("input").loc["This movie is not good.", "output"] == "negative"
    # One fail row per case and wrong label: AdaTest's labeling model needs both kinds.
    fails = df[df.label == "fail"]
    assert len(fails) == len(tests)  # two labels: one wrong output each
    assert fails.set_index("input").loc["This movie is not good.", "output"] == "positive"
