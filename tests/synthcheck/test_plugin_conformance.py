"""Plug-in conformance: a fake of each plug-in kind, registered in one line, runs through the
pipeline, and docs/architecture.md's "Adding things" table names the files a new one touches.

The fakes: an engine (``tests/synth/engines/test_engine_registry.py``: ``synthcheck generate``),
a task-model kind (here: ``synthcheck verify --model keywords:...``), a test type and a format
(``tests/formalize/test_registry.py``), a finding source (``discovery/_enrichment.py``, run by
``tests/synthcheck/test_discover.py``'s pipeline and ``tests/discovery/test_enrichment.py``), an
annotation tool (here: a CSV sheet through ``synthcheck annotate export`` / ``import``, the
blind audit's too, on the mini run). The table states how many files each touches (the
fake's own module and its registration line) and names the registry each fake registers into.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from discovery import NO_LABEL, TASK_MODEL_KINDS, CallableScorer, TaskModelKind
from formalize import ANNOTATION_TOOLS, AnnotationTool, Answer
from synth.core import DataError, write_text_atomic
from synthcheck.cli import main
from tests.synth.fakes import FakeBackend
from tests.synthcheck import runbuilder

REPO = Path(__file__).resolve().parents[2]

# What "Adding things" says each plug-in kind touches, counted: the files written or edited
# (a new module and its registration line; a test is extra). The fakes prove the count.
TOUCHES = {
    "an engine": ["synth/engines/_myengine.py", "synth/engines/_registry.py"],
    "a test type": ["formalize/types/mytype.py", "formalize/types/__init__.py"],
    "a format": ["formalize/formats/myformat.py", "formalize/formats/__init__.py"],
    "a finding source": ["discovery/_enrichment.py", "discovery/_finding_sources.py"],
    "a task-model kind": ["discovery/_kinds.py"],
    "an annotation tool": ["formalize/review/_mytool.py", "formalize/review/_tools.py"],
}
HERE = "tests/synthcheck/test_plugin_conformance.py"
# Each kind's fake (the file it is in), the registry it registers into and the call it
# registers with there: the table names that registry, defined in the registration file.
FAKES = {
    "an engine": ("tests/synth/engines/test_engine_registry.py", "ENGINES", "ENGINES.register("),
    "a test type": ("tests/formalize/test_registry.py", "TEST_TYPES", "TEST_TYPES.register("),
    "a format": ("tests/formalize/test_registry.py", "FORMATS", "FORMATS.register("),
    "a finding source": ("discovery/_enrichment.py", "FINDING_SOURCES",
                         "register_finding_source("),
    "a task-model kind": (HERE, "TASK_MODEL_KINDS", "TASK_MODEL_KINDS.register("),
    "an annotation tool": (HERE, "ANNOTATION_TOOLS", "ANNOTATION_TOOLS.register("),
}


def _keywords(target: str, labels: Sequence[str], **_: Any) -> CallableScorer:
    """A fake kind's loader: ``keywords:w1,w2`` is positive on any of the words."""
    words = target.split(",")

    def predict(texts: list[str]) -> list[dict[str, float]]:
        return [{"positive": 0.9, "negative": 0.1} if any(w in t for w in words)
                else {"positive": 0.1, "negative": 0.9} for t in texts]
    return CallableScorer(predict, labels, name=f"keywords:{target}")


def _check_keywords(target: str, labels: Sequence[str], **_: Any) -> None:
    if not target:
        raise ValueError("keywords: needs words")


KEYWORDS = TaskModelKind("keywords", _keywords, _check_keywords)


@pytest.fixture
def keywords_kind() -> Iterator[None]:
    TASK_MODEL_KINDS.register("keywords", f"{__name__}:KEYWORDS")  # the one line
    yield
    TASK_MODEL_KINDS._entries.pop("keywords", None)


def test_a_registered_task_model_kind_runs_verify(keywords_kind: None, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "s", "labels": ["negative", "positive"], "seed": 0,
        "lexicons": {"ADJ": ["good", "great", "fine"]},
        "tests": [{"name": "praise", "capability": "Vocabulary", "type": "mft",
                   "template": "This film is {ADJ}.", "label": "positive"}]}))
    run = tmp_path / "r"
    assert main(["verify", "--suite", str(suite), "--model", "keywords:good,great",
                 "--run", str(run)]) == 0
    summary = json.loads((run / "verify" / "s" / "summary.json").read_text())
    rows = {(r["level"], r["key"]): r for r in summary["summary"]}
    assert (rows[("test", "praise")]["n"], rows[("test", "praise")]["failures"]) == (3, 1)
    # unregistered, the scheme is unknown, with the closest registered one suggested
    TASK_MODEL_KINDS._entries.pop("keywords")
    assert main(["verify", "--suite", str(suite), "--model", "keywords:good",
                 "--run", str(run)]) == 2
    assert "unknown task-model scheme 'keywords'" in capsys.readouterr().err


