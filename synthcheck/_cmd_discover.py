"""`synthcheck discover`: every stage in one run directory, then a short summary."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from discovery import HARD, NGRAMS
from synthcheck._cli_common import (
    add_allow_outside_files,
    add_config_args,
    load_args_config,
    warn_if_shots_off_domain,
)
from synthcheck._config import RunConfig
from synthcheck._executors import EXECUTOR_FLAG, add_executor_arg


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "discover",
        help="generate -> score -> rank -> mine -> focus -> evaluate -> verify -> report",
        description="Run the whole pipeline into --run DIR. Stages whose outputs are complete "
                    "and current (by config hash) are skipped, so a rerun after a crash or a "
                    "suite edit redoes only what changed. Exit status 1 when a suite test's "
                    "fail rate is above its gate (the test's max_fail_rate in the suite, else "
                    "--max-fail-rate), the same rule as 'synthcheck verify'.")
    add_config_args(p)
    p.add_argument("--n", type=int, help="prompts to generate (default: generator.n)")
    from synthcheck._cli_common import fraction

    p.add_argument("--max-fail-rate", type=fraction, default=None, metavar="R",
                   help="exit 1 when a model's fail rate on a suite test is above R (0-1); a "
                        "test's own max_fail_rate in the suite wins (as for verify)")
    add_allow_outside_files(p)
    add_executor_arg(p)
    p.add_argument("--lock-timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="give up (exit 2, naming the holder) when another process has held a "
                        "stage of this run directory for this long (default: wait; a line "
                        "says who holds it every $SYNTHCHECK_HEARTBEAT seconds)")
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    """argparse type of --lock-timeout: a number of seconds >= 0."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from synthcheck._pipeline import discover

    cfg = load_args_config(args, EXECUTOR_FLAG)
    warn_if_shots_off_domain(cfg)
    result = discover(cfg, args.run, n=args.n, progress=not args.quiet,
                      allow_outside_files=args.allow_outside_files,
                      lock_timeout=args.lock_timeout)
    print()
    print(format_summary(cfg, result.run_dir, result.info))
    return _gate(cfg, result.info.get("verify"), args.max_fail_rate,
                 allow_outside_files=args.allow_outside_files)


def _gate(cfg: RunConfig, verify: Any, max_fail_rate: float | None, *,
          allow_outside_files: bool = False) -> int:
    """The suite's gates on the verify stage's result, by `verify`'s rule: print one line
    per (test, model) over its gate and return 1, else 0 (also without a suite)."""
    import sys

    if verify is None or not cfg.suite:
        return 0
    from formalize import VerifyResult, load_suite
    from synthcheck._gates import apply_gates

    if not hasattr(verify, "format_table"):  # skipped as current: its summary.json
        verify = VerifyResult.from_summary_json(verify)
    suite = load_suite(cfg.suite, allow_outside_files=allow_outside_files)
    failed = apply_gates(suite, verify, max_fail_rate)
    for r in failed:
        print(f"gate exceeded: {r.test} [{r.model}] fail rate {r.fail_rate:.3f} > {r.gate:g}",
              file=sys.stderr)
    if failed:
        print(f"{len(failed)} gate(s) exceeded: exit status 1 (as 'synthcheck verify')",
              file=sys.stderr)
    return 1 if failed else 0


def _probs(p: dict[str, float]) -> str:
    """``neg=0.12 pos=0.88``: labels cut to 3 characters unless that makes two alike."""
    short = {k: k[:3] for k in p}
    if len(set(short.values())) < len(short):
        short = {k: k for k in p}
    return " ".join(f"{short[k]}={v:.2f}" for k, v in p.items())


def _abstained(run_dir: Path) -> tuple[str, str | None]:
    """What the rank stage's manifest entry records about the judging rule: ``(line, warning
    or None)``; the line says how many sentences abstained, by reason, and the run's one
    base rate over the judged ones (empty when the rank stage has not run)."""
    from discovery import abstain_warning, format_abstained
    from synth.core import RunDir

    entry = RunDir(run_dir).stage_status("rank") or {}
    info = entry.get("abstained")
    if not isinstance(info, dict):
        return "", None
    line = (f"judged: {entry.get('judged', '?')} sentences, "
            f"{format_abstained(info)}; rule: {info.get('rule', '?')}; "
            f"{entry.get('failures', '?')} fail, base rate "
            f"{float(entry.get('base_rate', 0.0)):.2f} (every stage's)")
    return line, abstain_warning(info)


