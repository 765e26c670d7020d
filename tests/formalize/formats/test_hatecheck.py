"""HateCheck's published files round-trip without loss: templates recovered despite trailing
spaces, sentence-initial capitals and a/an agreement; every column kept; export byte-identical."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from formalize import FORMATS, Suite, dump_suite_yaml, export_hatecheck, import_hatecheck
from synth.core import DataError

DATA = Path(__file__).parents[1] / "data" / "hatecheck"
CASES, PLACEHOLDERS = DATA / "test_suite_cases.csv", DATA / "template_placeholders.csv"


def published_rows() -> list[dict[str, str]]:
    with CASES.open(newline="") as f:
        return list(csv.DictReader(f))


def imported(tmp_path: Path) -> Suite:
    """Import the published pair, write the suite YAML, load it back (the user's route)."""
    data = import_hatecheck(CASES, PLACEHOLDERS, name="hc")
    path = tmp_path / "hc.yaml"
    path.write_text(dump_suite_yaml(data), encoding="utf-8")
    return Suite.from_yaml(path)


def test_templates_recovered_despite_spaces_capitals_and_articles(tmp_path):
    suite = imported(tmp_path)
    assert suite.test("derog_neg_emote_h").spec.templates == [
        "I hate {IDENTITY_P}.", "You are {a:IDENTITY_S} and I despise you."]
    assert suite.test("derog_neg_attrib_h").spec.templates == ["{Cap:IDENTITY_P} are disgusting."]
    assert suite.test("counter_quote_nh").spec.templates == [
        'Saying "I hate {IDENTITY_P}" is wrong.']
    texts = {c.text for c in suite.test("derog_neg_emote_h").cases()}
    assert "You are an immigrant and I despise you." in texts
    assert "You are a Muslim and I despise you." in texts
    # Scored without the trailing space; the published value stays in the metadata.
    case = next(c for c in suite.cases() if c.text == "Women are disgusting.")
    assert case.meta[0]["test_case"] == "Women are disgusting. "
    assert case.meta[0]["case_id"] == "11" and case.meta[0]["focus_lemma"] == "disgust"


def test_every_case_and_label_kept(tmp_path):
    suite = imported(tmp_path)
    rows = published_rows()
    counts = {t.name: sum(1 for _ in t.cases()) for t in suite.tests}
    # 15 rows; "I hate nobody." twice (with and without its trailing space) is one case
    # holding both rows.
    assert counts == {"derog_neg_emote_h": 7, "derog_neg_attrib_h": 3, "counter_quote_nh": 4}
    got = {(c.test, c.text, c.label, m["case_id"]) for c in suite.cases() for m in c.meta}
    assert got == {(r["functionality"], r["test_case"].strip(), r["label_gold"], r["case_id"])
                   for r in rows}
    by_label: dict[str, int] = {}
    for c in suite.cases():
        by_label[c.label] = by_label.get(c.label, 0) + 1
    assert by_label == {"hateful": 10, "non-hateful": 4}


def test_export_reproduces_both_files_byte_for_byte(tmp_path):
    suite = imported(tmp_path)
    out = tmp_path / "out"
    assert export_hatecheck(suite, out) == []
    assert (out / "test_suite_cases.csv").read_bytes() == CASES.read_bytes()
    assert (out / "template_placeholders.csv").read_bytes() == PLACEHOLDERS.read_bytes()
    with (out / "test_suite_cases.csv").open(newline="") as f:
        back = list(csv.DictReader(f))
    assert back == published_rows()  # same ids, order and every column, cell for cell


def test_crlf_files_round_trip(tmp_path):
    for src in (CASES, PLACEHOLDERS):
        text = src.read_text().replace("\n", "\r\n")
        (tmp_path / src.name).write_bytes(text.encode())
    data = import_hatecheck(tmp_path / CASES.name, tmp_path / PLACEHOLDERS.name)
    export_hatecheck(Suite.from_dict(data), tmp_path / "out")
    for src in (CASES, PLACEHOLDERS):
        assert (tmp_path / "out" / src.name).read_bytes() == (tmp_path / src.name).read_bytes()


def test_new_cases_follow_with_new_ids_and_target(tmp_path):
    data = import_hatecheck(CASES, PLACEHOLDERS)
    data["tests"].append({"name": "new_h", "type": "mft", "label": "hateful",
                          "template": "{Cap:IDENTITY_P} must go."})
    data["lexicons"]["IDENTITY_P"].append("refugees")
    out = tmp_path / "out"
    export_hatecheck(Suite.from_dict(data), out)
    with (out / "test_suite_cases.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["case_id"] for r in rows[:15]] == [r["case_id"] for r in published_rows()]
    new = rows[15:]
    # The new value also fills the imported templates: those cases are new rows too.
    assert [(r["case_id"], r["test_case"], r["target_ident"]) for r in new] == [
        ("25", "I hate refugees.", "refugees"), ("26", "Refugees are disgusting.", "refugees"),
        ("27", 'Saying "I hate refugees" is wrong.', "refugees"),
        ("28", "Women must go.", "women"), ("29", "Immigrants must go.", "immigrants"),
        ("30", "Muslims must go.", "Muslims"), ("31", "Refugees must go.", "refugees")]
    assert [r[""] for r in new] == [str(k) for k in range(15, 22)]
    assert new[1]["case_templ"] == "[IDENTITY_P] are disgusting."
    ph = (out / "template_placeholders.csv").read_text()
    assert '[IDENTITY_P],"women,immigrants,Muslims,refugees"' in ph  # the edit is written


def test_placeholders_found_beside_the_cases_under_the_published_name(tmp_path):
    shutil.copy(CASES, tmp_path)
    shutil.copy(PLACEHOLDERS, tmp_path)
    data = FORMATS.get("hatecheck")().import_(tmp_path / CASES.name, name="hc")
    assert Suite.from_dict(data).test("derog_neg_attrib_h").spec.templates


def test_warns_when_templates_are_expected_and_no_placeholder_file(tmp_path):
    shutil.copy(CASES, tmp_path)
    with pytest.warns(UserWarning, match=r"12 cases come from templates with placeholders, "
                                          r"but no template_placeholders.csv"):
        data = FORMATS.get("hatecheck")().import_(tmp_path, name="hc")
    suite = Suite.from_dict(data)
    assert all(not t.spec.templates for t in suite.tests)
    assert sum(1 for _ in suite.cases()) == 14


def test_missing_explicit_placeholders_file_is_an_error(tmp_path):
    with pytest.raises(DataError, match="HateCheck placeholders file not found"):
        FORMATS.get("hatecheck")().import_(CASES, name="hc", placeholders=tmp_path / "no.csv")


def test_placeholder_file_without_final_newline_round_trips(tmp_path):
    """As published: template_placeholders.csv has CRLF line ends and no line end after its
    last row, while test_suite_cases.csv (unnamed pandas index column) ends with LF."""
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(CASES, src / CASES.name)
    ph = PLACEHOLDERS.read_text().replace("\n", "\r\n").rstrip("\r\n")
    (src / PLACEHOLDERS.name).write_bytes(ph.encode())
    data = import_hatecheck(src / CASES.name, src / PLACEHOLDERS.name)
    assert data["meta"]["hatecheck"]["placeholders"]["final_newline"] is False
    assert "final_newline" not in data["meta"]["hatecheck"]  # the cases file ends with LF
    export_hatecheck(Suite.from_dict(data), tmp_path / "out")
    assert (tmp_path / "out" / PLACEHOLDERS.name).read_bytes() == ph.encode()
    assert (tmp_path / "out" / CASES.name).read_bytes() == CASES.read_bytes()
