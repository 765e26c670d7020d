"""A blind audit of the hard subset on the corpus it was ranked from.

The held-out precision (``eval.json``'s ``hard_subset_precision``) is measured on labelled
held-out sentences, every one of which carries one of the task's labels; it cannot see corpus
sentences that carry no signal at all, which a reference may still read confidently. The audit
measures the hard subset's precision on the run's own corpus instead:

1. :func:`draw_audit_sample` draws a seeded sample of the hard subset plus a random control
   from the rest of the corpus, shuffled together, and it is kept in
   ``RUN/review/audit-sample.json`` (with each sentence's group and the task model's label,
   which the annotator never sees).
2. An annotator gives every sentence one label, a task label or :data:`NO_LABEL`, without
   seeing scores or model labels (``synthcheck annotate export --audit``, Label Studio,
   Argilla or the notebook's :class:`formalize.AuditLog`); the labels land in
   ``RUN/review/audit.jsonl``.
3. :func:`audited_precision` reads both: the share of the audited hard sentences that are a
   real task-model error (the annotator gave a task label, and not the task model's), with a
   95% Wilson interval and n; and, on the control, the share that carries the task's signal.

:func:`audited_precision` is the API other code reads (the summary, ``eval.json``'s
``corpus_audit``, the report, trust decisions): ``None`` when the run has no audit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from synth.core import DataError

#: The answer for a sentence that carries none of the task's labels.
NO_LABEL = "no label applies"
#: The audit's sample, in the run directory.
AUDIT_SAMPLE = Path("review") / "audit-sample.json"
#: The audit's labels (append-only JSON Lines; the latest label per sentence wins).
AUDIT_LABELS = Path("review") / "audit.jsonl"
#: What the audit's figures are measured on (said wherever they are shown).
MEASURED_ON = "blind-labelled sentences of this run's corpus"


def draw_audit_sample(hard: Sequence[Mapping[str, Any]], rest: Sequence[Mapping[str, Any]],
                      *, n_hard: int, n_control: int, seed: int) -> list[dict[str, Any]]:
    """A shuffled audit sample: ``n_hard`` of the hard subset (the ``n_hard`` highest-ranked,
    as the summary shows them) and ``n_control`` drawn at random from ``rest`` (the corpus
    outside the hard subset). Each item is ``{"id", "text", "group", "task_label"}`` with
    group ``hard`` or ``control``; the order is a seeded shuffle, so the groups mix.

    Raises:
        DataError: ``n_hard`` or ``n_control`` below 0, or both 0.
    """
    from synth.core import derive_rng

    if n_hard < 0 or n_control < 0 or n_hard + n_control == 0:
        raise DataError(f"an audit needs a sample (got {n_hard} hard, {n_control} control)",
                        where="--audit-hard/--audit-control",
                        fix="ask for at least one sentence, e.g. --audit-hard 60 "
                            "--audit-control 40")

    def item(r: Mapping[str, Any], group: str) -> dict[str, Any]:
        return {"id": str(r["id"]), "text": str(r["text"]), "group": group,
                "task_label": r.get("task_label")}

    picked = [item(r, "hard") for r in list(hard)[:n_hard]]
    taken = {i["id"] for i in picked}
    pool = [r for r in rest if str(r["id"]) not in taken]
    rng = derive_rng(seed, "audit", "control")
    picked += [item(r, "control") for r in rng.sample(pool, min(n_control, len(pool)))]
    derive_rng(seed, "audit", "order").shuffle(picked)
    return picked


def read_audit_sample(run_dir: str | Path) -> dict[str, Any] | None:
    """The run's audit sample (``review/audit-sample.json``), or None without one.

    Raises:
        DataError: the file is not a JSON object with an ``items`` list.
    """
    path = Path(run_dir) / AUDIT_SAMPLE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"the audit sample is not valid JSON ({exc})", where=str(path),
                        fix="export the audit again (synthcheck annotate export --audit)"
                        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise DataError("the audit sample has no 'items' list", where=str(path),
                        fix="export the audit again (synthcheck annotate export --audit)")
    return data


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def decision_time(value: object) -> datetime:
    """A decision's ``time`` as an aware UTC datetime (ISO 8601, ``Z`` or an offset; a
    missing or unreadable time sorts first)."""
    if not isinstance(value, str):
        return _EPOCH
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return _EPOCH
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _when(rec: Mapping[str, Any]) -> datetime:
    return decision_time(rec.get("time"))


def audit_labels(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The current audit label per sentence id (the latest by time; ties by file order)."""
    path = Path(run_dir) / AUDIT_LABELS
    if not path.is_file():
        return {}
    from synth.core import iter_jsonl

    latest: dict[str, dict[str, Any]] = {}
    for rec in iter_jsonl(path):
        sid = str(rec.get("id"))
        if sid not in latest or _when(rec) >= _when(latest[sid]):
            latest[sid] = rec
    return latest


