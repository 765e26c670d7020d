"""Hand a run's sentences to the annotation tools reviewers already use, and take their
decisions back.

Export: the hard subset, the focus rounds' failing examples and the example sentences of the
run's findings (``findings.jsonl``, when the run has one), each with both models'
probabilities as pre-annotations:

- **Label Studio**: a tasks JSON (``[{"data": {...}, "predictions": [...]}]``, one prediction
  per model whose ``result`` is a ``choices`` item ``{"from_name": "label", "to_name":
  "text", "type": "choices", "value": {"choices": [label]}}`` with the model's probability as
  its ``score``) and the matching labeling config XML (``Choices`` ``label`` and ``tag``, a
  ``TextArea`` ``note``).
- **Argilla 2.x**: ``{"settings": {...}, "records": [...]}``; each record is what
  ``rg.Record.from_dict`` reads (``id``, ``fields``, ``metadata``, ``suggestions`` keyed by
  question name with ``value``/``score``/``agent``, ``responses``), the settings name the
  fields and questions to create the dataset with.

Import: Label Studio's exported JSON (tasks with ``annotations``) or Argilla's exported records
(with ``responses``) become decisions in the run's ``review/decisions.jsonl``, through the same
:class:`ReviewLog` the review notebook writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from discovery import FINDINGS, FOCUS, HARD, REFERENCE_SCORES, TASK_SCORES
from formalize.review._log import TAGS, ReviewLog, _normalise_tag
from synth import CORPUS
from synth.core import DataError

#: The export formats (``synthcheck annotate export --format``).
FORMATS = ("label-studio", "argilla")
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


def annotation_items(run_dir: str | Path, include: Sequence[str] = SOURCES
                     ) -> list[dict[str, Any]]:
    """The sentences to annotate, each once (first source wins): ``{"id", "text", "source",
    "task_model", "task_probs", "reference_probs"}``, in the order hard subset (by rank),
    focus examples (confirmed patterns first), findings' examples.

    Raises:
        DataError: an unknown source, or a run with none of the asked-for outputs.
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
    if "hard" in include and HARD.exists(run):
        found.append(HARD.name)
        for r in _jsonl(HARD.path(run)):
            add(str(r["id"]), r["text"], f"hard subset, rank {r['rank']}", r["task_probs"],
                r["reference_probs"])
    if "focus" in include and FOCUS.exists(run):
        found.append(FOCUS.name)
        for row in _jsonl(FOCUS.path(run)):
            for ex in row.get("examples") or []:
                add(focus_example_id(ex["text"]), ex["text"],
                    f"focus: {row['ngram']!r}" + (" (confirmed)" if row.get("confirmed") else ""),
                    ex.get("task_probs"), ex.get("reference_probs"))
    if "findings" in include and FINDINGS.exists(run):
        found.append(FINDINGS.name)
        from formalize._run_outputs import RunOutputs

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


# -- Label Studio ---------------------------------------------------------------------------
def label_studio_config(labels: Sequence[str]) -> str:
    """The labeling config the exported tasks match: the text, both models' probabilities,
    a ``label`` choice (pre-annotated by the models), a review ``tag`` and a ``note``."""
    label_choices = "\n".join(f"    <Choice value={quoteattr(lab)}/>" for lab in labels)
    tag_choices = "\n".join(f"    <Choice value={quoteattr(t)}/>" for t in TAGS)
    return (
        "<View>\n"
        '  <Text name="text" value="$text"/>\n'
        '  <Header value="$models" size="6"/>\n'
        '  <Header value="$source" size="6"/>\n'
        '  <Choices name="label" toName="text" choice="single" showInline="true">\n'
        f"{label_choices}\n"
        "  </Choices>\n"
        '  <Choices name="tag" toName="text" choice="single">\n'
        f"{tag_choices}\n"
        "  </Choices>\n"
        '  <TextArea name="note" toName="text" rows="2" maxSubmissions="1"/>\n'
        "</View>\n")


