"""Stage 2, rank: the hard subset, the sentences on which the task model and the reference
diverge most (``discovery.rank_run``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from discovery import HARD, RankingConfig, TaskModelConfig
from synth.core import LabelSpace
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages.generate import check_corpus


@dataclass(frozen=True)
class RankSections:
    labels: LabelSpace
    ranking: RankingConfig
    task_models: tuple[TaskModelConfig, ...]


def sections(cfg: RunConfig) -> RankSections:
    """The labels, the ranking section and the task models (which one is ranked)."""
    return RankSections(cfg.task.label_space, cfg.ranking, tuple(cfg.task_models))


def stage_hash(s: RankSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``ranking`` plus the score stage's hash (None without one)."""
    from discovery import rank_stage_hash

    score = upstream.get("score")
    return rank_stage_hash(s.ranking, score) if score else None


def outputs(s: RankSections, run_dir: Path) -> list[Path]:
    return [HARD.path(run_dir)]


def run(s: RankSections, ctx: StageContext) -> StageRun:
    from discovery import rank_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    out = rank_run(ctx.run.path, labels=s.labels, ranking=s.ranking, task_models=s.task_models,
                   config_dump=ctx.record, score_hash=ctx.hash_of("score"))
    return StageRun(not out.get("skipped"), {"rank": out})


STAGE = Stage(name="rank", sections=sections, upstream=("score",), stage_hash=stage_hash,
              outputs=outputs, run=run)
