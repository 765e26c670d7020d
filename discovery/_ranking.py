"""Divergence between task-model and reference probabilities, ranking and the hard subset."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from discovery._judge import JudgeRule, judge
from synth.core import ConfigError, DataError

METRICS = ("abs_top", "signed", "kl", "js", "tv", "p_wrong")
_EPS = 1e-12


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(p || q) per row (scipy's ``rel_entr``), probabilities clipped at ``_EPS``."""
    from scipy.special import rel_entr

    return np.asarray(rel_entr(np.clip(p, _EPS, 1.0), np.clip(q, _EPS, 1.0)).sum(axis=1))


def divergence(task: np.ndarray, reference: np.ndarray, metric: str = "abs_top") -> np.ndarray:
    """Per-row divergence between task and reference probabilities (n x labels, same order).

    - ``abs_top``: |p_task(y*) - p_ref(y*)| with y* the task model's top label (the paper).
    - ``signed``: p_task(y*) - p_ref(y*) (positive: the task model is more sure of y*).
    - ``kl``: KL(p_ref || p_task), natural log (probabilities clipped at 1e-12).
    - ``js``: Jensen-Shannon divergence, natural log (at most ln 2).
    - ``tv``: total variation, half the L1 distance (in [0, 1]).
    - ``p_wrong``: 1 - p_ref(y*), the (calibrated) reference's probability that the task
      model's top label y* is wrong.
    """
    task = np.asarray(task, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if task.shape != reference.shape or task.ndim != 2:
        raise ValueError(f"task and reference must be n x labels arrays of one shape, got "
                         f"{task.shape} and {reference.shape}")
    if metric in ("abs_top", "signed"):
        rows = np.arange(len(task))
        top = task.argmax(axis=1)
        diff = task[rows, top] - reference[rows, top]
        return np.abs(diff) if metric == "abs_top" else diff
    if metric == "p_wrong":
        rows = np.arange(len(task))
        return 1.0 - reference[rows, task.argmax(axis=1)]
    if metric == "kl":
        return _kl(reference, task)
    if metric == "js":
        mid = 0.5 * (task + reference)
        return 0.5 * _kl(task, mid) + 0.5 * _kl(reference, mid)
    if metric == "tv":
        return 0.5 * np.abs(task - reference).sum(axis=1)
    raise ConfigError(f"The 'metric' parameter of DivergenceRanker must be one of "
                      f"{', '.join(METRICS)}. Got {metric!r} instead.")


class DivergenceRanker:
    """Ranks sentences by task/reference divergence and selects the hard subset.

    The hard subset holds only sentences on which the task model fails by the run's one
    rule (:func:`discovery.judge`): the reference judges them (no abstain answer above its
    threshold, a top-label margin of at least ``min_margin``) and its top label differs
    from the task model's. An agreeing or abstained sentence never enters, for any number
    of labels; the divergence only orders the failures.

    Args:
        metric: see :func:`divergence`.
        top_k: keep this many sentences (overrides ``top_fraction``).
        top_fraction: keep ``ceil(top_fraction * n)`` sentences (the paper: 10%), n the
            whole corpus (fewer when fewer sentences fail).

    Attributes (after ``fit``):
        divergence_: divergence per sentence.
        task_top_, reference_top_: index of each side's top label per sentence.
        disagree_: whether the two top labels differ.
        judgement_: the :class:`discovery.Judgement` of every sentence.
        order_: all sentence indices, most divergent first (ties: input order).
        hard_indices_: the hard subset, most divergent first.
    """

    def __init__(self, metric: str = "abs_top", *, top_k: int | None = None,
                 top_fraction: float | None = 0.1) -> None:
        self.metric = metric
        self.top_k = top_k
        self.top_fraction = top_fraction

    def _size(self, n: int) -> int:
        if self.top_k is not None:
            if self.top_k < 1:
                raise ConfigError(f"The 'top_k' parameter of DivergenceRanker must be >= 1. "
                                  f"Got {self.top_k} instead.", where="ranking.top_k")
            if self.top_k > n:
                raise DataError(f"top_k ({self.top_k}) is larger than the corpus ({n} sentences)",
                                where="ranking.top_k",
                                fix="lower ranking.top_k, use ranking.top_fraction, or generate "
                                    "a larger corpus")
            return self.top_k
        frac = self.top_fraction if self.top_fraction is not None else 0.1
        if not 0.0 < frac <= 1.0:
            raise ConfigError(f"The 'top_fraction' parameter of DivergenceRanker must be in "
                              f"(0, 1]. Got {frac} instead.", where="ranking.top_fraction")
        return max(1, math.ceil(frac * n))

    def fit(self, task: np.ndarray, reference: np.ndarray, *,
            abstain: np.ndarray | None = None, rule: JudgeRule | None = None
            ) -> DivergenceRanker:
        """Judge, score and rank; ``task`` and ``reference`` are n x labels probability
        arrays, ``abstain`` the reference's abstain answer per row (None: none) and ``rule``
        the run's judging rule."""
        task = np.asarray(task, dtype=np.float64)
        reference = np.asarray(reference, dtype=np.float64)
        if len(task) == 0:
            raise DataError("nothing to rank: the corpus is empty",
                            fix="generate a corpus first")
        size = self._size(len(task))
        self.divergence_ = divergence(task, reference, self.metric)
        self.judgement_ = judge(task, reference, abstain=abstain, rule=rule)
        self.task_top_ = self.judgement_.task_top
        self.reference_top_ = self.judgement_.reference_top
        self.disagree_ = self.task_top_ != self.reference_top_
        self.order_ = np.argsort(-self.divergence_, kind="stable")
        self.hard_indices_ = self.order_[self.judgement_.fails[self.order_]][:size]
        return self


@dataclass(frozen=True)
class HardSubset:
    """The hard subset: the most divergent sentences, as records ranked from 1."""

    records: list[dict[str, Any]]

    @classmethod
    def from_ranker(cls, ranker: DivergenceRanker, ids: Sequence[str], texts: Sequence[str],
                    labels: Sequence[str], task: np.ndarray, reference: np.ndarray
                    ) -> HardSubset:
        """Build the records ``{"id", "text", "divergence", "task_label", "reference_label",
        "rank", "task_probs", "reference_probs"}`` for ``ranker.hard_indices_``."""
        records = []
        for rank, i in enumerate(ranker.hard_indices_, start=1):
            records.append({
                "id": ids[i],
                "text": texts[i],
                "divergence": float(ranker.divergence_[i]),
                "task_label": labels[int(ranker.task_top_[i])],
                "reference_label": labels[int(ranker.reference_top_[i])],
                "rank": rank,
                "task_probs": dict(zip(labels, map(float, task[i]), strict=True)),
                "reference_probs": dict(zip(labels, map(float, reference[i]), strict=True)),
            })
        return cls(records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def ids(self) -> list[str]:
        """The hard sentences' ids, rank order."""
        return [r["id"] for r in self.records]