def to_label_studio(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Label Studio tasks: ``data`` (``text``, ``sid``, ``source``, ``models``) and one
    prediction per model, its top label as a ``choices`` result scored by its probability."""
    tasks = []
    for it in items:
        preds = []
        for name, probs in ((f"task model {it['task_model']}", it["task_probs"]),
                            ("reference", it["reference_probs"])):
            top = _top(probs)
            preds.append({"model_version": name, "score": round(float(probs[top]), 6),
                          "result": [{"from_name": "label", "to_name": "text",
                                      "type": "choices", "value": {"choices": [top]}}]})
        tasks.append({"data": {"text": it["text"], "sid": it["id"], "source": it["source"],
                               "models": _models_line(it)},
                      "predictions": preds})
    return tasks


# -- Argilla ------------------------------------------------------------------------------
def argilla_settings(labels: Sequence[str]) -> dict[str, Any]:
    """The dataset settings, as ``rg.Settings`` takes them: a ``text`` and a ``models``
    text field; label questions ``label`` (the task's labels) and ``tag`` (the review
    tags), an optional text question ``note``; float metadata per model and label."""
    return {
        "fields": [{"name": "text", "type": "text", "title": "Sentence"},
                   {"name": "models", "type": "text", "title": "Both models' probabilities"}],
        "questions": [
            {"name": "label", "type": "label_selection", "labels": list(labels),
             "title": "The sentence's label", "required": False},
            {"name": "tag", "type": "label_selection", "labels": list(TAGS),
             "title": "Review decision", "required": True},
            {"name": "note", "type": "text", "title": "Note", "required": False}],
        "metadata": [{"name": f"{who}_p_{lab}", "type": "float"}
                     for who in ("task", "reference") for lab in labels]
                    + [{"name": "source", "type": "terms"}],
    }


def to_argilla(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Argilla records (``rg.Record.from_dict``'s shape): the reference's label as the
    ``label`` question's suggestion (with its probability as score), both models'
    probabilities as metadata and in the ``models`` field."""
    out = []
    for it in items:
        ref = it["reference_probs"]
        top = _top(ref)
        meta: dict[str, Any] = {f"task_p_{k}": round(float(v), 6)
                                for k, v in it["task_probs"].items()}
        meta.update({f"reference_p_{k}": round(float(v), 6) for k, v in ref.items()})
        meta["source"] = it["source"]
        out.append({"id": it["id"], "fields": {"text": it["text"], "models": _models_line(it)},
                    "metadata": meta,
                    "suggestions": {"label": {"value": top, "score": round(float(ref[top]), 6),
                                              "agent": "reference"}},
                    "responses": {}, "vectors": {}})
    return out


def export_annotations(run_dir: str | Path, fmt: str, out: str | Path,
                       include: Sequence[str] = SOURCES) -> list[Path]:
    """Write the run's sentences for ``fmt`` (``label-studio``: the tasks JSON at ``out``
    and its labeling config beside it, ``<stem>.xml``; ``argilla``: one JSON file with
    settings and records). Returns the paths written.

    Raises:
        DataError: an unknown format or source, or nothing to export.
    """
    from formalize._run_outputs import RunOutputs
    from synth.core import write_text_atomic

    if fmt not in FORMATS:
        from synth.core import did_you_mean

        raise DataError(f"unknown annotation format {fmt!r}", where="--format",
                        fix=did_you_mean(fmt, list(FORMATS)))
    items = annotation_items(run_dir, include)
    labels = (list(items[0]["task_probs"]) if items
              else RunOutputs(Path(run_dir), require_manifest=False).labels)
    out = Path(out)
    if fmt == "label-studio":
        xml = out.with_suffix(".xml")
        write_text_atomic(out, json.dumps(to_label_studio(items), indent=1,
                                          ensure_ascii=False) + "\n")
        write_text_atomic(xml, label_studio_config(labels))
        return [out, xml]
    write_text_atomic(out, json.dumps({"settings": argilla_settings(labels),
                                       "records": to_argilla(items)}, indent=1,
                                      ensure_ascii=False) + "\n")
    return [out]


# -- import ---------------------------------------------------------------------------------
def _decision(choices: Mapping[str, Any], item: Mapping[str, Any] | None
              ) -> tuple[str, str | None] | None:
    """(tag, note) from one reviewer's answers: the ``tag`` answer, else derived from the
    ``label`` answer against both models' top labels (the task model's wrong:
    task-model error; else the reference's: reference error); None if neither says."""
    note = choices.get("note") or None
    if choices.get("tag"):
        return _normalise_tag(choices["tag"]), note
    label = choices.get("label")
    if label and item is not None and label not in item["task_probs"]:
        raise DataError(f"label {label!r} is not one of the task's labels "
                        f"({', '.join(item['task_probs'])})",
                        fix="correct the label in the tool, or its labeling config's choices")
    if label and item is not None:
        if label != _top(item["task_probs"]):
            return "task-model error", note
        if label != _top(item["reference_probs"]):
            return "reference error", note
    return None


def _label_studio_answers(task: Mapping[str, Any], where: str) -> list[tuple[dict, str]]:
    out = []
    for ann in task.get("annotations") or []:
        if ann.get("was_cancelled"):
            continue
        choices: dict[str, Any] = {}
        for res in ann.get("result") or []:
            value = res.get("value") or {}
            if res.get("type") == "choices" and value.get("choices"):
                choices[res.get("from_name")] = value["choices"][0]
            elif res.get("type") == "textarea" and value.get("text"):
                choices[res.get("from_name")] = " ".join(value["text"])
        who = ann.get("completed_by")
        if isinstance(who, Mapping):
            who = who.get("email") or who.get("id")
        out.append((choices, f"label-studio:{who}" if who is not None else "label-studio"))
    return out


def _argilla_answers(rec: Mapping[str, Any]) -> list[tuple[dict, str]]:
    by_user: dict[str, dict[str, Any]] = {}
    for question, answers in (rec.get("responses") or {}).items():
        for ans in answers or []:
            if ans.get("status", "submitted") != "submitted":
                continue  # drafts and discarded answers are not decisions
            by_user.setdefault(str(ans.get("user_id")), {})[question] = ans.get("value")
    return [(c, f"argilla:{u}") for u, c in by_user.items()]


def import_annotations(run_dir: str | Path, fmt: str, path: str | Path, *,
                       annotator: str | None = None) -> list[dict[str, Any]]:
    """Append the reviewers' decisions in ``path`` (Label Studio's JSON export of tasks with
    ``annotations``, or Argilla's exported records with ``responses``) to the run's review
    log; return the decisions appended. Every record is checked before the first is
    appended, so a bad file leaves the log as it was.

    Raises:
        DataError: unreadable file, wrong shape, an unknown sentence id or review tag.
    """
    path = Path(path)
    if fmt not in FORMATS:
        from synth.core import did_you_mean

        raise DataError(f"unknown annotation format {fmt!r}", where="--format",
                        fix=did_you_mean(fmt, list(FORMATS)))
    from synth.core import read_text

    fix = "export the project/dataset as JSON and pass that file"
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
    if fmt == "argilla" and isinstance(data, Mapping):
        data = data.get("records")
    shape = ("a list of tasks with 'data' and 'annotations'" if fmt == "label-studio"
             else "a list of records with 'id' and 'responses'")
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise DataError(f"the {fmt} export is not {shape}", where=str(path),
                        fix=f"pass the JSON file {fmt} exported")
    items = {it["id"]: it for it in annotation_items(run_dir)}
    pending = []
    answered: list[str] = []
    for i, rec in enumerate(data):
        if fmt == "label-studio":
            sid = (rec.get("data") or {}).get("sid")
            answers = _label_studio_answers(rec, str(path))
        else:
            sid = rec.get("id")
            answers = _argilla_answers(rec)
        if sid is None:
            raise DataError(f"record {i} has no synthcheck sentence id", where=str(path),
                            fix="import the file exported from a synthcheck annotate export")
        if answers:
            answered.append(str(sid))
        for choices, who in answers:
            try:
                decision = _decision(choices, items.get(str(sid)))
            except DataError as exc:
                raise DataError(exc.what, where=f"{path}, record {i}", fix=exc.fix) from None
            if decision is not None:
                pending.append((str(sid), *decision, annotator or who))
    log = ReviewLog(run_dir, known_ids=_known_ids(Path(run_dir), items))
    for sid in answered:  # every id checked before anything is appended
        if sid not in log._known_ids():
            from formalize.review._log import closest_ids

            raise DataError(f"unknown sentence id {sid!r}", where=str(path),
                            fix="import decisions into the run they were exported from; "
                                + closest_ids(sid, log._known_ids()))
    return [log.tag(sid, tag, note=note, annotator=who) for sid, tag, note, who in pending]


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
