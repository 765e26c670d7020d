"""Read the reviewers' answers back from Label Studio and Argilla exports.

Label Studio's JSON export (tasks with ``annotations``) and its JSON-MIN export (one flat
object per annotation: the task's data, the answers by control name, ``annotation_id``,
``annotator``, ``updated_at``), and Argilla records (``rg.Record.to_dict``'s shape, or
``{"settings", "records"}``; ``responses`` keyed by question, each a list of
``{value, user_id, status}``) become :class:`Answer` objects. Every field is checked with an
error that names the file, the record and the field: a bad file never reaches the log.

Each answer has a ``key`` (Label Studio: the annotation id and its update time; Argilla: the
record, the user and the answers), so importing the same export twice adds nothing, and a
``time`` (Label Studio's own), so an old export never overrides a later decision.
"""

from __future__ import annotations

import hashlib
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
    """The record's index in the export (for messages)."""
    choices: dict[str, str] = field(default_factory=dict)
    """Question name -> answer (``label``, ``tag``, ``note``)."""
    who: str = ""
    """The tool's user, e.g. ``label-studio:ann@example.org``."""
    key: str | None = None
    """The answer's id in the tool, with its revision."""
    time: str | None = None
    """When the tool says the answer was made or last changed (ISO 8601)."""


_SHAPES = {"label-studio": "a JSON list of tasks with 'data' and 'annotations' (JSON export) "
                           "or of flat annotations with 'sid' (JSON-MIN export)",
           "argilla": "a list of records with 'id' and 'responses', or an object with "
                      "'records'"}
_FIX = {"label-studio": "export the project from Label Studio as JSON or JSON-MIN and pass "
                        "that file",
        "argilla": "export the dataset's records (rg.Dataset.records.to_list(flatten=False) or "
                   "the file `annotate export` wrote, with responses) and pass that file"}


