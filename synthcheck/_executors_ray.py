"""The ``ray`` executor: shards and scoring chunks on Ray actors, each holding one loaded model.

Each actor runs the stage's ``setup`` once (loads an HF or vLLM backend, or a scorer, on its
CPUs or GPU) and then one unit of work per call; this process (the driver) hands out units
as actors become free and writes each result itself, with the stage's own atomic, resumable
files. Ray is imported here only, when the executor is built.
"""

from __future__ import annotations

import gc
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
    """A Ray actor's body: holds the state of one ``key`` at a time (a loaded model), built
    by that key's ``setup`` on first use; a new key frees the old state in the same process
    (no new process, no second import of torch)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.state: Any = None

    def load(self, key: str, setup: Callable[[], Any]) -> bool:
        """Make ``setup()`` the state unless ``key``'s state is held already."""
        if self.key != key:
            self.key, self.state = None, None
            gc.collect()  # free the old model before the new one loads
            self.state = setup()
            self.key = key
        return True

    def run(self, key: str, setup: Callable[[], Any], work: Callable[[Any, Any], Any],
            item: Any) -> Any:
        """``work(state, item)`` with the state of ``key``."""
        self.load(key, setup)
        return work(self.state, item)


def _local_runtime_env() -> dict[str, Any]:
    """Workers of a Ray started here import what this process imports (its ``sys.path``,
    e.g. a source checkout or a ``python:`` task model's folder, and the current directory)."""
    paths = [os.getcwd(), *(p for p in sys.path if p)]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}


def probe_address(address: str, timeout: float = 3.0) -> None:
    """Refuse a ``HOST:PORT`` (or ``ray://HOST:PORT``) Ray address that nothing answers on
    within ``timeout`` seconds; ``auto`` and addresses without a port are left to Ray.

    Raises:
        ConfigError: the address cannot be reached.
    """
    import socket

    rest = address.split("://", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot reach the Ray cluster at {address!r} ({reason} within "
                          f"{timeout:g} s)", where="executor.address",
                          fix="start it (`ray start --head` on its head node), check the "
                              "host and port, or leave executor.address empty to start Ray "
                              "here") from None


class RayExecutor:
    """Runs units of work on Ray actors (see the module docstring).

    Joins ``config.address`` when given, uses a Ray already initialised in this process, or
    else starts Ray on this machine with all its CPUs (and stops it on ``close``). One pool of
    actors serves every stage; each actor holds one model at a time, for the most recent
    ``key`` (the reference after the generator replaces it in the same actor).
    """

    def __init__(self, config: ExecutorConfig) -> None:
        if config.address:
            probe_address(config.address)  # seconds, not Ray's 20-odd of retries
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
                raise cause from None
            raise

    def _pool(self) -> list[Any]:
        if not self._actors:
            cfg = self.config
            options = self._actor_cls.options(num_cpus=cfg.cpus_per_worker,
                                              num_gpus=cfg.gpus_per_worker)
            self._actors = [options.remote() for _ in range(self.workers())]
        return self._actors

    def _drop_pool(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []

    def start(self, key: str, setup: Callable[[], Any]) -> None:
        """Start the actors and have each load ``key``'s state (``setup()``) now.

        Raises:
            SynthcheckError: the one ``setup`` raised in a worker (a missing model...).
        """
        setup_ref = self._ray.put(setup)
        self._get([a.load.remote(key, setup_ref) for a in self._pool()])

    def map(self, key: str, setup: Callable[[], Any], work: Callable[[Any, T], R],
            items: Iterable[T]) -> Generator[tuple[T, R], None, None]:
        """Hand each item to a free actor (which loads ``key``'s state first if it holds
        another); yield ``(item, result)`` in the order they finish. On an error, or when the
        caller stops early, the actors are killed (their unfinished items are dropped)."""
        it = iter(items)
        first = next(it, _END)
        if first is _END:
            return
        queue = itertools.chain([first], it)
        idle = list(self._pool())
        setup_ref, work_ref = self._ray.put(setup), self._ray.put(work)
        running: dict[Any, tuple[Any, Any]] = {}

        def fill() -> None:
            while idle:
                item = next(queue, _END)
                if item is _END:
                    return
                actor = idle.pop()
                running[actor.run.remote(key, setup_ref, work_ref, item)] = (item, actor)

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
