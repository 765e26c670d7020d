"""Stage 2, focus: adaptive focus rounds after mining (``discovery.focus_run``).

The generator backend, the ranked task model and the reference are loaded only when some
candidate's sentences are still missing, each once for the whole stage (the task model is
the one `discover` shares with evaluate and verify); new sentences are calibrated with the
bias the score stage fitted (:class:`discovery.ScoringModels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discovery import (
    FOCUS,
    FocusConfig,
    MiningConfig,
    RankingConfig,
    ScoringModels,
    pool_stages,
)
from synth import GeneratorConfig, SeedCorpusConfig
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun, StageWork
from synthcheck.stages._models import TaskModelSections, scorer_sections
from synthcheck.stages.generate import check_corpus

OFF = "off (focus.enabled: false)"
POOL_STAGES = pool_stages()
"""The stages whose rows join the candidate pool unless ``focus.select: mined`` (the finding
sources with a pool adapter)."""


@dataclass(frozen=True)
class FocusSections:
    focus: FocusConfig
    ranking: RankingConfig
    mining: MiningConfig
    models: TaskModelSections
    generator: GeneratorConfig
    corpus: SeedCorpusConfig

    @property
    def scoring(self) -> ScoringModels:
        """The ranked task model and the reference, as focus rounds score new sentences."""
        return self.models.scoring(self.ranking)


def sections(cfg: RunConfig) -> FocusSections:
    """Focus, the ranking rule and mining, the task models (with the reference and the
    evaluation split that load them), the generator and the seed corpus (the queries)."""
    return FocusSections(cfg.focus, cfg.ranking, cfg.mining, scorer_sections(cfg),
                         cfg.generator, cfg.corpus)


def seed_texts(s: FocusSections) -> list[str]:
    """The seed corpus documents focus queries are drawn from."""
    from synth import load_seed_corpus

    return [d.text for d in load_seed_corpus(s.corpus)]


def stage_hash(s: FocusSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """The focus and generator sections, the labels, the seed documents, the mine stage's
    hash, the two models' key and the failure rule (None without a mine hash)."""
    return _stage_hash(s, upstream, seed_texts(s)) if upstream.get("mine") else None


def _stage_hash(s: FocusSections, upstream: Hashes, docs: Sequence[str]) -> str:
    from discovery import focus_hash, focus_upstream, source_hashes

    pool = source_hashes(upstream, POOL_STAGES)
    return focus_hash(s.focus, s.models.labels, s.generator, docs,
                      upstream=focus_upstream(s.focus, str(upstream["mine"]), pool),
                      models_key=s.scoring.key, min_margin=s.ranking.min_reference_margin)


def outputs(s: FocusSections, run_dir: Path) -> list[Path]:
    return [FOCUS.path(run_dir)]


def run(s: FocusSections, ctx: StageContext) -> StageRun:
    """The focus rounds on a current mine stage (the corpus, scores, hard subset and
    n-grams must have been made with these sections). The upstream hashes, the seed
    documents and the stage hash (the declaration's) are computed once; a current stage is
    skipped before the scores are read."""
    from discovery import candidate_pool as pool
    from discovery import focus_run, source_hashes

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    upstream = {u: ctx.hash_of(u) for u in ("mine", *POOL_STAGES)}
    docs = seed_texts(s)
    out = focus_run(ctx.run.path, labels=s.models.labels, focus=s.focus, ranking=s.ranking,
                    mining=s.mining, task_models=s.models.task_models,
                    generator=s.generator, seed_docs=docs,
                    models=s.scoring.focus_models(ctx.run.path, s.generator, ctx.scorers),
                    config_dump=ctx.record, mine_hash=upstream["mine"],
                    progress=ctx.progress,
                    pool=pool(ctx.run.path, s.focus, {u: upstream[u] for u in POOL_STAGES}),
                    slices_upstream=source_hashes(upstream, POOL_STAGES),
                    stage_hash=_stage_hash(s, upstream, docs) if upstream["mine"] else None)
    return StageRun(not out.get("skipped"), {"focus": out})


def off(s: FocusSections) -> str | None:
    return None if s.focus.enabled else OFF


def when_off(s: FocusSections, ctx: StageContext) -> dict[str, Any]:
    """Forget the stage in the manifest, so the report ignores an old ``focus.jsonl``."""
    if ctx.run.stage_status("focus") is not None:
        ctx.run.reset_stage("focus")
    return {"focus": {"skipped": True, "disabled": True}}


def work(s: FocusSections, w: StageWork) -> tuple[str, int]:
    """The generator and ``focus.max_prompts``, the focus-cost formula's bound (none once
    complete)."""
    if w.status == "complete":
        return "", 0
    return s.generator.model, s.focus.max_prompts


STAGE = Stage(name="focus", sections=sections, upstream=("mine", *POOL_STAGES),
              stage_hash=stage_hash, outputs=outputs, run=run, off=off, when_off=when_off,
              work=work)
