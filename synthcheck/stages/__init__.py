"""The pipeline's stages, one declaration each (see :class:`Stage`), in the order they run:
generate -> score -> rank -> mine -> focus -> evaluate -> verify -> report.

To add a stage: write its module here (its sections, hash, outputs and run function, the
algorithm itself living in ``synth``/``discovery``/``formalize``), append its ``STAGE`` to
:data:`STAGES`, test it, and document it (docs/architecture.md, "Adding things").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthcheck.stages import evaluate, focus, generate, mine, rank, report, score, verify
from synthcheck.stages._base import (
    LazyScorers,
    Stage,
    StageContext,
    StageRun,
    TaskModelSections,
    scorer_sections,
)

if TYPE_CHECKING:
    from synthcheck._config import RunConfig

STAGES: tuple[Stage[Any], ...] = (generate.STAGE, score.STAGE, rank.STAGE, mine.STAGE,
                                  focus.STAGE, evaluate.STAGE, verify.STAGE, report.STAGE)
"""Every stage, in the order `discover` runs them (each after its upstream stages)."""

STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)


def stage_named(name: str) -> Stage[Any]:
    """The declaration of stage ``name``."""
    return STAGES[STAGE_NAMES.index(name)]


def stage_hashes(cfg: RunConfig, run_dir: str | Path | None = None) -> dict[str, str | None]:
    """Every stage's hash under ``cfg`` (on ``run_dir``'s corpus, for the stages that need
    one; None where it cannot be known: no corpus, no suite, a stage that is off)."""
    path = Path(run_dir) if run_dir is not None else None
    hashes: dict[str, str | None] = {}
    for stage in STAGES:
        s = stage.sections(cfg)
        if stage.off(s) is not None:
            hashes[stage.name] = None
            continue
        hashes[stage.name] = stage.stage_hash(s, {u: hashes.get(u) for u in stage.upstream},
                                              path)
    return hashes


__all__ = ["LazyScorers", "STAGES", "STAGE_NAMES", "Stage", "StageContext", "StageRun",
           "TaskModelSections", "scorer_sections", "stage_hashes", "stage_named"]
