"""The pipeline's stages, one declaration each (see :class:`Stage`), in the order they run:
generate -> score -> rank -> mine -> semantic -> metadata -> occlusion -> labelled -> focus ->
findings -> evaluate -> verify -> report.

To add a stage: write its module here (its sections, hash, outputs and run function, the
algorithm itself living in ``synth``/``discovery``/``formalize``), append its ``STAGE`` to
:data:`STAGES`, test it, and document it (docs/architecture.md, "Adding things").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery import corpus_sources
from synthcheck.stages import (
    evaluate,
    findings,
    focus,
    generate,
    labelled,
    metadata,
    mine,
    occlusion,
    rank,
    report,
    score,
    semantic,
    verify,
)
from synthcheck.stages._base import Stage, StageContext, StageRun, StageWork
from synthcheck.stages._models import LazyScorers, TaskModelSections, scorer_sections
from synthcheck.stages._slice_base import source_stage

if TYPE_CHECKING:
    from synthcheck._config import RunConfig

SOURCE_STAGES: tuple[Stage[Any], ...] = tuple(source_stage(name) for name in corpus_sources())
"""One stage per corpus-only finding source (``discovery.corpus_sources``), after the
built-in slice stages."""

STAGES: tuple[Stage[Any], ...] = (generate.STAGE, score.STAGE, rank.STAGE, mine.STAGE,
                                  semantic.STAGE, metadata.STAGE, occlusion.STAGE,
                                  labelled.STAGE, *SOURCE_STAGES, focus.STAGE, findings.STAGE,
                                  evaluate.STAGE, verify.STAGE, report.STAGE)
"""Every stage, in the order `discover` runs them (each after its upstream stages)."""

STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)


def stage_named(name: str) -> Stage[Any]:
    """The declaration of stage ``name``."""
    return STAGES[STAGE_NAMES.index(name)]


def hash_of(cfg: RunConfig, run_dir: str | Path | None) -> Callable[[str], str | None]:
    """``name -> hash`` of stage ``name`` under ``cfg`` on ``run_dir`` (its upstream stages'
    hashes first, each from its declaration; None where it cannot be known: no corpus, no
    suite, a stage that is off). Computed anew at each call, since a hash that covers the
    corpus changes once the corpus is written."""
    path = Path(run_dir) if run_dir is not None else None

    def of(name: str) -> str | None:
        stage = stage_named(name)
        s = stage.sections(cfg)
        if stage.off(s) is not None:
            return None
        return stage.stage_hash(s, {u: of(u) for u in stage.upstream}, path)
    return of


__all__ = ["LazyScorers", "STAGES", "STAGE_NAMES", "Stage", "StageContext", "StageRun",
           "StageWork",
           "TaskModelSections", "hash_of", "scorer_sections", "stage_named"]
