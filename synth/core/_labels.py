"""LabelSpace: the task's label names, declared once and checked in one place."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from synth.core._errors import DataError


def check_unique_labels(labels: Sequence[str]) -> list[str]:
    """Return ``labels`` as a list; raise ValueError if empty names or duplicates are present
    (the one "labels must be unique" rule, used by every config model that lists labels)."""
    labels = list(labels)
    if any(not isinstance(lab, str) or not lab for lab in labels):
        raise ValueError(f"labels must be non-empty strings, got {labels}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be unique, got {labels}")
    return labels


@dataclass(frozen=True)
class LabelSpace:
    """The ordered label names of a task. Every record names labels with these strings.

    Stages take a LabelSpace (not the whole run config) so that they never re-derive the
    label set from files, and so that every "is this a label?" check reads the same.
    """

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.names) < 2:
            raise ValueError(f"a task needs at least 2 labels, got {list(self.names)}")
        check_unique_labels(self.names)

    @classmethod
    def of(cls, labels: Iterable[str]) -> LabelSpace:
        """Build from any iterable of label names (order kept)."""
        return cls(tuple(labels))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, label: object) -> bool:
        return label in self.names

    def __getitem__(self, i: int) -> str:
        return self.names[i]

    def index(self, label: str) -> int:
        """Position of ``label`` (the column order of probability arrays)."""
        return self.names.index(label)

    @property
    def list(self) -> list[str]:
        """The names as a new list."""
        return list(self.names)

    def unknown(self, labels: Iterable[object]) -> builtins.list[object]:
        """The members of ``labels`` that are not task labels (in their order, each once):
        the one "is this a label?" check every caller words its own message around."""
        seen: builtins.list[object] = []
        for label in labels:
            if label not in self.names and label not in seen:
                seen.append(label)
        return seen

    def missing(self, labels: Iterable[object]) -> builtins.list[str]:
        """The task labels (in task order) that ``labels`` lacks."""
        given = set(labels)
        return [name for name in self.names if name not in given]

    def same_set(self, labels: Iterable[object]) -> bool:
        """True when ``labels`` names exactly the task labels (any order, repeats allowed)."""
        labels = list(labels)
        return not self.unknown(labels) and not self.missing(labels)

    def check_probs(self, probs: Mapping[str, float], *, where: str | None = None) -> None:
        """Raise DataError unless ``probs`` has exactly the task's labels as keys."""
        if not self.same_set(probs):
            raise DataError(f"probabilities have labels {sorted(probs)}, expected "
                            f"{list(self.names)}", where=where,
                            fix="score the run again with this task's labels")
