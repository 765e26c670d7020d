"""Stage 2, focus: adaptive focus rounds after mining (``discovery.focus_run``).

The generator backend, the ranked task model and the reference are loaded only when some
candidate's sentences are still missing, each once for the whole stage (the task model is
the one `discover` shares with evaluate and verify). New sentences are calibrated with the
bias the score stage fitted, so they read exactly like the corpus.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery import (
    FOCUS,
    FocusConfig,
    MiningConfig,
    RankingConfig,
    TaskModelConfig,
    TaskScorer,
    pool_stages,
)
from synth import GeneratorConfig, SeedCorpusConfig
from synth.core import config_hash
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun, StageWork
from synthcheck.stages._models import TaskModelSections, scorer_sections
from synthcheck.stages.generate import check_corpus

if TYPE_CHECKING:
    from discovery import FewShotReference, FocusModels
    from synth.engines import Backend, Generation, PrefixAlignment, SamplingConfig

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
    def ranked(self) -> TaskModelConfig:
        """The ranked task model's config (the one focus rounds score with)."""
        from discovery import ranked_task_name

        name = ranked_task_name(self.ranking, self.models.task_models)
        return next(t for t in self.models.task_models if t.name == name)


def sections(cfg: RunConfig) -> FocusSections:
    """Focus, the ranking rule and mining, the task models (with the reference and the
    evaluation split that load them), the generator and the seed corpus (the queries)."""
    return FocusSections(cfg.focus, cfg.ranking, cfg.mining, scorer_sections(cfg),
                         cfg.generator, cfg.corpus)


def models_key(s: FocusSections) -> str:
    """Hash of what changes the focus scores: the ranked task model's and the reference's
    hashes (as the score stage computes them)."""
    from discovery import reference_hash, task_model_hash

    m = s.models
    return config_hash({"task": task_model_hash(s.ranked, labels=m.labels,
                                                 reference=m.reference,
                                                 evaluation=m.evaluation),
                        "reference": reference_hash(m.reference, m.labels)})


def seed_texts(s: FocusSections) -> list[str]:
    """The seed corpus documents focus queries are drawn from."""
    from synth import load_seed_corpus

    return [d.text for d in load_seed_corpus(s.corpus)]


def stage_hash(s: FocusSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """The focus and generator sections, the labels, the seed documents, the mine stage's
    hash, the two models' hashes and the failure rule (None without a mine hash)."""
    return _stage_hash(s, upstream, seed_texts(s)) if upstream.get("mine") else None


def _stage_hash(s: FocusSections, upstream: Hashes, docs: Sequence[str]) -> str:
    from discovery import focus_hash, focus_upstream, source_hashes

    pool = source_hashes(upstream, POOL_STAGES)
    return focus_hash(s.focus, s.models.labels, s.generator, docs,
                      upstream=focus_upstream(s.focus, str(upstream["mine"]), pool),
                      models_key=models_key(s), min_margin=s.ranking.min_reference_margin)


def outputs(s: FocusSections, run_dir: Path) -> list[Path]:
    return [FOCUS.path(run_dir)]


class _LazyBackend:
    """The generator backend, loaded on its first use."""

    def __init__(self, build: Callable[[], Backend], name: str) -> None:
        self._build = functools.cache(build)
        self.name = name

    def label_logprobs(self, prefix: str, texts: Sequence[str],
                       label_continuations: Mapping[str, str], suffix: str = "", *,
                       align: PrefixAlignment | None = None) -> list[dict[str, float]]:
        return self._build().label_logprobs(prefix, texts, label_continuations, suffix,
                                            align=align)

    def render_chat(self, user: str, system: str | None = None) -> str:
        return str(self._build().render_chat(user, system))

    def generate(self, prompts: Sequence[str], params: SamplingConfig, seeds: Sequence[int]
                 ) -> list[Generation]:
        return self._build().generate(prompts, params, seeds)


def focus_models(s: FocusSections, run_dir: str | Path,
                 task_scorers: Mapping[str, TaskScorer] | None = None) -> FocusModels:
    """The stage's :class:`discovery.FocusModels`, every model lazy.

    Args:
        task_scorers: the task scorers by name, looked up only when needed (``discover``
            passes the ones it shares with evaluate and verify); default: build the ranked
            one alone.
    """
    from discovery import (
        FewShotReference,
        FocusModels,
        abstain_calibrator,
        abstain_probability,
        is_few_shot,
        reference_calibrator,
    )
    from synth import generator_backend

    labels = s.models.labels
    tm = s.ranked

    @functools.cache
    def task_scorer() -> TaskScorer:
        if task_scorers is not None:
            return task_scorers[tm.name]
        return s.models.build([tm])[tm.name]

    @functools.cache
    def reference() -> FewShotReference:
        return FewShotReference.from_config(s.models.reference, labels.list)

    def task(texts: list[str]) -> np.ndarray:
        scorer = task_scorer()
        if is_few_shot(tm.spec):  # calibrated as the score stage did
            cal = reference_calibrator(run_dir, labels, task=tm.name)
            assert isinstance(scorer, FewShotReference), tm.spec
            raw = np.asarray(scorer.raw_logprobs(texts))
            return np.asarray(cal.predict_proba(raw)) if cal is not None else np.exp(raw)
        rows = scorer.predict_proba(texts)
        return np.array([[row[lab] for lab in labels] for row in rows], dtype=np.float64)

    def ref(texts: list[str]) -> np.ndarray:
        # Calibrated as the score stage did; with an abstain answer, its probability is
        # a last column (read with the score stage's abstain calibrator).
        k = len(labels)
        cal = reference_calibrator(run_dir, labels)
        raw = np.asarray(reference().raw_logprobs(texts))
        probs = np.asarray(cal.predict_proba(raw[:, :k])) if cal is not None \
            else np.exp(raw[:, :k])
        abstain_cal = abstain_calibrator(run_dir, labels)
        if abstain_cal is None:
            return probs
        return np.column_stack([probs, abstain_probability(abstain_cal, raw)])

    return FocusModels(backend=_LazyBackend(lambda: generator_backend(s.generator),
                                                  s.generator.model), task=task,
                       reference=ref, key=models_key(s))


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
                    models=focus_models(s, ctx.run.path, ctx.scorers),
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
    """The generator and ``focus.max_prompts`` (none once complete)."""
    if w.status == "complete":
        return "", 0
    return s.generator.model, s.focus.max_prompts


STAGE = Stage(name="focus", sections=sections, upstream=("mine", *POOL_STAGES),
              stage_hash=stage_hash, outputs=outputs, run=run, off=off, when_off=when_off,
              work=work)
