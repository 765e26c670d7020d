"""Issue 28's `annotate import` / `annotate export` rows: every input there gets one
`error:` line naming the file, record and field with the fix, exit status 2, and the run
unchanged (or, for an answer that gives no decision, the reason it is dropped)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from synth.core import write_jsonl
from synthcheck.cli import main
from tests.formalize.review.test_review import make_run

LS_FIX = "re-export the project from Label Studio as JSON (this field is not what Label " \
         "Studio writes)"
AR_FIX = ("export the records with the Argilla SDK (rg.Dataset.records.to_list(flatten=False)); "
          "responses are {question: [{value, user_id, status}]}")


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


def ls_task(result: Any = None, **ann: Any) -> dict[str, Any]:
    """One Label Studio task (JSON export) on h4 with one annotation."""
    annotation = {"id": 7, "completed_by": 1, "was_cancelled": False,
                  "updated_at": "2026-11-24T10:00:00Z", "result": result, **ann}
    return {"id": 1, "data": {"text": "The plot was fine but forgettable.", "sid": "h4"},
            "annotations": [annotation]}


def choice(name: str, value: Any) -> dict[str, Any]:
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": value}}


def note(text: Any) -> dict[str, Any]:
    return {"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": text}}


def ar_record(responses: Any) -> dict[str, Any]:
    return {"id": "h4", "fields": {"text": "The plot was fine but forgettable."},
            "responses": responses, "status": "completed"}


ROWS = [
    ("annotations a string", "label-studio",
     [{"id": 1, "data": {"sid": "h4"}, "annotations": "task-model error"}],
     "'annotations' is a string, not a list ({f}, record 0): " + LS_FIX),
    ("a result item a string", "label-studio", [ls_task(["task-model error"])],
     "a 'result' item is a string ('task-model error'), not an object ({f}, record 0): "
     + LS_FIX),
    ("value a list", "label-studio",
     [ls_task([{"from_name": "tag", "type": "choices", "value": ["ambiguous"]}])],
     "the 'tag' result's 'value' is a list, not an object ({f}, record 0): " + LS_FIX),
    ("choices a string", "label-studio", [ls_task([choice("label", "positive")])],
     "the 'label' answer's 'choices' is a string ('positive'), not a list ({f}, record 0): "
     + LS_FIX + "; a choice is written [\"positive\"]"),
    ("a multi-label answer", "label-studio",
     [ls_task([choice("label", ["negative", "positive"])])],
     "the 'label' answer has 2 choices (['negative', 'positive']); one label per sentence is "
     "a decision ({f}, record 0): set the choice to single in the labeling config "
     "(choice=\"single\", as the exported config has) and answer again"),
    ("an object as a note", "label-studio",
     [ls_task([choice("tag", ["ambiguous"]), note({"text": "x"})])],
     "the 'note' answer is an object ({'text': 'x'}), not text ({f}, record 0): a note is "
     "plain text; answer it in the tool's text area"),
    ("a label outside the label space", "label-studio",
     [ls_task([choice("tag", ["ambiguous"]), choice("label", ["neutral"])])],
     "label 'neutral' is not one of the task's labels (negative, positive) ({f}, record 0): "
     "correct the label in the tool, or its labeling config's choices (they must be the "
     "run's task.labels)"),
    ("Argilla responses a list", "argilla",
     [ar_record([{"question": "tag", "value": "ambiguous"}])],
     "'responses' is a list, not an object keyed by question ({f}, record 0): " + AR_FIX),
    ("Argilla string answers", "argilla", [ar_record({"tag": "ambiguous"})],
     "the responses to 'tag' are a string, not a list of {value, user_id, status} ({f}, "
     "record 0): " + AR_FIX),
    ("an Argilla multi-label answer", "argilla",
     [ar_record({"label": [{"value": ["negative", "positive"], "user_id": "u",
                            "status": "submitted"}]})],
     "the 'label' answer has 2 choices (['negative', 'positive']); one label per sentence is "
     "a decision ({f}, record 0): set the choice to single in the labeling config "
     "(choice=\"single\", as the exported config has) and answer again"),
    ("a Label Studio file under --format argilla", "argilla",
     [ls_task([choice("tag", ["ambiguous"])])],
     "this is a label-studio export, read as argilla ({f}): pass --format label-studio"),
]


@pytest.mark.parametrize(("fmt", "data", "message"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_a_bad_export_is_one_error_line_and_the_log_untouched(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, data: Any,
        message: str) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data))
    assert main(["annotate", "import", "--run", str(run), "--format", fmt,
                 "--in", str(path)]) == 2
    assert capsys.readouterr().err == "error: " + message.replace("{f}", str(path)) + "\n"
    assert not (run / "review").exists()


def test_json_nested_200000_deep(run: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: the label-studio export is nested too deeply to be an export ({path}): export "
        "the project from Label Studio as JSON or JSON-MIN and pass that file\n")
    assert not (run / "review").exists()


def test_decisions_log_a_directory(run: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    (run / "review" / "decisions.jsonl").mkdir(parents=True)
    path = tmp_path / "export.json"
    path.write_text(json.dumps([ls_task([choice("tag", ["ambiguous"])])]))
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(path)]) == 2
    log = run / "review" / "decisions.jsonl"
    assert capsys.readouterr().err == (
        f"error: the review log is a directory, not a file ({log}): move it aside; the log "
        "is one JSON Lines file that the review notebook and annotate import append to\n")
    assert log.is_dir() and not any(log.iterdir())


def test_a_textarea_string_is_the_note_not_its_letters(run: Path, tmp_path: Path) -> None:
    from formalize import ReviewLog, import_annotations

    path = tmp_path / "export.json"
    path.write_text(json.dumps([ls_task([choice("tag", ["ambiguous"]), note("abc")])]))
    import_annotations(run, "label-studio", path)
    assert ReviewLog(run).load()["h4"]["note"] == "abc"


def test_a_label_on_a_sentence_not_exported_is_dropped_with_the_reason(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "export.json"
    task = ls_task([choice("label", ["positive"])])
    task["data"]["sid"] = "c9"  # in the corpus, never exported: no model labels to compare
    path.write_text(json.dumps([task]))
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [
        "dropped c9: a label ('positive') on a sentence that was not in the export, so there "
        "are no model labels to compare it with; give it a tag instead"]


# -- export ----------------------------------------------------------------------------------
def test_out_ending_in_xml_would_overwrite_the_tasks_with_the_config(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tasks.xml"
    assert main(["annotate", "export", "--run", str(run), "--format", "label-studio",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: the tasks file and its labeling config would be the same file (--out {out}): "
        f"name the tasks file .json (e.g. --out {tmp_path / 'tasks.json'}); the config is "
        f"written beside it as tasks.xml\n")
    assert not out.exists()


@pytest.mark.parametrize("field", ["rank", "text", "task_probs"])
def test_hard_rows_without_a_field(run: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str], field: str) -> None:
    from synth.core import read_jsonl

    rows = read_jsonl(run / "hard.jsonl")
    del rows[1][field]
    write_jsonl(run / "hard.jsonl", rows)
    out = tmp_path / "x.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: a row has no {field!r} ({run / 'hard.jsonl'}, line 2): rerun synthcheck rank "
        "on the run (hard.jsonl is its output)\n")
    assert not out.exists()


def test_focus_examples_without_text(run: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(run / "focus.jsonl", [{"ngram": "blown away", "examples": [{"texte": "x"}]}])
    out = tmp_path / "x.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: example 0 of n-gram 'blown away' has no 'text' ({run / 'focus.jsonl'}, line "
        "1): rerun synthcheck focus on the run (focus.jsonl is its output)\n")
    assert not out.exists()


def test_findings_in_a_run_without_its_corpus(run: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    write_jsonl(run / "findings.jsonl", [{"id": "F1", "kind": "ngram", "name": "blown away",
                                          "example_ids": ["h1", "c9"]}])
    shutil.rmtree(run / "corpus")
    out = tmp_path / "x.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: the findings' example sentences are in the corpus, and the run has no "
        f"corpus/ ({run}): restore the run's corpus/ folder, or leave the findings out "
        "(--include hard,focus)\n")
    assert not out.exists()
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out), "--include", "hard,focus"]) == 0
