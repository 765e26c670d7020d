"""The one stage runner: a job is ``compute() -> JobRows``; the runner owns the bookkeeping.

:func:`run_job` skips a stage whose recorded hash is current and whose outputs are intact,
else computes the rows before anything is written (bad input leaves the run directory
unchanged), opens the stage in the manifest, writes the main artifact and its
``.meta.json`` (provenance of the stage hash plus the job's fields), any further outputs,
and completes the stage with the outputs' digests. The rank, mine and slice stages
(``semantic``, ``metadata``, ``occlusion``, plug-in finding sources, ``findings``) run
through it; scoring and focus rounds, which resume in chunks, keep their own loops.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discovery._stage_state import output_digests, outputs_problem
from synth.core import Artifact, RunDir, provenance, write_json_atomic


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


def is_current(run: RunDir, stage: str, stage_hash: str, paths: Sequence[Path]) -> bool:
    """``stage`` is complete with ``stage_hash`` and its outputs are as recorded."""
    return run.is_current(stage, stage_hash) and outputs_problem(run, stage, paths) is None


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
    paths = [a.path(run.path) for a in outputs]
    if is_current(run, stage, stage_hash, paths):
        return {"skipped": True, "stage_hash": stage_hash}
    started = time.perf_counter()
    out = compute()
    run.open_stage(record(), stage, stage_hash)
    main.write(run.path, out.rows)
    for write in out.also:
        write(run.path)
    write_json_atomic(main.meta(run.path), {**provenance(stage_hash), **out.meta})
    took = {"seconds": round(time.perf_counter() - started, 2)} if timed else {}
    run.complete(stage, stage_hash, stage_hash=stage_hash, **out.record, **took,
                 digests=output_digests(run, paths))
    return {"skipped": False, "stage_hash": stage_hash, **out.record, **took, **out.report}
