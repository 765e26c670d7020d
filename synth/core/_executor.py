"""Where a stage's units of work run: the executor protocol that the stages accept.

Generation shards and scoring chunks are units of work that need a loaded model. A stage
given an :class:`Executor` hands it a ``setup`` (builds a worker's state once: a backend, a
scorer) and a ``work`` function (one unit, given that state); the stage itself still claims
every unit, writes every file and keeps every guarantee (atomic, resumable, byte-identical).
The implementations (in-process, Ray) live in the application, ``synthcheck._executors``;
without an executor a stage runs its units in its own process as it always has.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs units of work on workers that each hold state built once (a loaded model).

    ``setup`` and ``work`` must be picklable (module-level functions, or
    ``functools.partial`` of them over picklable configs) so that workers in other
    processes or on other machines can run them.
    """

    def start(self, key: str, setup: Callable[[], Any]) -> None:
        """Build the workers for ``key`` now (each runs ``setup`` once), so that an error in
        ``setup`` (a missing model) surfaces before the caller writes anything. ``map`` with
        the same ``key`` reuses them."""
        ...

    def map(self, key: str, setup: Callable[[], Any], work: Callable[[Any, T], R],
            items: Iterable[T]) -> Generator[tuple[T, R], None, None]:
        """Run ``work(state, item)`` for each item on workers whose state is ``setup()`` (built
        once per worker and kept under ``key``); yield ``(item, result)`` as each finishes, in
        any order. Items are pulled from ``items`` only when a worker is free, so the caller
        may claim a unit in its iterator and never holds more than the workers can run."""
        ...
