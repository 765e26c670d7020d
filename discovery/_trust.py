"""Whether a run's findings may be called confirmed: trust by the measure that matters.

A finding is worth reading when the hard subset is where the task model's errors are: its
*precision* (the share of hard sentences the task model gets wrong) must be significantly
above the task model's own *error rate* (the chance that any sentence is an error). The
reference's accuracy alone does not say so: a reference less accurate than the task model
can still point at its errors (precision twice the error rate), and an accurate one can
fill the hard subset with sentences that carry no label.

:func:`trust_decision` tests it on held-out data (``eval.json``: the hard-subset rule applied
to labelled held-out examples, and the task model's error rate on all of them), and on the
run's own corpus when a blind audit exists (the audited hard sentences' precision against
the task model's error rate on the audited random control). Each measure gives both
figures with 95% Wilson intervals and a one-sided Fisher exact test; findings are trusted
when every measure available passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRUST_ALPHA = 0.05
"""Significance level of the precision-above-error-rate test."""

TRUSTED, UNTRUSTED, UNMEASURED = "trusted", "untrusted", "unmeasured"


def _interval(p: Mapping[str, Any]) -> str:
    if not p.get("n"):
        return "n/a (n=0)"
    return f"{float(p['estimate']):.2f} [{float(p['low']):.2f}, {float(p['high']):.2f}], " \
           f"n={int(p['n'])}"


def precision_above_error(hard_k: int, hard_n: int, rest_k: int, rest_n: int) -> float:
    """One-sided Fisher exact p-value that the hard subset's error share (``hard_k`` of
    ``hard_n``) is above the error share of the examples outside it (``rest_k`` of
    ``rest_n``): 1.0 when either side is empty."""
    from scipy.stats import fisher_exact

    if hard_n <= 0 or rest_n <= 0:
        return 1.0
    return float(fisher_exact([[hard_k, hard_n - hard_k], [rest_k, rest_n - rest_k]],
                              alternative="greater").pvalue)


def _measure(name: str, measured_on: str, precision: Mapping[str, Any],
             error: Mapping[str, Any], rest_k: int, rest_n: int,
             alpha: float) -> dict[str, Any]:
    k, n = int(precision.get("count", 0)), int(precision.get("n", 0))
    p = precision_above_error(k, n, rest_k, rest_n)
    est, err = precision.get("estimate"), error.get("estimate")
    passed = bool(n and est is not None and err is not None and float(est) > float(err)
                  and p < alpha)
    if not n:
        why = (f"{name}: no hard-subset example to measure (n=0): the rule selects nothing "
               f"on {measured_on}")
    else:
        verb = "is" if passed else "is not"
        why = (f"{name}: hard-subset precision {_interval(precision)} {verb} significantly "
               f"above the task model's own error rate {_interval(error)} "
               f"(one-sided Fisher p={p:.2g}, alpha {alpha:g}), on {measured_on}")
    return {"measure": name, "measured_on": measured_on, "precision": dict(precision),
            "error_rate": dict(error), "p_value": p, "passed": passed, "reason": why}


def trust_decision(evaluation: Mapping[str, Any] | None,
                   audit: Mapping[str, Any] | None = None, *,
                   alpha: float = TRUST_ALPHA) -> dict[str, Any]:
    """Decide whether findings may be called confirmed.

    Args:
        evaluation: ``eval.json``'s content (or the pipeline's copy): its
            ``hard_subset_precision`` (with ``count``) and ``task_error_rate`` (with
            ``count``), as :func:`~discovery.held_out_reliability` writes them.
        audit: a blind audit of the run's corpus (``discovery.audited_precision``'s result:
            ``{"hard": {count, n, estimate, low, high}, "control_task_errors": {...}}``), or
            None when the run has none.
        alpha: the test's significance level.

    Returns:
        ``{"decision": "trusted"|"untrusted"|"unmeasured", "reasons": [str], "next": str,
        "measures": [{measure, measured_on, precision, error_rate, p_value, passed,
        reason}]}``. ``trusted`` when every available measure passes (the hard subset's
        precision significantly above the task model's error rate); ``unmeasured`` when
        there is nothing to measure on (no reference evaluated on held-out data, no audit).
    """
    measures = []
    ev = evaluation or {}
    prec, err = ev.get("hard_subset_precision"), ev.get("task_error_rate")
    if isinstance(prec, Mapping) and isinstance(err, Mapping) and "count" in prec \
            and err.get("n"):
        rest_k = int(err["count"]) - int(prec.get("count", 0))
        rest_n = int(err["n"]) - int(prec.get("n", 0))
        measures.append(_measure("held-out", "labelled held-out examples", prec, err,
                                 rest_k, rest_n, alpha))
    if audit:
        hard, control = audit.get("hard") or {}, audit.get("control_task_errors") or {}
        if hard.get("n") and control.get("n"):
            measures.append(_measure(
                "audit", str(audit.get("measured_on", "blind-labelled corpus sentences")),
                hard, control, int(control.get("count", 0)), int(control["n"]), alpha))
    if not measures:
        return {"decision": UNMEASURED, "measures": [],
                "reasons": ["the hard subset's precision was not measured: no held-out "
                            "evaluation of the reference (evaluation.include_reference) and "
                            "no blind audit"],
                "next": ("evaluate the reference on labelled data (synthcheck evaluate "
                         "--run DIR, evaluation.include_reference: true) or audit the hard "
                         "subset blind (synthcheck annotate export --audit); until then, "
                         "read findings as leads, not confirmed failures")}
    trusted = all(m["passed"] for m in measures)
    reasons = [m["reason"] for m in measures]
    if not audit:
        reasons.append("no blind audit of this corpus: the held-out figure does not cover "
                       "corpus sentences without the task's signal")
    if trusted:
        nxt = ("read the confirmed findings first; turn them into suite tests (synthcheck "
               "propose) and verify them"
               + ("" if audit else "; a blind audit of the hard subset (synthcheck annotate "
                                   "export --audit) checks the same on this corpus"))
    else:
        nxt = ("do not act on the findings yet: make the hard subset point at the task "
               "model's errors first: a stronger reference.model, more or in-domain "
               "reference.shots, an abstain answer (reference.abstain) or a higher "
               "ranking.min_reference_margin to keep sentences without a label out; compare "
               "ranking.metric values in `synthcheck evaluate`, then rerun `discover`")
    return {"decision": TRUSTED if trusted else UNTRUSTED, "measures": measures,
            "reasons": reasons, "next": nxt}


def format_trust(decision: Mapping[str, Any]) -> list[str]:
    """Plain-text lines for the summary: the decision, its reasons, what to do next."""
    head = {TRUSTED: "findings trusted", UNTRUSTED: "findings NOT trusted",
            UNMEASURED: "findings unmeasured"}.get(str(decision.get("decision")), "?")
    lines = [f"trust: {head} (the hard subset's precision against the task model's own "
             f"error rate)"]
    lines += [f"  - {r}" for r in decision.get("reasons") or []]
    lines.append(f"  next: {decision.get('next', '')}")
    return lines
