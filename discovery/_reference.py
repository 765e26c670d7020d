"""The few-shot LLM reference: a prompt, k shots and label words scored by a Backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from discovery._calibration import Calibrator
from discovery._config import ReferenceConfig
from synth import ConfigError


class FewShotReference:
    """Scores texts with a few-shot prompt on any Backend's ``label_logprobs``.

    The prompt is ``shot_1 + sep + ... + shot_k + sep + template(text)``, where each shot is
    ``template(shot.text) + label_word[shot.label]``. Everything before ``{text}`` in the last
    example is the shared prefix (its key/value cache is computed once by the backend).
    Label log-probabilities are renormalised over the task's labels and calibrated.

    Implements the TaskScorer protocol, so a few-shot LLM can also be a task model.

    Args:
        backend: a synth Backend (``HFBackend``, ``VLLMBackend`` or a test fake).
        config: the reference config (prompt, shots, label words, calibration).
        labels: the task's label names; ``config.label_words`` must name exactly these.
        name: the scorer's name in reports.
    """

    def __init__(self, backend: Any, config: ReferenceConfig, labels: Sequence[str], *,
                 name: str = "reference") -> None:
        self.backend = backend
        self.config = config
        self.labels = list(labels)
        self.name = name
        self.calibrator: Calibrator | None = None
        self._check()
        self.prefix, self._lead, self.suffix = self._split_prompt()

    @classmethod
    def from_config(cls, config: ReferenceConfig, labels: Sequence[str], *,
                    name: str = "reference", model: str | None = None) -> FewShotReference:
        """Build the backend that ``config`` names (``model`` overrides its spec) and wrap it."""
        from synth import make_backend

        backend = make_backend(model or config.model, backend=config.backend,
                               device=config.device, batch_size=config.batch_size)
        return cls(backend, config, labels, name=name)

    def _check(self) -> None:
        words = self.config.label_words
        if set(words) != set(self.labels):
            raise ConfigError(
                f"reference label words name {sorted(words)}, but the task's labels are "
                f"{self.labels}", where="reference.label_words",
                fix="give exactly one label word per task label")
        for label, word in words.items():
            if not word:
                raise ConfigError(f"label word {word!r} of label '{label}' tokenizes to nothing",
                                  where="reference.label_words",
                                  fix="use a non-empty continuation such as ' positive'")
        for i, shot in enumerate(self.config.shots):
            if shot.label not in self.labels:
                raise ConfigError(f"shot label {shot.label!r} is not a task label",
                                  where=f"reference.shots[{i}].label",
                                  fix=f"use one of {self.labels}")

    def _split_prompt(self) -> tuple[str, str, str]:
        cfg = self.config
        before, _, after = cfg.prompt.partition("{text}")
        shots = cfg.shots if cfg.k is None else cfg.shots[: cfg.k]
        demos = [cfg.prompt.replace("{text}", s.text) + cfg.label_words[s.label] for s in shots]
        head = cfg.shot_separator.join(demos) + (cfg.shot_separator if demos else "") + before
        # Trailing spaces belong to the text: BPE tokenizers attach a space to the next word.
        stripped = head.rstrip(" ")
        return stripped, head[len(stripped):], after

    def prompt_for(self, text: str) -> str:
        """The full prompt for ``text`` (without a label word), for inspection."""
        return self.prefix + self._lead + text + self.suffix

    def raw_logprobs(self, texts: Sequence[str]) -> np.ndarray:
        """Uncalibrated label log-probabilities, one row per text (columns: ``labels``)."""
        if not texts:
            return np.zeros((0, len(self.labels)))
        words = {lab: self.config.label_words[lab] for lab in self.labels}
        rows = self.backend.label_logprobs(self.prefix, [self._lead + t for t in texts], words,
                                           self.suffix)
        return np.array([[row[lab] for lab in self.labels] for row in rows], dtype=np.float64)

    def fit_calibration(self, corpus_logprobs: np.ndarray | None = None) -> Calibrator:
        """Fit the configured calibration.

        ``contextual`` scores the content-free inputs; ``batch`` needs ``corpus_logprobs``
        (the raw log-probabilities of the texts being scored).
        """
        cal = Calibrator(self.config.calibration, self.config.calibration_average)
        if self.config.calibration == "contextual":
            cal.fit(self.raw_logprobs(self.config.content_free))
        elif self.config.calibration == "batch":
            if corpus_logprobs is None or len(corpus_logprobs) == 0:
                raise ConfigError("batch calibration needs the corpus' log-probabilities",
                                  where="reference.calibration",
                                  fix="score a non-empty corpus, or use contextual")
            cal.fit(corpus_logprobs)
        else:
            cal.fit(np.zeros((1, len(self.labels))))
        self.calibrator = cal
        return cal

    def calibrated(self, raw: np.ndarray) -> np.ndarray:
        """Calibrated probabilities for raw label log-probabilities.

        Batch calibration is fitted on ``raw`` itself unless already fitted.
        """
        if self.calibrator is None:
            self.fit_calibration(raw if self.config.calibration == "batch" else None)
        assert self.calibrator is not None
        return self.calibrator.predict_proba(raw)

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Calibrated ``{label: probability}`` per text (the TaskScorer protocol)."""
        if not texts:
            return []
        probs = self.calibrated(self.raw_logprobs(texts))
        return [dict(zip(self.labels, map(float, row), strict=True)) for row in probs]
