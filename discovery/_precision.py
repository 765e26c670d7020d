"""How far to trust the hard subset: its precision measured on labeled held-out data.

The hard subset is where the task model and the reference disagree most. Whether those are
the *task model's* errors depends on the reference: a reference weaker than the task model
fills the hard subset with its own mistakes. Here the configured ranking rule (metric and
cut-off) is applied to labeled held-out examples that both models scored, and its precision
is the share of selected examples on which the task model is actually wrong, with a 95%
Wilson interval and the number of examples it rests on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._judge import JudgeRule
from discovery._ranking import METRICS, DivergenceRanker
from synth.core import DataError

if TYPE_CHECKING:
    from discovery._config import RankingConfig
    from discovery._evaluate import HeldOutScores

WEAK_UPPER_BOUND = 0.5  # warn when even the precision's upper bound is below this


def _wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def held_out_size(n_held: int, *, top_k: int | None, top_fraction: float | None,
                  corpus_size: int | None) -> int:
    """How many held-out examples the cut-off keeps: ``top_fraction`` applies as is;
    ``top_k`` is scaled by ``n_held / corpus_size`` (the same share of the set), at least 1
    and at most ``n_held`` (without ``corpus_size``, ``top_k`` is only capped)."""
    if top_k is not None:
        k = top_k if not corpus_size else math.ceil(top_k * n_held / corpus_size)
        return max(1, min(n_held, k))
    frac = top_fraction if top_fraction is not None else 0.1
    return max(1, min(n_held, math.ceil(frac * n_held)))


def hard_subset_precision(
    task: np.ndarray, reference: np.ndarray, golds: Sequence[str], labels: Sequence[str], *,
    metric: str = "abs_top", top_k: int | None = None, top_fraction: float | None = 0.1,
    corpus_size: int | None = None, rule: JudgeRule | None = None,
    abstain: np.ndarray | None = None,
) -> dict[str, Any]:
    """Precision of the hard-subset rule on labeled held-out examples.

    Args:
        task, reference: n x labels probabilities (the reference calibrated) of the
            held-out texts, columns in ``labels`` order.
        golds: the gold label name of each held-out text.
        labels: the task's label names.
        metric, top_k, top_fraction: the ranking rule (``ranking.*``); ``top_k`` is scaled
            to the held-out size (see :func:`held_out_size`).
        corpus_size: the size of the corpus the rule runs on (scales ``top_k``).
        rule: the run's judging rule (:func:`discovery.judge`): held-out examples the
            reference abstains on are kept out, as in the corpus.
        abstain: the reference's abstain answer per held-out example (None: none).

    Returns:
        ``{"estimate", "low", "high", "n", "count", "abstained"}``: the share of selected
        examples the task model gets wrong (``None`` when nothing is selected), its 95%
        Wilson interval, the number of selected examples, how many of them are wrong, and
        how many held-out examples abstained.

    Raises:
        DataError: shapes differ, or a gold label is not one of ``labels``.
    """
    task = np.asarray(task, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    labels = list(labels)
    if task.shape != reference.shape or task.ndim != 2 or len(golds) != len(task) \
            or task.shape[1] != len(labels):
        raise DataError(f"held-out scores must be n x {len(labels)} arrays with one gold label "
                        f"per row, got {task.shape}, {reference.shape} and {len(golds)} golds",
                        where="evaluation", fix="score the held-out set with both models")
    unknown = sorted({g for g in golds if g not in labels})
    if unknown:
        raise DataError(f"gold labels {unknown} are not task labels {labels}",
                        where="evaluation.data", fix="use the task's label names")
    if len(task) == 0:
        return {"estimate": None, "low": 0.0, "high": 1.0, "n": 0, "count": 0, "abstained": 0}
    size = held_out_size(len(task), top_k=top_k, top_fraction=top_fraction,
                         corpus_size=corpus_size)
    ranker = DivergenceRanker(metric, top_k=size).fit(task, reference, abstain=abstain,
                                                      rule=rule)
    picked = ranker.hard_indices_
    gold_idx = np.array([labels.index(g) for g in golds])
    wrong = ranker.task_top_[picked] != gold_idx[picked]
    n, k = len(picked), int(wrong.sum())
    low, high = _wilson(k, n)
    return {"estimate": (k / n) if n else None, "low": low, "high": high, "n": n, "count": k,
            "abstained": int(ranker.judgement_.abstained.sum())}


def task_error_rate(task: np.ndarray, golds: Sequence[str], labels: Sequence[str]
                    ) -> dict[str, Any]:
    """The task model's own error rate on the held-out examples (what a random sentence's
    chance of being an error is): ``{"estimate", "low", "high", "n", "count"}``."""
    labels = list(labels)
    n = len(golds)
    if n == 0:
        return {"estimate": None, "low": 0.0, "high": 1.0, "n": 0, "count": 0}
    gold_idx = np.array([labels.index(g) for g in golds])
    k = int((np.asarray(task).argmax(axis=1) != gold_idx).sum())
    low, high = _wilson(k, n)
    return {"estimate": k / n, "low": low, "high": high, "n": n, "count": k}


def precision_by_metric(task: np.ndarray, reference: np.ndarray, golds: Sequence[str],
                        labels: Sequence[str], **rule: Any) -> dict[str, dict[str, Any]]:
    """:func:`hard_subset_precision` for every ranking metric (the rest of the rule fixed),
    so a user sees which metric finds the task model's real errors best on their data."""
    rule = {k: v for k, v in rule.items() if k != "metric"}
    return {m: hard_subset_precision(task, reference, golds, labels, metric=m, **rule)
            for m in METRICS}


