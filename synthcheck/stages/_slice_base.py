"""What the slice stages (semantic, metadata, occlusion, findings) read: the slices section,
the ranking rule (which task model is ranked) and the task models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from discovery import RankingConfig, SlicesConfig
from synthcheck._config import RunConfig
from synthcheck.stages._base import StageContext
from synthcheck.stages._models import TaskModelSections, scorer_sections


@dataclass(frozen=True)
class SliceSections:
    slices: SlicesConfig
    ranking: RankingConfig
    models: TaskModelSections
    focus_rule: str = ""

    @property
    def ranked(self) -> str:
        """The ranked task model's name."""
        from discovery import ranked_task_name

        return ranked_task_name(self.ranking, self.models.task_models)

    def kwargs(self, ctx: StageContext) -> dict[str, Any]:
        """The arguments every slice stage's run function takes."""
        return dict(labels=self.models.labels, slices=self.slices, ranking=self.ranking,
                    task_models=self.models.task_models, score_hash=ctx.hash_of("score"),
                    config_dump=ctx.record)


def sections(cfg: RunConfig) -> SliceSections:
    """The slices section, the ranking rule and the task models (and, for findings, the
    focus failure rule in words)."""
    from discovery import focus_rule_text

    rule = focus_rule_text(cfg.focus) if cfg.focus.enabled else ""
    return SliceSections(cfg.slices, cfg.ranking, scorer_sections(cfg), rule)


def forget(stage: str, ctx: StageContext) -> dict[str, Any]:
    """A stage turned off is forgotten in the manifest, so findings and the report ignore
    its old file."""
    if ctx.run.stage_status(stage) is not None:
        ctx.run.reset_stage(stage)
    return {stage: {"skipped": True, "disabled": True}}
