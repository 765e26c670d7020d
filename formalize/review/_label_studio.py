"""Label Studio as an annotation tool (``--format label-studio``).

Export: a tasks JSON (``[{"data": {"text", "sid", "scores", "found_in"}}]``; not ``source``,
which Label Studio reads as its own key) and the matching labeling config XML beside it
(``Choices`` ``label`` and ``tag``, a ``TextArea`` ``note``). No predictions: a pre-filled
choice would be saved as the reviewer's verdict by a plain Submit.

Import: Label Studio's JSON export (tasks with ``annotations``) and its JSON-MIN export (one
flat object per annotation: the task's data, the answers by control name, ``annotation_id``,
``annotator``, ``updated_at``). Each answer's key is the annotation id and its update time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from formalize.review._annotate import _models_line
from formalize.review._annotate_import import (
    _LS_FIX,
    Answer,
    _one_choice,
    _text_answer,
    _type,
    _Where,
    read_export,
)
from formalize.review._log import TAGS
from formalize.review._tools import AnnotationTool
from synth.core import DataError

#: The data keys of a Label Studio task. Not ``source``: Label Studio reads ``$source`` as its
#: own (the whole task JSON) and shows the raw task above every sentence.
LS_TEXT, LS_ID, LS_SCORES, LS_FOUND = "text", "sid", "scores", "found_in"

SHAPE = ("a JSON list of tasks with 'data' and 'annotations' (JSON export) or of flat "
         "annotations with 'sid' (JSON-MIN export)")
FIX = "export the project from Label Studio as JSON or JSON-MIN and pass that file"


def label_studio_config(labels: Sequence[str], *, audit: bool = False) -> str:
    """The labeling config the exported tasks match: the text, both models' probabilities
    and where the sentence was found (as headers), a ``label`` choice, a review ``tag`` and a
    ``note``. Nothing is pre-filled: a reviewer who submits without choosing records no
    decision. ``audit``: the text and a required ``label`` choice only (the task's labels and
    "no label applies"), no scores."""
    label_choices = "\n".join(f"    <Choice value={quoteattr(lab)}/>" for lab in labels)
    if audit:
        from discovery import NO_LABEL

        return ("<View>\n"
                f'  <Text name="text" value="${LS_TEXT}"/>\n'
                '  <Choices name="label" toName="text" choice="single" showInline="true" '
                'required="true">\n'
                f"{label_choices}\n    <Choice value={quoteattr(NO_LABEL)}/>\n"
                "  </Choices>\n"
                "</View>\n")
    tag_choices = "\n".join(f"    <Choice value={quoteattr(t)}/>" for t in TAGS)
    return (
        "<View>\n"
        f'  <Text name="text" value="${LS_TEXT}"/>\n'
        f'  <Header value="${LS_SCORES}" size="6"/>\n'
        f'  <Header value="${LS_FOUND}" size="6"/>\n'
        '  <Choices name="label" toName="text" choice="single" showInline="true">\n'
        f"{label_choices}\n"
        "  </Choices>\n"
        '  <Choices name="tag" toName="text" choice="single">\n'
        f"{tag_choices}\n"
        "  </Choices>\n"
        '  <TextArea name="note" toName="text" rows="2" maxSubmissions="1"/>\n'
        "</View>\n")


def to_label_studio(items: Iterable[Mapping[str, Any]], *, audit: bool = False
                    ) -> list[dict[str, Any]]:
    """Label Studio tasks: ``data`` with the text, the sentence id (``sid``), both models'
    probabilities (``scores``) and where it was found (``found_in``). No predictions: a
    pre-annotated choice would be submitted as the reviewer's verdict by a plain Submit.
    ``audit``: the text and id only."""
    tasks = []
    for it in items:
        data = {LS_TEXT: it["text"], LS_ID: it["id"]}
        if not audit:
            data.update({LS_SCORES: _models_line(it), LS_FOUND: it["source"]})
        tasks.append({"data": data})
    return tasks


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


class LabelStudio(AnnotationTool):
    """Label Studio: a tasks JSON and its labeling config XML; reads JSON and JSON-MIN."""

    name = "label-studio"
    description = ("Label Studio: tasks JSON at --out and its labeling config beside it "
                   "(.xml); import reads its JSON or JSON-MIN export")
    beside = "its labeling config .xml"

    def export_paths(self, out: Path) -> list[Path]:
        xml = out.with_suffix(".xml")
        if xml == out:
            raise DataError("the tasks file and its labeling config would be the same file",
                            where=f"--out {out}",
                            fix=f"name the tasks file .json (e.g. --out "
                                f"{out.with_suffix('.json')}); the config is written beside "
                                f"it as {out.name}")
        return [out, xml]

    def is_own_file(self, path: Path) -> bool:
        """Whether ``path`` is a Label Studio labeling config (an earlier export's ``.xml``)."""
        try:
            return path.read_bytes()[:200].lstrip().startswith(b"<View")
        except OSError:
            return False

    def write(self, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
              labels: Sequence[str], *, audit: bool = False) -> None:
        from synth.core import write_text_atomic

        write_text_atomic(paths[0], json.dumps(to_label_studio(items, audit=audit), indent=1,
                                               ensure_ascii=False) + "\n")
        write_text_atomic(paths[1], label_studio_config(labels, audit=audit))

    def answers(self, path: Path) -> list[Answer]:
        return label_studio_answers(read_export(path, self.name, shape=SHAPE, fix=FIX), path)