def accuracy(probs: np.ndarray, golds: Sequence[str], labels: Sequence[str]) -> float:
    """Share of rows whose top label is the gold one."""
    labels = list(labels)
    if len(golds) == 0:
        return float("nan")
    top = np.asarray(probs).argmax(axis=1)
    return float(np.mean([labels[t] == g for t, g in zip(top, golds, strict=True)]))


def majority_accuracy(golds: Sequence[str]) -> float:
    """Accuracy of always answering the most frequent gold label."""
    if len(golds) == 0:
        return float("nan")
    _, counts = np.unique(np.asarray(golds), return_counts=True)
    return float(counts.max() / len(golds))


def reliability_warnings(task_accuracy: float, reference_accuracy: float,
                         majority: float, precision: dict[str, Any], *,
                         task_name: str = "task model",
                         by_metric: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """What a user must be told before trusting the hard subset (empty: nothing to say).

    Fires when the reference is less accurate than the majority-class baseline (it reads the
    task near chance), or when the hard subset's precision cannot reach 0.5 (its upper
    bound is below it); each warning says what to do (with ``by_metric``, the precision
    per metric: which metric did best on the same data). A reference less accurate than the
    task model is no warning by itself: whether the hard subset finds the task model's
    errors is the precision's to say (see :func:`discovery.trust_decision`).
    """
    out = []
    fixes = ("use a stronger reference (reference.model), more or better shots "
             "(reference.shots) or another calibration (reference.calibration)")
    if reference_accuracy < majority:
        out.append(f"the reference is less accurate than always answering the most frequent "
                   f"label ({reference_accuracy:.3f} < {majority:.3f}): it reads the task "
                   f"near chance; {fixes}")
    n = int(precision.get("n", 0))
    if n and precision["high"] < WEAK_UPPER_BOUND:
        best = max(((m, q) for m, q in (by_metric or {}).items() if q.get("n")),
                   key=lambda mq: mq[1]["estimate"], default=None)
        hint = (f" (here {best[0]}: {best[1]['estimate']:.2f} [{best[1]['low']:.2f}, "
                f"{best[1]['high']:.2f}], n={best[1]['n']})"
                if best is not None and best[1]["estimate"] > precision["estimate"] else "")
        out.append(f"the hard subset is mostly not the task model's errors: on held-out data "
                   f"at most {precision['high']:.3f} of it is (95% upper bound, n={n}); "
                   f"{fixes}, or rank with another ranking.metric{hint}")
    return out


def hard_subset_reliability(
    task: np.ndarray, reference: np.ndarray, golds: Sequence[str], labels: Sequence[str], *,
    metric: str = "abs_top", top_k: int | None = None, top_fraction: float | None = 0.1,
    corpus_size: int | None = None, task_name: str = "task model",
    rule: JudgeRule | None = None, abstain: np.ndarray | None = None,
) -> dict[str, Any]:
    """Everything ``eval.json`` records about the hard subset's trustworthiness.

    Returns:
        ``{"hard_subset_precision": {estimate, low, high, n, count, abstained},
        "precision_by_metric": {metric: {...}}, "task_error_rate": {estimate, low, high, n,
        count}, "accuracy": {"task", "reference", "majority"}, "warnings": [...]}``.
    """
    kw: dict[str, Any] = dict(top_k=top_k, top_fraction=top_fraction, corpus_size=corpus_size,
                              rule=rule, abstain=abstain)
    precision = hard_subset_precision(task, reference, golds, labels, metric=metric, **kw)
    by_metric = precision_by_metric(task, reference, golds, labels, **kw)
    acc = {"task": accuracy(task, golds, labels), "reference": accuracy(reference, golds, labels),
           "majority": majority_accuracy(golds)}
    return {
        "hard_subset_precision": precision,
        "precision_by_metric": by_metric,
        "task_error_rate": task_error_rate(task, golds, labels),
        "accuracy": acc,
        "warnings": reliability_warnings(acc["task"], acc["reference"], acc["majority"],
                                         precision, task_name=task_name, by_metric=by_metric),
    }


def held_out_reliability(held: HeldOutScores, ranking: RankingConfig, *, ranked: str,
                         corpus_size: int | None = None,
                         abstain_threshold: float | None = None) -> dict[str, Any]:
    """The ``eval.json`` fields on how far to trust the hard subset, from the held-out
    probabilities :func:`~discovery.evaluate_held_out` already computed (no model call).

    Args:
        held: the held-out gold labels and every model's probabilities (``reference`` among
            them; without it there is nothing to measure and the result is empty).
        ranking: the ranking section: its metric and cut-off are the rule measured.
        ranked: the ranked task model (``ranking.task_model``, default the first one).
        corpus_size: the corpus the rule runs on (scales ``ranking.top_k``).
        abstain_threshold: ``reference.abstain.threshold`` (None: no abstain answer).

    Returns:
        ``{}`` without the reference, else ``{"ranked_task_model", "hard_subset_precision":
        {estimate, low, high, n, metric}, "hard_subset_precision_by_metric": {metric:
        {estimate, low, high, n}}, "majority_baseline_accuracy", "warnings": [...],
        "hard_subset_rule": {metric, top_k, top_fraction, min_margin, abstain_threshold,
        judge, held_out, corpus_size}, "task_error_rate": {...}, "reliability": {task model:
        {the precision, by metric, task error rate, warnings}}}``;
        the top-level fields are the ranked task model's.
    """
    if "reference" not in held.probs or ranked not in held.probs:
        return {}
    judge_rule = JudgeRule(ranking.min_reference_margin, abstain_threshold)
    kw: dict[str, Any] = dict(metric=ranking.metric, top_k=ranking.top_k,
                              top_fraction=ranking.top_fraction, corpus_size=corpus_size)
    per: dict[str, dict[str, Any]] = {}
    for name, probs in held.probs.items():
        if name == "reference":
            continue
        info = hard_subset_reliability(probs, held.probs["reference"], held.golds, held.labels,
                                       task_name=f"the task model {name!r}", rule=judge_rule,
                                       abstain=held.abstain, **kw)
        per[name] = {
            "hard_subset_precision": {**info["hard_subset_precision"], "metric": ranking.metric},
            "hard_subset_precision_by_metric": info["precision_by_metric"],
            "task_error_rate": info["task_error_rate"],
            "warnings": info["warnings"],
        }
    return {"ranked_task_model": ranked, **per[ranked],
            "majority_baseline_accuracy": majority_accuracy(held.golds),
            "hard_subset_rule": {**kw, "min_margin": ranking.min_reference_margin,
                                 "abstain_threshold": abstain_threshold,
                                 "judge": judge_rule.describe(), "held_out": len(held.golds)},
            "reliability": per}


def _interval(p: dict[str, Any]) -> str:
    if not p.get("n"):
        return "n/a"
    return f"{p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}]"


def _metric_order(metric: str) -> int:
    """Position in :data:`METRICS` (``eval.json`` stores its keys sorted)."""
    return METRICS.index(metric) if metric in METRICS else len(METRICS)


def describe_rule(rule: dict[str, Any]) -> str:
    """``abs_top, top 10%``: the ranking rule the precision is measured for."""
    cut = (f"top {rule['top_k']}" if rule.get("top_k") is not None
           else f"top {100 * float(rule.get('top_fraction') or 0.1):g}%")
    return f"{rule['metric']}, {cut}"


def format_reliability(info: dict[str, Any]) -> list[str]:
    """Plain-text lines for ``discover``'s summary and ``synthcheck evaluate``: the precision
    with its interval and n, the per-metric table, and each warning prefixed ``warning:``
    (``info``: :func:`held_out_reliability`'s fields, e.g. a read ``eval.json``; no lines
    when it has none)."""
    p = info.get("hard_subset_precision")
    if not isinstance(p, dict):
        return []
    rule = info.get("hard_subset_rule") or {"metric": p.get("metric", "?")}
    held = rule.get("held_out")
    lines = [f"hard-subset precision ({describe_rule(rule)}): {_interval(p)} on {p['n']} "
             f"held-out examples" + (f" (of {held})" if held is not None else "")]
    lines.append("  (the share of them the task model gets wrong, 95% Wilson interval)")
    err = info.get("task_error_rate")
    if isinstance(err, dict) and err.get("n"):
        lines.append(f"task model's own error rate: {_interval(err)} on {err['n']} held-out "
                     f"examples (what a random sentence would give)")
    if p.get("abstained"):
        lines.append(f"  {p['abstained']} held-out examples abstained (the run's rule)")
    by = info.get("hard_subset_precision_by_metric") or {}
    if by:
        lines.append("  precision by ranking metric:")
    for metric, q in sorted(by.items(), key=lambda kv: _metric_order(kv[0])):
        mark = "  <- ranking.metric" if metric == p.get("metric") else ""
        lines.append(f"    {metric:<8} {_interval(q):<19} n={q['n']}{mark}")
    lines += [f"warning: {w}" for w in info.get("warnings") or []]
    return lines


UNTRUSTED_FIX = ("make the hard subset point at the task model's errors before reading the "
                 "findings (a stronger reference.model, more or in-domain reference.shots, "
                 "an abstain answer in reference.abstain, a higher "
                 "ranking.min_reference_margin), check it with `synthcheck evaluate`, then "
                 "rerun `discover`")
"""What the summary tells a user to do when the findings cannot be trusted."""


def reference_distrust(info: Mapping[str, Any] | None,
                       audit: Mapping[str, Any] | None = None) -> list[str]:
    """Why this run's findings cannot be confirmed (empty: they can).

    ``info`` is ``eval.json``'s content (or the pipeline's copy of it), ``audit`` a blind
    audit's figures (None: none). The decision is :func:`discovery.trust_decision`'s: the
    hard subset's precision must be significantly above the task model's own error rate on
    held-out data (and on the audited corpus sample when there is one), not the reference's
    accuracy alone. Unmeasured (no held-out reference scores, no audit): nothing to say.
    """
    from discovery._trust import UNTRUSTED, trust_decision

    decision = trust_decision(info, audit)
    if decision["decision"] != UNTRUSTED:
        return []
    return [m["reason"] for m in decision["measures"] if not m["passed"]]
