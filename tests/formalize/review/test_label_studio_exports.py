"""Files a real Label Studio 1.23.2 server wrote (captured into data/label-studio-1.23.2/ by
`tests/exports/label_studio_server.py`, the driver `make test-exports` runs live):

- ``tasks.json``/``tasks.xml``: `annotate export` of tests/synthcheck/runbuilder's run, created as a
  project (Label Studio validated the config against the tasks);
- ``ls-json.json``/``ls-json-min.json``: the project's JSON and JSON-MIN exports after a
  reviewer answered 5 of its 10 tasks; ``ls-json-later.json``: after one answer was changed;
- ``audit.json``/``audit.xml``: `annotate export --audit --audit-hard 10 --audit-control 10`;
  ``audit-json.json``/``audit-json-min.json``: every audit task labelled.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formalize import ReviewLog, tagged_sentences
from synthcheck.cli import main
from tests.synthcheck.runbuilder import build_run

DATA = Path(__file__).parent / "data" / "label-studio-1.23.2"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return build_run(tmp_path / "run", verify=False)


def cli(*args: str) -> int:
    return main([str(a) for a in args])


def test_our_export_is_what_the_server_was_given(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.json"
    assert cli("annotate", "export", "--run", run, "--format", "label-studio", "--out", out) == 0
    assert out.read_text() == (DATA / "tasks.json").read_text()
    assert (tmp_path / "tasks.xml").read_text() == (DATA / "tasks.xml").read_text()


@pytest.mark.parametrize("name", ["ls-json.json", "ls-json-min.json"])
def test_json_and_json_min_import_once(run: Path, name: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / name
    assert cli("annotate", "import", "--run", run, "--format", "label-studio", "--in",
               path) == 0
    log = run / "review" / "decisions.jsonl"
    assert capsys.readouterr().out == (
        f"imported 5 decision(s) from {path} into {log} (task-model error 3, reference error "
        "1, ambiguous 1)\n")
    records = ReviewLog(run).records()
    # Label Studio's own annotation id and time, the annotator's label and note kept.
    assert [(r["label"], r["note"], r["key"].split("@")[0]) for r in records] == [
        ("positive", None, "label-studio:1"), ("positive", "double negation", "label-studio:2"),
        (None, "blown away read as negative", "label-studio:3"),
        ("negative", None, "label-studio:4"), (None, None, "label-studio:5")]
    assert records[0]["time"] == "2026-11-27T06:42:14.809068Z"
    # A second import, of either export, adds nothing.
    for again in ("ls-json.json", "ls-json-min.json"):
        assert cli("annotate", "import", "--run", run, "--format", "label-studio", "--in",
                   DATA / again) == 0
        assert "skipped 5 already imported" in capsys.readouterr().out
    assert len(ReviewLog(run).records()) == 5


def test_a_changed_answer_wins_and_an_old_export_does_not_override_it(run: Path) -> None:
    from formalize import import_annotations

    later = import_annotations(run, "label-studio", DATA / "ls-json-later.json")
    assert [r["tag"] for r in later.added][-1] == "not a pattern"
    old = import_annotations(run, "label-studio", DATA / "ls-json.json")
    assert (len(old.added), old.duplicates) == (1, 4)  # the answer before it was changed
    sid = old.added[0]["id"]
    assert ReviewLog(run).load()[sid]["tag"] == "not a pattern"  # by Label Studio's time


def test_the_annotators_label_reaches_propose(run: Path) -> None:
    from formalize import import_annotations

    import_annotations(run, "label-studio", DATA / "ls-json.json")
    rows = {s["id"]: s["label"] for s in tagged_sentences(run, tag="reference error")}
    assert rows == {"q00000041": "negative"}  # the annotator's label, not the reference's


def test_audit_round_trip(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    assert cli("annotate", "export", "--audit", "--run", run, "--format", "label-studio",
               "--out", out, "--audit-hard", "10", "--audit-control", "10") == 0
    assert out.read_text() == (DATA / "audit.json").read_text()  # the same seeded sample
    assert (tmp_path / "audit.xml").read_text() == (DATA / "audit.xml").read_text()
    capsys.readouterr()
    assert cli("annotate", "import", "--audit", "--run", run, "--format", "label-studio",
               "--in", DATA / "audit-json-min.json") == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "hard-subset precision on this corpus (blind audit): 1.00 [0.72, 1.00], n=10 (10 real "
        "task-model errors; 0 with no label that applies), measured on blind-labelled "
        "sentences of this run's corpus",
        "  random control: 1.00 [0.72, 1.00], n=10 carry the task's signal; the task model "
        "is wrong on 0.00 [0.00, 0.28], n=10"]
    assert cli("annotate", "import", "--audit", "--run", run, "--format", "label-studio",
               "--in", DATA / "audit-json.json") == 0
    assert "(skipped 20 already imported)" in capsys.readouterr().out


def test_the_audit_shows_no_score() -> None:
    tasks = json.loads((DATA / "audit.json").read_text())
    assert {k for t in tasks for k in t["data"]} == {"text", "sid"}
    xml = (DATA / "audit.xml").read_text()
    assert "Header" not in xml and 'required="true"' in xml and "no label applies" in xml
