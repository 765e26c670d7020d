"""The TaskScorer protocol every task-model adapter implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class TaskScorer(Protocol):
    """A classifier under test: named labels in, a probability per label out, input order kept."""

    labels: list[str]
    name: str

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Return one ``{label: probability}`` dict per text (probabilities sum to 1)."""
        ...
