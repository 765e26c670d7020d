"""Read the reviewers' answers back from an annotation tool's export, and turn them into
review-log decisions.

Each registered tool (:data:`formalize.review.ANNOTATION_TOOLS`) reads its own export into
:class:`Answer` objects (Label Studio's JSON and JSON-MIN exports in
:mod:`formalize.review._label_studio`, Argilla records in :mod:`formalize.review._argilla`;
:func:`read_export` and the answer helpers here are what the JSON tools share). Every field
is checked with an error that names the file, the record and the field: a bad file never
reaches the log.

Each answer has a ``key`` (Label Studio: the annotation id and its update time; Argilla: the
record, the user and the answers), so importing the same export twice adds nothing, and a
``time`` (the tool's own), so an old export never overrides a later decision.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.core import DataError


@dataclass
class Answer:
    """One reviewer's answers on one sentence."""

    sid: str
    """The synthcheck sentence id."""
    record: int
    """Where it is in the export, for messages: the record's index (Label Studio, Argilla),
    or what the tool's ``record_unit`` says (e.g. a line number)."""
    choices: dict[str, str] = field(default_factory=dict)
    """Question name -> answer (``label``, ``tag``, ``note``)."""
    who: str = ""
    """The tool's user, e.g. ``label-studio:ann@example.org``."""
    key: str | None = None
    """The answer's id in the tool, with its revision."""
    time: str | None = None
    """When the tool says the answer was made or last changed (ISO 8601)."""


def read_export(path: Path, fmt: str, *, shape: str, fix: str, records: str | None = None
                ) -> list[Any]:
    """The records of the JSON export of the tool ``fmt``: a list of objects, or (with
    ``records``) an object holding that list under that key.

    Args:
        shape: what the export is, for the message when it is not (``"a list of ..."``).
        fix: how to get the right file from the tool.

    Raises:
        DataError: missing, a directory, not UTF-8, not JSON, nested too deep, or not the
            tool's shape (a Label Studio file under ``argilla`` and the reverse are named).
    """
    from synth.core import read_text

    if path.is_dir():
        raise DataError(f"the {fmt} export is a directory, not a file", where=str(path), fix=fix)
    if not path.is_file():
        raise DataError(f"the {fmt} export file does not exist", where=str(path), fix=fix)
    # read_text: a non-UTF-8 byte is named with its offset; a UTF-8 BOM is dropped.
    text = read_text(path, kind=f"the {fmt} export")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"the {fmt} export is not valid JSON ({exc.msg} at line {exc.lineno}, "
                        f"column {exc.colno})", where=str(path), fix=fix) from None
    except RecursionError:
        raise DataError(f"the {fmt} export is nested too deeply to be an export",
                        where=str(path), fix=fix) from None
    if records is not None and isinstance(data, Mapping) and records in data:
        data = data[records]
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise DataError(f"the {fmt} export is not {shape}", where=str(path),
                        fix=f"pass the JSON file {fmt} exported")
    other = _looks_like(data)
    if other is not None and other != fmt:
        raise DataError(f"this is a {other} export, read as {fmt}", where=str(path),
                        fix=f"pass --format {other}")
    return data


def _looks_like(data: list[Any]) -> str | None:
    if not data:
        return None
    first = data[0]
    if "annotations" in first or "annotation_id" in first or (
            isinstance(first.get("data"), Mapping) and "sid" in first["data"]):
        return "label-studio"
    if "responses" in first or "fields" in first:
        return "argilla"
    return None


def _type(value: Any) -> str:
    return {str: "a string", list: "a list", dict: "an object", int: "a number",
            float: "a number", bool: "true/false"}.get(type(value), type(value).__name__)


class _Where:
    def __init__(self, path: Path, record: int) -> None:
        self.path, self.record = path, record

    def error(self, what: str, fix: str) -> DataError:
        return DataError(what, where=f"{self.path}, record {self.record}", fix=fix)


_LS_FIX = ("re-export the project from Label Studio as JSON (this field is not what Label "
           "Studio writes)")


def _one_choice(value: Any, name: str, at: _Where) -> str | None:
    """The single choice of a ``choices`` answer (``["positive"]``)."""
    if not isinstance(value, list):
        raise at.error(f"the {name!r} answer's 'choices' is {_type(value)} ({value!r:.60}), "
                       f"not a list", fix=_LS_FIX + "; a choice is written [\"positive\"]")
    if not value:
        return None
    if len(value) > 1 or not isinstance(value[0], str):
        raise at.error(f"the {name!r} answer has {len(value)} choices ({value!r:.80}); one "
                       f"label per sentence is a decision",
                       fix="set the choice to single in the labeling config "
                           "(choice=\"single\", as the exported config has) and answer again")
    return value[0]