def adding_things() -> dict[str, str]:
    """The "Adding things" table of docs/architecture.md: what to add -> its row."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Adding things", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] not in ("to add", "---"):
            rows[cells[0]] = line
    return rows


@pytest.mark.parametrize("kind", sorted(TOUCHES))
def test_adding_things_names_the_files_a_new_plugin_touches(kind: str) -> None:
    row = adding_things()[kind]
    named = set(re.findall(r"`([\w/]+\.py)", row))
    assert set(TOUCHES[kind]) <= named, (kind, named)
    # the registration files exist (the new module's name is the example's)
    assert all((REPO / f).is_file() for f in TOUCHES[kind][1:])


@pytest.mark.parametrize("kind", sorted(TOUCHES))
def test_adding_things_states_how_many_files_a_new_plugin_touches(kind: str) -> None:
    """The count in the row is the fake's: its own module and the registration line."""
    stated = re.findall(r"\*\*(\d+) files?\*\* in all", adding_things()[kind])
    assert stated == [str(len(TOUCHES[kind]))], (kind, stated)


@pytest.mark.parametrize("kind", sorted(TOUCHES))
def test_adding_things_names_the_registry_each_fake_registers_into(kind: str) -> None:
    fake, registry, call = FAKES[kind]
    assert re.search(rf"`{registry}[`.]", adding_things()[kind]), (kind, registry)
    assert call in (REPO / fake).read_text(encoding="utf-8")  # the fake registers there
    home = TOUCHES[kind][-1].removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert hasattr(importlib.import_module(home), registry), (home, registry)


def test_every_plugin_kind_has_a_fake_and_a_row() -> None:
    kinds = {"an engine", "a task-model kind", "a test type", "a format", "a finding source",
             "an annotation tool"}
    assert set(TOUCHES) == set(FAKES) == kinds
    assert kinds <= set(adding_things())


# -- An annotation tool: a plain CSV round trip --------------------------------------------
class CsvSheet(AnnotationTool):
    """A fake tool: ``id,text`` (and both models' labels, except in an audit) out; the
    sheet back with ``label``, ``tag`` and ``note`` columns filled in."""

    name = "csv-sheet"
    description = "a CSV sheet: id,text out; id,label,tag,note back"
    record_unit = "line"

    def write(self, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
              labels: Sequence[str], *, audit: bool = False) -> None:
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(["id", "text"] if audit else ["id", "text", "task", "reference"])
        for it in items:
            top = [] if audit else [max(it[k], key=it[k].get)
                                    for k in ("task_probs", "reference_probs")]
            out.writerow([it["id"], it["text"], *top])
        write_text_atomic(paths[0], buf.getvalue())

    def answers(self, path: Path) -> list[Answer]:
        rows = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline=""))
        found = []
        for line, row in enumerate(rows, start=2):
            if not row.get("id"):
                raise DataError("a row has no 'id'", where=f"{path}, line {line}",
                                fix="keep the id column of the exported sheet")
            choices = {k: row[k] for k in ("label", "tag", "note") if row.get(k)}
            found.append(Answer(row["id"], line, choices, "csv-sheet",
                                f"csv-sheet:{row['id']}:{sorted(choices.items())}"))
        return found


@pytest.fixture
def csv_sheet() -> Iterator[None]:
    ANNOTATION_TOOLS.register("csv-sheet", f"{__name__}:CsvSheet")  # the one line
    yield
    ANNOTATION_TOOLS._entries.pop("csv-sheet", None)


@pytest.fixture
def mini(mini_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         task_models_on_path: None) -> Path:
    """The mini run, generated, scored and ranked by the CLI (hard.jsonl, corpus, scores)."""
    runbuilder.fake_generator(monkeypatch, lambda generator: FakeBackend())
    cfg, run = str(mini_config()), str(tmp_path / "run")
    for stage in ("generate", "score", "rank"):
        assert main([stage, "--config", cfg, "--run", run, "-q"]) == 0, stage
    return Path(run)


