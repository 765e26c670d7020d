"""Text blocks the CLI prints about a run's outputs (one writer per block)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.core import RunDir


def head(path: Path, n: int) -> list[dict[str, Any]]:
    """The first ``n`` records of a JSON Lines output (the top of a ranked file: the hardest
    sentences, the strongest n-grams); none when the file is missing."""
    from itertools import islice

    from synth.core import iter_jsonl

    return list(islice(iter_jsonl(path), max(n, 0))) if path.is_file() else []


def focus_lines(run_dir: Path, info: Mapping[str, Any] | None, *, top: int = 10,
                distrust: Sequence[str] = ()) -> list[str]:
    """The summary's focus block: what the stage did and how long it took (as recorded in the
    manifest when it ran), then one line per confirmed pattern (failure rate with its 95%
    interval vs the base rate, q-value), else the best candidates.

    With ``distrust`` (why the reference cannot be trusted, see
    :func:`discovery.reference_distrust`) nothing is called confirmed: the candidates that
    pass the test are listed as unconfirmed, after the reasons."""
    from discovery import FOCUS
    from synth.core import iter_jsonl

    if info is not None and info.get("disabled"):
        return ["focus rounds: off (focus.enabled: false)"]
    path = FOCUS.path(run_dir)
    entry = RunDir(run_dir).stage_status("focus") or {}
    if not path.is_file() or entry.get("status") != "complete":
        return []
    rows = list(iter_jsonl(path))
    confirmed = [r for r in rows if r.get("confirmed")]
    sentences = sum(int(r.get("n", 0)) for r in rows)
    base = rows[0].get("base_rate") if rows else None
    took = f" in {entry['seconds']:.1f}s" if isinstance(entry.get("seconds"), float | int) \
        else ""
    head = (f"focus rounds: {len(rows)} candidates, {sentences} new sentences from "
            f"{entry.get('prompts', '?')} prompts{took}; ")
    if distrust:
        head += (f"0 confirmed: {len(confirmed)} pattern(s) pass the test but stay "
                 f"unconfirmed because {'; and '.join(distrust)}")
    else:
        head += f"{len(confirmed)} confirmed failure pattern(s)"
    if base is not None:
        head += f" (failure: {_focus_rule(run_dir)}; base rate {base:.2f})"
    lines = [head + ":"]
    shown = confirmed[:top] if confirmed else rows[:min(3, top)]
    if not confirmed and rows:
        lines.append("  none confirmed; the strongest candidates:")
    mark = "  (unconfirmed)" if distrust else ""
    for r in shown:
        rate = r.get("rate")
        rate_s = "n/a" if rate is None else (f"{rate:.2f} [{r['rate_lo']:.2f}, "
                                             f"{r['rate_hi']:.2f}]")
        paired = (f"; deleting it flips the task model alone on {r['flipped']}/{r['n']}"
                  + (f" vs {r['invariance_base']:.2f} for other words"
                     if r.get("invariance_base") is not None else "")
                  + f" (shift {r['task_shift']:+.2f} vs the reference's "
                  f"{r['reference_shift']:+.2f})" if r.get("flipped") is not None else "")
        by = f" by {r['confirmed_by']}" if r.get("confirmed_by") == "invariance" else ""
        lines.append(f"  {str(r['ngram'])[:27]:<28} [{r.get('source', 'ngram')}] fails "
                     f"{r['failures']}/{r['n']} = {rate_s} vs {r['base_rate']:.2f}{paired}  "
                     f"q={r['q_value']:.2g}{by}{mark}")
    return lines


def _focus_rule(run_dir: Path) -> str:
    """The failure rule ``focus.jsonl.meta.json`` records, in words."""
    import json

    from discovery import FOCUS

    try:
        meta = json.loads(FOCUS.meta(run_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    return str(meta.get("rule") or "top labels differ")


def findings_lines(run_dir: Path, *, top: int = 10, distrust: Sequence[str] = ()
                   ) -> list[str]:
    """The summary's findings block: what each finding source with summary words found and
    took, then the top ``top`` findings of ``findings.jsonl`` (one line each). With
    ``distrust`` (as :func:`focus_lines`), nothing is called confirmed: a focus row that
    passes its test is marked ``passes the test (unconfirmed)``."""
    from discovery import FINDINGS, finding_sources
    from synth.core import iter_jsonl

    run = RunDir(run_dir)
    parts = []
    for stage, source in finding_sources().items():
        what = source.summary
        if what is None:
            continue
        e = run.stage_status(stage) or {}
        if e.get("status") == "complete":
            parts.append(f"{e.get('significant', 0)} significant {what} "
                         f"({float(e.get('seconds', 0.0)):.1f}s)")
    path = FINDINGS.path(run_dir)
    entry = run.stage_status("findings") or {}
    if not path.is_file() or entry.get("status") != "complete":
        return []
    rows = list(iter_jsonl(path))
    passed = entry.get("confirmed", 0)
    said = (f"0 confirmed: {passed} pass the test on new sentences but stay unconfirmed, the "
            f"reference not being trusted" if distrust and passed
            else f"{0 if distrust else passed} confirmed on new sentences")
    head = (f"findings: {len(rows)} ({said}); "
            f"corpus failure: {entry.get('rule', '?')}, base rate "
            f"{float(entry.get('base_rate', 0.0)):.2f}")
    lines = [head + (f"; {', '.join(parts)}" if parts else "") + ":"]
    lab = labelled_line(run)
    if lab:
        lines.append("  " + lab)
    mark = "  passes the test (unconfirmed)" if distrust else "  confirmed"
    for r in rows[:top]:
        inv = r.get("confirmed_by") == "invariance"
        rep = r.get("confirmed_by") == "replication"
        flips = ("" if r["kind"] != "focus" or r.get("flipped") is None or inv
                 else f", flips alone {r['flipped']}/{r['n']}")
        lines.append(f"  {r['id']} {r.get('data', 'corpus'):<8} {r['kind']:<8} "
                     f"{str(r['name'])[:34]:<35} "
                     f"{r['failures']}/{r['n']} = {r['rate']:.2f} [{r['low']:.2f}, "
                     f"{r['high']:.2f}] vs {r['base_rate']:.2f}{flips}"
                     f"{mark if r['confirmed'] else ''}"
                     f"{' by invariance (label changes when deleted)' if inv else ''}"
                     f"{' by replication (fails again on new sentences)' if rep else ''}"
                     f"{'  supported' if r.get('status') == 'supported' else ''}{also_text(r)}")
    return lines


def also_text(row: dict[str, Any]) -> str:
    """A group's failures per word (its ``term_counts``: new sentences holding that word
    alone), where else a finding's slice was found (its ``also`` rows) and the metadata
    slice it lies inside (``explained_by``) or the property its rows share
    (``shared_property``), and the higher finding it is a worse sub-slice of (``refines``),
    or ""."""
    also = row.get("also") or []
    inv = row.get("confirmed_by") == "invariance"
    k_key, n_key = ("flipped", "invariance_n") if inv else ("failures", "n")
    per = ", ".join(f"{t} {c.get(k_key, 0)}/{c.get(n_key, 0)}"
                    for t, c in (row.get("term_counts") or {}).items())
    words = (f"; per word ({'invariance failures' if inv else 'failures'} in new sentences "
             f"holding it alone): {per}") if per else ""
    within = f"; inside the metadata slice '{row['explained_by']}'" \
        if row.get("explained_by") else (
            f"; one finding by the property every term shares: '{row['shared_property']}'"
            if row.get("shared_property") else "")
    if row.get("refines"):
        inside = str(row.get("refines_row") or row["refines"])
        within += f"; a worse sub-slice of '{inside}'" + (
            f" (finding '{row['refines']}')" if inside != row["refines"] else "")
    def named(a: dict[str, Any]) -> str:
        other = str(a.get("name") or "")
        return f" '{other}'" if other and other.casefold() != str(row["name"]).casefold() \
            else ""

    return words + within + (("; also " + ", ".join(
        f"{a['data']} {a['kind']}{named(a)} {a['failures']}/{a['n']}" for a in also))
        if also else "")


def run_audit(run_dir: Path) -> dict[str, Any] | None:
    """The run's blind-audit figures (``discovery.audited_precision``, the annotate audit
    path), or None when the run has no audit."""
    from discovery import audited_precision

    return audited_precision(run_dir)


def labelled_line(run: RunDir) -> str:
    """What the labelled stage read and found, in one line ("" when it did not run): the
    rows, the evaluation sample kept apart, the task model's error rate by the gold labels,
    the significant findings."""
    e = run.stage_status("labelled") or {}
    if e.get("status") != "complete":
        return ""
    apart = (f" (its {int(e.get('pool', 0)):,} rows less the evaluation sample's "
             f"{int(e.get('evaluation_rows', 0)):,}, kept apart for the held-out figures)"
             if e.get("same_as_evaluation") else f" (of {int(e.get('pool', 0)):,})")
    return (f"labelled data: {int(e.get('rows', 0)):,} rows of {e.get('source', '?')}{apart}; "
            f"the task model is wrong on {float(e.get('base_rate', 0.0)):.2f} of them by the "
            f"gold labels; {int(e.get('significant', 0))} significant findings "
            f"({float(e.get('seconds', 0.0)):.1f}s); rows below marked 'labelled' come from it")
