"""The one rule that judges a sentence: abstained (and why), or judged, and then whether the
task model fails on it.

Every stage that counts failures (the hard subset, mining, semantic and metadata slices,
occlusion, focus rounds, findings, the held-out precision) calls :func:`judge`, so a run has
one rule and one base rate, for any number of labels:

- **abstained, "no-label answer"**: the reference's abstain answer (``reference.abstain``,
  e.g. "neutral" for a positive/negative task, "none" for any label set) has probability
  above its threshold: no task label applies;
- **abstained, "low margin"**: the reference's top label leads its second by less than
  ``ranking.min_reference_margin``: it reads no label clearly;
- **judged**: otherwise. The task model *fails* on a judged sentence when its top label
  differs from the reference's top label (or from the gold label, when gold labels are
  given: nothing abstains then). Where both pick the same label it is never a failure.

Abstained sentences never enter the hard subset or any failure count (neither the
numerator nor the denominator of a rate): they are counted, with their reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

NO_LABEL = "no-label answer"
LOW_MARGIN = "low margin"
REASONS = (NO_LABEL, LOW_MARGIN)
"""Why a sentence abstains, in the order they are checked (a sentence gets the first)."""
MOSTLY_DROPPED = 0.5
"""Warn when more than this share of the sentences abstain."""


@dataclass(frozen=True)
class JudgeRule:
    """The judging rule's parameters (one per run).

    Attributes:
        min_margin: ``ranking.min_reference_margin``: abstain when the reference's top label
            leads its second by less than this.
        abstain_threshold: ``reference.abstain.threshold``: abstain when the reference's
            abstain answer has a probability above this (None: no abstain answer).
    """

    min_margin: float = 0.0
    abstain_threshold: float | None = None

    def describe(self) -> str:
        """The rule in words (what the summary and ``findings.jsonl`` say)."""
        parts = ["task model's top label differs from the reference's"]
        skip = []
        if self.abstain_threshold is not None:
            skip.append(f"p(no-label answer) > {self.abstain_threshold:g}")
        if self.min_margin > 0:
            skip.append(f"reference margin < {self.min_margin:g}")
        return parts[0] + (f" (abstained where {' or '.join(skip)})" if skip else "")


@dataclass(frozen=True)
class Judgement:
    """Per-sentence verdicts of :func:`judge` (arrays of one length).

    Attributes:
        reason: ``""`` for a judged sentence, else one of :data:`REASONS`.
        fails: the task model fails (judged and its top label is not the reference's or the
            gold one); always False where abstained.
        task_top, reference_top: each side's top label index (``reference_top`` is the gold
            label index when judged against gold labels).
    """

    reason: np.ndarray
    fails: np.ndarray
    task_top: np.ndarray
    reference_top: np.ndarray

    def __len__(self) -> int:
        return len(self.fails)

    @property
    def abstained(self) -> np.ndarray:
        """Whether each sentence abstains (for any reason)."""
        return np.asarray(self.reason != "")

    @property
    def judged(self) -> np.ndarray:
        """Whether each sentence is judged."""
        return np.asarray(self.reason == "")

    @property
    def judged_indices(self) -> np.ndarray:
        """Indices of the judged sentences, in order."""
        return np.flatnonzero(self.judged)

    @property
    def failures(self) -> int:
        """How many judged sentences fail."""
        return int(self.fails.sum())

    @property
    def base_rate(self) -> float:
        """The run's one base rate: failures over judged sentences (0 when none is judged)."""
        n = int(self.judged.sum())
        return self.failures / n if n else 0.0

    def abstained_info(self) -> dict[str, Any]:
        """``{"count", "by_reason": {reason: count}, "of", "share"}``: what
        ``hard.jsonl.meta.json`` and the manifest record as ``abstained``."""
        n = len(self)
        count = int(self.abstained.sum())
        return {"count": count,
                "by_reason": {r: int((self.reason == r).sum()) for r in REASONS},
                "of": n, "share": count / n if n else 0.0}