def sheet(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def fill(path: Path, rows: list[dict[str, str]]) -> None:
    header = list(rows[0])
    path.write_text("".join(",".join(f'"{r[h]}"' for h in header) + "\n"
                            for r in [dict(zip(header, header, strict=True)), *rows]))


def test_a_registered_annotation_tool_round_trips_through_annotate(
        csv_sheet: None, mini: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run, out = str(mini), tmp_path / "sheet.csv"
    hard = [json.loads(x) for x in (mini / "hard.jsonl").read_text().splitlines()]
    assert hard
    assert main(["annotate", "export", "--run", run, "--format", "csv-sheet",
                 "--out", str(out), "--include", "hard"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"exported {len(hard)} sentence(s) from {run} for csv-sheet", f"wrote {out}"]
    rows = sheet(out)
    assert [r["id"] for r in rows] == [r["id"] for r in hard]
    assert [r["text"] for r in rows] == [r["text"] for r in hard]
    assert [r["task"] for r in rows] == [r["task_label"] for r in hard]
    # The reviewer: the first sentence is the task model's error, the second ambiguous.
    answered = [{"id": r["id"], "label": "", "tag": tag, "note": note} for r, tag, note in
                zip(rows, ["task-model error", "ambiguous"], ["negation", ""], strict=False)]
    back = tmp_path / "back.csv"
    fill(back, answered)
    assert main(["annotate", "import", "--run", run, "--format", "csv-sheet",
                 "--in", str(back)]) == 0
    assert capsys.readouterr().out.startswith(f"imported {len(answered)} decision(s)")
    log = [json.loads(x) for x in (mini / "review" / "decisions.jsonl").read_text().splitlines()]
    assert [(d["id"], d["tag"], d.get("note"), d["annotator"]) for d in log] == [
        (a["id"], a["tag"], a["note"] or None, "csv-sheet") for a in answered]
    # The same sheet again adds nothing (the tool's keys).
    assert main(["annotate", "import", "--run", run, "--format", "csv-sheet",
                 "--in", str(back)]) == 0
    assert f"skipped {len(answered)} already imported" in capsys.readouterr().out
    # A bad sheet: one error naming the file and line, the log as it was.
    before = (mini / "review" / "decisions.jsonl").read_bytes()
    bad = tmp_path / "bad.csv"
    fill(bad, [answered[0], {**answered[0], "id": ""}])
    assert main(["annotate", "import", "--run", run, "--format", "csv-sheet",
                 "--in", str(bad)]) == 2
    assert capsys.readouterr().err == (f"error: a row has no 'id' ({bad}, line 3): keep the id "
                                       f"column of the exported sheet\n")
    fill(bad, [{**answered[0], "tag": "typo"}])
    assert main(["annotate", "import", "--run", run, "--format", "csv-sheet",
                 "--in", str(bad)]) == 2
    assert f"({bad}, line 2)" in capsys.readouterr().err  # the tool's record_unit
    assert (mini / "review" / "decisions.jsonl").read_bytes() == before


def test_a_registered_annotation_tool_runs_the_blind_audit(
        csv_sheet: None, mini: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run, out = str(mini), tmp_path / "audit.csv"
    assert main(["annotate", "export", "--audit", "--run", run, "--format", "csv-sheet",
                 "--out", str(out), "--audit-hard", "3", "--audit-control", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"label every sentence without looking at its scores, then: synthcheck annotate "
        f"import --audit --run {run} --format csv-sheet --in EXPORT.json")
    rows = sheet(out)
    assert len(rows) == 6 and all(set(r) == {"id", "text"} for r in rows)  # texts only
    fill(out, [{"id": r["id"], "label": NO_LABEL if i % 2 else "positive"}
               for i, r in enumerate(rows)])
    assert main(["annotate", "import", "--audit", "--run", run, "--format", "csv-sheet",
                 "--in", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"imported 6 audit label(s) from {out}")
    audit = [json.loads(x) for x in (mini / "review" / "audit.jsonl").read_text().splitlines()]
    assert [(a["id"], a["label"], a["annotator"]) for a in audit] == [
        (r["id"], NO_LABEL if i % 2 else "positive", "csv-sheet") for i, r in enumerate(rows)]


@pytest.mark.parametrize("verb", ["export", "import"])
def test_an_unknown_annotation_tool_says_did_you_mean(csv_sheet: None, verb: str,
                                                      tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    flag = "--out" if verb == "export" else "--in"
    argv = ["annotate", verb, "--run", str(tmp_path), "--format", "csv-shet",
            flag, str(tmp_path / "x.csv")]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "error: unknown annotation tool 'csv-shet' (--format): did you mean 'csv-sheet'? "
        "(choices: argilla, csv-sheet, label-studio)\n")
    ANNOTATION_TOOLS._entries.pop("csv-sheet")  # unregistered, it is not a choice
    assert main([*argv[:5], "csv-sheet", *argv[6:]]) == 2
    assert capsys.readouterr().err == (
        "error: unknown annotation tool 'csv-sheet' (--format): choose one of: argilla, "
        "label-studio\n")
    assert not list(tmp_path.iterdir())  # nothing written
