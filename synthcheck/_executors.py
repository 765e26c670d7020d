"""Executors: where generation shards and scoring chunks run (``executor:`` in the run config).

``local`` runs them in this process, one after another (the default). ``ray`` runs them on Ray
actors, each holding one loaded backend or scorer, on this machine's CPUs or on a cluster
(``executor.address``). Either way the stage in this process claims every unit and writes
every file, so the outputs are byte-identical; the executor only changes where the model runs.
An executor implements :class:`synth.core.Executor`; the stages take one through
``run_generation(..., executor=)`` and ``score_run(..., executor=)``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Generator, Iterable
from types import TracebackType
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, field_validator

from synth.core import STRICT, Registry, did_you_mean, runtime_field

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS: Registry[Any] = Registry("executor", {
    "local": "synthcheck._executors:LocalExecutor",
    "ray": "synthcheck._executors_ray:RayExecutor",
})
"""Executor name -> class (lazy ``"module:Class"``): a class taking an
:class:`ExecutorConfig`, with the :class:`synth.core.Executor` methods and ``close``."""


class ExecutorConfig(BaseModel):
    """Where shards and scoring chunks run. Nothing here changes an output or a hash."""

    model_config = STRICT

    kind: str = runtime_field("local")
    """``local`` (this process) or ``ray`` (Ray actors, each holding one loaded model)."""
    address: str | None = runtime_field(None)
    """The Ray cluster to join (``auto``, ``HOST:6379`` or ``ray://HOST:10001``); empty: start
    Ray on this machine with all its CPUs (ray only)."""
    num_workers: int | None = runtime_field(None, ge=1)
    """Ray actors (each loads the model once); empty: as many as the cluster's CPUs (or GPUs,
    with ``gpus_per_worker``) allow."""
    cpus_per_worker: float = runtime_field(1.0, gt=0)
    """CPUs Ray reserves for each actor (its torch threads)."""
    gpus_per_worker: float = runtime_field(0.0, ge=0)
    """GPUs Ray reserves for each actor (0: CPU; 1: one GPU each; 0.5: two actors a GPU)."""

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in EXECUTORS:
            raise ValueError(f"unknown executor {value!r}: "
                             f"{did_you_mean(value, EXECUTORS.names())}")
        return value


class AppExecutor(Protocol):
    """An executor as the app holds it: :class:`synth.core.Executor` plus a lifetime."""

    def start(self, key: str, setup: Callable[[], Any]) -> None:
        """See :meth:`synth.core.Executor.start`."""
        ...

    def map(self, key: str, setup: Callable[[], Any], work: Callable[[Any, T], R],
            items: Iterable[T]) -> Generator[tuple[T, R], None, None]:
        """See :meth:`synth.core.Executor.map`."""
        ...

    def close(self) -> None:
        """Free the workers (and stop Ray if this executor started it)."""
        ...

    def __enter__(self) -> AppExecutor: ...

    def __exit__(self, *exc: object) -> None: ...


class LocalExecutor:
    """Runs every unit in this process, one after another, pulling the next only when the
    last is done (today's loop). Keeps the state of the most recent ``key`` only (a new key,
    e.g. the reference after the generator, frees the previous model)."""

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        self.config = config or ExecutorConfig()
        self._key: str | None = None
        self._state: Any = None

    def start(self, key: str, setup: Callable[[], Any]) -> None:
        """Build the state of ``key`` (``setup()``) unless it is the one held."""
        if self._key != key:
            self._key, self._state = None, None  # free the old model before loading
            self._state = setup()
            self._key = key

    def map(self, key: str, setup: Callable[[], Any], work: Callable[[Any, T], R],
            items: Iterable[T]) -> Generator[tuple[T, R], None, None]:
        """Run ``work`` on each item in order (the state is built on the first item)."""
        for item in items:
            self.start(key, setup)
            yield item, work(self._state, item)

    def close(self) -> None:
        """Drop the held state."""
        self._key, self._state = None, None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def make_executor(config: ExecutorConfig) -> AppExecutor:
    """The executor ``config.kind`` names, ready to use (a context manager: ``with``).

    Raises:
        ConfigError: an unknown kind, or a Ray cluster that cannot be joined or is too small.
        ModelNotAvailable: ``ray`` without Ray installed (with the pip command).
    """
    cls = EXECUTORS.get(config.kind)
    executor: AppExecutor = cls(config)
    return executor


def add_executor_arg(p: argparse.ArgumentParser) -> None:
    """Add ``--executor NAME`` (sets ``executor.kind``) to a command's parser."""
    p.add_argument("--executor", choices=EXECUTORS.names(),
                   help="where shards / scoring chunks run: local (this process, default) or "
                        "ray (Ray actors, one model each; see the executor: config section)")


EXECUTOR_FLAG = {"executor": "executor.kind"}
"""The ``--executor`` flag's place in the run config (for ``load_args_config``)."""
