"""DIR: directional tests - a label's probability must move one way under a perturbation."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from formalize._expand import Case
from formalize.types._base import LabelUse, predict
from formalize.types._perturbed import PerturbedTest, PerturbTest

if TYPE_CHECKING:
    from formalize._compile import SuiteContext

_EPS = 1e-9


class DIRTest(PerturbTest):
    """Directional: the probability of ``label`` must move ``direction`` by ``min_delta``."""

    type: Literal["dir"]
    label: str
    """The label whose probability is watched."""
    direction: Literal["up", "down"]
    """``up``: p(label) must not fall (rise by at least min_delta); ``down``: the reverse."""
    min_delta: float = Field(0.0, ge=0, le=1)
    """Required change in the stated direction (0: it must not move the other way)."""


class DIR(PerturbedTest[DIRTest]):
    """A directional test: p(label) moves in the stated direction by at least min_delta."""

    type_name = "dir"
    spec_model = DIRTest

    def check(self, index: int, ctx: SuiteContext) -> None:
        """The watched label must be one of the suite's."""
        ctx.check_label(self.spec.label, index, "label", self.spec.name)

    @classmethod
    def label_uses(cls, spec: DIRTest) -> Iterator[LabelUse]:
        """The watched label."""
        yield ("label",), spec.label

    def case_label(self) -> str | None:
        """The watched label."""
        return self.spec.label

    @classmethod
    def judge(cls, spec: DIRTest, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Pass when p(label) moved ``direction`` by at least ``min_delta``."""
        pred = predict(probs, labels)
        if orig is None:
            return pred, None, None
        delta = probs.get(spec.label, 0.0) - orig.get(spec.label, 0.0)
        moved = delta if spec.direction == "up" else -delta
        return pred, moved >= spec.min_delta - _EPS, predict(orig, labels)
