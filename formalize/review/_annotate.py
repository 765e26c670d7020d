"""Hand a run's sentences to the annotation tools reviewers already use, and take their
decisions back (the import side is :mod:`formalize.review._annotate_import`; the blind audit's
sample, :mod:`formalize.review._audit`).

Export: the hard subset, the focus rounds' failing examples and the example sentences of the
run's findings (``findings.jsonl``, when the run has one), with both models' probabilities
shown beside each sentence and nothing pre-filled:

- **Label Studio**: a tasks JSON (``[{"data": {"text", "sid", "scores", "found_in"}}]``; not
  ``source``, which Label Studio reads as its own key) and the matching labeling config XML
  (``Choices`` ``label`` and ``tag``, a ``TextArea`` ``note``). No predictions: a pre-filled
  choice would be saved as the reviewer's verdict by a plain Submit.
- **Argilla 2.x**: ``{"settings": {...}, "records": [...]}``; the settings in the SDK's own
  shape (``rg.Settings.from_json`` reads them), each record what ``rg.Record.from_dict``
  reads (``id``, ``fields``, ``metadata``, no suggestion).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from discovery import FINDINGS, FOCUS, HARD, REFERENCE_SCORES, TASK_SCORES
from formalize.review._log import TAGS
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


# -- Label Studio ---------------------------------------------------------------------------
#: The data keys of a Label Studio task. Not ``source``: Label Studio reads ``$source`` as its
#: own (the whole task JSON) and shows the raw task above every sentence.
LS_TEXT, LS_ID, LS_SCORES, LS_FOUND = "text", "sid", "scores", "found_in"


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


# -- Argilla ------------------------------------------------------------------------------
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


#: What an audit's annotator reads (Argilla's guidelines; the notebook and docs say the same).
AUDIT_GUIDELINES = ("Give each sentence the label it carries for this task, judging the "
                    "text alone. Choose 'no label applies' when it carries none (off-topic, "
                    "neutral or garbled). There are no scores and no model labels to see on "
                    "purpose: decide before looking at any.")


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


def check_export_paths(fmt: str, out: str | Path) -> list[Path]:
    """The files an export to ``out`` writes (Label Studio: the tasks JSON and its labeling
    config beside it, ``<stem>.xml``), checked to be distinct.

    Raises:
        DataError: ``out`` ends in ``.xml`` for Label Studio (its config would overwrite it).
    """
    out = Path(out)
    if fmt != "label-studio":
        return [out]
    xml = out.with_suffix(".xml")
    if xml == out:
        raise DataError("the tasks file and its labeling config would be the same file",
                        where=f"--out {out}",
                        fix=f"name the tasks file .json (e.g. --out {out.with_suffix('.json')}); "
                            f"the config is written beside it as {out.name}")
    return [out, xml]


def export_annotations(run_dir: str | Path, fmt: str, out: str | Path,
                       include: Sequence[str] = SOURCES) -> list[Path]:
    """Write the run's sentences for ``fmt`` (``label-studio``: the tasks JSON at ``out``
    and its labeling config beside it, ``<stem>.xml``; ``argilla``: one JSON file with
    settings and records). Returns the paths written.

    Raises:
        DataError: an unknown format or source, or nothing to export.
    """
    from formalize._run_outputs import RunOutputs

    _check_format(fmt)
    paths = check_export_paths(fmt, out)
    items = annotation_items(run_dir, include)
    labels = (list(items[0]["task_probs"]) if items
              else RunOutputs(Path(run_dir), require_manifest=False).labels)
    return write_tool_files(fmt, paths, items, labels)


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        from synth.core import did_you_mean

        raise DataError(f"unknown annotation format {fmt!r}", where="--format",
                        fix=did_you_mean(fmt, list(FORMATS)))


def write_tool_files(fmt: str, paths: Sequence[Path], items: Sequence[Mapping[str, Any]],
                     labels: Sequence[str], *, audit: bool = False) -> list[Path]:
    """Write ``items`` for the tool (see :func:`export_annotations`); returns ``paths``."""
    from synth.core import write_text_atomic

    if fmt == "label-studio":
        write_text_atomic(paths[0], json.dumps(to_label_studio(items, audit=audit), indent=1,
                                               ensure_ascii=False) + "\n")
        write_text_atomic(paths[1], label_studio_config(labels, audit=audit))
    else:
        write_text_atomic(paths[0], json.dumps(
            {"settings": argilla_settings(labels, audit=audit),
             "records": to_argilla(items, audit=audit)}, indent=1, ensure_ascii=False) + "\n")
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
