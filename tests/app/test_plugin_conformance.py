"""Plug-in conformance: a fake of each plug-in kind, registered in one line, runs through the
pipeline, and docs/architecture.md's "Adding things" table names the files a new one touches.

The fakes: an engine (``tests/synth/engines/test_engine_registry.py``: ``synthcheck generate``),
a task-model kind (here: ``synthcheck verify --model keywords:...``), a test type and a format
(``tests/formalize/test_registry.py``), a finding source (``discovery/_enrichment.py``, run by
``tests/app/test_discover.py``'s pipeline and ``tests/discovery/test_enrichment.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from discovery import TASK_MODEL_KINDS, CallableScorer, TaskModelKind
from synthcheck.cli import main

REPO = Path(__file__).resolve().parents[2]

# What "Adding things" says each plug-in kind touches, counted: the files written or edited
# (a new module and its registration line; a test is extra). The fakes prove the count.
TOUCHES = {
    "an engine": ["synth/engines/_myengine.py", "synth/engines/_registry.py"],
    "a test type": ["formalize/types/mytype.py", "formalize/types/__init__.py"],
    "a format": ["formalize/formats/myformat.py", "formalize/formats/__init__.py"],
    "a finding source": ["discovery/_enrichment.py", "discovery/_finding_sources.py"],
    "a task-model kind": ["discovery/_kinds.py"],
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
