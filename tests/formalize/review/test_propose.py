"""Drafting templates from tagged sentences, running a draft, appending to suites, and the
`synthcheck propose` command."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from formalize import (
    ReviewLog,
    TemplateDraft,
    append_tests,
    load_suite,
    propose_templates,
    run_draft,
)
from synth.core import TemplateError
from synthcheck.cli import main
from tests.synthcheck import runbuilder  # noqa: E402  (the shared synthetic run, in tests/synthcheck)

LEX = {"NOUN": ["movie", "book", "film", "album"], "POS_VERB": ["love", "like"],
       "POS_ADJ": ["great", "amazing"], "PRONOUN": ["I", "you", "he"]}


def test_drafts_ranked_by_coverage_then_fewest_placeholders() -> None:
    sents = [{"id": "a", "text": "I can't say I don't love this movie.", "label": "positive"},
             {"id": "b", "text": "I can't say I don't love this book.", "label": "positive"},
             {"id": "c", "text": "I was blown away by this film.", "label": "positive"}]
    drafts = propose_templates(sents, LEX, max_drafts=5)
    first = drafts[0]
    assert first.template == "I can't say I don't love this {NOUN}."
    assert (first.coverage, first.ids, first.slots, first.cases) == (2, ("a", "b"), ("NOUN",), 4)
    assert first.label == "positive"
    assert first.examples == ("I can't say I don't love this movie.",
                              "I can't say I don't love this book.")
    # the most general draft with the same evidence comes next
    assert drafts[1].template == "I can't say I don't {POS_VERB} this {NOUN}."
    assert drafts[1].coverage == 2 and drafts[1].cases == 8
    assert drafts[2].template == "I was blown away by this {NOUN}." and drafts[2].coverage == 1
    assert all(d.coverage <= first.coverage for d in drafts)


def test_stopword_values_are_never_replaced_and_articles_become_modifiers() -> None:
    drafts = propose_templates(["I think it was an amazing album."], LEX, max_drafts=10)
    templates = {d.template for d in drafts}
    # the least and the most general draft: "an amazing" -> {a:POS_ADJ}
    assert templates == {"I think it was an amazing {NOUN}.", "I think it was {a:POS_ADJ} {NOUN}."}
    assert not any("PRONOUN" in t for t in templates)  # "I" is a stopword


def test_repeated_value_shares_a_key_and_braces_are_escaped() -> None:
    drafts = propose_templates(["This movie {sic} is a movie, not a book."], LEX, max_drafts=20)
    templates = {d.template for d in drafts}
    assert "This {NOUN} {{sic}} is {a:NOUN}, not {a:NOUN1}." in templates
    from formalize import parse_template

    for t in templates:
        parse_template(t)  # every draft is a valid template


def test_no_lexicon_word_gives_no_drafts() -> None:
    assert propose_templates(["Nothing here matches."], LEX) == []


def test_run_draft_measures_the_task_models() -> None:
    scorers = {"keyword": runbuilder.keyword_model,
               "negation-aware": runbuilder.negation_aware_model}
    draft = propose_templates([{"id": "a", "text": "I can't say I don't love this movie.",
                                "label": "positive"}], LEX)[0]
    result = run_draft(draft, scorers, runbuilder.LABELS, lexicons=LEX)
    rates = {(r.model): r.fail_rate for r in result.summary.itertuples() if r.level == "test"}
    assert rates == {"keyword": 1.0, "negation-aware": 0.0}
    assert result.meta["cases"] == 4  # LEX's NOUN (4 values) replaces the built-in one (83)
    assert set(result.cases["text"]) == {f"I can't say I don't love this {n}." for n in LEX["NOUN"]}


def test_to_test_needs_a_label() -> None:
    draft = TemplateDraft("This {NOUN} rocks.", 1, ("a",), ("This movie rocks.",), ("NOUN",), 4,
                          None)
    with pytest.raises(TemplateError, match=r"draft 'This \{NOUN\} rocks\.' has no gold label"):
        draft.to_test()
    assert draft.to_test("rocks", label="positive")["label"] == "positive"


def test_append_keeps_tests_and_comments(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text("# my suite\nname: mine\nlabels: [negative, positive]\ntests:\n"
                     "  # the first test\n  - name: one\n    type: mft\n    capability: X\n"
                     "    template: \"This {NOUN} is good.\"\n    label: positive\n")
    loaded = append_tests(suite, [{"name": "two", "type": "mft", "capability": "Y",
                                   "template": "I hate this {NOUN}.", "label": "negative"}])
    assert [t.name for t in loaded.tests] == ["one", "two"]
    text = suite.read_text()
    assert text.startswith("# my suite\n") and "  # the first test\n" in text
    assert "  - name: two\n" in text


def test_append_refuses_a_duplicate_and_leaves_the_file(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    append_tests(suite, [{"name": "one", "type": "mft", "capability": "X",
                          "template": "This {NOUN} is good.", "label": "positive"}],
                 labels=["negative", "positive"])
    before = suite.read_bytes()
    with pytest.raises(TemplateError, match="duplicate test name 'one'"):
        append_tests(suite, [{"name": "one", "type": "mft", "capability": "X",
                              "template": "This {NOUN} is bad.", "label": "negative"}])
    with pytest.raises(TemplateError, match=r"undefined placeholder \{NOUNZ\}"):
        append_tests(suite, [{"name": "two", "type": "mft", "capability": "X",
                              "template": "This {NOUNZ} is bad.", "label": "negative"}])
    assert suite.read_bytes() == before
    assert [t.name for t in load_suite(suite).tests] == ["one"]


def test_new_suite_needs_labels(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="a new suite file needs the task's labels"):
        append_tests(tmp_path / "new.yaml", [{"name": "x", "type": "mft", "capability": "X",
                                              "template": "ok", "label": "positive"}])


# -- the CLI ------------------------------------------------------------------------
@pytest.fixture
def tagged_run(tmp_path: Path) -> Path:
    run = runbuilder.build_run(tmp_path / "run", verify=False)
    log = ReviewLog(run)
    for sid in ("q00000040", "q00000041", "q00000042"):  # "I can't say I don't love this X."
        log.tag(sid, "task-model error", hypothesis="double negation")
    log.tag("q00000045", "reference error")
    return run


def test_cli_propose_lists_drafts(tagged_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["propose", "--run", str(tagged_run), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "3 sentence(s) tagged 'task-model error'; 3 draft(s)" in out
    assert "  1. covers 3  (83 cases, label positive)  I can't say I don't love this {NOUN}." in out


def test_cli_propose_appends_draft(tagged_run: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "proposed.yaml"
    args = ["propose", "--run", str(tagged_run), "--append-to", str(suite), "--accept", "1",
            "--name", "double negation (proposed)"]
    assert main(args) == 0
    assert "appended test 'double negation (proposed)' (label positive)" in capsys.readouterr().out
    data = yaml.safe_load(suite.read_text())
    assert data["labels"] == ["negative", "positive"]
    assert data["tests"][0]["template"] == "I can't say I don't love this {NOUN}."
    assert main(args) == 2  # the same name again
    assert "duplicate test name 'double negation (proposed)'" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "pattern"), [
    (["--accept", "1"], r"--accept needs --append-to"),
    (["--append-to", "x.yaml", "--accept", "9"], r"--accept 9 is not a listed draft.*from 1 to"),
    (["--tag", "ambiguous"], r"no sentences tagged 'ambiguous'.*decisions\.jsonl"),
    (["--tag", "bogus"], r"unknown review tag 'bogus'"),
])
def test_cli_propose_errors_exit_2(tagged_run: Path, extra: list[str], pattern: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["propose", "--run", str(tagged_run), *extra]) == 2
    import re

    assert re.search("error: " + pattern, capsys.readouterr().err)


def test_cli_propose_without_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["propose", "--run", str(tmp_path)]) == 2
    assert "error: no manifest.json in the run directory" in capsys.readouterr().err


GRAMMAR_LEX = {"INTENSIFIER": ["really", "very", "truly"], "POS_ADJ": ["good", "great", "fun"],
               "POS_VERB": ["like", "love", "adore"], "NOUN": ["movie", "watch", "show", "pizza"]}


def _fill(template: str, **values: str) -> str:
    from formalize._template import parse_template, render

    return render(parse_template(template), values)


def test_the_issue_example_gets_no_intensifier_before_a_verb() -> None:
    # "really" is an INTENSIFIER value; as a slot it would be filled with "very":
    # "I very looked forward to it." The draft keeps "really" where it modifies a verb.
    drafts = propose_templates(["I really looked forward to this movie."], GRAMMAR_LEX,
                               max_drafts=20)
    templates = {d.template for d in drafts}
    assert templates == {"I really looked forward to this {NOUN}."}
    # Before an adjective every intensifier fits: the slot is drafted.
    templates = {d.template for d in propose_templates(["It was a really good movie."],
                                                       GRAMMAR_LEX, max_drafts=20)}
    assert "It was {a:INTENSIFIER} {POS_ADJ} {NOUN}." in templates
    assert _fill("It was {a:INTENSIFIER} {POS_ADJ} {NOUN}.", INTENSIFIER="very",
                 POS_ADJ="good", NOUN="movie") == "It was a very good movie."


@pytest.mark.parametrize(("sentence", "want"), [
    # "like" is a preposition here: "looks adore a dream" is refused; the noun slot stays.
    ("This movie looks like a dream.", {"This {NOUN} looks like a dream."}),
    # "watch" is a verb after "I": "I pizza this movie" is refused.
    ("I watch this movie every week.", {"I watch this {NOUN} every week."}),
    # "fun" is a noun after "have": "we had great" is refused; "like" after "I" is a verb.
    ("I like it and we had fun.", {"I {POS_VERB} it and we had fun."}),
])
def test_drafts_replace_a_word_only_where_every_value_fits(sentence: str, want: set[str]) -> None:
    assert {d.template for d in propose_templates([sentence], GRAMMAR_LEX, max_drafts=20)} == want


def test_tokens_that_are_not_words_are_dropped_and_the_sentence_words_kept() -> None:
    from formalize.review._grammar import draft_text

    noisy = '"I saw this movie ## on dingDogShop.com <br> and it was really great | lol'
    assert draft_text(noisy) == "I saw this movie on and it was really great lol"
    drafts = propose_templates([{"id": "n", "text": noisy}], GRAMMAR_LEX, max_drafts=20)
    templates = {d.template for d in drafts}
    assert "I saw this {NOUN} on and it was {INTENSIFIER} {POS_ADJ} lol" in templates
    assert all("##" not in t and "<br" not in t and "|" not in t and '"' not in t
               and "dingDog" not in t for t in templates)
    assert drafts[0].examples == (noisy,)  # the covered sentence as it was tagged
    # Words with apostrophes, hyphens, initials and numbers are words.
    kept = "I don't think the U.S. cut of this well-made 1980s movie (1995) is 9/10."
    assert draft_text(kept) == kept


TWEET_SUITE = """\
name: complaints
labels: [complaint, other]
lexicons:
  AIRLINE: ["@united", "@delta", "@jetblue"]
  THING: [bag, seat, luggage, flight]
