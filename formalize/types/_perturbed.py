"""What INV and DIR tests share: base texts, perturbations and the paired cases they make."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import Field, field_validator

from formalize._expand import Case, Deduper
from formalize._perturb import Perturbation, make_perturbation
from formalize.types._base import CompiledTest
from formalize.types._fields import SourcedSpec
from synth.core import TemplateError, derive_rng

if TYPE_CHECKING:
    from formalize._compile import SuiteContext


class PerturbTest(SourcedSpec):
    """Shared fields of INV and DIR tests: base texts and the perturbation(s)."""

    perturb: list[dict[str, Any]] = Field(min_length=1)
    """Perturbations by name with their parameters, e.g. ``{name: typo, kind: swap}``;
    each one makes a variant of every base text."""
    variants: int = Field(1, ge=1, le=100)
    """Seeded variants per base text and perturbation."""

    @field_validator("perturb", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if isinstance(value, str | dict):
            value = [value]
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


PerturbT = TypeVar("PerturbT", bound=PerturbTest)


class PerturbedTest(CompiledTest[PerturbT]):
    """A test whose cases are perturbed base texts, each judged against its original."""

    paired = True
    count_is_bound = True

    def __init__(self, spec: PerturbT, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.perturbations: tuple[Perturbation, ...] = ()

    @classmethod
    def compile(cls, index: int, spec: PerturbT, ctx: SuiteContext
                ) -> PerturbedTest[PerturbT]:
        """Resolve the base texts and build the perturbations."""
        test = cls(spec, lexicons=ctx.lexicons)
        test.source = ctx.template_source(index, spec)
        test.check(index, ctx)
        test.perturbations = tuple(
            make_perturbation(p, ctx.lexicons.values,
                              ctx.where("tests", index, "perturb", j, test=spec.name))
            for j, p in enumerate(spec.perturb))
        if test.source.size == 0:
            raise TemplateError("test has no base texts", where=ctx.where(
                "tests", index, test=spec.name), fix="add 'templates' or 'texts'")
        return test

    def check(self, index: int, ctx: SuiteContext) -> None:
        """Checks of the type's own fields (after the base texts resolve)."""

    @classmethod
    def uses_lexicon(cls, spec: PerturbT, names: set[str]) -> bool:
        """Templates or a perturbation that draw from ``names``."""
        return super().uses_lexicon(spec, names) or any(
            p.get("lexicon") in names for p in spec.perturb)

    def case_label(self) -> str | None:
        """The label every case carries (None: no gold label)."""
        return None

    def count(self, sample: int | None = None) -> int:
        """Base texts x perturbations x variants."""
        n = self.source.count(self.effective_sample(sample))
        return n * len(self.perturbations) * self.spec.variants

    def sample_for(self, max_cases: int) -> int | None:
        """Base draws whose perturbed variants stay within ``max_cases``."""
        per_base = len(self.perturbations) * self.spec.variants
        return max(1, max_cases // max(per_base, 1)) if self.source.size else None

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Every variant of every base text under every perturbation (unchanged, inapplicable
        and duplicate variants left out)."""
        spec = self.spec
        rng = derive_rng(seed, spec.name, "sample")
        base = self.base()
        dedupe, base_dedupe = Deduper(), Deduper()
        label = self.case_label()
        i = 0
        for text, fills, tpl in self.source.iter(self.effective_sample(sample), rng):
            if not base_dedupe.first(text):
                continue
            for j, pert in enumerate(self.perturbations):
                for v in range(spec.variants):
                    out = pert(text, derive_rng(seed, spec.name, i, j, v))
                    if out is None or out == text or not dedupe.first(out):
                        continue
                    yield Case(**base, case_id=f"{self.slug}:{i}.{j}.{v}", text=out,
                               label=label, fills=fills, orig_text=text,
                               base_id=f"{self.slug}:{i}", template=tpl,
                               perturbation=pert.describe())
            i += 1