def _text_answer(value: Any, name: str, at: _Where) -> str | None:
    """A text answer: a string, or Label Studio's list of lines."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(v.strip() for v in value if v.strip()) or None
    raise at.error(f"the {name!r} answer is {_type(value)} ({value!r:.60}), not text",
                   fix="a note is plain text; answer it in the tool's text area")


def read_answers(fmt: str, path: str | Path) -> list[Answer]:
    """Every answer in the export of the annotation tool ``fmt`` (see the module docstring).

    Raises:
        ConfigError: an unknown tool ("did you mean").
        DataError: the file or one of its records is not the tool's export shape (names the
            record and the field).
    """
    from formalize.review._tools import annotation_tool

    return annotation_tool(fmt).answers(Path(path))


@dataclass
class Imported:
    """What an import did."""

    added: list[dict[str, Any]] = field(default_factory=list)
    """The records appended to the log."""
    duplicates: int = 0
    """Answers already in the log (the same tool key): not appended again."""
    dropped: list[str] = field(default_factory=list)
    """Answers that give no decision, each with the reason."""


def _decision(ans: Answer, item: Mapping[str, Any] | None, labels: list[str], where: str
              ) -> tuple[str, str | None, str | None] | str:
    """``(tag, note, label)`` from one reviewer's answers, or the reason there is none.

    The ``tag`` answer wins; else the tag is derived from the ``label`` answer against both
    models' top labels (the task model's wrong: task-model error; else the reference's:
    reference error)."""
    from formalize.review._log import _normalise_tag

    label, note = ans.choices.get("label"), ans.choices.get("note")
    if label is not None and label not in labels:
        raise DataError(f"label {label!r} is not one of the task's labels ({', '.join(labels)})",
                        where=where,
                        fix="correct the label in the tool, or its labeling config's choices "
                            "(they must be the run's task.labels)")
    if ans.choices.get("tag"):
        try:
            return _normalise_tag(ans.choices["tag"]), note, label
        except DataError as exc:
            raise DataError(exc.what, where=where, fix=exc.fix) from None
    if label is None:
        return f"{ans.sid}: no label and no tag chosen (nothing was decided)"
    if item is None:
        return (f"{ans.sid}: a label ({label!r}) on a sentence that was not in the export, so "
                f"there are no model labels to compare it with; give it a tag instead")
    top = {k: max(p, key=lambda lab: p[lab]) for k, p in
           (("task", item["task_probs"]), ("reference", item["reference_probs"]))}
    if label != top["task"]:
        return "task-model error", note, label
    if label != top["reference"]:
        return "reference error", note, label
    return (f"{ans.sid}: the label {label!r} agrees with both models; give it a tag to "
            f"record a decision")


def import_annotations(run_dir: str | Path, fmt: str, path: str | Path, *,
                       annotator: str | None = None) -> Imported:
    """Append the reviewers' decisions in ``path`` (the export of the annotation tool
    ``fmt``: Label Studio's JSON or JSON-MIN export, Argilla's records, or any registered
    tool's) to the run's review log, keeping each annotator's label
    and the tool's own time; an answer already imported (same tool key) is skipped. Every
    record is checked before the first is appended, so a bad file leaves the log as it was.

    Raises:
        DataError: unreadable file, wrong shape (names the record and field), an unknown
            sentence id, review tag or label.
    """
    from formalize._run_outputs import RunOutputs
    from formalize.review._annotate import _known_ids, annotation_items
    from formalize.review._log import ReviewLog, closest_ids
    from formalize.review._tools import annotation_tool

    unit = annotation_tool(fmt).record_unit
    answers = read_answers(fmt, path)
    run = Path(run_dir)
    ReviewLog(run).check_writable()
    items = {it["id"]: it for it in annotation_items(run)}
    labels = (list(next(iter(items.values()))["task_probs"]) if items
              else RunOutputs(run, require_manifest=False).labels)
    log = ReviewLog(run, known_ids=_known_ids(run, items))
    known = log._known_ids()
    result = Imported()
    pending = []
    for ans in answers:
        where = f"{path}, {unit} {ans.record}"
        if ans.sid not in known:  # every id checked before anything is appended
            raise DataError(f"unknown sentence id {ans.sid!r}", where=where,
                            fix="import decisions into the run they were exported from; "
                                + closest_ids(ans.sid, known))
        decision = _decision(ans, items.get(ans.sid), labels, where)
        if isinstance(decision, str):
            result.dropped.append(decision)
        else:
            pending.append((ans, decision))
    seen = log.keys()
    for ans, (tag, note, label) in pending:
        if ans.key is not None and ans.key in seen:
            result.duplicates += 1
            continue
        if ans.key is not None:
            seen.add(ans.key)
        result.added.append(log.tag(ans.sid, tag, note=note, annotator=annotator or ans.who,
                                    label=label, key=ans.key, time=ans.time))
    return result