def judge(task: np.ndarray, reference: np.ndarray | None = None, *,
          abstain: np.ndarray | None = None, rule: JudgeRule | None = None,
          gold: Sequence[int] | np.ndarray | None = None) -> Judgement:
    """Judge each sentence (see the module docstring).

    Args:
        task: n x labels probabilities of the task model.
        reference: n x labels calibrated probabilities of the reference (columns in the same
            order); not needed with ``gold``.
        abstain: the reference's probability of its abstain answer per sentence (None: it
            has none).
        rule: the margin and abstain threshold (default: nothing abstains).
        gold: gold label indices instead of the reference (labelled data): nothing abstains
            and a failure is a wrong top label.

    Raises:
        ValueError: shapes differ.
    """
    task = np.asarray(task, dtype=np.float64)
    if task.ndim != 2:
        raise ValueError(f"task probabilities must be n x labels, got {task.shape}")
    n = len(task)
    task_top = task.argmax(axis=1) if n else np.zeros(0, dtype=np.int64)
    reason = np.full(n, "", dtype=object)
    if gold is not None:
        ref_top = np.asarray(gold, dtype=np.int64)
        if ref_top.shape != (n,):
            raise ValueError(f"need one gold label per row, got {ref_top.shape} for {n} rows")
        return Judgement(reason, np.asarray(task_top != ref_top), task_top, ref_top)
    if reference is None:
        raise ValueError("judge() needs the reference's probabilities or gold labels")
    reference = np.asarray(reference, dtype=np.float64)
    if reference.shape != task.shape:
        raise ValueError(f"task and reference must be n x labels arrays of one shape, got "
                         f"{task.shape} and {reference.shape}")
    rule = rule or JudgeRule()
    ref_top = reference.argmax(axis=1) if n else np.zeros(0, dtype=np.int64)
    if rule.min_margin > 0 and n:

        reason[reference_margin(reference) < rule.min_margin] = LOW_MARGIN
    if abstain is not None and rule.abstain_threshold is not None:
        a = np.asarray(abstain, dtype=np.float64)
        if a.shape != (n,):
            raise ValueError(f"need one abstain probability per row, got {a.shape} for {n}")
        reason[a > rule.abstain_threshold] = NO_LABEL  # checked first: it wins
    fails = (reason == "") & (task_top != ref_top)
    return Judgement(reason, np.asarray(fails, dtype=bool), task_top, ref_top)


def abstain_warning(info: dict[str, Any]) -> str | None:
    """A warning when most sentences abstain (None otherwise): ``info`` is
    :meth:`Judgement.abstained_info`'s."""
    n, count = int(info.get("of", 0)), int(info.get("count", 0))
    if not n or count / n <= MOSTLY_DROPPED:
        return None
    reasons = ", ".join(f"{k} {v}" for k, v in (info.get("by_reason") or {}).items() if v)
    return (f"{count} of {n} sentences ({count / n:.0%}) abstained ({reasons}) and are left "
            f"out of every failure count: the findings rest on {n - count} sentences. If the "
            f"corpus is mostly off-task, generate in-task sentences (generator.prompt); if "
            f"the reference is unsure everywhere, lower ranking.min_reference_margin or "
            f"reference.abstain.threshold, or use a stronger reference.model")


def format_abstained(info: dict[str, Any] | None) -> str:
    """``12 of 300 abstained (no-label answer 9, low margin 3)`` (empty without info)."""
    if not info:
        return ""
    reasons = ", ".join(f"{k} {v}" for k, v in (info.get("by_reason") or {}).items())
    return f"{info.get('count', 0)} of {info.get('of', 0)} abstained ({reasons})"


def reference_margin(reference: np.ndarray) -> np.ndarray:
    """Per row, the reference's top-label probability minus its second's (1 for one label):
    how clearly the reference reads any label at all."""
    reference = np.asarray(reference, dtype=np.float64)
    if reference.shape[1] < 2:
        return np.ones(len(reference))
    top2 = np.sort(reference, axis=1)[:, -2:]
    return np.asarray(top2[:, 1] - top2[:, 0])
