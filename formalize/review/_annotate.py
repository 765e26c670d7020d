"""Hand a run's sentences to the annotation tools reviewers already use, and take their
decisions back (the import side is :mod:`formalize.review._annotate_import`; the blind audit's
sample, :mod:`formalize.review._audit`).

Export: the hard subset, the focus rounds' failing examples and the example sentences of the
run's findings (``findings.jsonl``, when the run has one), with both models' probabilities
shown beside each sentence and nothing pre-filled, written by a registered annotation tool
(:data:`formalize.review.ANNOTATION_TOOLS`: Label Studio in
:mod:`formalize.review._label_studio`, Argilla in :mod:`formalize.review._argilla`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from discovery import FINDINGS, FOCUS, HARD, REFERENCE_SCORES, TASK_SCORES
from formalize.review._tools import annotation_tool
from synth import CORPUS
from synth.core import DataError

#: What an export holds, in this order (``--include``).
SOURCES = ("hard", "focus", "findings")


def focus_example_id(text: str) -> str:
    """The id of a focus-round sentence (new sentences have no corpus id): ``f`` and a
    hash of its text, stable across exports."""
    return "f" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:11]


def _top(probs: Mapping[str, float]) -> str:
    return max(probs, key=lambda k: probs[k])


def _jsonl(path: Path) -> list[dict[str, Any]]:
    from synth.core import iter_jsonl

    return list(iter_jsonl(path)) if path.is_file() else []


def _task_model(run: Path) -> str:
    meta = HARD.meta(run)
    if meta.is_file():
        return str(json.loads(meta.read_text(encoding="utf-8")).get("task_model") or "task")
    return "task"


def _numbered(path: Path) -> list[tuple[int, dict[str, Any]]]:
    from synth.core import iter_jsonl_numbered

    return list(iter_jsonl_numbered(path)) if path.is_file() else []


def _field(rec: Mapping[str, Any], name: str, path: Path, line: int, fix: str) -> Any:
    """``rec[name]``, or a DataError naming the file, line and field."""
    if rec.get(name) is None:
        raise DataError(f"a row has no {name!r}", where=f"{path}, line {line}", fix=fix)
    return rec[name]


def annotation_items(run_dir: str | Path, include: Sequence[str] = SOURCES
                     ) -> list[dict[str, Any]]:
    """The sentences to annotate, each once (first source wins): ``{"id", "text", "source",
    "task_model", "task_probs", "reference_probs"}``, in the order hard subset (by rank),
    focus examples (confirmed patterns first), findings' examples.

    Raises:
        DataError: an unknown source, a run with none of the asked-for outputs, a row that
            lacks a field the export shows (names the file and line), or findings asked
            for in a run without the corpus their examples come from.
    """
    run = Path(run_dir)
    bad = [s for s in include if s not in SOURCES]
    if bad:
        raise DataError(f"unknown source {bad[0]!r}", where="--include",
                        fix=f"use some of: {', '.join(SOURCES)}")
    task = _task_model(run)
    items: dict[str, dict[str, Any]] = {}

    def add(sid: str, text: str, source: str, tp: Any, rp: Any) -> None:
        if sid not in items and isinstance(tp, Mapping) and isinstance(rp, Mapping):
            items[sid] = {"id": sid, "text": text, "source": source, "task_model": task,
                          "task_probs": dict(tp), "reference_probs": dict(rp)}

    found = []
    hard_fix = "rerun synthcheck rank on the run (hard.jsonl is its output)"
    if "hard" in include and HARD.exists(run):
        found.append(HARD.name)
        path = HARD.path(run)
        for line, r in _numbered(path):
            fields = [_field(r, k, path, line, hard_fix)
                      for k in ("id", "text", "rank", "task_probs", "reference_probs")]
            add(str(fields[0]), str(fields[1]), f"hard subset, rank {fields[2]}", *fields[3:])
    if "focus" in include and FOCUS.exists(run):
        found.append(FOCUS.name)
        path = FOCUS.path(run)
        for line, row in _numbered(path):
            for j, ex in enumerate(row.get("examples") or []):
                if not isinstance(ex, Mapping) or not isinstance(ex.get("text"), str):
                    raise DataError(f"example {j} of n-gram {row.get('ngram')!r} has no "
                                    f"'text'", where=f"{path}, line {line}",
                                    fix="rerun synthcheck focus on the run (focus.jsonl is "
                                        "its output)")
                add(focus_example_id(ex["text"]), ex["text"],
                    f"focus: {row.get('ngram')!r}" + (" (confirmed)" if row.get("confirmed")
                                                       else ""),
                    ex.get("task_probs"), ex.get("reference_probs"))
    if "findings" in include and FINDINGS.exists(run):
        found.append(FINDINGS.name)
        from formalize._run_outputs import RunOutputs

        if not CORPUS.path(run).is_dir():
            raise DataError("the findings' example sentences are in the corpus, and the run "
                            "has no corpus/", where=str(run),
                            fix="restore the run's corpus/ folder, or leave the findings out "
                                "(--include hard,focus)")
        texts = RunOutputs(run, require_manifest=False).corpus_texts()
        tprobs = {str(r["id"]): r["probs"] for r in _jsonl(TASK_SCORES.path(run, name=task))}
        rprobs = {str(r["id"]): r["probs"] for r in _jsonl(REFERENCE_SCORES.path(run))}
        for f in _jsonl(FINDINGS.path(run)):
            for sid in f.get("example_ids") or []:
                sid = str(sid)
                if sid in texts:
                    add(sid, texts[sid], f"finding {f.get('id')} ({f.get('kind')}): "
                        f"{f.get('name')}", tprobs.get(sid), rprobs.get(sid))
    if not found:
        raise DataError("the run has nothing to annotate (no " + ", ".join(
            {"hard": HARD, "focus": FOCUS, "findings": FINDINGS}[s].name
            for s in include) + ")", where=str(run),
            fix="run synthcheck rank (and focus) on it first, or pass the run directory "
                "that holds them")
    return list(items.values())


def _models_line(item: Mapping[str, Any]) -> str:
    def show(p: Mapping[str, float]) -> str:
        return ", ".join(f"{k} {float(v):.2f}" for k, v in p.items())
    return (f"task model {item['task_model']}: {show(item['task_probs'])} | reference: "
            f"{show(item['reference_probs'])}")


def check_export_paths(fmt: str, out: str | Path) -> list[Path]:
    """The files an export to ``out`` writes for the tool ``fmt`` (Label Studio: the tasks
    JSON and its labeling config beside it, ``<stem>.xml``), checked to be distinct.

    Raises:
        ConfigError: an unknown tool ("did you mean").
        DataError: two of the files would be one (Label Studio: ``out`` ends in ``.xml``).
    """
    return annotation_tool(fmt).export_paths(Path(out))


def export_annotations(run_dir: str | Path, fmt: str, out: str | Path,
                       include: Sequence[str] = SOURCES) -> list[Path]:
    """Write the run's sentences for the annotation tool ``fmt`` (any name in
    ``ANNOTATION_TOOLS``; ``label-studio``: the tasks JSON at ``out`` and its labeling config
    beside it, ``<stem>.xml``; ``argilla``: one JSON file with settings and records). Returns
    the paths written.

    Raises:
        ConfigError: an unknown tool ("did you mean").
        DataError: an unknown source, or nothing to export.
    """
    from formalize._run_outputs import RunOutputs

    tool = annotation_tool(fmt)
    paths = tool.export_paths(Path(out))
    items = annotation_items(run_dir, include)
    labels = (list(items[0]["task_probs"]) if items
              else RunOutputs(Path(run_dir), require_manifest=False).labels)
    return write_tool_files(fmt, paths, items, labels)


def write_tool_files(fmt: str, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
                     labels: Sequence[str], *, audit: bool = False) -> list[Path]:
    """Write ``items`` for the tool ``fmt`` (see :func:`export_annotations`); returns
    ``paths``."""
    annotation_tool(fmt).write(paths, items, labels, audit=audit)
    return list(paths)


def _known_ids(run: Path, items: Mapping[str, Any]) -> set[str]:
    ids = set(items)
    if CORPUS.path(run).is_dir():
        from synth import iter_corpus

        ids.update(str(r["id"]) for r in iter_corpus(run))
    return ids


def focus_texts(run_dir: str | Path) -> dict[str, str]:
    """Focus-round example id -> text (what :func:`focus_example_id` named on export)."""
    return {focus_example_id(ex["text"]): ex["text"]
            for row in _jsonl(FOCUS.path(run_dir)) for ex in row.get("examples") or []}
