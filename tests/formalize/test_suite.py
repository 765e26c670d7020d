"""Suites: expansion counts, fill-dependent labels, sampling, lexicons, and every bad input."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from formalize import Suite, SuiteSpec, builtin_lexicons, load_suite
from synth.core import TemplateError
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


def test_a_placeholder_with_a_trailing_digit_is_explained():
    # {X_3} is a second draw from X_: the message says so, above all when X_3 exists.
    with pytest.raises(TemplateError, match=r"undefined placeholder \{PLACE_3\} at column 5 "
                       r"in 'See {PLACE_3}.': a trailing digit marks another draw, so "
                       r"\{PLACE_3\} draws from the lexicon 'PLACE_', which is not defined; the "
                       r"lexicon 'PLACE_3' exists, but its name ends with a digit, so no "
                       r"placeholder can name it .*: rename the lexicon .* or give it a slot "
                       r"alias \(slots: \{ALIAS: \[PLACE_3\]\}\)"):
        # (A lexicon file or a suite cannot define PLACE_3 any more; the Python API can.)
        Suite(SuiteSpec.model_validate(suite_dict(mft("See {PLACE_3}."))),
              extra_lexicons={"PLACE_3": ["bistro"]})
    # The renamed built-in points to its new name.
    with pytest.raises(TemplateError, match=r"draws from the lexicon 'PRONOUN_', which is not "
                       r"defined; the built-in lexicon 'PRONOUN_3' was renamed .*: write "
                       r"\{PRONOUN_THIRD\}"):
        Suite.from_dict(suite_dict(mft("{PRONOUN_3} liked it.")))
    with pytest.raises(TemplateError, match=r"\{FOOD2\} draws from the lexicon 'FOOD', which "
                       r"is not defined .*did you mean 'FOO'"):
        Suite.from_dict(suite_dict(mft("{FOOD2}"), lexicons={"FOO": ["a"]}))
    # By name (not in a template) the renamed lexicon is pointed out as well.
    with pytest.raises(TemplateError, match=r"unknown lexicon 'PRONOUN_3'.*was renamed to "
                       r"'PRONOUN_THIRD'"):
        Suite.from_dict(suite_dict({"name": "t", "type": "inv", "template": "{NOUN}",
                                    "perturb": [{"name": "revision", "lexicon": "PRONOUN_3"}]}))
    suite = Suite.from_dict(suite_dict(mft("{PRONOUN_THIRD} liked it.")))
    assert [c.text for c in suite.cases()] == ["he liked it.", "she liked it.", "they liked it."]


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
    with pytest.raises(TemplateError, match=r"unknown field 'tests\[0\].lable' \(.*suite.yaml, "
                       r"test 't', field 'tests\[0\].lable', line 4\)"):
        load_suite(path)


def test_schema_errors_name_the_field_as_written_and_its_line(tmp_path):
    # The field path is the one in the file (no pydantic union tag such as 'mft' or 'str'),
    # and the line is the misspelled key's, not the test's first line.
    def error(body):
        with pytest.raises(TemplateError) as info:
            load_suite(write(tmp_path, "name: s\nlabels: [negative, positive]\n" + body))
        return str(info.value)

    msg = error("tests:\n  - name: t\n    type: mft\n    label: positive\n"
                "    templat: \"This {NOUN} is good.\"\n")
    assert msg.startswith("unknown field 'tests[0].templat' (")
    assert msg.endswith("suite.yaml, test 't', field 'tests[0].templat', line 7): remove it or "
                        "check its spelling")
    msg = error("tests:\n  - name: t\n    type: dir\n    template: x\n    perturb: typo\n"
                "    label: positive\n    direction: up\n    min_delta: 2\n")
    assert msg.startswith("invalid value for 'tests[0].min_delta': Input should be less than "
                          "or equal to 1; got 2") and msg.endswith("line 10): correct the value")
    # A misspelled key of a label rule: reported as such, not as "not a string".
    msg = error("tests:\n  - name: t\n    type: mft\n    template: '{NOUN}'\n    label:\n"
                "      by: NOUN\n      mapp: {NOUN: positive}\n")
    assert msg.startswith("unknown field 'tests[0].label.mapp' (") and "line 9" in msg
    assert msg.endswith("did you mean 'map'? (a required field, missing here)")
    # `template:` is the shorthand of `templates:`; an error in it names `template`.
    msg = error("tests:\n  - name: t\n    type: mft\n    label: positive\n    template: [x]\n")
    assert msg.startswith("invalid value for 'tests[0].template': Input should be a valid "
                          "string") and "line 7" in msg
    msg = error("tests:\n  - name: t\n    type: mtf\n    template: x\n")
    assert msg.startswith("unknown test type 'mtf'") and "field 'tests[0].type', line 5" in msg
    assert "did you mean 'mft'?" in msg
    msg = error("lexicons:\n  DISH: {fil: dishes.csv}\ntests:\n  - {name: t, type: mft, "
                "template: '{DISH}', label: positive}\n")
    assert msg.startswith("unknown field 'lexicons.DISH.fil' (") and "line 4" in msg


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


# -- test groups from a run's corpus ---------------------------------------------------------
def write_corpus(run_dir: Path, shards: list[list[str]]) -> None:
    """A run directory as `synthcheck generate` leaves it: corpus/shard-*.jsonl records."""
    import json

    k = 0
    for s, texts in enumerate(shards):
        lines = []
        for text in texts:
            lines.append(json.dumps({"id": f"q{k:08d}", "text": text, "query": text[:10],
                                     "raw": text, "shard": s, "seed": k}))
            k += 1
        (run_dir / "corpus").mkdir(parents=True, exist_ok=True)
        (run_dir / "corpus" / f"shard-{s:05d}.jsonl").write_text("\n".join(lines) + "\n")


def group(**kw):
    return {"name": "gender", "type": "group", "words": {"male": ["he", "man"],
                                                         "female": ["she", "woman"]}, **kw}


def test_group_texts_from_a_run_corpus(tmp_path):
    write_corpus(tmp_path / "runs" / "demo", [
        ["He loved the movie.", "The plot was thin.", "She found it dull."],
        ["He loved the movie.", "A man walked out early."]])  # a duplicate across shards
    suite = Suite.from_dict(suite_dict(group(texts_from_run="runs/demo")), base_dir=tmp_path)
    test = suite.test("gender")
    # Corpus order, the cross-shard duplicate dropped, the text without a mention left out.
    assert test.base_texts == ("He loved the movie.", "She found it dull.",
                               "A man walked out early.")
    texts = {(c.base_id, c.group): c.text for c in suite.cases()}
    assert texts[("gender:2", "female")] == "A woman walked out early."
    assert texts[("gender:1", "male")] == "He found it dull."
    assert suite.counts() == {"gender": 6}
    # With `add`, every text applies (a mention is inserted where there is none).
    added = Suite.from_dict(suite_dict(group(texts_from_run={"run": "runs/demo"},
                                             add="As a {mention}:")), base_dir=tmp_path)
    assert "The plot was thin." in added.test("gender").base_texts
    # Combined with inline texts: both are used.
    both = Suite.from_dict(suite_dict(group(texts=["She smiled."], texts_from_run="runs/demo")),
                           base_dir=tmp_path)
    assert both.test("gender").base_texts[0] == "She smiled." and \
        len(both.test("gender").base_texts) == 4


def test_group_texts_from_run_limit_is_a_seeded_sample_in_corpus_order(tmp_path):
    corpus = [f"He rated film {i} highly." for i in range(40)] + ["No mention here."] * 1
    write_corpus(tmp_path / "run", [corpus[:20], corpus[20:]])

    def base(**src):
        suite = Suite.from_dict(suite_dict(group(texts_from_run={"run": "run", **src})),
                                base_dir=tmp_path)
        return suite.test("gender").base_texts

    a, b = base(limit=5), base(limit=5)
    assert a == b and len(a) == 5 and len(set(a)) == 5
    assert list(a) == sorted(a, key=corpus.index)  # kept in corpus order
    assert set(a) <= set(corpus[:40])
    assert base(limit=5, seed=1) != a  # another seed, another draw
    assert len(base(limit=100)) == 40  # a limit above the corpus keeps every applicable text
    # The suite's seed is the default seed of the draw.
    seeded = Suite.from_dict(suite_dict(group(texts_from_run={"run": "run", "limit": 5}),
                                        seed=1), base_dir=tmp_path)
    assert seeded.test("gender").base_texts == base(limit=5, seed=1)


def test_group_texts_from_run_errors(tmp_path, monkeypatch):
    with pytest.raises(TemplateError, match=r"no corpus in the run directory .*test 'gender', "
                       r"texts_from_run.*relative to the suite file's folder"):
        Suite.from_dict(suite_dict(group(texts_from_run="nowhere")), base_dir=tmp_path)
    # A run under the current directory, written as if the path were relative to it: the
    # message says what to write instead.
    write_corpus(tmp_path / "runs" / "demo", [["He liked it."]])
    (tmp_path / "configs" / "suites").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TemplateError, match=r"write '\.\./\.\./runs/demo'"):
        Suite.from_dict(suite_dict(group(texts_from_run="runs/demo")),
                        base_dir=tmp_path / "configs" / "suites")
    write_corpus(tmp_path / "plain", [["The plot was thin."]])
    with pytest.raises(TemplateError, match="no corpus text of the run mentions the attribute"):
        Suite.from_dict(suite_dict(group(texts_from_run="plain")), base_dir=tmp_path)
    (tmp_path / "bad" / "corpus").mkdir(parents=True)
    (tmp_path / "bad" / "corpus" / "shard-00000.jsonl").write_text('{"id": "a"}\n')
    with pytest.raises(TemplateError, match=r"corpus record field 'text' is missing, not a "
                                            r"string \(.*shard-00000.jsonl, line 1\)"):
        Suite.from_dict(suite_dict(group(texts_from_run="bad")), base_dir=tmp_path)
    with pytest.raises(TemplateError, match=r"unknown field .*texts_from_run.limt"):
        Suite.from_dict(suite_dict(group(texts_from_run={"run": "x", "limt": 3})))


def test_fingerprint_follows_the_corpus(tmp_path):
    write_corpus(tmp_path / "run", [["He liked it."]])
    data = suite_dict(group(texts_from_run="run"))
    first = Suite.from_dict(data, base_dir=tmp_path).fingerprint()
    assert Suite.from_dict(data, base_dir=tmp_path).fingerprint() == first
    write_corpus(tmp_path / "run", [["He liked it.", "She did not."]])
    again = Suite.from_dict(data, base_dir=tmp_path).fingerprint()
    assert again["suite"] == first["suite"] and again != first


# -- the suite's labels against the task's ----------------------------------------------------
def test_check_labels_against_the_task(tmp_path):
    path = write(tmp_path, """\
        name: s
        labels: [negative, positive, mixed]
        tests:
          - {name: adj, type: mft, template: "This {NOUN} is {POS_ADJ}.", label: positive}
          - name: hedged
            type: mft
            cases:
              - {text: "It was fine, I guess.", label: mixed}
            label: positive
        """)
    suite = load_suite(path)
    suite.check_labels(["mixed", "positive", "negative"])  # any order
    with pytest.raises(TemplateError, match=r"label 'mixed' is not one of the task's labels "
                       r"\(negative, positive\) from config c.yaml, task.labels .*suite.yaml, "
                       r"test 'hedged', cases.0.label, line 8"):
        suite.check_labels(["negative", "positive"], task_source="config c.yaml, task.labels")
    with pytest.raises(TemplateError, match=r"the suite lacks the task's label 'neutral'.*"
                       r"suite.yaml, labels, line 2\): write labels: \[negative, positive, "
                       r"mixed, neutral\]"):
        suite.check_labels(["negative", "positive", "mixed", "neutral"])
    unused = Suite.from_dict(suite_dict(mft("x"), labels=["negative", "positive", "other"]))
    with pytest.raises(TemplateError, match="the suite's label 'other' is not one of the task's"):
        unused.check_labels(["negative", "positive"])
    rule = Suite.from_dict(suite_dict(
        mft("{ADJ}", {"by": "ADJ", "map": {"POS_ADJ": "good", "NEG_ADJ": "bad"}}),
        labels=["bad", "good"], slots={"ADJ": ["POS_ADJ", "NEG_ADJ"]}))
    with pytest.raises(TemplateError, match=r"label 'good' .*label.map.POS_ADJ"):
        rule.check_labels(["negative", "positive"])


def test_check_suite_labels_reads_only_the_file(tmp_path):
    from formalize import check_suite_labels

    # The corpus this suite reads does not exist yet (a pipeline would write it later):
    # loading fails, the label check alone does not.
    path = write(tmp_path, """\
        name: s
        labels: [negative, positive]
        tests:
          - type: group
            name: gender
            texts_from_run: ../runs/later
            words: {male: [he], female: [she]}
        """)
    with pytest.raises(TemplateError, match="no corpus in the run directory"):
        load_suite(path)
    check_suite_labels(path, ["positive", "negative"])
    with pytest.raises(TemplateError, match=r"the suite lacks the task's label 'neutral' .*"
                       r"from the run config's task.labels\) .*suite.yaml, labels, line 2"):
        check_suite_labels(path, ["negative", "neutral", "positive"],
                           task_source="the run config's task.labels")
    (tmp_path / "broken.yaml").write_text("name: s\nlabels: [a, b\n")
    with pytest.raises(TemplateError, match=r"malformed YAML.*broken.yaml, line"):
        check_suite_labels(tmp_path / "broken.yaml", ["a", "b"])


def test_compiled_tests_carry_the_suite_lexicons():
    suite = Suite.from_dict(suite_dict(mft("This {NOUN} is {POS_ADJ}.")))
    assert all(t.lexicons is suite.lexicons for t in suite.tests)


def test_check_spec_labels_needs_only_the_spec():
    from formalize import check_spec_labels

    spec = SuiteSpec.model_validate(suite_dict(mft("{NOUN}", label="great"),
                                                  labels=["great", "positive"]))
    with pytest.raises(TemplateError, match=r"label 'great' .*from the task.*<s>, test 't'"):
        check_spec_labels(spec, ["negative", "positive"], source="<s>")


def test_sampled_fills_and_perturbations_are_pinned() -> None:
    """Sampled fills come from derive_rng(seed, test, "sample") and each variant's
    perturbation from derive_rng(seed, test, i, j, v): a change of stream shows here."""
    from formalize import Suite

    suite = Suite.from_dict({"name": "toy", "labels": ["negative", "positive"], "seed": 0,
                             "tests": [
        {"name": "good things", "type": "mft", "capability": "Vocabulary",
         "label": "positive", "template": "This {NOUN} is {POS_ADJ}.", "sample": 3},
        {"name": "typos", "type": "inv", "capability": "Robustness", "variants": 2,
         "texts": ["the film was really good", "a dull and boring story"],
         "perturb": [{"name": "typo", "kind": "any"}]}]})
    assert [(c.case_id, c.text) for c in suite.cases()] == [
        ("good-things:0", "This show is good."),
        ("good-things:1", "This sandwich is outstanding."),
        ("good-things:2", "This bike is engaging."),
        ("typos:0.0.0", "the film was reall good"),
        ("typos:0.0.1", "the film wa really good"),
        ("typos:1.0.0", "a dull and boring srtory"),
        ("typos:1.0.1", "a dull and borinxg story")]
