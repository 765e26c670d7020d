"""Stage 2, score: every corpus sentence scored by each task model and the few-shot
reference (``discovery.score_run``; resumable in chunks)."""

from __future__ import annotations

from pathlib import Path

from discovery import REFERENCE_SCORES, TASK_SCORES
from synth import CORPUS_STATS
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun, StageWork
from synthcheck.stages._models import TaskModelSections, scorer_sections
from synthcheck.stages.generate import check_corpus


def sections(cfg: RunConfig) -> TaskModelSections:
    """The labels, the task models, the reference and the evaluation split."""
    return scorer_sections(cfg)


def stage_hash(s: TaskModelSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """Every task model's hash, the reference's, the corpus fingerprint and the corpus's
    recorded generation hash (None for a corpus written by hand); None without a corpus."""
    from discovery import expected_score_hash
    from synth import has_corpus

    if run_dir is None or not has_corpus(run_dir):
        return None
    return expected_score_hash(run_dir, labels=s.labels, task_models=s.task_models,
                               reference=s.reference, evaluation=s.evaluation)


def outputs(s: TaskModelSections, run_dir: Path) -> list[Path]:
    return [TASK_SCORES.path(run_dir, name=t.name) for t in s.task_models] + [
        REFERENCE_SCORES.path(run_dir)]


def run(s: TaskModelSections, ctx: StageContext) -> StageRun:
    """Score the chunks still missing (the models are loaded only if one is); the chunks
    run on ``ctx.executor`` (default: this process). The stage hash is the declaration's
    (:func:`stage_hash`), computed once."""
    from discovery import score_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    out = score_run(ctx.run.path, labels=s.labels, task_models=s.task_models,
                    reference=s.reference, evaluation=s.evaluation, config_dump=ctx.record,
                    progress=ctx.progress, executor=ctx.executor,
                    stage_hash=ctx.hash_of("score"))
    return StageRun(not out["skipped"], {"score": out})


def work(s: TaskModelSections, w: StageWork) -> tuple[str, int]:
    """The reference and the corpus's sentences (none left once the stage is complete)."""
    import json

    if w.status == "complete":
        return "", 0
    try:
        stats = json.loads(CORPUS_STATS.path(w.run.path).read_text(encoding="utf-8"))
        kept = int(stats.get("kept", 0))
    except (OSError, ValueError):
        kept = 0
    return s.reference.model, kept


STAGE = Stage(name="score", sections=sections, upstream=("generate",), stage_hash=stage_hash,
              outputs=outputs, run=run, work=work)
