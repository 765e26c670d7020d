"""A real Label Studio 1.23.2 server on 127.0.0.1: our labeling config and tasks make a
project (the server validates the config against the tasks), a reviewer answers through the
REST API the page uses, and the server's JSON and JSON-MIN exports come back into the run's
review log once, however often they are imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formalize import ReviewLog, import_annotations, import_audit
from synthcheck.cli import main
from tests.exports.conftest import LABEL_STUDIO, need
from tests.exports.label_studio_server import LabelStudio
from tests.synthcheck.runbuilder import build_run

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    need(LABEL_STUDIO, "Label Studio")
    with LabelStudio(LABEL_STUDIO, tmp_path_factory.mktemp("label-studio")) as ls:
        yield ls


def test_review_round_trip(server: LabelStudio, tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", verify=False)
    out = tmp_path / "tasks.json"
    assert main(["annotate", "export", "--run", str(run), "--format", "label-studio",
                 "--out", str(out)]) == 0
    tasks = json.loads(out.read_text())
    pid = server.project("review", (tmp_path / "tasks.xml").read_text(), tasks)
    loaded = server.tasks(pid)
    assert len(loaded) == len(tasks) == 10
    # Nothing pre-filled: no task holds a prediction a plain Submit would keep.
    assert all(not t.get("predictions") for t in loaded)
    by_sid = {t["data"]["sid"]: t["id"] for t in loaded}
    sids = [t["data"]["sid"] for t in tasks]
    answers = [{"label": "positive"}, {"label": "positive", "note": "double negation"},
               {"tag": "task-model error"}, {"label": "negative", "tag": "reference error"},
               {"tag": "ambiguous"}]
    made = [server.annotate(by_sid[s], a) for s, a in zip(sids, answers, strict=False)]
    for kind in ("JSON", "JSON_MIN"):
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(server.export(pid, kind)))
        got = import_annotations(run, "label-studio", path)
        if kind == "JSON":
            assert [r["tag"] for r in got.added] == ["task-model error"] * 3 + [
                "reference error", "ambiguous"]
            assert [r["label"] for r in got.added] == ["positive", "positive", None,
                                                       "negative", None]
            assert got.added[0]["time"] == made[0]["updated_at"]
        else:  # the same annotations, by id: nothing new
            assert (got.added, got.duplicates) == ([], 5)
        again = import_annotations(run, "label-studio", path)
        assert (again.added, again.duplicates) == ([], 5)
    server.update(made[4]["id"], {"tag": "not a pattern"})
    later = tmp_path / "later.json"
    later.write_text(json.dumps(server.export(pid, "JSON")))
    got = import_annotations(run, "label-studio", later)
    assert [r["tag"] for r in got.added] == ["not a pattern"] and got.duplicates == 4
    assert ReviewLog(run).load()[sids[4]]["tag"] == "not a pattern"


def test_audit_round_trip(server: LabelStudio, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    run = build_run(tmp_path / "run", verify=False)
    out = tmp_path / "audit.json"
    assert main(["annotate", "export", "--audit", "--run", str(run), "--format",
                 "label-studio", "--out", str(out), "--audit-hard", "10",
                 "--audit-control", "10"]) == 0
    tasks = json.loads(out.read_text())
    pid = server.project("audit", (tmp_path / "audit.xml").read_text(), tasks)
    loaded = server.tasks(pid)
    assert len(loaded) == 20 and all(set(t["data"]) == {"text", "sid"} for t in loaded)
    for t in loaded:
        server.annotate(t["id"], {"label": "no label applies" if "boring" in t["data"]["text"]
                                  else "positive"})
    path = tmp_path / "export.json"
    path.write_text(json.dumps(server.export(pid, "JSON_MIN")))
    added, dups = import_audit(run, "label-studio", path)
    assert (len(added), dups) == (20, 0)
    assert import_audit(run, "label-studio", path) == ([], 20)
    from discovery import audited_precision

    info = audited_precision(run)
    assert info is not None and info["hard"]["n"] == 10 and info["control"]["n"] == 10
