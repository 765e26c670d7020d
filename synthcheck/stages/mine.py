"""Stage 2, mine: the n-grams over-represented in the hard subset against the whole corpus
(``discovery.mine_run``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from discovery import NGRAMS, NGRAMS_CSV, MiningConfig, RankingConfig, TaskModelConfig
from synth.core import LabelSpace
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages.generate import check_corpus


@dataclass(frozen=True)
class MineSections:
    labels: LabelSpace
    ranking: RankingConfig
    mining: MiningConfig
    task_models: tuple[TaskModelConfig, ...]


def sections(cfg: RunConfig) -> MineSections:
    """The labels, the ranking rule (its divergence), mining, and the task models."""
    return MineSections(cfg.task.label_space, cfg.ranking, cfg.mining, tuple(cfg.task_models))


def stage_hash(s: MineSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``mining`` plus the rank stage's hash (None without one)."""
    from discovery import mine_stage_hash

    rank = upstream.get("rank")
    return mine_stage_hash(s.mining, rank) if rank else None


def outputs(s: MineSections, run_dir: Path) -> list[Path]:
    return [NGRAMS.path(run_dir), NGRAMS_CSV.path(run_dir)]


def run(s: MineSections, ctx: StageContext) -> StageRun:
    from discovery import mine_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    out = mine_run(ctx.run.path, labels=s.labels, ranking=s.ranking, mining=s.mining,
                   task_models=s.task_models, config_dump=ctx.record,
                   rank_hash=ctx.hash_of("rank"))
    return StageRun(not out.get("skipped"), {"mine": out})


STAGE = Stage(name="mine", sections=sections, upstream=("rank",), stage_hash=stage_hash,
              outputs=outputs, run=run)
