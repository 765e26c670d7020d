"""Argilla 2.x as an annotation tool (``--format argilla``).

Export: ``{"settings": {...}, "records": [...]}``; the settings in the SDK's own shape
(``rg.Settings.from_json`` reads them), each record what ``rg.Record.from_dict`` reads (``id``,
``fields``, ``metadata``, no suggestion).

Import: Argilla records (``rg.Record.to_dict``'s shape, or ``{"settings", "records"}``;
``responses`` keyed by question, each a list of ``{value, user_id, status}``). Each answer's
key is the record, the user and a digest of the answers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from formalize.review._annotate import _models_line
from formalize.review._annotate_import import (
    Answer,
    _one_choice,
    _text_answer,
    _type,
    _Where,
    read_export,
)
from formalize.review._log import TAGS
from formalize.review._tools import AnnotationTool

SHAPE = "a list of records with 'id' and 'responses', or an object with 'records'"
FIX = ("export the dataset's records (rg.Dataset.records.to_list(flatten=False) or the file "
       "`annotate export` wrote, with responses) and pass that file")

#: What an audit's annotator reads (Argilla's guidelines; the notebook and docs say the same).
AUDIT_GUIDELINES = ("Give each sentence the label it carries for this task, judging the "
                    "text alone. Choose 'no label applies' when it carries none (off-topic, "
                    "neutral or garbled). There are no scores and no model labels to see on "
                    "purpose: decide before looking at any.")


def argilla_settings(labels: Sequence[str], *, audit: bool = False) -> dict[str, Any]:
    """The dataset settings in the Argilla SDK's own shape (what ``rg.Settings.to_json``
    writes and ``rg.Settings.from_json`` reads): a ``text`` field and a ``models`` field
    with both models' probabilities; questions ``label`` (the task's labels), ``tag`` (the
    review tags) and ``note``; float metadata per model and label. ``audit``: the text and
    a required ``label`` question (the task's labels and "no label applies") only."""
    def field(name: str, title: str) -> dict[str, Any]:
        return {"name": name, "title": title, "required": True, "description": None,
                "type": "text", "settings": {"type": "text", "use_markdown": False}}

    def label_q(name: str, title: str, values: Sequence[str], required: bool
                ) -> dict[str, Any]:
        return {"name": name, "title": title, "description": None, "required": required,
                "type": "label_selection",
                "settings": {"type": "label_selection",
                             "options": [{"value": v, "text": v} for v in values],
                             "visible_options": None}}

    if audit:
        from discovery import NO_LABEL

        return {"fields": [field("text", "Sentence")],
                "questions": [label_q("label", "The sentence's label", [*labels, NO_LABEL],
                                      True)],
                "metadata": [], "vectors": [], "guidelines": AUDIT_GUIDELINES,
                "allow_extra_metadata": False, "distribution": {"strategy": "overlap",
                                                                 "min_submitted": 1},
                "mapping": None}
    return {
        "fields": [field("text", "Sentence"), field("models", "Both models' probabilities")],
        "questions": [
            label_q("label", "The sentence's label", labels, False),
            label_q("tag", "Review decision", TAGS, True),
            {"name": "note", "title": "Note", "description": None, "required": False,
             "type": "text", "settings": {"type": "text", "use_markdown": False}}],
        "metadata": [{"name": f"{who}_p_{lab}", "title": f"{who} p({lab})",
                      "visible_for_annotators": True,
                      "settings": {"type": "float", "min": 0.0, "max": 1.0,
                                   "visible_for_annotators": True}}
                     for who in ("task", "reference") for lab in labels]
                    + [{"name": "source", "title": "found in", "visible_for_annotators": True,
                        "settings": {"type": "terms", "values": None,
                                     "visible_for_annotators": True}}],
        "vectors": [], "guidelines": None, "allow_extra_metadata": False,
        "distribution": {"strategy": "overlap", "min_submitted": 1}, "mapping": None}


def to_argilla(items: Iterable[Mapping[str, Any]], *, audit: bool = False
               ) -> list[dict[str, Any]]:
    """Argilla records (``rg.Record.from_dict``'s shape): both models' probabilities as
    metadata and in the ``models`` field, and no suggestion (a suggested label would be
    taken as the reviewer's by a plain Submit). ``audit``: the text alone."""
    out = []
    for it in items:
        if audit:
            out.append({"id": it["id"], "fields": {"text": it["text"]}, "metadata": {},
                        "suggestions": {}, "responses": {}, "vectors": {}})
            continue
        ref = it["reference_probs"]
        meta: dict[str, Any] = {f"task_p_{k}": round(float(v), 6)
                                for k, v in it["task_probs"].items()}
        meta.update({f"reference_p_{k}": round(float(v), 6) for k, v in ref.items()})
        meta["source"] = it["source"]
        out.append({"id": it["id"], "fields": {"text": it["text"], "models": _models_line(it)},
                    "metadata": meta, "suggestions": {}, "responses": {}, "vectors": {}})
    return out


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


class Argilla(AnnotationTool):
    """Argilla 2.x: one JSON file with the dataset's settings and records; reads records."""

    name = "argilla"
    description = ("Argilla 2.x: settings + records JSON at --out; import reads the "
                   "dataset's records")

    def write(self, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
              labels: Sequence[str], *, audit: bool = False) -> None:
        from synth.core import write_text_atomic

        write_text_atomic(paths[0], json.dumps(
            {"settings": argilla_settings(labels, audit=audit),
             "records": to_argilla(items, audit=audit)}, indent=1, ensure_ascii=False) + "\n")

    def answers(self, path: Path) -> list[Answer]:
        return argilla_answers(read_export(path, self.name, shape=SHAPE, fix=FIX,
                                           records="records"), path)
