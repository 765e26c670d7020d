"""Calibration of few-shot label probabilities (contextual and batch calibration)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import numpy as np

from synth.core import ConfigError, DataError

if TYPE_CHECKING:
    from discovery._config import ReferenceConfig


def log_normalize(logprobs: np.ndarray) -> np.ndarray:
    """Renormalise rows of label log-probabilities over the labels (a log-softmax)."""
    from scipy.special import log_softmax

    return np.asarray(log_softmax(np.asarray(logprobs, dtype=np.float64), axis=1))


class Calibrator:
    """Removes a label bias from few-shot label log-probabilities.

    ``fit`` estimates a per-label bias from some inputs' label log-probabilities; ``transform``
    subtracts it and renormalises over the labels.

    - ``contextual`` (Zhao et al. 2021): fit on content-free inputs ("N/A", "", "[MASK]").
    - ``batch`` (Zhou et al. 2023): fit on the scored corpus itself.
    - ``none``: no bias (only renormalisation).

    Args:
        method: ``none``, ``contextual`` or ``batch`` (only recorded; fitting is the same).
        average: ``logprob`` (mean of log-probabilities, then subtract) or ``prob`` (mean of
            probabilities, then divide: Zhao et al.'s diagonal W).

    Attributes:
        bias_: the fitted per-label bias, as log-probabilities over the labels.
    """

    def __init__(self, method: Literal["none", "contextual", "batch"] = "contextual",
                 average: Literal["logprob", "prob"] = "logprob") -> None:
        self.method = method
        self.average = average

    def fit(self, logprobs: np.ndarray) -> Calibrator:
        """Estimate the bias from rows of label log-probabilities (n x labels)."""
        if self.method not in ("none", "contextual", "batch"):
            raise ConfigError(f"The 'method' parameter of Calibrator must be 'none', "
                              f"'contextual' or 'batch'. Got {self.method!r} instead.")
        if self.average not in ("logprob", "prob"):
            raise ConfigError(f"The 'average' parameter of Calibrator must be 'logprob' or "
                              f"'prob'. Got {self.average!r} instead.")
        norm = log_normalize(np.atleast_2d(logprobs))
        if self.method == "none":
            self.bias_ = np.zeros(norm.shape[1])
        elif self.average == "logprob":
            self.bias_ = norm.mean(axis=0)
        else:
            self.bias_ = np.log(np.exp(norm).mean(axis=0))
        return self

    def transform(self, logprobs: np.ndarray) -> np.ndarray:
        """Return calibrated label log-probabilities, renormalised over the labels."""
        if not hasattr(self, "bias_"):
            raise RuntimeError("Calibrator is not fitted; call fit() first")
        return log_normalize(log_normalize(np.atleast_2d(logprobs)) - self.bias_)

    def predict_proba(self, logprobs: np.ndarray) -> np.ndarray:
        """Return calibrated probabilities (rows sum to 1)."""
        return np.exp(self.transform(logprobs))


def fit_calibration(method: Literal["none", "contextual", "batch"],
                    average: Literal["logprob", "prob"], n_labels: int, *,
                    corpus: np.ndarray | None = None,
                    content_free: Callable[[], np.ndarray] | None = None) -> Calibrator:
    """Fit a Calibrator the way a few-shot reference config asks: the one place that does.

    Args:
        method: ``none``, ``contextual`` or ``batch``.
        average: see :class:`Calibrator`.
        n_labels: the number of labels (for ``none``).
        corpus: the raw label log-probabilities of *every* text being scored (``batch``
            fits on all of them at once, so the bias does not depend on how they were
            batched).
        content_free: returns the raw label log-probabilities of the content-free inputs
            (``contextual``); called only for that method, so callers may cache it.

    Raises:
        DataError: ``batch`` with no corpus log-probabilities.
    """
    cal = Calibrator(method, average)
    if method == "contextual":
        if content_free is None:
            raise ValueError("contextual calibration needs the content-free log-probabilities")
        return cal.fit(content_free())
    if method == "batch":
        if corpus is None or len(corpus) == 0:
            raise DataError("batch calibration needs a non-empty corpus", where="corpus",
                            fix="score a non-empty set of texts (generate a corpus first), or "
                                "use calibration: contextual")
        return cal.fit(corpus)
    return cal.fit(np.zeros((1, n_labels)))


def fit_abstain_calibration(reference: ReferenceConfig, n_labels: int, *,
                            corpus: np.ndarray | None = None,
                            content_free: Callable[[], np.ndarray] | None = None
                            ) -> Calibrator | None:
    """The calibrator the abstain answer is read with (None without ``reference.abstain``):
    over the ``n_labels`` label words and the abstain word (raw columns ``n_labels + 1``),
    fitted like the labels' (``reference.calibration``) when ``abstain.calibrate``, else
    uncalibrated (a ``none`` calibrator: only renormalised over the k + 1 answers)."""
    if reference.abstain is None:
        return None
    if not reference.abstain.calibrate:
        return Calibrator("none", reference.calibration_average).fit(
            np.zeros((1, n_labels + 1)))
    return fit_calibration(reference.calibration, reference.calibration_average,
                           n_labels + 1, corpus=corpus, content_free=content_free)


def abstain_probability(calibrator: Calibrator, raw: np.ndarray) -> np.ndarray:
    """The abstain answer's probability per row of raw log-probs (labels, then the abstain
    word), over the k + 1 answers, calibrated by ``calibrator``."""
    raw = np.atleast_2d(np.asarray(raw, dtype=np.float64))
    if len(raw) == 0:
        return np.zeros(0)
    return np.asarray(calibrator.predict_proba(raw)[:, -1])
