"""Contrast sets by entity substitution (DisKnE style): originals and their negatives."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from formalize._expand import Case, Deduper
from formalize._groups import iter_contrasts
from formalize.types._base import CompiledTest, LabelUse, predict
from formalize.types._fields import STRICT, TestSpecBase
from synth.core import TemplateError

if TYPE_CHECKING:
    from formalize._compile import SuiteContext


class ContrastItem(BaseModel):
    """One DisKnE-style contrast: a text, an entity in it and the entities to swap in."""

    model_config = STRICT

    text: str
    """The original text (gold label ``label``)."""
    entity: str
    """The entity mention in ``text`` to replace (whole-word match)."""
    alternatives: list[str] | None = None
    """The replacements; each makes a case labeled ``contrast_label``."""
    lexicon: str | None = None
    """Or: take the alternatives from this lexicon (the entity itself left out)."""
    label: str | None = None
    """Gold label of the original (default: the test's ``label``)."""
    contrast_label: str | None = None
    """Gold label of the substituted texts (default: the test's ``contrast_label``)."""


class ContrastTest(TestSpecBase):
    """Contrast set by entity substitution (DisKnE style): originals and their negatives."""

    type: Literal["contrast"]
    items: list[ContrastItem] = Field(min_length=1)
    """Texts with the entity to replace and its alternatives."""
    label: str | None = None
    """Default gold label of the originals."""
    contrast_label: str | None = None
    """Default gold label of the substituted texts."""
    include_original: bool = True
    """Also score the original texts (with ``label``)."""


class Contrast(CompiledTest):
    """A contrast set: each original and each substituted text is judged against its gold
    label, like MFT cases."""

    type_name = "contrast"
    spec_model = ContrastTest
    gold = True
    spec: ContrastTest

    @classmethod
    def compile(cls, index: int, spec: Any, ctx: SuiteContext) -> Contrast:
        """Check every item's labels, alternatives and entity."""
        i = index
        for k, item in enumerate(spec.items):
            where = ctx.where("tests", i, "items", k, test=spec.name)
            for lab, fld in ((item.label or spec.label, "label"),
                             (item.contrast_label or spec.contrast_label, "contrast_label")):
                if lab is None:
                    raise TemplateError(f"contrast item has no {fld}", where=where,
                                        fix=f"set {fld} on the item or the test")
                ctx.check_label(lab, i, f"items.{k}.{fld}", spec.name)
            if (item.alternatives is None) == (item.lexicon is None):
                raise TemplateError("give either 'alternatives' or 'lexicon'", where=where,
                                    fix="list the replacement entities")
            if item.lexicon is not None:
                ctx.lexicons.domain(item.lexicon, where)
            if item.entity.lower() not in item.text.lower():
                raise TemplateError(f"entity {item.entity!r} does not occur in {item.text!r}",
                                    where=where, fix="copy the entity exactly as in the text")
        return cls(spec, lexicons=ctx.lexicons)

    @classmethod
    def label_uses(cls, spec: Any) -> Iterator[LabelUse]:
        """The test's default labels, then each item's."""
        for fld in ("label", "contrast_label"):
            if getattr(spec, fld) is not None:
                yield (fld,), getattr(spec, fld)
        for k, item in enumerate(spec.items):
            for fld in ("label", "contrast_label"):
                if getattr(item, fld) is not None:
                    yield ("items", k, fld), getattr(item, fld)

    @classmethod
    def uses_lexicon(cls, spec: Any, names: set[str]) -> bool:
        """An item that draws its alternatives from ``names``."""
        return any(it.lexicon in names for it in spec.items)

    def _alternatives(self, item: ContrastItem) -> list[str]:
        if item.alternatives is not None:
            return [a for a in item.alternatives if a != item.entity]
        if self.lexicons is None or item.lexicon is None:
            raise ValueError(f"test {self.name!r} has no lexicons to draw "
                             f"{item.lexicon!r} alternatives from")
        return [a for a in self.lexicons.values(item.lexicon) if a != item.entity]

    def count(self, sample: int | None = None) -> int:
        """Originals (if included) plus every alternative of every item."""
        spec = self.spec
        return sum(int(spec.include_original) + len(self._alternatives(it)) for it in spec.items)

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Each original (``label``), then its substituted texts (``contrast_label``)."""
        spec = self.spec
        base = self.base()
        dedupe = Deduper()
        for k, item in enumerate(spec.items):
            bid = f"{self.slug}:{k}"
            if spec.include_original and dedupe.first(item.text):
                yield Case(**base, case_id=bid, text=item.text,
                           label=item.label or spec.label, base_id=bid,
                           fills=(("ENTITY", "original", item.entity),))
            source = item.lexicon or "alternatives"
            for a, (alt, text) in enumerate(
                    iter_contrasts(item.text, item.entity, self._alternatives(item))):
                if dedupe.first(text):
                    yield Case(**base, case_id=f"{bid}.{a}", text=text,
                               label=item.contrast_label or spec.contrast_label,
                               fills=(("ENTITY", source, alt),), base_id=bid,
                               orig_text=item.text)

    @classmethod
    def judge(cls, spec: Any, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Pass when the top prediction is the gold label."""
        pred = predict(probs, labels)
        return pred, pred == case.label, None
