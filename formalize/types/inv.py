"""INV: invariance tests - the prediction must not change under a perturbation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field

from formalize._expand import Case
from formalize.types._base import predict
from formalize.types._perturbed import PerturbedTest, PerturbTest

_EPS = 1e-9


class INVTest(PerturbTest):
    """Invariance: the prediction must not change under the perturbation."""

    type: Literal["inv"]
    tolerance: float | None = Field(None, ge=0, le=1)
    """Also pass when the prediction flips but the probability of the original prediction
    moved by at most this much (forgives flips at the decision boundary)."""


class INV(PerturbedTest[INVTest]):
    """An invariance test: a perturbed text keeps its original's prediction."""

    type_name = "inv"
    spec_model = INVTest

    @classmethod
    def judge(cls, spec: INVTest, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Pass when the prediction is the original's, or (with ``tolerance``) when the
        original prediction's probability moved by at most the tolerance."""
        pred = predict(probs, labels)
        if orig is None:
            return pred, None, None
        orig_pred = predict(orig, labels)
        passed = pred == orig_pred
        tol = spec.tolerance
        if not passed and tol is not None:
            passed = abs(probs.get(orig_pred, 0.0) - orig.get(orig_pred, 0.0)) <= tol + _EPS
        return pred, passed, orig_pred
