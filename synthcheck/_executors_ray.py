"""The ``ray`` executor: shards and scoring chunks on Ray actors, each holding one loaded model.

Each actor runs the stage's ``setup`` once (loads an HF or vLLM backend, or a scorer, on its
CPUs or GPU) and then one unit of work per call; this process (the driver) hands out units
as actors become free and writes each result itself, with the stage's own atomic, resumable
files. Ray is imported here only, when the executor is built.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Generator, Iterable
from types import TracebackType
from typing import Any, TypeVar

from synth.core import ConfigError, ModelNotAvailable, SynthcheckError
from synthcheck._executors import ExecutorConfig

T = TypeVar("T")
R = TypeVar("R")

RAY_INSTALL = 'pip install "synthcheck[ray]"  (or: pip install "ray[data]>=2.40,<3")'
_END = object()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ModelNotAvailable("the ray executor needs Ray, which is not installed",
                                where="executor.kind", fix=RAY_INSTALL) from None
    return ray


class _Worker:
    """A Ray actor's body: the state ``setup()`` built, kept for every call. An error in
    ``setup`` is kept and raised by each call, so the driver gets the original exception."""

    def __init__(self, setup: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.state: Any = None
        try:
            self.state = setup()
        except Exception as exc:  # raised again by ready() / run(), in the driver
            self.error = exc

    def ready(self) -> bool:
        """True once ``setup`` succeeded; raises its error otherwise."""
        if self.error is not None:
            raise self.error
        return True

    def run(self, work: Callable[[Any, Any], Any], item: Any) -> Any:
        """``work(state, item)``."""
        if self.error is not None:
            raise self.error
        return work(self.state, item)


def _local_runtime_env() -> dict[str, Any]:
    """Workers of a Ray started here import what this process imports (its ``sys.path``,
    e.g. a source checkout or a ``python:`` task model's folder, and the current directory)."""
    paths = [os.getcwd(), *(p for p in sys.path if p)]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}


class RayExecutor:
    """Runs units of work on Ray actors (see the module docstring).

    Joins ``config.address`` when given, uses a Ray already initialised in this process, or
    else starts Ray on this machine with all its CPUs (and stops it on ``close``). One pool of
    actors is held at a time, for the most recent ``key``: a new key (the reference after the
    generator) kills the old actors first, so their CPUs and GPUs are free for the new ones.
    """

    def __init__(self, config: ExecutorConfig) -> None:
        ray = self._ray = _import_ray()
        self.config = config
        self._started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
            try:
                if config.address:
                    ray.init(address=config.address, **kwargs)
                else:
                    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
                        else os.cpu_count()
                    ray.init(num_cpus=cpus, runtime_env=_local_runtime_env(), **kwargs)
            except ConnectionError as exc:
                raise ConfigError(f"cannot join the Ray cluster at {config.address!r}: {exc}",
                                  where="executor.address",
                                  fix="start it (`ray start --head` on its head node), or "
                                      "leave executor.address empty to start Ray here") from None
            self._started = True
        self._actor_cls = ray.remote(_Worker)
        self._key: str | None = None
        self._actors: list[Any] = []

    def workers(self) -> int:
        """How many actors a pool has: ``num_workers``, or what the cluster's resources fit.

        Raises:
            ConfigError: the cluster cannot fit ``num_workers`` actors (they would never start).
        """
        cfg = self.config
        total = self._ray.cluster_resources()
        fit = int(total.get("CPU", 0) // cfg.cpus_per_worker)
        if cfg.gpus_per_worker > 0:
            fit = min(fit, int(total.get("GPU", 0) // cfg.gpus_per_worker))
        if cfg.num_workers is None:
            if fit < 1:
                raise ConfigError(
                    f"the Ray cluster has {total.get('CPU', 0):g} CPUs and "
                    f"{total.get('GPU', 0):g} GPUs: not enough for one worker of "
                    f"{cfg.cpus_per_worker:g} CPUs and {cfg.gpus_per_worker:g} GPUs",
                    where="executor.cpus_per_worker",
                    fix="lower executor.cpus_per_worker / gpus_per_worker, or add nodes")
            return fit
        if cfg.num_workers > fit:
            raise ConfigError(
                f"executor.num_workers = {cfg.num_workers} does not fit the Ray cluster "
                f"({total.get('CPU', 0):g} CPUs, {total.get('GPU', 0):g} GPUs; "
                f"{cfg.cpus_per_worker:g} CPUs and {cfg.gpus_per_worker:g} GPUs per worker)",
                where="executor.num_workers",
                fix=f"use at most {fit} workers, fewer CPUs/GPUs per worker, or add nodes")
        return cfg.num_workers

    def _get(self, refs: Any) -> Any:
        """``ray.get``, raising a project error a worker raised as itself (the CLI then
        prints it as ``error: ...`` and exits 2)."""
        ray = self._ray
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, SynthcheckError):
                self._drop_pool()
                raise cause from None
            raise

    def _pool(self, key: str, setup: Callable[[], Any]) -> list[Any]:
        if self._key != key:
            self._drop_pool()
            cfg = self.config
            options = self._actor_cls.options(num_cpus=cfg.cpus_per_worker,
                                              num_gpus=cfg.gpus_per_worker)
            self._actors = [options.remote(setup) for _ in range(self.workers())]
            self._key = key
        return self._actors

    def _drop_pool(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors, self._key = [], None

    def start(self, key: str, setup: Callable[[], Any]) -> None:
        """Start the actors of ``key`` and wait until each has run ``setup``.

        Raises:
            SynthcheckError: the one ``setup`` raised in a worker (a missing model...).
        """
        actors = self._pool(key, setup)
        self._get([a.ready.remote() for a in actors])

    def map(self, key: str, setup: Callable[[], Any], work: Callable[[Any, T], R],
            items: Iterable[T]) -> Generator[tuple[T, R], None, None]:
        """Hand each item to a free actor of ``key`` (started on the first item); yield
        ``(item, result)`` in the order they finish. On an error, or when the caller stops
        early, the actors are killed (their unfinished items are dropped)."""
        it = iter(items)
        first = next(it, _END)
        if first is _END:
            return
        queue = itertools.chain([first], it)
        idle = list(self._pool(key, setup))
        running: dict[Any, tuple[Any, Any]] = {}

        def fill() -> None:
            while idle:
                item = next(queue, _END)
                if item is _END:
                    return
                actor = idle.pop()
                running[actor.run.remote(work, item)] = (item, actor)

        done = False
        try:
            fill()
            while running:
                ready, _ = self._ray.wait(list(running), num_returns=1)
                item, actor = running.pop(ready[0])
                result = self._get(ready[0])
                idle.append(actor)
                fill()
                yield item, result
            done = True
        finally:
            if not done:
                self._drop_pool()

    def close(self) -> None:
        """Kill the actors; stop Ray if this executor started it."""
        if self._actors:
            self._drop_pool()
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
