"""Stage 2, labelled: the labelled finders on the rows of the user's labelled data that the
evaluation sample does not take, judged by the gold labels (``discovery.labelled_run``).

Off until ``labelled.data`` names the data. It reads no corpus: the ranked task model scores
the labelled rows (and, for occlusion, their shortened copies) and the sentence encoder of
``slices.semantic`` embeds them for semantic slices and word groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from discovery import (
    LABELLED,
    LabelledConfig,
    RankingConfig,
    SemanticSlicesConfig,
    TaskModelConfig,
)
from synth import SeedCorpusConfig
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._models import TaskModelSections, scorer_sections
from synthcheck.stages._slice_base import forget

OFF = "off (no labelled.data)"


@dataclass(frozen=True)
class LabelledSections:
    labelled: LabelledConfig
    ranking: RankingConfig
    models: TaskModelSections
    corpus: SeedCorpusConfig
    semantic: SemanticSlicesConfig

    @property
    def ranked(self) -> TaskModelConfig:
        """The ranked task model's config."""
        return self.models.scoring(self.ranking).task_model


def sections(cfg: RunConfig) -> LabelledSections:
    """The labelled section, the ranking rule (which task model), the task models (with the
    evaluation section whose sample is kept apart), the seed corpus (a file that is its own
    is read with its fields) and the sentence encoder."""
    return LabelledSections(cfg.labelled, cfg.ranking, scorer_sections(cfg), cfg.corpus,
                            cfg.slices.semantic)


def models_key(s: LabelledSections) -> str:
    """The ranked task model's hash."""
    m = s.models
    return m.model_hashes([s.ranked])[0]


def stage_hash(s: LabelledSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``discovery.labelled_stage_hash`` (None when off)."""
    from discovery import labelled_stage_hash

    if s.labelled.data is None:
        return None
    return labelled_stage_hash(s.labelled, s.models.evaluation, labels=s.models.labels,
                               models_key=models_key(s), encoder=s.semantic.encoder,
                               corpus=s.corpus)


def outputs(s: LabelledSections, run_dir: Path) -> list[Path]:
    return [LABELLED.path(run_dir)]


def run(s: LabelledSections, ctx: StageContext) -> StageRun:
    from discovery import labelled_run, task_probabilities

    tm = s.ranked
    labels = s.models.labels

    def task(texts: list[str]) -> np.ndarray:
        scorer = (ctx.scorers[tm.name] if ctx.scorers is not None
                  else s.models.build([tm])[tm.name])
        return task_probabilities(scorer, texts, labels)

    out = labelled_run(ctx.run.path, labels=labels, labelled=s.labelled,
                       evaluation=s.models.evaluation, task_fn=task,
                       models_key=models_key(s), encoder=s.semantic.encoder,
                       batch_size=s.semantic.batch_size, corpus=s.corpus,
                       config_dump=ctx.record, progress=ctx.progress)
    return StageRun(not out.get("skipped"), {"labelled": out})


def off(s: LabelledSections) -> str | None:
    return None if s.labelled.data is not None else OFF


def when_off(s: LabelledSections, ctx: StageContext) -> dict[str, Any]:
    return forget("labelled", ctx)


STAGE = Stage(name="labelled", sections=sections, upstream=(), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off, when_off=when_off)