tests:
  - {name: lost thing, type: mft, template: "{AIRLINE} lost my {THING}.", label: complaint}
"""


def tweet_run(path: Path) -> Path:
    from synth.core import write_json_atomic, write_jsonl

    tweets = [("t1", "@united lost my bag again, thanks a lot"),
              ("t2", "@delta my seat was broken the whole way"),
              ("t3", "so that went well lol")]
    write_json_atomic(path / "manifest.json", {
        "config": {"task": {"labels": ["complaint", "other"]}}, "config_hash": "abc"})
    write_jsonl(path / "corpus" / "shard-00000.jsonl", [
        {"id": i, "text": t, "query": "", "raw": t, "shard": 0, "seed": k}
        for k, (i, t) in enumerate(tweets)])
    write_jsonl(path / "hard.jsonl", [
        {"id": i, "text": t, "divergence": 0.5, "task_label": "other",
         "reference_label": "complaint", "rank": k + 1,
         "task_probs": {"complaint": 0.3, "other": 0.7},
         "reference_probs": {"complaint": 0.8, "other": 0.2}}
        for k, (i, t) in enumerate(tweets)])
    log = ReviewLog(path)
    for sid, _ in tweets:
        log.tag(sid, "task-model error")
    return path


def test_cli_propose_drafts_in_the_domain_of_the_suite_it_appends_to(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The suite's own lexicons (AIRLINE, THING), not the built-in movie ones; the @handles
    # kept; one draft per tagged sentence, and the sentence with no lexicon word named.
    run = tweet_run(tmp_path / "run")
    suite = tmp_path / "complaints.yaml"
    suite.write_text(TWEET_SUITE)
    assert main(["propose", "--run", str(run), "--append-to", str(suite)]) == 0
    assert capsys.readouterr().out == (
        f"lexicons of {suite}: AIRLINE, THING\n"
        "3 sentence(s) tagged 'task-model error'; 4 draft(s) (0 merging several sentences), "
        "most coverage first:\n"
        "  1. covers 1  (4 cases, label complaint)  @delta my {THING} was broken the whole way\n"
        "       e.g. @delta my seat was broken the whole way\n"
        "  2. covers 1  (4 cases, label complaint)  @united lost my {THING} again, thanks a lot\n"
        "       e.g. @united lost my bag again, thanks a lot\n"
        "  3. covers 1  (12 cases, label complaint)  {AIRLINE} lost my {THING} again, thanks a "
        "lot\n"
        "       e.g. @united lost my bag again, thanks a lot\n"
        "  4. covers 1  (12 cases, label complaint)  {AIRLINE} my {THING} was broken the whole "
        "way\n"
        "       e.g. @delta my seat was broken the whole way\n"
        "  no draft from t3: none of its words is in a lexicon where every value fits, and it "
        "shares no frame with another sentence of its label (lexicons: AIRLINE, THING)\n")
    assert main(["propose", "--run", str(run), "--append-to", str(suite), "--accept", "3",
                 "--test-name", "lost thing, sarcastic"]) == 0
    assert load_suite(suite).tests[1].spec.templates == [
        "{AIRLINE} lost my {THING} again, thanks a lot"]

def test_appending_to_a_malformed_suite_is_one_line(tmp_path):
    """Issue 19: PyYAML's multi-line problem text was printed as it was."""
    from synth.core import ConfigError

    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nlabels: [a\ntests: {\n")
    with pytest.raises(ConfigError) as info:
        append_tests(suite, [{"name": "t", "type": "mft", "template": "x", "label": "a"}])
    assert info.value.format() == (
        f"malformed YAML: expected ',' or ']', but got ':' ({suite}, line 3): fix the "
        f"YAML syntax")
    assert suite.read_text() == "name: s\nlabels: [a\ntests: {\n"


def test_garbled_sentences_are_skipped_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: propose copied garbled sentences word for word into templates."""
    from formalize.review._propose import skipped

    sentences = [{"id": "g1", "text": "## | @@ ** movie"},
                 {"id": "g2", "text": "movie movie movie is good"},
                 {"id": "ok", "text": "This movie is good."}]
    assert skipped(sentences) == [
        ("g1", "only 1 word(s) once the tokens that are not words are dropped"),
        ("g2", "'movie' three times in a row")]
    drafts = propose_templates(sentences)
    assert drafts and all(d.ids == ("ok",) for d in drafts)


def test_cli_propose_uses_the_run_suites_lexicons_and_keeps_hypotheses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --append-to, drafts come from the lexicons of the run's own suite
    (verify.suite), not the built-in movie ones; an accepted draft's description is the
    reviewers' hypothesis."""
    import json

    run = tweet_run(tmp_path / "run")
    suite = tmp_path / "complaints.yaml"
    suite.write_text(TWEET_SUITE)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["verify"] = {"suite": str(suite)}
    (run / "manifest.json").write_text(json.dumps(manifest))
    ReviewLog(run).tag("t1", "task-model error", hypothesis="sarcasm read as praise")
    assert main(["propose", "--run", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"lexicons of {suite}: AIRLINE, THING\n")
    assert "{AIRLINE} lost my {THING} again, thanks a lot" in out
    assert main(["propose", "--run", str(run), "--append-to", str(suite), "--accept",
                 "2"]) == 0
    test = load_suite(suite).tests[1].spec
    assert test.description == "sarcasm read as praise (drafted from 1 reviewed sentence(s))"


# -- issue 27: drafts that merge sentences sharing a frame; fills from the run's corpus ----
DRUG = [{"id": "d1", "text": "The side effects were awful.", "label": "negative"},
        {"id": "d2", "text": "The side effects were unbearable!", "label": "negative"},
        {"id": "d3", "text": "The side effects were really bad.", "label": "negative"},
        {"id": "d4", "text": "The side effects were mild.", "label": "positive"},
        {"id": "d5", "text": "It stopped my migraines within a week.", "label": "positive"}]


def test_sentences_sharing_a_frame_merge_into_one_draft_with_their_own_slot() -> None:
    drafts = propose_templates(DRUG, {"NOUN": ["drug", "pill"]}, max_drafts=10)
    first = drafts[0]
    assert first.template == "The side effects were {FILL}."
    assert (first.coverage, first.ids, first.label) == (3, ("d1", "d2", "d3"), "negative")
    assert first.new_lexicons == (("FILL", ("awful", "unbearable", "really bad")),)
    assert first.cases == 3 and first.slots == ("FILL",)
    # The positive "mild" sentence has another gold label: never merged with them.
    assert all("d4" not in d.ids or d.label == "positive" for d in drafts)
    assert not any(set(d.ids) >= {"d1", "d4"} for d in drafts)
    from formalize import parse_template

    parse_template(first.template)
    # Accepting it into a suite that has a FILL already renames its slot.
    again = first.renamed(["FILL", "NOUN"])
    assert again.template == "The side effects were {FILL_B}."
    assert again.new_lexicons[0][0] == "FILL_B" and again.slots == ("FILL_B",)


def test_a_frame_whose_words_one_lexicon_lists_uses_that_lexicon() -> None:
    sents = [{"id": "a", "text": "My doctor said this pill works.", "label": "positive"},
             {"id": "b", "text": "My doctor said this tablet works.", "label": "positive"}]
    drafts = propose_templates(sents, {"MED_NOUN": ["pill", "tablet", "capsule"]})
    assert drafts[0].template == "My doctor said this {MED_NOUN} works."
    assert drafts[0].coverage == 2 and drafts[0].new_lexicons == () and drafts[0].cases == 3
    assert sum(d.template == drafts[0].template for d in drafts) == 1  # not listed twice


def test_labels_keep_identical_templates_apart() -> None:
    sents = [{"id": "a", "text": "I watched this movie.", "label": "positive"},
             {"id": "b", "text": "I watched this film.", "label": "negative"}]
    drafts = propose_templates(sents, {"NOUN": ["movie", "film"]})
    assert {(d.template, d.ids, d.label) for d in drafts} == {
        ("I watched this {NOUN}.", ("a",), "positive"),
        ("I watched this {NOUN}.", ("b",), "negative")}


def test_fill_suggestions_come_from_the_slot_position_in_the_corpus() -> None:
    from formalize.review._propose import format_drafts, suggest_fills

    drafts = propose_templates(DRUG[:3], {}, max_drafts=1)
    corpus = ["The headaches were horrible.", "My rash were horrible too.",
              "Nights were painful.", "They were painful and long.", "were gone",
              "It were painful", "My side effects were awful.", "Mood were the worst."]
    (got,) = suggest_fills(drafts, corpus, {})
    # between "were" and the end ("$"): horrible and painful (twice each; ties alphabetical);
    # "gone" ends a sentence too; "awful" is already a value; "the" is a stopword.
    assert got == {"FILL": ("painful", "horrible", "gone")}
    assert suggest_fills(drafts, corpus, {}, k=1) == [{"FILL": ("painful",)}]
    assert suggest_fills(drafts, list(reversed(corpus)), {}) == [got]  # order-free
    shown = format_drafts(drafts, [got])
    assert "       from: d1, d2, d3\n" in shown
    assert "FILL = the sentences' own words: awful, unbearable, really bad" in shown
    assert ("suggested fills for {FILL} from the run's corpus (not added): painful, "
            "horrible, gone") in shown


def test_fill_suggestions_are_seeded_when_the_corpus_is_sampled() -> None:
    from formalize.review._propose import suggest_fills

    drafts = propose_templates(DRUG[:3], {}, max_drafts=1)
    corpus = [f"Pain were w{i}." for i in range(200)]
    a = suggest_fills(drafts, corpus, {}, max_sentences=20, seed=1)
    assert a == suggest_fills(drafts, corpus, {}, max_sentences=20, seed=1)
    assert a != suggest_fills(drafts, corpus, {}, max_sentences=20, seed=2)
    assert len(a[0]["FILL"]) == 8


def drug_run(path: Path) -> Path:
    from synth.core import write_json_atomic, write_jsonl

    texts = [(d["id"], d["text"]) for d in DRUG] + [
        ("c1", "The headaches were horrible."), ("c2", "Nights were painful.")]
    write_json_atomic(path / "manifest.json", {
        "config": {"task": {"labels": ["negative", "positive"]}}, "config_hash": "abc"})
    write_jsonl(path / "corpus" / "shard-00000.jsonl", [
        {"id": i, "text": t, "query": "", "raw": t, "shard": 0, "seed": k}
        for k, (i, t) in enumerate(texts)])
    log = ReviewLog(path)
    for d in DRUG[:4]:
        log.tag(d["id"], "task-model error", label=d["label"],
                hypothesis="strong negative words about side effects")
    return path


def test_cli_accepts_a_merged_draft_with_its_own_lexicon(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = drug_run(tmp_path / "run")
    suite = tmp_path / "drugs.yaml"
    suite.write_text("# my drug suite\nname: drugs\nlabels: [negative, positive]\n"
                     "lexicons:\n  FILL: [fine]\ntests:\n"
                     "  - {name: old, type: mft, template: 'It was {FILL}.', label: positive}\n")
    assert main(["propose", "--run", str(run), "--append-to", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "4 sentence(s) tagged 'task-model error'; " in out
    assert "  1. covers 3  (3 cases, label negative)  The side effects were {FILL}.\n" in out
    # "mild" too: a suggestion is only a word seen in the slot's place, for the reviewer
    # to judge (here --suggest 2 keeps the first two).
    assert "suggested fills for {FILL} from the run's corpus (not added): horrible, mild, " \
        "painful\n" in out
    assert main(["propose", "--run", str(run), "--append-to", str(suite), "--accept", "1",
                 "--suggest", "2", "--add-suggested", "--test-name", "side effects"]) == 0
    out = capsys.readouterr().out
    assert "added lexicon FILL_B (5 values: awful, unbearable, really bad, horrible, mild)" \
        in out
    text = suite.read_text()
    assert text.startswith("# my drug suite\n")  # comments kept
    loaded = load_suite(suite)
    added = loaded.tests[-1].spec
    assert added.templates == ["The side effects were {FILL_B}."]
    assert added.label == "negative"
    assert added.description.startswith("strong negative words about side effects")
    assert loaded.lexicons.values("FILL") == ("fine",)
    assert loaded.lexicons.values("FILL_B") == (
        "awful", "unbearable", "really bad", "horrible", "mild")


def test_add_suggested_needs_accept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = drug_run(tmp_path / "run")
    assert main(["propose", "--run", str(run), "--add-suggested"]) == 2
    assert "error: --add-suggested needs --accept and suggestions (--add-suggested): give " \
        "--accept K" in capsys.readouterr().err


def test_sentences_sharing_an_ngram_merge_around_the_word_next_to_it() -> None:
    # No common frame, but the same n-gram ("side effects") after a different content word:
    # the shortest sentence, with that word a slot holding every sentence's word.
    sents = [{"id": "a", "text": "For me it isn't worth all of the horrible side effects.",
              "label": "negative"},
             {"id": "b", "text": "Very harsh side effects including severe diarrhea.",
              "label": "negative"},
             {"id": "c", "text": "I had no bad side effects at all.", "label": "positive"},
             {"id": "d", "text": "I read reviews and was hopeful.", "label": "negative"}]
    drafts = propose_templates(sents, {}, max_drafts=10)
    merged = [d for d in drafts if d.coverage > 1]
    assert [(d.template, d.ids, d.label) for d in merged] == [
        ("Very {FILL} side effects including severe diarrhea.", ("a", "b"), "negative")]
    assert merged[0].new_lexicons == (("FILL", ("horrible", "harsh")),)


ONE_TEST = "tests:\n  - {name: t, type: mft, template: '{FILL}', label: negative}\n"


def test_accepted_fill_lexicons_do_not_change_the_drafting_domain(tmp_path: Path) -> None:
    from formalize.review._propose import suite_lexicons

    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nlabels: [negative, positive]\nlexicons:\n  FILL: [a, b]\n"
                     "  FILL_B: [c]\n" + ONE_TEST)
    assert suite_lexicons(load_suite(suite)) is None
    suite.write_text("name: s\nlabels: [negative, positive]\nlexicons:\n  FILL: [a, b]\n"
                     "  DRUG_NOUN: [pill]\n" + ONE_TEST)
    assert suite_lexicons(load_suite(suite)) == {"DRUG_NOUN": ("pill",)}


def test_run_draft_expands_a_merged_draft_with_its_own_lexicon() -> None:
    draft = propose_templates(DRUG[:3], {}, max_drafts=1)[0]
    scorers = {"keyword": runbuilder.keyword_model}
    result = run_draft(draft, scorers, runbuilder.LABELS, label="negative")
    assert result.meta["cases"] == 3
    assert set(result.cases["text"]) == {"The side effects were awful.",
                                         "The side effects were unbearable.",
                                         "The side effects were really bad."}


def test_append_tests_adds_a_lexicons_block_keeping_comments(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text("# mine\nname: s\nlabels: [negative, positive]\n" + ONE_TEST.replace(
        "'{FILL}'", "'fine'"))
    test = {"name": "new", "type": "mft", "template": "It was {FILL}.", "label": "negative"}
    loaded = append_tests(suite, [test], lexicons={"FILL": ["awful", "bad"]})
    text = suite.read_text()
    assert text.startswith("# mine\n") and "lexicons:\n  FILL: [awful, bad]\ntests:\n" in text
    assert loaded.lexicons.values("FILL") == ("awful", "bad")
    with pytest.raises(TemplateError, match="already defines lexicon 'FILL'"):
        append_tests(suite, [{**test, "name": "again"}], lexicons={"FILL": ["x"]})
    assert suite.read_text() == text  # refused before writing
    fresh = append_tests(tmp_path / "new.yaml", [test], labels=["negative", "positive"],
                         lexicons={"FILL": ["awful"]})
    assert fresh.lexicons.values("FILL") == ("awful",)


def test_suggest_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = drug_run(tmp_path / "run")
    assert main(["propose", "--run", str(run), "--suggest", "-1"]) == 2
    assert "error: --suggest -1 is negative (--suggest): give a count of suggested fills (0 " \
        "for none)" in capsys.readouterr().err
    assert main(["propose", "--run", str(run), "--suggest", "0"]) == 0
    assert "suggested fills" not in capsys.readouterr().out
