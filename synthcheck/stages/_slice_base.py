"""What the slice stages (semantic, metadata, occlusion, findings) read: the slices section,
the ranking rule (which task model is ranked) and the task models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discovery import RankingConfig, SlicesConfig
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._models import TaskModelSections, scorer_sections


@dataclass(frozen=True)
class SliceSections:
    slices: SlicesConfig
    ranking: RankingConfig
    models: TaskModelSections
    focus_rule: str = ""
    focus_alpha: float = 0.05

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
    run's one failure rule in words when focus rounds run)."""
    from discovery import check_source_names, focus_rule_text

    check_source_names(cfg.slices.sources)
    abstain = cfg.reference.abstain
    rule = focus_rule_text(cfg.ranking, abstain.threshold if abstain is not None else None) \
        if cfg.focus.enabled else ""
    return SliceSections(cfg.slices, cfg.ranking, scorer_sections(cfg), rule, cfg.focus.alpha)


def forget(stage: str, ctx: StageContext) -> dict[str, Any]:
    """A stage turned off is forgotten in the manifest, so findings and the report ignore
    its old file."""
    if ctx.run.stage_status(stage) is not None:
        ctx.run.reset_stage(stage)
    return {stage: {"skipped": True, "disabled": True}}


def corpus_slice_stage(name: str, *, progress: bool = False) -> Stage:
    """The declaration of a slice stage that reads the scored corpus alone (``semantic``,
    ``metadata``): its ``slices.<name>`` section, the failure rule, the ranked task model
    and the score stage's hash make its hash; ``discovery.<name>_run`` writes its finding
    source's artifact; ``slices.<name>.enabled: false`` turns it off and forgets it in the
    manifest."""

    def stage_hash(s: SliceSections, upstream: Hashes, run_dir: Path | None) -> str | None:
        from discovery import slice_stage_hash

        score = upstream.get("score")
        return slice_stage_hash(name, s.slices, score, s.ranked, ranking=s.ranking) \
            if score else None

    def outputs(s: SliceSections, run_dir: Path) -> list[Path]:
        from discovery import finding_sources

        return [finding_sources()[name].artifact.path(run_dir)]

    def run(s: SliceSections, ctx: StageContext) -> StageRun:
        import discovery
        from synthcheck.stages.generate import check_corpus

        check_corpus(ctx.run.path, ctx.hash_of("generate"))
        job = getattr(discovery, f"{name}_run")
        extra = {"progress": ctx.progress} if progress else {}
        out = job(ctx.run.path, **extra, **s.kwargs(ctx))
        return StageRun(not out.get("skipped"), {name: out})

    def off(s: SliceSections) -> str | None:
        section = getattr(s.slices, name)
        return None if section.enabled else f"off (slices.{name}.enabled: false)"

    def when_off(s: SliceSections, ctx: StageContext) -> dict[str, Any]:
        return forget(name, ctx)

    return Stage(name=name, sections=sections, upstream=("score",), stage_hash=stage_hash,
                 outputs=outputs, run=run, off=off, when_off=when_off)


def source_stage(name: str) -> Stage:
    """The declaration of a corpus-only finding source's stage (see
    :func:`discovery.corpus_sources`): on when ``slices.sources`` names it; its rows come from
    the source's ``compute`` over the scored corpus (``discovery.source_run``)."""

    def stage_hash(s: SliceSections, upstream: Hashes, run_dir: Path | None) -> str | None:
        from discovery import source_stage_hash

        score = upstream.get("score")
        return source_stage_hash(name, s.slices, score, s.ranked,
                                 ranking=s.ranking) if score else None

    def outputs(s: SliceSections, run_dir: Path) -> list[Path]:
        from discovery import finding_sources

        return [finding_sources()[name].artifact.path(run_dir)]

    def run(s: SliceSections, ctx: StageContext) -> StageRun:
        from discovery import finding_sources, source_run
        from synthcheck.stages.generate import check_corpus

        check_corpus(ctx.run.path, ctx.hash_of("generate"))
        # a source that edits sentences scores them with the ranked task model (lazy: loaded
        # only when the stage is not current)
        task_fn = s.models.scoring(s.ranking).task_fn(ctx.run.path, ctx.scorers) \
            if finding_sources()[name].edits else None
        out = source_run(ctx.run.path, name, task_fn=task_fn, **s.kwargs(ctx))
        return StageRun(not out.get("skipped"), {name: out})

    def off(s: SliceSections) -> str | None:
        return None if name in s.slices.sources else "off (not in slices.sources)"

    def when_off(s: SliceSections, ctx: StageContext) -> dict[str, Any]:
        return forget(name, ctx)

    return Stage(name=name, sections=sections, upstream=("score",), stage_hash=stage_hash,
                 outputs=outputs, run=run, off=off, when_off=when_off)
