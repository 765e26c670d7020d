"""The few-shot LLM reference: a prompt, k shots and label words scored by a Backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from discovery._calibration import (
    Calibrator,
    abstain_probability,
    fit_abstain_calibration,
    fit_calibration,
)
from discovery._config import ReferenceConfig
from synth.core import ConfigError, LabelSpace
from synth.engines import PrefixAlignment

PROGRESS_CHUNK = 256
"""Texts per raw-scoring call when a progress callback is given."""

ABSTAIN_KEY = "\x00abstain"
"""The abstain answer's key among the continuations a backend scores (never a label name)."""

PAIR_FIELDS = ("first", "second")
"""The field names a sentence pair is shown under when none are set (see ``pair_fields``)."""


def field_title(name: str) -> str:
    """A text field's name as a prompt shows it: ``premise`` -> ``Premise``,
    ``text_a`` -> ``Text a``."""
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def render_pair(pair: tuple[str, str], fields: Sequence[str] = PAIR_FIELDS) -> str:
    """A sentence pair as one text for a prompt: one line per field, ``Name: value``
    (``Premise: A man sleeps.\nHypothesis: A person rests.``)."""
    return "\n".join(f"{field_title(n)}: {v}" for n, v in zip(fields, pair, strict=True))


class FewShotReference:
    """Scores texts with a few-shot prompt on any Backend's ``label_logprobs``.

    The prompt is ``shot_1 + sep + ... + shot_k + sep + template(text)``, where each shot is
    ``template(shot.text) + label_word[shot.label]``. Everything before ``{text}`` in the last
    example is the shared prefix (its key/value cache is computed once by the backend).
    Label log-probabilities are renormalised over the task's labels and calibrated. With
    ``config.abstain`` the abstain word is scored too, as a last raw column after the labels
    (:meth:`raw_logprobs`); :meth:`abstain_proba` reads its probability, calibrated or not
    as ``abstain.calibrate`` says, and the label probabilities ignore it.

    Implements the TaskScorer protocol, so a few-shot LLM can also be a task model. A task
    model of a sentence-pair suite gets each input as a pair ``(first, second)``; the pair
    fills ``{text}`` as one line per field, ``Name: value`` (:func:`render_pair`), under the
    names in ``pair_fields`` (``verify`` sets them from the suite's ``text_fields``, e.g.
    ``Premise: ...`` / ``Hypothesis: ...``; default ``First``/``Second``). Shots are texts
    as written: for a pair task write them in the same form.

    Args:
        backend: a synth Backend (``HFBackend``, ``VLLMBackend`` or a test fake).
        config: the reference config (prompt, shots, label words, calibration).
        labels: the task's label names; ``config.label_words`` must name exactly these.
        name: the scorer's name in reports.
        abstain: score ``config.abstain``'s word (a ``fewshot:`` task model, which must pick
            a label, passes False: its prompt keeps the abstain shots, its raw scores are
            the labels' only).
    """

    def __init__(self, backend: Any, config: ReferenceConfig, labels: Sequence[str], *,
                 name: str = "reference", abstain: bool = True) -> None:
        self.backend = backend
        self.config = config
        self.labels = list(labels)
        self.name = name
        self.calibrator: Calibrator | None = None
        self.abstain_config = config.abstain if abstain else None
        """The abstain answer this scorer scores (None: labels only)."""
        self.abstain_calibrator: Calibrator | None = None
        """Fitted over the label words and the abstain word (``abstain.calibrate``; else a
        ``none`` calibrator): what :meth:`abstain_proba` reads."""
        self.pair_fields: tuple[str, ...] = PAIR_FIELDS
        """The names a sentence pair's two fields are shown under in the prompt."""
        self.check(config, self.labels)
        self.prefix, self._lead, self.suffix = self._split_prompt()

    @classmethod
    def from_config(cls, config: ReferenceConfig, labels: Sequence[str], *,
                    name: str = "reference", model: str | None = None,
                    abstain: bool = True) -> FewShotReference:
        """The one factory of a reference from config: build the backend that ``config`` names
        (``model`` overrides its spec) and wrap it (the score stage, evaluation, focus rounds,
        occlusion and a ``fewshot:`` task model all build theirs here)."""
        from synth.engines import make_backend

        backend = make_backend(model or config.model, backend=config.backend,
                               device=config.device, batch_size=config.batch_size)
        return cls(backend, config, labels, name=name, abstain=abstain)

    @staticmethod
    def check(config: ReferenceConfig, labels: Sequence[str]) -> None:
        """Check ``config`` against the task's ``labels`` without building a backend: one
        label word per label, none empty, every shot's label a task label (what
        :meth:`from_config` would refuse).

        Raises:
            ConfigError: the first problem, naming its field.
        """
        labels = list(labels)
        words = config.label_words
        if not LabelSpace.of(labels).same_set(words):
            raise ConfigError(
                f"reference label words name {sorted(words)}, but the task's labels are "
                f"{labels}", where="reference.label_words",
                fix="give exactly one label word per task label")
        for label, word in words.items():
            if not word:
                raise ConfigError(f"label word {word!r} of label '{label}' tokenizes to nothing",
                                  where="reference.label_words",
                                  fix="use a non-empty continuation such as ' positive'")
        allowed = labels + ([config.abstain_label] if config.abstain_label else [])
        for i, shot in enumerate(config.shots):
            if shot.label not in allowed:
                raise ConfigError(f"shot label {shot.label!r} is not a task label",
                                  where=f"reference.shots[{i}].label",
                                  fix=f"use one of {allowed}")

    def _split_prompt(self) -> tuple[str, str, str]:
        cfg = self.config
        before, _, after = cfg.prompt.partition("{text}")
        shots = cfg.shots if cfg.k is None else cfg.shots[: cfg.k]
        words = dict(cfg.label_words)
        if cfg.abstain is not None:
            words[cfg.abstain.word.strip()] = cfg.abstain.word
        demos = [cfg.prompt.replace("{text}", s.text) + words[s.label] for s in shots]
        head = cfg.shot_separator.join(demos) + (cfg.shot_separator if demos else "") + before
        # Trailing spaces belong to the text: BPE tokenizers attach a space to the next word.
        stripped = head.rstrip(" ")
        return stripped, head[len(stripped):], after

    def render(self, item: str | tuple[str, str]) -> str:
        """What fills ``{text}``: a text as it is, a sentence pair as :func:`render_pair`
        shows it under :attr:`pair_fields`."""
        return item if isinstance(item, str) else render_pair(item, self.pair_fields)

    def prompt_for(self, text: str | tuple[str, str]) -> str:
        """The full prompt for ``text`` (or a sentence pair; without a label word), for
        inspection."""
        return self.prefix + self._lead + self.render(text) + self.suffix

    @property
    def columns(self) -> int:
        """Raw columns: the labels, plus one for the abstain answer when there is one."""
        return len(self.labels) + (self.abstain_config is not None)

    def raw_logprobs(self, texts: Sequence[str | tuple[str, str]]) -> np.ndarray:
        """Uncalibrated label log-probabilities, one row per text or sentence pair (columns:
        ``labels``, then the abstain word's when ``config.abstain`` is set)."""
        if not texts:
            return np.zeros((0, self.columns))
        words = {lab: self.config.label_words[lab] for lab in self.labels}
        if self.abstain_config is not None:
            words[ABSTAIN_KEY] = self.abstain_config.word
        # The alignment is passed only when there is one: backends written before it (and
        # the test fakes) keep working with the default ``hf`` reference.
        multiple = self.config.prefix_alignment
        extra = {"align": PrefixAlignment(multiple, self.config.shot_separator)} \
            if multiple else {}
        queries = [self._lead + self.render(t) for t in texts]
        rows = self.backend.label_logprobs(self.prefix, queries, words, self.suffix, **extra)
        keys = list(words)
        return np.array([[row[k] for k in keys] for row in rows], dtype=np.float64).reshape(
            len(rows), len(keys))

    def fit_calibration(self, corpus_logprobs: np.ndarray | None = None) -> Calibrator:
        """Fit the configured calibration (with :func:`discovery._calibration.fit_calibration`)
        and keep it for later calls.

        ``contextual`` scores the content-free inputs; ``batch`` needs ``corpus_logprobs``,
        the raw log-probabilities of *all* the texts being scored.
        """
        cfg = self.config
        k = len(self.labels)
        cf: list[np.ndarray] = []

        def content_free() -> np.ndarray:
            if not cf:
                cf.append(self.raw_logprobs(cfg.content_free))
            return cf[0]
        self.calibrator = fit_calibration(
            cfg.calibration, cfg.calibration_average, k,
            corpus=None if corpus_logprobs is None else corpus_logprobs[:, :k],
            content_free=lambda: content_free()[:, :k])
        self.abstain_calibrator = fit_abstain_calibration(
            cfg, k, corpus=corpus_logprobs, content_free=content_free) \
            if self.abstain_config is not None else None
        return self.calibrator

    def abstain_proba(self, raw: np.ndarray) -> np.ndarray | None:
        """The abstain answer's probability per row of :meth:`raw_logprobs` (None without
        ``config.abstain``); calibrated as ``abstain.calibrate`` says."""
        if self.abstain_config is None:
            return None
        if self.abstain_calibrator is None:
            if self.config.calibration == "batch":  # fitted on this set, as the labels'
                cal = fit_abstain_calibration(self.config, len(self.labels), corpus=raw)
                assert cal is not None
                return abstain_probability(cal, raw)
            self.fit_calibration()
        assert self.abstain_calibrator is not None
        return abstain_probability(self.abstain_calibrator, raw)

    def calibrated(self, raw: np.ndarray) -> np.ndarray:
        """Calibrated probabilities for raw label log-probabilities (the fitted calibrator;
        ``contextual`` and ``none`` are fitted on first use, ``batch`` must be fitted first).
        """
        if self.calibrator is None:
            if self.config.calibration == "batch":
                raise ConfigError(
                    f"{self.name}: batch calibration is fitted on the whole set of texts "
                    f"being scored, but these texts come piece by piece (e.g. verify's "
                    f"batches) and no calibration was fitted",
                    where="reference.calibration",
                    fix="use calibration: contextual (or none) for a fewshot task model that "
                        "verify scores; score and evaluate calibrate on the whole corpus "
                        "or held-out set themselves")
            self.fit_calibration()
        assert self.calibrator is not None
        return self.calibrator.predict_proba(np.atleast_2d(raw)[:, :len(self.labels)])

    def predict_proba(self, texts: Sequence[str | tuple[str, str]]) -> list[dict[str, float]]:
        """Calibrated ``{label: probability}`` per text (the TaskScorer protocol).

        A text's probabilities never depend on the other texts of the call, so results do
        not depend on batching. Hence ``batch`` calibration is refused here unless already
        fitted (``fit_calibration``): fitting it on whatever texts the first call happens to
        get would make every later result depend on that call. Use :meth:`predict_proba_set`
        to calibrate on a whole set at once.
        """
        if not texts:
            return []
        return self._rows(self.calibrated(self.raw_logprobs(texts)))

    def predict_proba_set(self, texts: Sequence[str | tuple[str, str]], *,
                          on_progress: Callable[[int], None] | None = None
                          ) -> list[dict[str, float]]:
        """Calibrated probabilities for exactly this set of texts.

        With ``batch`` calibration (and none fitted yet) the bias is fitted on the raw
        log-probabilities of all of ``texts`` at once, and not kept: the result depends on
        the set, never on how the backend batches it (score and evaluate use this for the
        whole corpus or held-out set). Other methods are the same as :meth:`predict_proba`.
        ``on_progress`` is called with the count of each chunk of texts scored.
        """
        return self._rows(self.predict_set(texts, on_progress=on_progress)[0])

    def predict_set(self, texts: Sequence[str | tuple[str, str]], *,
                    on_progress: Callable[[int], None] | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`predict_proba_set` as an n x labels array, with the abstain answer's
        probability per text (None without ``config.abstain``)."""
        if not texts:
            return np.zeros((0, len(self.labels))), (
                None if self.abstain_config is None else np.zeros(0))
        if on_progress is None:
            raw = self.raw_logprobs(texts)
        else:  # a text's raw log-probabilities do not depend on the other texts of a call
            parts = []
            for s in range(0, len(texts), PROGRESS_CHUNK):
                parts.append(self.raw_logprobs(texts[s:s + PROGRESS_CHUNK]))
                on_progress(len(parts[-1]))
            raw = np.vstack(parts)
        k = len(self.labels)
        if self.calibrator is None and self.config.calibration == "batch":
            cfg = self.config
            cal = fit_calibration("batch", cfg.calibration_average, k, corpus=raw[:, :k])
            return cal.predict_proba(raw[:, :k]), self.abstain_proba(raw)
        return self.calibrated(raw), self.abstain_proba(raw)

    def _rows(self, probs: np.ndarray) -> list[dict[str, float]]:
        return [dict(zip(self.labels, map(float, row), strict=True)) for row in probs]
