"""Label Studio and Argilla: export the hard subset and focus examples with both models'
probabilities, import the reviewers' decisions into the run's review log. The shapes are
the tools' documented ones: Label Studio's tasks with ``predictions`` (``choices`` results
with from_name/to_name/value.choices) and its JSON export with ``annotations``; Argilla 2.x
records as ``rg.Record.to_dict``/``from_dict`` write and read them (``fields``,
``suggestions`` keyed by question with value/score/agent, ``responses`` keyed by question,
each a list of ``{value, user_id, status}``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formalize import ReviewLog, export_annotations, import_annotations, tagged_sentences
from formalize.review._annotate import focus_example_id
from synth.core import DataError, write_jsonl
from synthcheck.cli import main
from tests.formalize.review.test_review import make_run

FOCUS = {"ngram": "blown away", "confirmed": True, "examples": [
    {"text": "We were blown away by the band.", "task_probs": {"negative": 0.7, "positive": 0.3},
     "reference_probs": {"negative": 0.2, "positive": 0.8}}]}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    path = make_run(tmp_path / "run")
    write_jsonl(path / "focus.jsonl", [FOCUS])
    return path


def test_label_studio_tasks_carry_both_models_as_choices_predictions(run: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "ls.json"
    assert export_annotations(run, "label-studio", out) == [out, tmp_path / "ls.xml"]
    tasks = json.loads(out.read_text())
    assert len(tasks) == 5  # 4 hard sentences, 1 focus example
    # No predictions: a pre-filled choice would be the reviewer's verdict on a plain Submit.
    assert tasks[0] == {
        "data": {"text": "I was blown away by this movie.", "sid": "h1",
                 "found_in": "hard subset, rank 1",
                 "scores": "task model task: negative 0.90, positive 0.10 | reference: "
                           "negative 0.10, positive 0.90"}}
    fid = focus_example_id("We were blown away by the band.")
    assert tasks[4]["data"]["sid"] == fid and tasks[4]["data"]["found_in"] == \
        "focus: 'blown away' (confirmed)"
    xml = (tmp_path / "ls.xml").read_text()
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    # Every name an answer uses exists in the config: from_name a Choices, to_name a Text.
    choices = {c.get("name"): [x.get("value") for x in c] for c in root.iter("Choices")}
    assert choices == {"label": ["negative", "positive"],
                       "tag": ["task-model error", "reference error", "ambiguous",
                               "not a pattern"]}
    assert [t.get("name") for t in root.iter("Text")] == ["text"]
    assert all(c.get("toName") == "text" for c in root.iter("Choices"))
    # Not $source: Label Studio reads it as its own key and shows the raw task JSON.
    assert {h.get("value") for h in root.iter("Header")} == {"$scores", "$found_in"}
    assert "predictions" not in tasks[0] and "required" not in xml


def test_argilla_records_and_settings(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ar.json"
    export_annotations(run, "argilla", out, include=["hard"])
    data = json.loads(out.read_text())
    assert [q["name"] for q in data["settings"]["questions"]] == ["label", "tag", "note"]
    assert [o["value"] for o in data["settings"]["questions"][0]["settings"]["options"]] == \
        ["negative", "positive"]
    assert [f["name"] for f in data["settings"]["fields"]] == ["text", "models"]
    assert len(data["records"]) == 4
    assert data["records"][3] == {
        "id": "h4", "fields": {"text": "The plot was fine but forgettable.",
                               "models": "task model task: negative 0.40, positive 0.60 | "
                                         "reference: negative 0.70, positive 0.30"},
        "metadata": {"task_p_negative": 0.4, "task_p_positive": 0.6,
                     "reference_p_negative": 0.7, "reference_p_positive": 0.3,
                     "source": "hard subset, rank 4"},
        "suggestions": {}, "responses": {}, "vectors": {}}
    names = {m["name"] for m in data["settings"]["metadata"]}
    assert set(data["records"][0]["metadata"]) == names


def label_studio_export(tmp_path: Path) -> Path:
    """What Label Studio's JSON export holds after review (ids, timestamps, a cancelled
    annotation, a prediction copied through)."""
    def ann(aid, results, who=1, cancelled=False):
        return {"id": aid, "completed_by": who, "was_cancelled": cancelled,
                "ground_truth": False, "created_at": "2026-11-24T10:00:00Z",
                "updated_at": "2026-11-24T10:00:00Z", "lead_time": 3.2, "task": 1,
                "result": results}

    def choice(name, value):
        return {"id": "x" + name, "from_name": name, "to_name": "text", "type": "choices",
                "origin": "manual", "value": {"choices": [value]}}

    tasks = [
        {"id": 1, "data": {"text": "I was blown away by this movie.", "sid": "h1"},
         "annotations": [ann(11, [choice("tag", "task-model error"),
                                  {"id": "n", "from_name": "note", "to_name": "text",
                                   "type": "textarea", "value": {"text": ["praise"]}}])],
         "predictions": []},
        {"id": 2, "data": {"text": "I can't say I don't love this book.", "sid": "h2"},
         "annotations": [ann(12, [choice("label", "positive")], who=2)], "predictions": []},
        {"id": 3, "data": {"text": "The plot was fine but forgettable.", "sid": "h4"},
         "annotations": [ann(13, [choice("tag", "ambiguous")], cancelled=True)]},
        {"id": 4, "data": {"text": "We were blown away by the band.",
                           "sid": focus_example_id("We were blown away by the band.")},
         "annotations": [ann(14, [choice("label", "negative")])]},
    ]
    path = tmp_path / "ls-export.json"
    path.write_text(json.dumps(tasks))
    return path


def test_label_studio_export_imports_into_the_review_log(run: Path, tmp_path: Path) -> None:
    added = import_annotations(run, "label-studio", label_studio_export(tmp_path)).added
    fid = focus_example_id("We were blown away by the band.")
    assert [(r["id"], r["tag"], r["note"], r["annotator"], r["label"]) for r in added] == [
        ("h1", "task-model error", "praise", "label-studio:1", None),
        # a label answer: the task model said negative (p=0.3), so its error
        ("h2", "task-model error", None, "label-studio:2", "positive"),
        # the focus sentence labelled negative: the task model was right, the reference not
        (fid, "reference error", None, "label-studio:1", "negative")]
    # Label Studio's own time and annotation id are kept; a second import adds nothing.
    assert (added[0]["time"], added[0]["key"]) == ("2026-11-24T10:00:00Z",
                                                   "label-studio:11@2026-11-24T10:00:00Z")
    again = import_annotations(run, "label-studio", label_studio_export(tmp_path))
    assert (again.added, again.duplicates) == ([], 3)
    assert list(ReviewLog(run).load()) == ["h1", "h2", fid]
    # The decisions are the notebook's: propose reads them, the focus sentence included.
    assert [(s["id"], s["text"]) for s in tagged_sentences(run, tag="reference error")] == \
        [(fid, "We were blown away by the band.")]


def test_argilla_export_imports_into_the_review_log(run: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ar.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out)]) == 0
    assert capsys.readouterr().out == (f"exported 5 sentence(s) from {run} for argilla\n"
                                       f"wrote {out}\n")
    records = json.loads(out.read_text())["records"]
    user = "4c1d2a7e-0000-4000-8000-000000000001"
    records[1]["responses"] = {"tag": [{"value": "reference error", "user_id": user,
                                        "status": "submitted"}],
                               "note": [{"value": "sarcasm?", "user_id": user,
                                         "status": "submitted"}]}
    records[2]["responses"] = {"tag": [{"value": "ambiguous", "user_id": user,
                                        "status": "draft"}]}
    records[3]["responses"] = {"label": [{"value": "negative", "user_id": user,
                                          "status": "submitted"}]}
    exported = tmp_path / "records.json"  # dataset.records.to_json(): a list of records
    exported.write_text(json.dumps(records))
    assert main(["annotate", "import", "--run", str(run), "--format", "argilla",
                 "--in", str(exported)]) == 0
    assert capsys.readouterr().out == (
        f"imported 2 decision(s) from {exported} into {run / 'review' / 'decisions.jsonl'} "
        "(reference error 1, task-model error 1)\n")
    # h3's draft is no decision; h4 labelled negative where the task model said positive.
    assert [(r["id"], r["tag"], r["note"], r["annotator"]) for r in ReviewLog(run).records()] \
        == [("h2", "reference error", "sarcasm?", f"argilla:{user}"),
            ("h4", "task-model error", None, f"argilla:{user}")]


def test_a_bad_import_leaves_the_log_as_it_was(run: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ReviewLog(run).tag("h1", "ambiguous")
    before = (run / "review" / "decisions.jsonl").read_bytes()
    tasks = json.loads(label_studio_export(tmp_path).read_text())
    tasks[3]["data"]["sid"] = "h11"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tasks))
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"error: unknown sentence id 'h11' ({bad}, record 3): import decisions into the run "
        "they were exported from; did you mean 'h1', 'h2' or 'h3'? (of 6 ids in the run)\n")
    tasks[3]["data"]["sid"] = "h4"
    tasks[3]["annotations"][0]["result"][0]["value"]["choices"] = ["postive"]
    bad.write_text(json.dumps(tasks))
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"error: label 'postive' is not one of the task's labels (negative, positive) ({bad}, "
        "record 3): correct the label in the tool, or its labeling config's choices (they must "
        "be the run's task.labels)\n")
    tasks[3]["annotations"][0]["result"][0]["value"]["choices"] = ["negative"]
    tasks[0]["annotations"][0]["result"][0]["value"]["choices"] = ["typo tag"]
    bad.write_text(json.dumps(tasks))
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: unknown review tag 'typo tag' ({bad}, record 0): use one of: task-model "
        "error, reference error, ambiguous, not a pattern")
    bad.write_text('{"not": "a list"}')
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"error: the label-studio export is not a JSON list of tasks with 'data' and "
        f"'annotations' (JSON export) or of flat annotations with 'sid' (JSON-MIN export) "
        f"({bad}): pass the JSON file label-studio exported\n")
    assert (run / "review" / "decisions.jsonl").read_bytes() == before


def test_a_run_with_nothing_to_annotate(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        export_annotations(tmp_path, "argilla", tmp_path / "x.json")
    assert str(err.value) == (
        f"the run has nothing to annotate (no hard.jsonl, focus.jsonl, findings.jsonl) "
        f"({tmp_path}): run synthcheck rank (and focus) on it first, or pass the run "
        "directory that holds them")
    assert not (tmp_path / "x.json").exists()


def test_unreadable_annotation_exports(run: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 19's bad-input pass over `annotate import`: a BOM is read; non-UTF-8 bytes, a
    directory, a missing file and broken JSON are one line each, the log untouched."""
    good = label_studio_export(tmp_path)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + good.read_bytes())
    assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                 "--in", str(bom)]) == 0
    capsys.readouterr()
    before = (run / "review" / "decisions.jsonl").read_bytes()
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"data": "caf\xe9"}]')
    empty = tmp_path / "empty.json"
    empty.write_text("")
    fix = "export the project from Label Studio as JSON or JSON-MIN and pass that file"
    for path, what in [
        (latin, "the label-studio export is not valid utf-8 text (byte 0xe9 at byte offset "
                "14)"),
        (tmp_path, "the label-studio export is a directory, not a file"),
        (tmp_path / "missing.json", "the label-studio export file does not exist"),
        (empty, "the label-studio export is not valid JSON (Expecting value at line 1, "
                "column 1)"),
    ]:
        assert main(["annotate", "import", "--run", str(run), "--format", "label-studio",
                     "--in", str(path)]) == 2
        err = capsys.readouterr().err
        if path == latin:
            assert err == (f"error: {what} ({path}): convert it to utf-8; a binary file is "
                           f"not a valid input\n")
        else:
            assert err == f"error: {what} ({path}): {fix}\n"
    assert (run / "review" / "decisions.jsonl").read_bytes() == before


def test_export_refuses_a_bad_out_or_include_before_work(run: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    out = tmp_path / "no" / "such" / "x.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: cannot write: the folder {out.parent} does not exist, nor its parent "
        f"{out.parent.parent} (--out {out}): create the folder first (mkdir -p {out.parent}), "
        f"or write into an existing folder\n")
    assert not (tmp_path / "no").exists()
    assert main(["annotate", "export", "--run", str(run), "--format", "argilla",
                 "--out", str(tmp_path / "x.json"), "--include", ","]) == 2
    assert capsys.readouterr().err == (
        "error: --include names no source (--include ','): name some of: hard, focus, "
        "findings (e.g. --include hard)\n")


def test_an_empty_selection_still_names_the_labels(run: Path, tmp_path: Path) -> None:
    # Focus rows without examples: no item to export; the labels come from the run's config.
    write_jsonl(run / "focus.jsonl", [{**FOCUS, "examples": []}])
    out = tmp_path / "ar.json"
    export_annotations(run, "argilla", out, include=["focus"])
    data = json.loads(out.read_text())
    assert data["records"] == []
    assert [o["value"] for o in data["settings"]["questions"][0]["settings"]["options"]] == \
        ["negative", "positive"]
