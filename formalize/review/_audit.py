"""The blind audit's tool side: draw the sample, hand it out without scores, take the labels
back (see :mod:`discovery._audit` for the figures).

``export_audit`` draws a seeded sample of the hard subset and a random control from the rest
of the corpus, keeps it in ``RUN/review/audit-sample.json`` (with each sentence's group and
the task model's label, which the annotator never sees) and writes the texts alone, shuffled,
for a registered annotation tool (Label Studio, Argilla, ...). :class:`AuditLog` is the
notebook's way (and the importers'): one label per sentence, a task label or ``no label
applies``, in ``RUN/review/audit.jsonl``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from discovery import EVAL, TASK_SCORES
from synth import CORPUS
from synth.core import DataError

#: Default sample sizes: the top 60 of the hard subset and 40 random others.
AUDIT_HARD, AUDIT_CONTROL = 60, 40


def _run_labels(run: Path) -> list[str]:
    from formalize._run_outputs import RunOutputs

    return RunOutputs(run, require_manifest=False).labels


def _task_labels(run: Path) -> dict[str, str]:
    """Sentence id -> the task model's top label (from the ranked model's scores)."""
    from formalize.review._annotate import _task_model
    from synth.core import iter_jsonl

    path = TASK_SCORES.path(run, name=_task_model(run))
    if not path.is_file():  # no hard.jsonl.meta.json naming it: the run's one task model
        found = TASK_SCORES.glob(run)
        if len(found) != 1:
            return {}
        path = found[0]
    return {str(r["id"]): max(r["probs"], key=lambda k: r["probs"][k]) for r in iter_jsonl(path)
            if isinstance(r.get("probs"), dict) and r["probs"]}


def draw_sample(run_dir: str | Path, *, n_hard: int = AUDIT_HARD,
                n_control: int = AUDIT_CONTROL, seed: int | None = None) -> dict[str, Any]:
    """Draw the run's audit sample (see :func:`discovery.draw_audit_sample`): ``{"seed",
    "n_hard", "n_control", "task_model", "labels", "items"}``.

    Raises:
        DataError: the run has no hard subset, or no corpus for the control.
    """
    from discovery import draw_audit_sample
    from formalize._run_outputs import RunOutputs
    from formalize.review._annotate import _task_model

    run = Path(run_dir)
    outputs = RunOutputs(run, require_manifest=False)
    hard = outputs.hard()
    if not hard:
        raise DataError("the run has no hard subset to audit (no hard.jsonl)", where=str(run),
                        fix="run synthcheck rank (or discover) on it first")
    seed = int(outputs.config.get("seed", 0)) if seed is None else seed
    rest: list[dict[str, Any]] = []
    if n_control:
        if not CORPUS.path(run).is_dir():
            raise DataError("the random control is drawn from the corpus, and the run has no "
                            "corpus/", where=str(run),
                            fix="restore the run's corpus/, or audit the hard subset alone "
                                "(--audit-control 0)")
        hard_ids = {str(r["id"]) for r in hard}
        task = _task_labels(run)
        rest = [{"id": sid, "text": text, "task_label": task.get(sid)}
                for sid, text in outputs.corpus_texts().items() if sid not in hard_ids]
    items = draw_audit_sample(hard, rest, n_hard=n_hard, n_control=n_control, seed=seed)
    return {"seed": seed, "n_hard": n_hard, "n_control": n_control,
            "task_model": _task_model(run), "labels": _run_labels(run), "items": items}


def export_audit(run_dir: str | Path, fmt: str, out: str | Path, *, n_hard: int = AUDIT_HARD,
                 n_control: int = AUDIT_CONTROL, seed: int | None = None) -> list[Path]:
    """Draw the sample, keep it in ``RUN/review/audit-sample.json`` and write the texts alone
    (no scores, no model labels, shuffled) for ``fmt``. Returns the tool files written.

    Raises:
        DataError: see :func:`draw_sample`; a bad format or ``out``.
    """
    from discovery import AUDIT_SAMPLE
    from formalize.review._annotate import check_export_paths, write_tool_files
    from synth.core import provenance, write_json_atomic

    paths = check_export_paths(fmt, out)
    run = Path(run_dir)
    sample = draw_sample(run, n_hard=n_hard, n_control=n_control, seed=seed)
    from formalize.review._log import ReviewLog

    write_json_atomic(run / AUDIT_SAMPLE, {**sample, **provenance(ReviewLog(run)._config_hash())})
    return write_tool_files(fmt, paths, sample["items"], sample["labels"], audit=True)


class AuditLog:
    """The audit's labels, ``RUN/review/audit.jsonl`` (append-only; the latest label per
    sentence wins). The notebook's way to audit::

        audit = AuditLog("runs/demo")
        for item in audit.items():      # shuffled texts, no scores
            ...                          # read item["text"], decide
            audit.label(item["id"], "positive")   # or "no label applies"

    Raises:
        DataError: (on construction) the run has no audit sample.
    """

    def __init__(self, run_dir: str | Path, *, annotator: str | None = None) -> None:
        from discovery import AUDIT_LABELS, NO_LABEL, read_audit_sample

        self.run_dir = Path(run_dir)
        self.path = self.run_dir / AUDIT_LABELS
        self.annotator = annotator
        sample = read_audit_sample(self.run_dir)
        if sample is None:
            from formalize.review._tools import ANNOTATION_TOOLS

            raise DataError("the run has no audit sample", where=str(self.run_dir),
                            fix="draw one first: synthcheck annotate export --audit --run "
                                f"{self.run_dir} --format {'|'.join(ANNOTATION_TOOLS)} "
                                "--out FILE, or formalize.review.export_audit")
        self.sample = sample
        self.choices = [*map(str, sample.get("labels") or []), NO_LABEL]
        self._ids = {str(it.get("id")) for it in sample["items"]}

    def items(self) -> list[dict[str, str]]:
        """The sentences to label, in the sample's shuffled order: ``{"id", "text"}`` only."""
        return [{"id": str(it["id"]), "text": str(it["text"])} for it in self.sample["items"]]

    def keys(self) -> set[str]:
        """The tool keys already logged (what an import has brought)."""
        from synth.core import iter_jsonl

        if not self.path.is_file():
            return set()
        return {str(r["key"]) for r in iter_jsonl(self.path) if r.get("key")}

    def label(self, id: str, label: str, *, annotator: str | None = None,
              key: str | None = None, time: str | None = None, where: str | None = None
              ) -> dict[str, Any]:
        """Record one sentence's label (appended and fsynced); return the record.

        Raises:
            DataError: the id is not in the sample, or the label is neither a task label
                nor ``no label applies``.
        """
        from discovery import AUDIT_LABELS
        from synth.core import append_jsonl, provenance

        sid = str(id)
        if sid not in self._ids:
            raise DataError(f"sentence {sid!r} is not in the audit sample",
                            where=where or str(self.run_dir / AUDIT_LABELS),
                            fix="label the sentences of this run's audit export (a new "
                                "export --audit draws a new sample)")
        if label not in self.choices:
            raise DataError(f"label {label!r} is not an audit answer",
                            where=where or str(self.run_dir / AUDIT_LABELS),
                            fix=f"answer one of: {', '.join(map(repr, self.choices))}")
        group = next(it.get("group") for it in self.sample["items"] if str(it["id"]) == sid)
        from formalize.review._log import ReviewLog

        record = {"id": sid, "label": label, "group": group,
                  "annotator": annotator or self.annotator, "key": key,
                  "time": time or datetime.now(UTC).isoformat(timespec="seconds"),
                  **provenance(ReviewLog(self.run_dir)._config_hash())}
        append_jsonl(self.path, record)
        return record


