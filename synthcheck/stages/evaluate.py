"""Stage 2, evaluate: held-out accuracy of the task models and the reference, and the
precision of the hard-subset rule measured on the same held-out data (``eval.json``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discovery import EVAL, RankingConfig
from synth import CORPUS_STATS, SeedCorpusConfig
from synth.core import section_hash
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._models import TaskModelSections, scorer_sections


@dataclass(frozen=True)
class EvaluateSections:
    models: TaskModelSections
    ranking: RankingConfig
    corpus: SeedCorpusConfig


def sections(cfg: RunConfig) -> EvaluateSections:
    """The task models (with the reference and the evaluation section), the ranking rule
    whose precision it measures, and the seed corpus (a held-out file that is the seed
    corpus's own is read with its fields and encoding)."""
    return EvaluateSections(scorer_sections(cfg), cfg.ranking, cfg.corpus)


def stage_hash(s: EvaluateSections, upstream: Hashes = {}, run_dir: Path | None = None  # noqa: B006
               ) -> str:
    """The evaluation settings (the fields and encoding actually read), the task models,
    the reference and the ranking rule (it needs no run directory; with ``ranking.top_k``
    the stage also records the corpus size it scaled the cut-off by)."""
    from discovery import reference_hash

    m = s.models
    return section_hash({"evaluation": m.evaluation.resolved(s.corpus),
                         "task_models": m.model_hashes(),
                         "reference": reference_hash(m.reference, m.labels),
                         "ranking": s.ranking}, {})


def outputs(s: EvaluateSections, run_dir: Path) -> list[Path]:
    return [EVAL.path(run_dir)]


def evaluate_sections(s: EvaluateSections, data: str | None = None, *,
                      scorers: Mapping[str, Any] | None = None, progress: bool = True,
                      corpus_size: int | None = None, raw_dir: str | Path | None = None
                      ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """:func:`discovery.evaluate_reliability` on these sections: the held-out reports
    (``data`` over ``evaluation.data``) and the hard subset's precision on the same held-out
    probabilities, with the trust decision (``corpus_size`` scales ``ranking.top_k``; given a
    run directory ``raw_dir``, the few-shot models' held-out raw log-probs are kept there).
    """
    from discovery import evaluate_reliability

    m = s.models
    return evaluate_reliability(m.labels, m.evaluation, data, task_models=m.task_models,
                                reference=m.reference, ranking=s.ranking, corpus=s.corpus,
                                scorers=scorers, progress=progress, corpus_size=corpus_size,
                                raw_dir=raw_dir)


def run_corpus_size(run_dir: str | Path) -> int | None:
    """The run's corpus size (``corpus/stats.json``'s ``kept``), or None without a readable
    one."""
    try:
        stats = json.loads(CORPUS_STATS.path(run_dir).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    kept = stats.get("kept") if isinstance(stats, dict) else None
    return kept if isinstance(kept, int) else None


def run(s: EvaluateSections, ctx: StageContext) -> StageRun:
    """Evaluate unless ``eval.json`` is current (through :class:`discovery.StageJob`: its
    recorded hash, the corpus size ``ranking.top_k`` scales by, the file's digest and its
    own provenance); the few-shot models' held-out raw log-probs are kept in the run (see
    :func:`evaluate_sections`). ``ctx.scorers`` is looked up per model (only those needed
    are loaded)."""
    from discovery import StageJob, write_eval_json

    ehash = stage_hash(s)
    path = EVAL.path(ctx.run.path)
    scaled = s.ranking.top_k is not None and s.models.evaluation.include_reference
    size = {"corpus": run_corpus_size(ctx.run.path)} if scaled else {}  # top_k scales by it
    job = StageJob(ctx.run, stage="evaluate", stage_hash=ehash, outputs=outputs(s, ctx.run.path))
    stored = ctx.run.current_output("evaluate", ehash, path, **size) \
        if job.current(**size) else None
    if stored is not None and isinstance(stored.get("reports"), dict):
        evaluation = stored
        ran = False
    else:
        reports, reliability = evaluate_sections(s, scorers=ctx.scorers, progress=ctx.progress,
                                                 corpus_size=size.get("corpus"),
                                                 raw_dir=ctx.run.path)
        write_eval_json(path, reports, ehash, **reliability)
        job.complete(models=sorted(reports), **size)
        evaluation = {"reports": reports, **reliability}
        ran = True
    # "evaluation" keeps the hard subset's precision beside the reports
    return StageRun(ran, {"evaluate": evaluation["reports"], "evaluation": evaluation})


STAGE = Stage(name="evaluate", sections=sections, upstream=(), stage_hash=stage_hash,
              outputs=outputs, run=run)
