"""The run config: one YAML file that composes every stage's config."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from discovery import (
    EvaluationConfig,
    FocusConfig,
    LabelledConfig,
    MiningConfig,
    RankingConfig,
    ReferenceConfig,
    SlicesConfig,
    TaskModelConfig,
)
from formalize import VerifyConfig
from synth import Stage1Config
from synth.core import STRICT as _STRICT
from synth.core import load_config, runtime_field
from synthcheck._executors import ExecutorConfig


class RunConfig(Stage1Config):
    """A whole synthcheck run: stage 1 (task, corpus, queries, generator) and later stages."""

    model_config = _STRICT

    name: str = "run"
    """Run name (used in reports)."""
    # Stage 2 and 3 sections are added below as those stages land.
    reference: ReferenceConfig = Field(default_factory=ReferenceConfig)
    """The few-shot LLM reference (prompt, shots, label words, calibration) (stage 2)."""
    task_models: list[TaskModelConfig] = Field(default_factory=lambda: [TaskModelConfig()])
    """The classifiers under test (stage 2; default: the demo sentiment model)."""
    ranking: RankingConfig = Field(default_factory=RankingConfig)
    """Divergence metric and hard-subset size (stage 2)."""
    mining: MiningConfig = Field(default_factory=MiningConfig)
    """N-gram mining over the hard subset (stage 2)."""
    focus: FocusConfig = Field(default_factory=FocusConfig)
    """Adaptive focus rounds after mining: new sentences for the top candidates, scored by
    both models, each candidate's failure rate tested against the base corpus's (stage 2;
    on by default)."""
    slices: SlicesConfig = Field(default_factory=SlicesConfig)
    """Semantic slices, metadata slices and per-word occlusion over the whole scored corpus,
    and the unified ranked ``findings.jsonl`` (stage 2; each on by default)."""
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    """Held-out evaluation of the task models and the reference (stage 2)."""
    labelled: LabelledConfig = Field(default_factory=LabelledConfig)
    """Discovery on labelled data the user has, with gold labels as the judge (stage 2;
    off until ``labelled.data`` names the data: ``evaluation``, ``packaged:<name>`` or a
    file). Its findings join ``findings.jsonl`` with ``data: labelled``."""
    suite: str | None = None
    """Path to the test suite YAML that `synthcheck verify` runs (stage 3; optional)."""
    verify: VerifyConfig = Field(default_factory=VerifyConfig)
    """How the suite is expanded and scored (sample, seed, case limit, batching)."""
    executor: ExecutorConfig = runtime_field(default_factory=ExecutorConfig)
    """Where generation shards and scoring chunks run: ``local`` or ``ray`` (never changes
    an output or a hash)."""


def load_run_config(path: str | Path, overrides: Sequence[str] = ()) -> RunConfig:
    """Load and validate a run config YAML file with ``-P`` overrides (see synth.load_config);
    with ``reference.shots_from``, the reference's shots are drawn from the labelled data here
    (:func:`discovery.shots_from_labelled`), so every stage and hash sees them.

    Raises:
        ConfigError: the file or an override is invalid.
        DataError: ``reference.shots_from`` cannot read the labelled data.
    """
    return with_drawn_shots(load_config(path, RunConfig, overrides))


def with_drawn_shots(cfg: RunConfig) -> RunConfig:
    """``cfg`` with ``reference.shots`` drawn by ``reference.shots_from`` (unchanged
    without it)."""
    from discovery import shots_from_labelled

    if cfg.reference.shots_from is None:
        return cfg
    ref = shots_from_labelled(cfg.reference, cfg.task.label_space, cfg.labelled,
                              cfg.evaluation, cfg.corpus)
    return RunConfig.model_validate({**cfg.model_dump(), "reference": ref.model_dump()})