def format_summary(cfg: RunConfig, run_dir: Path, info: dict[str, Any], *, hardest: int = 10,
                   ngrams: int = 15) -> str:
    """The text `discover` prints: accuracy, the hard subset's precision on held-out data
    (and its warnings), corpus size, hardest sentences, top n-grams, the confirmed failure
    patterns of the focus rounds, the per-template table and where the report is."""
    import sys

    from discovery import (
        UNTRUSTED_FIX,
        format_reliability,
        format_trust,
        reference_distrust,
        trust_decision,
    )
    from synth.core import iter_jsonl
    from synthcheck._summary import focus_lines, head, run_audit

    lines = [f"== synthcheck discover: {cfg.name} ({run_dir}) =="]
    evaluation = info.get("evaluation") or {}
    audit = run_audit(run_dir)
    judged_line, abstain_warn = _abstained(run_dir)
    # Warnings come first: they say how far to read everything below.
    if abstain_warn:
        lines.append(f"warning: {abstain_warn}")
        print(f"warning: {abstain_warn}", file=sys.stderr)
    lines += [f"warning: {w}" for w in evaluation.get("warnings") or []]
    distrust = reference_distrust(evaluation, audit)
    if distrust:
        lines.append("warning: no finding below is confirmed, since "
                     f"{'; and '.join(distrust)}. What to do: {UNTRUSTED_FIX}")
    lines += format_trust(trust_decision(evaluation, audit))
    reports = info.get("evaluate") or {}
    if reports:
        lines.append("held-out accuracy:")
        configured = [t.name for t in cfg.task_models]
        order = ([n for n in configured if n in reports]
                 + sorted(n for n in reports if n not in configured and n != "reference")
                 + (["reference"] if "reference" in reports else []))
        for name in order:
            rep = reports[name]
            lines.append(f"  {name:<12} acc {rep['accuracy']:.3f}  macro-F1 {rep['macro_f1']:.3f}"
                         f"  (n={rep['n']})")
    if "majority_baseline_accuracy" in evaluation:
        lines.append(f"  {'majority':<12} acc {evaluation['majority_baseline_accuracy']:.3f}"
                     f"  (always the most frequent label)")
    lines += [s for s in format_reliability(evaluation) if not s.startswith("warning: ")]
    if evaluation.get("hard_subset_precision"):  # the held-out figure, then what it misses
        from discovery import audited_precision, format_audit

        lines += format_audit(audited_precision(run_dir))
    corpus = info.get("corpus") or {}
    dropped = ", ".join(f"{k} {v}" for k, v in corpus.get("dropped", {}).items()) or "none"
    lines.append(f"corpus: {corpus.get('kept', 0)} sentences from {corpus.get('prompts', 0)} "
                 f"prompts (dropped: {dropped})")
    hard_path = HARD.path(run_dir)
    if hard_path.is_file():
        size = sum(1 for _ in iter_jsonl(hard_path))
        top = head(hard_path, hardest)
        if judged_line:
            lines.append(judged_line)
        lines.append(f"hard subset: {size} sentences (each a failure by that rule); the "
                     f"{len(top)} hardest:")
        for rec in top:
            text = rec["text"] if len(rec["text"]) <= 90 else rec["text"][:87] + "..."
            lines.append(f"  {rec['rank']:>3}. div {rec['divergence']:.2f}  task "
                         f"[{_probs(rec['task_probs'])}]  ref [{_probs(rec['reference_probs'])}]")
            lines.append(f"       {text}")
    ngram_path = NGRAMS.path(run_dir)
    if ngram_path.is_file():
        rows = head(ngram_path, ngrams)
        lines.append(f"top {len(rows)} n-grams (hard vs corpus, by {cfg.mining.statistic}):")
        lines.append(f"  {'n-gram':<28}{'hard':>6}{'corpus':>8}{'log-odds':>10}{'z':>7}"
                     f"{'q':>9}{'disagree':>10}")
        for r in rows:
            dis = r.get("disagreement_rate")
            lines.append(f"  {r['ngram'][:27]:<28}{r['hard_count']:>6}{r['corpus_count']:>8}"
                         f"{r['log_odds']:>10.2f}{r['z']:>7.2f}{r['q_value']:>9.3g}"
                         f"{'' if dis is None else f'{dis:.2f}':>10}")

    lines += focus_lines(run_dir, info.get("focus"), distrust=distrust)
    from synthcheck._summary import findings_lines

    lines += findings_lines(run_dir, distrust=distrust)
    verify = info.get("verify")
    if verify is not None:
        lines.append("per-template results:")
        lines.append(verify.format_table())
    report = info.get("report")
    if report:
        lines.append(f"report: {report}")
    return "\n".join(lines)
