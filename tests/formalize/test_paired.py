"""Paired slots: tuple lexicons fill several placeholders together; the ADE capability CSV
imports with no extra file and pairs its time entities as published; expansion stays linear."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from formalize import Suite, builtin_lexicons, export_capability_csv, import_capability_csv
from formalize._lexicons import builtin_pairs
from synth.core import TemplateError
from tests.formalize.conftest import suite_dict

ADE = Path(__file__).parent / "data" / "ade_capabilities.csv"


def test_paired_lexicon_fills_its_slots_together():
    suite = Suite.from_dict(suite_dict(
        {"name": "p", "type": "mft", "label": "positive",
         "template": "From {SHORT} to {LONG}, then {SHORT1} to {LONG1}."},
        lexicons={"SPAN": {"slots": ["SHORT", "LONG"],
                           "values": [["a day", "a week"], ["a week", "a year"]]}}))
    texts = [c.text for c in suite.cases()]
    # Two independent draws of the pair: 2 x 2, never "a week to a week" from one draw.
    assert texts == ["From a day to a week, then a day to a week.",
                     "From a day to a week, then a week to a year.",
                     "From a week to a year, then a day to a week.",
                     "From a week to a year, then a week to a year."]
    assert suite.counts() == {"p": 4}
    assert next(suite.cases()).fills[:2] == (("SHORT", "SHORT", "a day"),
                                             ("LONG", "LONG", "a week"))


@pytest.mark.parametrize(("entry", "message"), [
    ({"slots": ["A", "B"], "values": [["x", "y"], ["z"]]},
     r"paired lexicon 'SPAN', entry 1: 1 values for 2 slots \(A, B\)"),
    ({"slots": ["A", "B"], "values": [["x", "y", "w"]]},
     r"paired lexicon 'SPAN', entry 0: 3 values for 2 slots"),
    ({"slots": ["A"], "values": [["x"]]}, r"needs 'slots': a list of two or more slot names"),
    ({"slots": ["A", "A"], "values": [["x", "y"]]}, r"names a slot twice"),
    ({"slots": ["A", "B2"], "values": [["x", "y"]]}, r"slot name 'B2' ends with a digit"),
])
def test_paired_lexicon_arity_errors(entry, message):
    with pytest.raises(TemplateError, match=message):
        Suite.from_dict(suite_dict({"name": "p", "type": "mft", "label": "positive",
                                    "template": "{A}"}, lexicons={"SPAN": entry}))


def test_paired_slot_clashing_with_a_lexicon_is_an_error():
    with pytest.raises(TemplateError, match=r"fills slot 'NOUN', which a lexicon or alias"):
        Suite.from_dict(suite_dict({"name": "p", "type": "mft", "label": "positive",
                                    "template": "{NOUN}"},
                                   lexicons={"SPAN": {"slots": ["NOUN", "B"],
                                                      "values": [["x", "y"]]}}))


def test_builtin_time_entities():
    lex, pairs = builtin_lexicons(), builtin_pairs()
    assert len(lex["TIME_ENTITY"]) == 11
    pair = pairs["TIME_ENTITY_SL"]
    assert pair.slots == ("TIME_ENTITY_S", "TIME_ENTITY_L") and len(pair.rows) == 12
    days = {"hour": 1 / 24, "day": 1, "week": 7, "month": 30, "year": 365}

    def length(v: str) -> float:
        n, unit = v.replace("a few", "3").split()
        return int(n) * days[unit.rstrip("s")]

    assert all(length(s) < length(lo) for s, lo in pair.rows)


def test_ade_csv_imports_with_no_extra_file_and_pairs_as_published(tmp_path):
    data = import_capability_csv(ADE, labels=["no_ade", "ade"])
    suite = Suite.from_dict(data)
    assert [t.name for t in suite.tests] == [
        "Temporal: ade", "Temporal: no_ade", "Negation: no_ade"]
    cases = list(suite.cases())
    per = Counter((c.capability, c.label) for c in cases)
    # 30 drugs, 25 effects, 11 single time entities, 12 time pairs.
    assert per == {("Temporal", "ade"): 30 * 11 * 25 + 12 * 30 * 25,
                   ("Temporal", "no_ade"): 25 * 11 * 30,
                   ("Negation", "no_ade"): 30 * 25 + 30 * 12 * 25}
    pairs = set(builtin_pairs()["TIME_ENTITY_SL"].rows)
    paired = [c for c in cases if "TIME_ENTITY_S" in c.fills_dict()]
    assert paired and all((c.fills_dict()["TIME_ENTITY_S"], c.fills_dict()["TIME_ENTITY_L"])
                          in pairs for c in paired)
    # Export writes the file back: same rows, the published spelling of every slot.
    out = tmp_path / "ade.csv"
    assert export_capability_csv(suite, out) == []
    assert out.read_text() == ADE.read_text()


def test_deduper_keeps_every_text_once():
    from formalize._expand import Deduper

    dedupe = Deduper()
    assert [dedupe.first(t) for t in ["a", "b", "a", "A", "b", "c"]] == [
        True, True, False, True, False, True]
