"""Suites: expansion counts, fill-dependent labels, sampling, lexicons, and every bad input."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from formalize import Suite, builtin_lexicons, load_suite
from synth import TemplateError
from tests.formalize.conftest import suite_dict

SUITES = Path(__file__).resolve().parents[2] / "configs" / "suites"


def mft(template, label="positive", **kw):
    return {"name": kw.pop("name", "t"), "type": "mft", "template": template, "label": label, **kw}


def test_builtin_lexicon_sizes():
    lex = builtin_lexicons()
    assert len(lex["NOUN"]) == 83 and len(lex["POS_ADJ"]) == 36
    assert len(lex["TIME"]) == 75 and lex["TIME"][0] == "1 day" and lex["TIME"][-1] == "25 months"


def test_exhaustive_count_is_2988_and_lazy():
    suite = Suite.from_dict(suite_dict(mft("This {NOUN} is {POS_ADJ}.")))
    assert suite.counts() == {"t": 2988}
    cases = suite.cases()
    assert not isinstance(cases, list)  # a generator: nothing expanded yet
    texts = [c.text for c in cases]
    assert len(texts) == len(set(texts)) == 2988
    assert texts[0] == "This movie is good." and texts[1] == "This movie is great."


def test_second_draw_is_independent_and_article_agrees():
    suite = Suite.from_dict(suite_dict(mft("{A:NOUN} beats {a:NOUN1}.")))
    cases = list(suite.cases())
    assert len(cases) == 83 * 83
    by_fill = {(c.fills_dict()["NOUN"], c.fills_dict()["NOUN1"]): c.text for c in cases}
    assert by_fill[("album", "book")] == "An album beats a book."
    assert by_fill[("book", "album")] == "A book beats an album."
    assert by_fill[("book", "book")] == "A book beats a book."


def test_fill_dependent_labels_and_recorded_fills():
    suite = Suite.from_dict(suite_dict(
        mft("This {NOUN} is not {ADJ}.", {"by": "ADJ", "map": {"POS_ADJ": "negative",
                                                                "NEG_ADJ": "positive"}}),
        slots={"ADJ": ["POS_ADJ", "NEG_ADJ"]}))
    cases = list(suite.cases())
    assert len(cases) == 83 * (36 + 30)
    lex = builtin_lexicons()
    for c in cases:
        (_, _, noun), (slot, source, adj) = c.fills
        assert slot == "ADJ" and c.text == f"This {noun} is not {adj}."
        assert c.label == ("negative" if adj in lex["POS_ADJ"] else "positive")
        assert source == ("POS_ADJ" if adj in lex["POS_ADJ"] else "NEG_ADJ")
    assert cases[0].to_record()["fills"] == [
        {"slot": "NOUN", "lexicon": "NOUN", "value": "movie"},
        {"slot": "ADJ", "lexicon": "POS_ADJ", "value": "good"}]


def test_sampling_is_seeded_and_without_replacement():
    data = suite_dict(mft("This {NOUN} is {POS_ADJ}."))
    suite = Suite.from_dict(data)
    a = [c.text for c in suite.cases(sample=50, seed=1)]
    b = [c.text for c in suite.cases(sample=50, seed=1)]
    c = [c.text for c in suite.cases(sample=50, seed=2)]
    assert a == b and a != c and len(set(a)) == 50
    everything = {x.text for x in suite.cases()}
    assert set(a) <= everything
    assert suite.counts(sample=50) == {"t": 50}
    assert len(list(suite.cases(sample=5000))) == 2988  # a sample above the size is everything


def test_sample_decodes_the_same_combination_as_the_product():
    suite = Suite.from_dict(suite_dict(mft("{NOUN} {POS_ADJ} {NOUN1}")))
    tpl = suite.tests[0].source.templates[0]
    for index, combo in itertools.islice(enumerate(tpl.combos()), 0, 50000, 997):
        assert tpl.combo_at(index) == combo


def test_duplicates_are_removed():
    suite = Suite.from_dict(suite_dict(
        {"name": "t", "type": "mft", "templates": ["A {X}.", "A {X}.", "A b."], "label": "positive",
         "cases": ["A a.", {"text": "A c.", "label": "negative"}]},
        lexicons={"X": ["a", "b", "a"]}))
    assert [(c.text, c.label) for c in suite.cases()] == [
        ("A a.", "positive"), ("A b.", "positive"), ("A c.", "negative")]


def test_user_lexicons_from_yaml_csv_txt(tmp_path):
    (tmp_path / "a.txt").write_text("# comment\nred\n\nblue\n")
    (tmp_path / "b.csv").write_text("name,kind\nkiwi,fruit\nfig,fruit\n")
    (tmp_path / "c.yaml").write_text("SIZES: [small, big]\n")
    (tmp_path / "suite.yaml").write_text(textwrap.dedent("""\
        name: s
        labels: [negative, positive]
        lexicon_files: [c.yaml]
        lexicons:
          COLOR: {file: a.txt}
          FRUIT: {file: b.csv, column: name}
        tests:
          - {name: t, type: mft, template: "{SIZES} {COLOR} {FRUIT}", label: positive}
        """))
    texts = [c.text for c in load_suite(tmp_path / "suite.yaml").cases()]
    assert texts[:3] == ["small red kiwi", "small red fig", "small blue kiwi"] and len(texts) == 8


def test_the_shipped_suites_load():
    for name in ("sentiment", "toxicity", "ade", "clinical_groups"):
        suite = load_suite(SUITES / f"{name}.yaml")
        assert sum(suite.counts().values()) > 0
    sentiment = load_suite(SUITES / "sentiment.yaml")
    assert sentiment.counts()["single positive adjective"] == 2988


# -- bad input ---------------------------------------------------------------------------
def write(tmp_path, text):
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_undefined_placeholder_names_suite_test_column_line(tmp_path):
    path = write(tmp_path, """\
        name: s
        labels: [negative, positive]
        tests:
          - name: my test
            type: mft
            templates: ["This {NOUN} is {POS_ADJJ}."]
            label: positive
        """)
    with pytest.raises(TemplateError, match=r"undefined placeholder \{POS_ADJJ\} at column 16.*"
                       r"suite.yaml, test 'my test', templates.0, line 6.*did you mean 'POS_ADJ'"):
        load_suite(path)


def test_unbalanced_brace_names_suite_test_column(tmp_path):
    path = write(tmp_path, """\
        name: s
        labels: [negative, positive]
        tests:
          - {name: t1, type: mft, template: "This {NOUN is good.", label: positive}
        """)
    with pytest.raises(TemplateError, match=r"unclosed '\{' at column 6 .*suite.yaml, test 't1'"):
        load_suite(path)


def test_malformed_yaml_names_the_line(tmp_path):
    path = write(tmp_path, "name: s\nlabels: [negative, positive\ntests: []\n")
    with pytest.raises(TemplateError, match=r"malformed YAML.*suite.yaml, line 3"):
        load_suite(path)


def test_unknown_field_names_field_and_line(tmp_path):
    path = write(tmp_path, """\
        name: s
        labels: [negative, positive]
        tests:
          - {name: t, type: mft, template: "x", label: positive, lable: negative}
        """)
    with pytest.raises(TemplateError, match=r"unknown field 'tests\[0\].mft.lable'.*line 4"):
        load_suite(path)


def test_label_outside_the_labels():
    with pytest.raises(TemplateError, match=r"label 'positve' is not one of the suite's labels"
                       r".*did you mean 'positive'"):
        Suite.from_dict(suite_dict(mft("This {NOUN}.", "positve")))
    with pytest.raises(TemplateError, match="label 'neutral' is not one"):
        Suite.from_dict(suite_dict(mft("{ADJ}", {"by": "ADJ", "map": {"POS_ADJ": "neutral"}}),
                                   slots={"ADJ": ["POS_ADJ"]}))


def test_label_rule_must_cover_every_source():
    with pytest.raises(TemplateError, match="no label for fills from NEG_ADJ"):
        Suite.from_dict(suite_dict(mft("{ADJ}", {"by": "ADJ", "map": {"POS_ADJ": "positive"}}),
                                   slots={"ADJ": ["POS_ADJ", "NEG_ADJ"]}))


def test_unknown_and_empty_lexicons():
    with pytest.raises(TemplateError, match="lexicon 'EMPTY' is empty"):
        Suite.from_dict(suite_dict(mft("{EMPTY}"), lexicons={"EMPTY": []}))
    with pytest.raises(TemplateError, match="slot alias 'ADJ' names unknown lexicon 'POS_AJD'"):
        Suite.from_dict(suite_dict(mft("{ADJ}"), slots={"ADJ": ["POS_AJD"]}))
    with pytest.raises(TemplateError, match="unknown lexicon 'NOPE'"):
        Suite.from_dict(suite_dict({"name": "t", "type": "inv", "template": "{NOUN}",
                                    "perturb": [{"name": "revision", "lexicon": "NOPE"}]}))
    with pytest.raises(TemplateError, match="lexicon name 'NOUN2' ends with a digit"):
        Suite.from_dict(suite_dict(mft("{NOUN}"), lexicons={"NOUN2": ["a"]}))


def test_lexicon_files_errors(tmp_path):
    (tmp_path / "b.csv").write_text("name,kind\nkiwi,fruit\n")
    base = {"name": "s", "labels": ["negative", "positive"], "tests": [mft("{F}")]}
    with pytest.raises(TemplateError, match="CSV lexicon file has no column 'value'.*name, kind"):
        Suite.from_dict({**base, "lexicons": {"F": {"file": "b.csv", "column": "value"}}},
                        base_dir=tmp_path)
    with pytest.raises(TemplateError, match="lexicon file for 'F' not found"):
        Suite.from_dict({**base, "lexicons": {"F": {"file": "missing.txt"}}}, base_dir=tmp_path)


def test_exhaustive_expansion_over_the_limit_is_refused_with_its_count():
    suite = Suite.from_dict(suite_dict(mft("{NOUN} {POS_ADJ} {NOUN1}"), max_cases=100_000))
    with pytest.raises(TemplateError, match=r"expansion would produce 248,004 cases, over the "
                       r"limit of 100,000 .*--sample"):
        suite.check_limit()
    with pytest.raises(TemplateError, match="248,004"):
        next(iter(suite.cases()))
    assert suite.check_limit(sample=1000) == 1000


def test_mft_without_label_and_duplicate_names():
    with pytest.raises(TemplateError, match="needs a 'label'"):
        Suite.from_dict(suite_dict({"name": "t", "type": "mft", "template": "x"}))
    with pytest.raises(TemplateError, match="duplicate test name 't'"):
        Suite.from_dict(suite_dict(mft("x"), mft("y")))
