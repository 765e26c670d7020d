"""LabelSpace: the task's label names, declared once and checked in one place."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from synth.core._errors import ConfigError, DataError


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

    def check_subset(self, labels: Iterable[str], *, what: str, where: str | None = None,
                     error: type[ConfigError] | type[DataError] = ConfigError) -> None:
        """Raise ``error`` naming ``what`` if any of ``labels`` is not one of the task's."""
        unknown = sorted({str(x) for x in labels} - set(self.names))
        if unknown:
            raise error(f"{what} uses label(s) {', '.join(map(repr, unknown))} that the task "
                        f"does not have (task labels: {', '.join(self.names)})", where=where,
                        fix=f"use only {', '.join(self.names)}, or change task.labels")

    def check_probs(self, probs: Mapping[str, float], *, where: str | None = None) -> None:
        """Raise DataError unless ``probs`` has exactly the task's labels as keys."""
        if set(probs) != set(self.names):
            raise DataError(f"probabilities have labels {sorted(probs)}, expected "
                            f"{list(self.names)}", where=where,
                            fix="score the run again with this task's labels")
