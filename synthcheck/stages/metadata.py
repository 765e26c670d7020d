"""Stage 2, metadata: sentences sharing a surface property (length band, ``!``, ``?``,
digits, question, negation, ...), each tested against the rest
(``discovery.metadata_run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._slice_base import SliceSections, forget, sections
from synthcheck.stages.generate import check_corpus


def stage_hash(s: SliceSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``slices.metadata``, the failure rule, the ranked task model and the score stage's
    hash (None without one)."""
    from discovery import slice_stage_hash

    score = upstream.get("score")
    return slice_stage_hash("metadata", s.slices, score, s.ranked) if score else None


def outputs(s: SliceSections, run_dir: Path) -> list[Path]:
    return [run_dir / "metadata.jsonl"]


def run(s: SliceSections, ctx: StageContext) -> StageRun:
    from discovery import metadata_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    kw = s.kwargs(ctx)
    out = metadata_run(ctx.run.path, **kw)
    return StageRun(not out.get("skipped"), {"metadata": out})


def off(s: SliceSections) -> str | None:
    return None if s.slices.metadata.enabled else "off (slices.metadata.enabled: false)"


def when_off(s: SliceSections, ctx: StageContext) -> dict[str, Any]:
    return forget("metadata", ctx)


STAGE = Stage(name="metadata", sections=sections, upstream=("score",), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off, when_off=when_off)