def read_export(path: Path, fmt: str) -> list[Any]:
    """The records of a tool's JSON export.

    Raises:
        DataError: missing, a directory, not UTF-8, not JSON, nested too deep, or not the
            format's shape (a Label Studio file under ``argilla`` and the reverse are named).
    """
    from synth.core import read_text

    fix = _FIX[fmt]
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
    if fmt == "argilla" and isinstance(data, Mapping) and "records" in data:
        data = data["records"]
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise DataError(f"the {fmt} export is not {_SHAPES[fmt]}", where=str(path),
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


def _ls_result(results: Any, at: _Where) -> dict[str, str]:
    if not isinstance(results, list):
        raise at.error(f"an annotation's 'result' is {_type(results)}, not a list",
                       fix=_LS_FIX)
    choices: dict[str, str] = {}
    for res in results:
        if not isinstance(res, Mapping):
            raise at.error(f"a 'result' item is {_type(res)} ({res!r:.60}), not an object",
                           fix=_LS_FIX)
        name, value = str(res.get("from_name")), res.get("value")
        if not isinstance(value, Mapping):
            raise at.error(f"the {name!r} result's 'value' is {_type(value)}, not an object",
                           fix=_LS_FIX)
        answer = None
        if res.get("type") == "choices":
            answer = _one_choice(value.get("choices"), name, at)
        elif res.get("type") == "textarea":
            answer = _text_answer(value.get("text"), name, at)
        if answer is not None:
            choices[name] = answer
    return choices


def _who(value: Any) -> str:
    if isinstance(value, Mapping):
        value = value.get("email") or value.get("id")
    return f"label-studio:{value}" if value not in (None, "") else "label-studio"


def label_studio_answers(data: list[Mapping[str, Any]], path: Path) -> list[Answer]:
    """The answers of a Label Studio JSON or JSON-MIN export (cancelled ones left out)."""
    out = []
    for i, rec in enumerate(data):
        at = _Where(path, i)
        if "annotation_id" in rec or ("sid" in rec and "data" not in rec):  # JSON-MIN
            out += _ls_min_answer(rec, at)
            continue
        task = rec.get("data")
        if not isinstance(task, Mapping) or task.get("sid") is None:
            raise at.error("the task has no synthcheck sentence id (data.sid)",
                           fix="import the file exported from a project made with "
                               "synthcheck annotate export")
        anns = rec.get("annotations")
        if anns is None:
            continue
        if not isinstance(anns, list):
            raise at.error(f"'annotations' is {_type(anns)}, not a list", fix=_LS_FIX)
        for ann in anns:
            if not isinstance(ann, Mapping):
                raise at.error(f"an annotation is {_type(ann)}, not an object", fix=_LS_FIX)
            if ann.get("was_cancelled"):
                continue
            when = ann.get("updated_at") or ann.get("created_at")
            key = (f"label-studio:{ann['id']}@{when}" if ann.get("id") is not None else None)
            out.append(Answer(str(task["sid"]), i, _ls_result(ann.get("result") or [], at),
                              _who(ann.get("completed_by")), key,
                              when if isinstance(when, str) else None))
    return out


def _ls_min_answer(rec: Mapping[str, Any], at: _Where) -> list[Answer]:
    """JSON-MIN: the task's data at the top level, each control's answer under its name
    (a single choice as a string, several as ``{"choices": [...]}``, a text area as a
    string or a list of lines)."""
    if rec.get("sid") is None:
        raise at.error("the record has no synthcheck sentence id ('sid')",
                       fix="import the file exported from a project made with synthcheck "
                           "annotate export")
    choices: dict[str, str] = {}
    for name in ("label", "tag"):
        value = rec.get(name)
        if isinstance(value, Mapping):
            value = _one_choice(value.get("choices"), name, at)
        elif value is not None and not isinstance(value, str):
            raise at.error(f"the {name!r} answer is {_type(value)}, not a choice",
                           fix=_LS_FIX)
        if value:
            choices[name] = value
    if rec.get("note") is not None:
        note = _text_answer(rec["note"], "note", at)
        if note:
            choices["note"] = note
    if not choices:
        return []
    when = rec.get("updated_at") or rec.get("created_at")
    aid = rec.get("annotation_id")
    return [Answer(str(rec["sid"]), at.record, choices, _who(rec.get("annotator")),
                   f"label-studio:{aid}@{when}" if aid is not None else None,
                   when if isinstance(when, str) else None)]


_AR_FIX = ("export the records with the Argilla SDK (rg.Dataset.records.to_list"
           "(flatten=False)); responses are {question: [{value, user_id, status}]}")


def argilla_answers(data: list[Mapping[str, Any]], path: Path) -> list[Answer]:
    """The submitted answers of Argilla records, one :class:`Answer` per user. A response
    without ``status`` counts only when its record's ``status`` is ``completed``; drafts
    and discarded responses are left out."""
    out = []
    for i, rec in enumerate(data):
        at = _Where(path, i)
        if rec.get("id") is None:
            raise at.error("the record has no 'id' (the synthcheck sentence id)",
                           fix="import the records exported from a dataset made with "
                               "synthcheck annotate export")
        responses = rec.get("responses") or {}
        if not isinstance(responses, Mapping):
            raise at.error(f"'responses' is {_type(responses)}, not an object keyed by "
                           f"question", fix=_AR_FIX)
        by_user: dict[str, dict[str, str]] = {}
        for question, answers in responses.items():
            if not isinstance(answers, list):
                raise at.error(f"the responses to {question!r} are {_type(answers)}, not a "
                               f"list of {{value, user_id, status}}", fix=_AR_FIX)
            for ans in answers:
                if not isinstance(ans, Mapping):
                    raise at.error(f"a response to {question!r} is {_type(ans)}, not "
                                   f"{{value, user_id, status}}", fix=_AR_FIX)
                status = ans.get("status") or (
                    "submitted" if rec.get("status") == "completed" else None)
                if status != "submitted":
                    continue  # drafts, discarded, or not known to be submitted
                value = ans.get("value")
                if question == "note":
                    text = _text_answer(value, question, at)
                    if text:
                        by_user.setdefault(str(ans.get("user_id")), {})[question] = text
                    continue
                if isinstance(value, list):
                    value = _one_choice(value, question, at)
                elif not isinstance(value, str):
                    raise at.error(f"the {question!r} answer is {_type(value)} "
                                   f"({value!r:.60}), not a label", fix=_AR_FIX)
                if value:
                    by_user.setdefault(str(ans.get("user_id")), {})[question] = value
        for user, choices in by_user.items():
            digest = hashlib.sha256(json.dumps(choices, sort_keys=True).encode()).hexdigest()
            out.append(Answer(str(rec["id"]), i, choices, f"argilla:{user}",
                              f"argilla:{rec['id']}:{user}@{digest[:12]}",
                              rec.get("updated_at") if isinstance(rec.get("updated_at"), str)
                              else None))
    return out


def read_answers(fmt: str, path: str | Path) -> list[Answer]:
    """Every answer in a tool's export (see the module docstring).

    Raises:
        DataError: the file or one of its records is not the tool's export shape (names the
            record and the field).
    """
    path = Path(path)
    data = read_export(path, fmt)
    return (label_studio_answers(data, path) if fmt == "label-studio"
            else argilla_answers(data, path))


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
    """Append the reviewers' decisions in ``path`` (Label Studio's JSON or JSON-MIN export,
    or Argilla's exported records) to the run's review log, keeping each annotator's label
    and the tool's own time; an answer already imported (same tool key) is skipped. Every
    record is checked before the first is appended, so a bad file leaves the log as it was.

    Raises:
        DataError: unreadable file, wrong shape (names the record and field), an unknown
            sentence id, review tag or label.
    """
    from formalize._run_outputs import RunOutputs
    from formalize.review._annotate import _check_format, _known_ids, annotation_items
    from formalize.review._log import ReviewLog, closest_ids

    _check_format(fmt)
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
        where = f"{path}, record {ans.record}"
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
