"""The runner's counters: what a verify result is built from, kept small as cases stream."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The fields of a failing case kept as an example.
EXAMPLE_FIELDS = ("test", "model", "case_id", "text", "orig_text", "label", "pred", "orig_pred",
                  "probs", "orig_probs")


@dataclass
class Counts:
    """Cases seen and how many failed."""

    n: int = 0
    failures: int = 0

    def add(self, passed: bool) -> None:
        """Count one case."""
        self.n += 1
        self.failures += int(not passed)


@dataclass
class Aggregates:
    """Everything the result needs, kept as counters so memory does not grow with cases."""

    max_examples: int
    tests: dict[str, dict[str, str]] = field(default_factory=dict)
    by_test: dict[tuple[str, str], Counts] = field(default_factory=lambda: defaultdict(Counts))
    by_capability: dict[tuple[str, str], Counts] = field(
        default_factory=lambda: defaultdict(Counts))
    by_label: dict[tuple[str, str], Counts] = field(default_factory=lambda: defaultdict(Counts))
    by_fill: dict[tuple[str, str, str, str, str], Counts] = field(
        default_factory=lambda: defaultdict(Counts))
    group_sum: dict[tuple[str, str, str, str], float] = field(
        default_factory=lambda: defaultdict(float))
    group_n: dict[tuple[str, str, str], int] = field(default_factory=lambda: defaultdict(int))
    examples: dict[tuple[str, str], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list))
    n_cases: int = 0
    n_texts_scored: int = 0

    def keep_example(self, test: str, model: str, row: Mapping[str, Any]) -> None:
        """Keep a failing case's row, up to ``max_examples`` per test and model."""
        kept = self.examples[(test, model)]
        if len(kept) < self.max_examples:
            kept.append({k: row[k] for k in EXAMPLE_FIELDS})