def _share(k: int, n: int) -> dict[str, Any]:
    from discovery._precision import _wilson

    low, high = _wilson(k, n)
    return {"count": k, "n": n, "estimate": (k / n) if n else None, "low": low, "high": high}


def audited_precision(run_dir: str | Path) -> dict[str, Any] | None:
    """The audit's figures, or None when the run has no audit labels.

    Returns:
        ``{"measured_on", "hard": {count, n, estimate, low, high, no_label, sample},
        "control": {count, n, estimate, low, high, sample} (count: sentences with the task's
        signal), "control_task_errors": {...}, "annotators": [...]}``. ``hard.estimate``
        is the share of the audited hard sentences that are a real task-model error (a task
        label other than the task model's); ``hard.no_label`` counts those given
        :data:`NO_LABEL`.
    """
    sample = read_audit_sample(run_dir)
    labels = audit_labels(run_dir)
    if sample is None or not labels:
        return None
    hard_err = hard_n = no_label = ctl_signal = ctl_n = ctl_err = ctl_known = 0
    groups = {"hard": 0, "control": 0}
    for it in sample["items"]:
        group = it.get("group")
        groups[group] = groups.get(group, 0) + 1
        rec = labels.get(str(it.get("id")))
        if rec is None:
            continue
        label = rec.get("label")
        known = it.get("task_label") is not None
        wrong = label != NO_LABEL and known and label != it.get("task_label")
        if group == "hard":
            hard_n += 1
            hard_err += wrong
            no_label += label == NO_LABEL
        elif group == "control":
            ctl_n += 1
            ctl_signal += label != NO_LABEL
            ctl_err += wrong
            ctl_known += known
    return {"measured_on": MEASURED_ON,
            "hard": {**_share(hard_err, hard_n), "no_label": no_label,
                     "sample": groups.get("hard", 0)},
            "control": {**_share(ctl_signal, ctl_n), "sample": groups.get("control", 0)},
            "control_task_errors": _share(ctl_err, ctl_known),
            "annotators": sorted({str(r.get("annotator")) for r in labels.values()
                                  if r.get("annotator")})}


def _interval(p: Mapping[str, Any]) -> str:
    if not p.get("n"):
        return "unknown (n=0)"
    return f"{p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}], n={p['n']}"


#: Said beside the held-out figure when the run has no audit.
NO_AUDIT_NOTE = ("the held-out figure is measured on labelled held-out sentences, each of "
                 "which carries a task label; it does not cover corpus sentences without "
                 "signal. Measure the hard subset on this corpus with a blind audit: "
                 "synthcheck annotate export --audit (docs/guide.md, 'A blind audit')")


def format_audit(info: Mapping[str, Any] | None) -> list[str]:
    """Plain-text lines for the summary: the audited precision beside what it was measured
    on, or (``info`` None) the note that the held-out figure does not cover sentences
    without signal."""
    if not info:
        return [f"note: {NO_AUDIT_NOTE}"]
    h, c = info["hard"], info["control"]
    lines = [f"hard-subset precision on this corpus (blind audit): {_interval(h)} "
             f"({h['count']} real task-model errors; {h['no_label']} with no label that "
             f"applies), measured on {info['measured_on']}"]
    if c.get("n"):
        err = info["control_task_errors"]
        lines.append(f"  random control: {_interval(c)} carry the task's signal"
                     + (f"; the task model is wrong on {_interval(err)}" if err.get("n")
                        else ""))
    if h["n"] < h.get("sample", h["n"]) or c["n"] < c.get("sample", c["n"]):
        lines.append(f"  (labelled so far: {h['n']} of {h.get('sample')} hard, {c['n']} of "
                     f"{c.get('sample')} control)")
    return lines
