"""New sentences scored as the score stage scored the corpus.

Focus rounds score the sentences they generate, and occlusion the sentences it shortens,
with the ranked task model and the reference, calibrated exactly as the score stage
calibrated the corpus (the bias it recorded in the scores' meta sidecars), so new sentences
read like the corpus. :class:`ScoringModels` is that pair as config: it loads nothing until
a sentence is scored (a current stage loads no model), and its :attr:`~ScoringModels.key`
is the hash of what changes their scores. :meth:`ScoringModels.focus_models` adds the
stage-1 generator backend, also lazy, for focus rounds.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._artifacts import REFERENCE_SCORES, TASK_SCORES
from discovery._config import (
    EvaluationConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._focus_stage import FocusModels
from discovery._protocols import TaskScorer
from synth.core import DataError, LabelSpace, config_hash

if TYPE_CHECKING:
    from discovery._calibration import Calibrator
    from synth import GeneratorConfig
    from synth.engines import Backend, Generation, PrefixAlignment, SamplingConfig

Scores = Callable[[list[str]], np.ndarray]
"""Texts -> n x labels probabilities (the reference's may add an abstain column)."""


@dataclass(frozen=True)
class ScoringModels:
    """The ranked task model and the reference, as the stages after the score stage score
    new sentences with them (focus rounds, occlusion).

    Attributes:
        labels: the task's labels (the column order of every probability array).
        task_model: the ranked task model's config (``ranking.task_model``, else the first).
        reference: the few-shot reference's config.
        evaluation: the evaluation split (a ``demo:`` task model is trained on it).
    """

    labels: LabelSpace
    task_model: TaskModelConfig
    reference: ReferenceConfig
    evaluation: EvaluationConfig

    @classmethod
    def ranked(cls, ranking: RankingConfig, task_models: Sequence[TaskModelConfig], *,
               labels: LabelSpace, reference: ReferenceConfig,
               evaluation: EvaluationConfig) -> ScoringModels:
        """The models of a run config: the task model ``ranking`` ranks, and the reference.

        Raises:
            ConfigError: ``ranking.task_model`` names no configured task model.
        """
        from discovery._task_models import ranked_task_name

        name = ranked_task_name(ranking, task_models)
        return cls(labels, next(t for t in task_models if t.name == name), reference,
                   evaluation)

    @property
    def key(self) -> str:
        """Hash of what changes the two models' scores: the ranked task model's and the
        reference's hashes (as the score stage computes them)."""
        from discovery._stage_hashes import reference_hash, task_model_hash

        return config_hash({"task": task_model_hash(self.task_model, labels=self.labels,
                                                     reference=self.reference,
                                                     evaluation=self.evaluation),
                            "reference": reference_hash(self.reference, self.labels)})

    def task_fn(self, run_dir: str | Path,
                task_scorers: Mapping[str, TaskScorer] | None = None) -> Scores:
        """The ranked task model's probabilities of new texts (a ``fewshot:`` one calibrated
        as the score stage calibrated it), the model loaded on the first call.

        Args:
            task_scorers: the task scorers by name, looked up only when needed (``discover``
                passes the ones it shares with evaluate and verify); default: build the
                ranked one alone.
        """
        from discovery._kinds import is_few_shot
        from discovery._reference import FewShotReference
        from discovery._task_models import build_task_scorers

        tm, labels = self.task_model, self.labels

        @functools.cache
        def scorer() -> TaskScorer:
            if task_scorers is not None:
                return task_scorers[tm.name]
            built: TaskScorer = build_task_scorers([tm], labels, reference=self.reference,
                                                   evaluation=self.evaluation)[tm.name]
            return built

        def task(texts: list[str]) -> np.ndarray:
            model = scorer()
            if is_few_shot(tm.spec):  # calibrated as the score stage did
                cal = reference_calibrator(run_dir, labels, task=tm.name)
                assert isinstance(model, FewShotReference), tm.spec
                raw = np.asarray(model.raw_logprobs(texts))
                return np.asarray(cal.predict_proba(raw)) if cal is not None else np.exp(raw)
            return task_probabilities(model, texts, labels)

        return task

    def reference_fn(self, run_dir: str | Path) -> Scores:
        """The reference's probabilities of new texts, calibrated as the score stage did;
        with an abstain answer, its probability is a last column (read with the score
        stage's abstain calibrator). The reference is loaded on the first call."""
        from discovery._calibration import abstain_probability
        from discovery._reference import FewShotReference

        labels = self.labels

        @functools.cache
        def reference() -> FewShotReference:
            return FewShotReference.from_config(self.reference, labels.list)

        def ref(texts: list[str]) -> np.ndarray:
            k = len(labels)
            cal = reference_calibrator(run_dir, labels)
            raw = np.asarray(reference().raw_logprobs(texts))
            probs = np.asarray(cal.predict_proba(raw[:, :k])) if cal is not None \
                else np.exp(raw[:, :k])
            abstain_cal = abstain_calibrator(run_dir, labels)
            if abstain_cal is None:
                return probs
            return np.column_stack([probs, abstain_probability(abstain_cal, raw)])

        return ref

    def focus_models(self, run_dir: str | Path, generator: GeneratorConfig,
                     task_scorers: Mapping[str, TaskScorer] | None = None) -> FocusModels:
        """What focus rounds generate and score with (:class:`FocusModels`): ``generator``'s
        backend, :meth:`task_fn`, :meth:`reference_fn` and :attr:`key`, every model lazy."""
        from synth import generator_backend

        return FocusModels(backend=LazyBackend(lambda: generator_backend(generator),
                                               generator.model),
                           task=self.task_fn(run_dir, task_scorers),
                           reference=self.reference_fn(run_dir), key=self.key)


def task_probabilities(scorer: TaskScorer, texts: Sequence[str],
                       labels: LabelSpace) -> np.ndarray:
    """``scorer``'s probabilities of ``texts`` as an n x labels array (columns in
    ``labels``' order)."""
    rows = scorer.predict_proba(list(texts))
    return np.array([[row[lab] for lab in labels] for row in rows], dtype=np.float64)


class LazyBackend:
    """A generator backend built on its first use (a current focus stage builds none)."""

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


def reference_calibrator(run_dir: str | Path, labels: LabelSpace, *,
                         task: str | None = None) -> Calibrator | None:
    """The calibrator the score stage fitted for the reference's scores (``task``: a
    ``fewshot:`` task model's), from its meta sidecar, so new sentences are calibrated
    exactly like the corpus; None when it recorded none.

    Raises:
        DataError: the sidecar is missing or names other labels.
    """

    from discovery._calibration import Calibrator

    path = TASK_SCORES.meta(run_dir, name=task) if task is not None \
        else REFERENCE_SCORES.meta(run_dir)
    cal = _sidecar_entry(path, "calibration")
    if cal is None:
        return None
    bias = cal.get("bias") or {}
    if set(bias) != set(labels):
        raise DataError(f"the recorded calibration names labels {sorted(bias)}, the task's are "
                        f"{list(labels)}", where=str(path), fix="run `synthcheck score` again")
    out = Calibrator(cal["method"], cal["average"])
    out.bias_ = np.array([float(bias[lab]) for lab in labels])
    return out


def _sidecar_entry(path: Path, key: str) -> dict[str, Any] | None:
    """The ``key`` object of a score file's ``.meta.json`` sidecar (None when absent).

    Raises:
        DataError: the sidecar is missing.
    """
    if not path.is_file():
        raise DataError(f"{path.name} is missing", where=str(path),
                        fix="run `synthcheck score` first")
    entry = json.loads(path.read_text(encoding="utf-8")).get(key)
    return entry if isinstance(entry, dict) else None


def abstain_calibrator(run_dir: str | Path, labels: LabelSpace) -> Calibrator | None:
    """The calibrator the score stage read the reference's abstain answer with (from
    ``scores/reference.jsonl.meta.json``), so new sentences abstain exactly like the
    corpus; None when the reference has no abstain answer.

    Raises:
        DataError: the sidecar is missing or names other labels.
    """

    from discovery._calibration import Calibrator

    path = REFERENCE_SCORES.meta(run_dir)
    info = _sidecar_entry(path, "abstain")
    if info is None:
        return None
    bias = info.get("bias") or {}
    names = [lab for lab in bias if lab in labels]
    if len(bias) != len(labels) + 1 or set(names) != set(labels):
        raise DataError(f"the recorded abstain calibration names {sorted(bias)}, the task's "
                        f"labels are {list(labels)}", where=str(path),
                        fix="run `synthcheck score` again")
    out = Calibrator(info["method"], info["average"])
    out.bias_ = np.array([float(v) for v in bias.values()])  # the labels, then abstain
    return out