def import_audit(run_dir: str | Path, fmt: str, path: str | Path, *,
                 annotator: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """Append the audit labels in a tool's export to ``RUN/review/audit.jsonl``; return
    (the records appended, the duplicates skipped). Every answer is checked first.

    Raises:
        DataError: see :func:`formalize.review._annotate_import.read_answers`; an answer
            without a label, with a tag instead, or on a sentence outside the sample.
    """
    from formalize.review._annotate_import import read_answers
    from formalize.review._tools import annotation_tool

    unit = annotation_tool(fmt).record_unit  # an unknown tool: named before the sample is read
    log = AuditLog(run_dir, annotator=annotator)
    answers = read_answers(fmt, path)
    pending = []
    for ans in answers:
        where = f"{path}, {unit} {ans.record}"
        label = ans.choices.get("label")
        if label is None:
            raise DataError(f"sentence {ans.sid!r} has no label answer", where=where,
                            fix="an audit answer is one label per sentence: "
                                + ", ".join(map(repr, log.choices)))
        if ans.sid not in log._ids:
            raise DataError(f"sentence {ans.sid!r} is not in the audit sample", where=where,
                            fix="import the export of this run's audit (an export --audit "
                                "of another run or an earlier sample does not match)")
        if label not in log.choices:
            raise DataError(f"label {label!r} is not an audit answer", where=where,
                            fix=f"answer one of: {', '.join(map(repr, log.choices))}")
        pending.append(ans)
    seen = log.keys()
    added, dups = [], 0
    for ans in pending:
        if ans.key is not None and ans.key in seen:
            dups += 1
            continue
        if ans.key is not None:
            seen.add(ans.key)
        added.append(log.label(ans.sid, ans.choices["label"], annotator=annotator or ans.who,
                               key=ans.key, time=ans.time))
    return added, dups


def update_eval_audit(run_dir: str | Path) -> Path | None:
    """Write the audit's figures into ``RUN/eval.json`` as ``corpus_audit`` (beside the
    held-out ``hard_subset_precision``), when the run has both; returns the path written."""
    import json

    from discovery import audited_precision
    from synth.core import write_json_atomic

    path = EVAL.path(run_dir)
    info = audited_precision(run_dir)
    if info is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError):
        return None  # the report says what is wrong with it; the audit stays in audit.jsonl
    if not isinstance(data, dict):
        return None
    data["corpus_audit"] = info
    write_json_atomic(path, data)
    return path

