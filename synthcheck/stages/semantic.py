"""Stage 2, semantic: the whole scored corpus embedded (all-MiniLM-L6-v2), grouped by a
seeded k-means, each group's failure rate tested against the rest's
(``discovery.semantic_run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._slice_base import SliceSections, forget, sections
from synthcheck.stages.generate import check_corpus


def stage_hash(s: SliceSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``slices.semantic``, the failure rule, the ranked task model and the score stage's
    hash (None without one)."""
    from discovery import slice_stage_hash

    score = upstream.get("score")
    return slice_stage_hash("semantic", s.slices, score, s.ranked) if score else None


def outputs(s: SliceSections, run_dir: Path) -> list[Path]:
    return [run_dir / "slices.jsonl"]


def run(s: SliceSections, ctx: StageContext) -> StageRun:
    from discovery import semantic_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    out = semantic_run(ctx.run.path, progress=ctx.progress, **s.kwargs(ctx))
    return StageRun(not out.get("skipped"), {"semantic": out})


def off(s: SliceSections) -> str | None:
    return None if s.slices.semantic.enabled else "off (slices.semantic.enabled: false)"


def when_off(s: SliceSections, ctx: StageContext) -> dict[str, Any]:
    return forget("semantic", ctx)


STAGE = Stage(name="semantic", sections=sections, upstream=("score",), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off, when_off=when_off)
