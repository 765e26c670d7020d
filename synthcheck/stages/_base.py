"""What a stage is: one declaration (:class:`Stage`) that names the typed config sections it
reads, its upstream stages, its hash, its outputs and its run function.

The pipeline (``synthcheck discover``), ``synthcheck config`` (every stage hash) and the
single-stage commands all go through these declarations, so the mapping from a
:class:`~synthcheck.RunConfig` onto a stage's sections is written once, in the stage's
``sections`` function, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from synth.core import Executor, RunDir

if TYPE_CHECKING:
    from synthcheck._config import RunConfig

S = TypeVar("S")

Hashes = Mapping[str, str | None]
"""Upstream stage name -> its hash (None where it cannot be known yet, e.g. without a corpus)."""


@dataclass
class StageRun:
    """What one stage's run function did: ``ran`` (False: skipped as current) and the
    values it adds to :attr:`DiscoverResult.info <synthcheck.DiscoverResult>`."""

    ran: bool
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageContext:
    """What a stage runs in: the run directory, the resolved run config to record in the
    manifest, how to report progress, where to run, and the stages before it.

    ``hash_of(name)`` is an upstream stage's hash from its declaration (computed when first
    asked, after that stage ran); ``results`` holds the ``info`` of the stages that ran before
    (verify reads evaluate's reports); ``scorers`` are the task models, each loaded on first
    lookup and shared by every stage that needs them."""

    run: RunDir
    record: dict[str, Any]
    hash_of: Callable[[str], str | None]
    progress: bool = True
    log: Callable[[str], None] = print
    executor: Executor | None = None
    n: int | None = None
    scorers: Mapping[str, Any] | None = None
    allow_outside_files: bool = False
    results: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageWork:
    """What a long stage's work estimate reads: the run directory, the status the manifest
    records for the stage (None before its first run) and ``discover --n``."""

    run: RunDir
    status: str | None
    n: int | None = None


@dataclass(frozen=True)
class Stage(Generic[S]):
    """One stage, declared once.

    Attributes:
        name: the stage's name in the manifest (``stage_hashes``) and on the command line.
        sections: ``RunConfig -> S``: the typed sections the stage reads (the one place that
            maps a run config onto them).
        upstream: the stages whose outputs it reads (their hashes go into its own).
        stage_hash: ``(sections, upstream hashes, run dir or None) -> hash``; None when it
            needs a run directory's contents that are not there (the corpus).
        outputs: ``(sections, run dir) -> paths`` the stage writes (what "current" checks).
        run: ``(sections, context) -> StageRun``: does the work unless current.
        off: ``sections -> reason`` when the config turns the stage off (None: it runs).
        when_off: what the stage does when off (e.g. forget it in the manifest).
        shares_work: the stage splits its own work between processes on one run directory
            (generation claims shards); otherwise `discover` holds the stage's lock while it
            runs, so a second `discover` waits, then finds it current.
        work: ``(sections, StageWork) -> (model, work left)`` for a long stage: the model
            doing the work and the prompts or sentences left, which `discover` multiplies
            by the rate measured on this machine for an estimate before the stage (0: none).
    """

    name: str
    sections: Callable[[RunConfig], S]
    upstream: tuple[str, ...]
    stage_hash: Callable[[S, Hashes, Path | None], str | None]
    outputs: Callable[[S, Path], list[Path]]
    run: Callable[[S, StageContext], StageRun]
    off: Callable[[S], str | None] = lambda s: None
    when_off: Callable[[S, StageContext], dict[str, Any]] = lambda s, ctx: {}
    shares_work: bool = False
    work: Callable[[S, StageWork], tuple[str, int]] | None = None
