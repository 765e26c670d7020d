"""The one stage runner: every stage's bookkeeping (hash, skip-if-current, manifest open,
meta file, completion and digests) lives here, and only here.

A whole-file job is ``compute() -> JobRows`` handed to :func:`run_job`: it skips a stage
whose recorded hash is current and whose outputs are intact, else computes the rows before
anything is written (bad input leaves the run directory unchanged), opens the stage in the
manifest, writes the main artifact and its ``.meta.json`` (provenance of the stage hash plus
the job's fields), any further outputs, and completes the stage with the outputs' digests.
The rank, mine, labelled and slice stages (``semantic``, ``metadata``, ``occlusion``,
plug-in finding sources, ``findings``) run through it.

A job that writes as it goes (scoring and focus rounds resume in chunks) holds a
:class:`StageJob`::

    job = StageJob(run_dir, stage="score", stage_hash=h, outputs=paths)
    if job.current():
        return job.skipped()
    with job.open(record, running=True, undo_under=parts):  # manifest back on error
        ...  # compute, write chunks and the outputs, job.write_meta(path, **fields)
    job.complete(sentences=n, seconds=job.seconds())

Evaluate, verify and the report write their own files into a manifest the earlier stages
opened: they use ``job.current()`` and ``job.complete(...)`` alone.

No other module calls :meth:`RunDir.open_stage <synth.core.RunDir.open_stage>` or
:meth:`RunDir.complete <synth.core.RunDir.complete>` (``tests/discovery/test_runner.py``
greps for it); stage 1's generation, which claims shards between processes below
``discovery``, keeps its own.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discovery._stage_state import (
    files_under,
    manifest_bytes,
    output_digests,
    outputs_problem,
    remove_new_files,
    restore_manifest,
)
from synth.core import (
    META_SUFFIX,
    Artifact,
    RunDir,
    SynthcheckError,
    provenance,
    write_json_atomic,
)


@dataclass
class JobRows:
    """What a job computed.

    Attributes:
        rows: the main artifact's rows.
        meta: further fields of its ``.meta.json``.
        record: fields of the stage's manifest entry, also returned.
        report: fields only returned to the caller.
        also: further outputs, each written by its function (e.g. ``ngrams.csv``).
    """

    rows: list[dict[str, Any]]
    meta: Mapping[str, Any] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    report: Mapping[str, Any] = field(default_factory=dict)
    also: Sequence[Callable[[Path], None]] = ()


def is_current(run: RunDir, stage: str, stage_hash: str, paths: Sequence[Path],
               **info: Any) -> bool:
    """``stage`` is complete with ``stage_hash`` (and the entry fields ``info``) and its
    outputs are as recorded."""
    return run.is_current(stage, stage_hash, **info) and outputs_problem(run, stage,
                                                                         paths) is None


class StageJob:
    """One run of one stage on a run directory: the bookkeeping around a job that writes its
    own files (see the module docstring for the shape of a caller).

    Args:
        run_dir: the run directory.
        stage: the stage's name in the manifest.
        stage_hash: its hash (what "current" compares), computed once by the caller (the
            stage declaration's, where there is one).
        outputs: the files the stage writes; their digests go into the manifest entry, and
            a missing or changed one makes the stage not current.
    """

    def __init__(self, run_dir: str | Path | RunDir, *, stage: str, stage_hash: str,
                 outputs: Sequence[Path]) -> None:
        self.run = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
        self.stage = stage
        self.stage_hash = stage_hash
        self.outputs = list(outputs)
        self._started = time.perf_counter()

    def current(self, **info: Any) -> bool:
        """The stage is complete with this hash (and the entry fields ``info``, e.g. the
        corpus size a hash does not cover) and its outputs are intact."""
        return is_current(self.run, self.stage, self.stage_hash, self.outputs, **info)

    def skipped(self, **fields: Any) -> dict[str, Any]:
        """What a skipped job returns: ``{"skipped": True, "stage_hash", **fields}``."""
        return {"skipped": True, "stage_hash": self.stage_hash, **fields}

    @contextlib.contextmanager
    def open(self, record: Mapping[str, Any], *, running: bool = False,
             undo_under: Path | None = None) -> Iterator[StageJob]:
        """Open the stage in the manifest for the body's writes.

        Args:
            record: the run config to record as the manifest's ``config``.
            running: mark the stage ``running`` now (a killed run shows it).
            undo_under: a folder whose new files the body may leave on bad input.

        If the body raises, the manifest is put back as it was; on bad input (a
        :class:`~synth.core.SynthcheckError`) the files the body added under
        ``undo_under`` are removed too, while other errors (out of memory, a bug) keep them
        for a rerun to resume from.
        """
        saved = manifest_bytes(self.run) if running else None
        before = files_under(undo_under) if undo_under is not None else set()
        self.run.open_stage(dict(record), self.stage, self.stage_hash)
        if running:
            self.run.set_stage(self.stage, "running", stage_hash=self.stage_hash)
        try:
            yield self
        except SynthcheckError:
            if running:
                restore_manifest(self.run, saved)
            if undo_under is not None:
                remove_new_files(undo_under, before)
            raise
        except Exception:
            if running:
                restore_manifest(self.run, saved)
            raise

    def write_meta(self, path: Path, stage_hash: str | None = None, **info: Any) -> None:
        """Write ``<path>.meta.json``: the provenance of ``stage_hash`` (default: the
        stage's) plus ``info``."""
        write_json_atomic(path.with_name(path.name + META_SUFFIX),
                          {**provenance(stage_hash or self.stage_hash), **info})

    def seconds(self) -> float:
        """Seconds since the job was made."""
        return time.perf_counter() - self._started

    def complete(self, **fields: Any) -> None:
        """Record the stage complete: its entry is ``stage_hash``, ``fields`` and the
        outputs' ``digests``."""
        self.run.complete(self.stage, self.stage_hash, stage_hash=self.stage_hash, **fields,
                          digests=output_digests(self.run, self.outputs))


def run_job(run_dir: str | Path, *, stage: str, stage_hash: str,
            outputs: Sequence[Artifact], compute: Callable[[], JobRows],
            record: Callable[[], dict[str, Any]], timed: bool = False) -> dict[str, Any]:
    """Run one stage's job on ``run_dir`` unless it is current.

    Args:
        stage: the stage's name in the manifest.
        stage_hash: its hash (what "current" compares).
        outputs: the files it writes, the main one (rows and meta sidecar) first.
        compute: the job: its rows and fields, computed before anything is written.
        record: the run config to record when the stage opens.
        timed: the seconds the job took go into the manifest entry and the result.

    Returns:
        ``{"skipped": True, "stage_hash"}`` when current, else ``{"skipped": False,
        "stage_hash", **record fields, **report fields}``.
    """
    run = RunDir(run_dir)
    main = outputs[0]
    job = StageJob(run, stage=stage, stage_hash=stage_hash,
                   outputs=[a.path(run.path) for a in outputs])
    if job.current():
        return job.skipped()
    out = compute()
    with job.open(record()):
        main.write(run.path, out.rows)
        for write in out.also:
            write(run.path)
        job.write_meta(main.path(run.path), **out.meta)
    took = {"seconds": round(job.seconds(), 2)} if timed else {}
    job.complete(**out.record, **took)
    return {"skipped": False, "stage_hash": stage_hash, **out.record, **took, **out.report}
