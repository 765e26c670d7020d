"""Contrast sets by entity substitution (DisKnE style): originals and their negatives."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

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

    text: str | None = None
    """The original text (gold label ``label``); in a sentence-pair suite give ``fields``."""
    fields: dict[str, str] | None = None
    """A sentence-pair suite's original: a value for each of the suite's ``text_fields``."""
    entity: str
    """The entity mention to replace (whole-word match, any case; in ``text``, or in the
    test's ``field``)."""
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
    field: str | None = None
    """In a sentence-pair suite: the one field the entity is substituted in (e.g.
    ``hypothesis``); the other field is kept as it is."""


def _joined(pair: tuple[tuple[str, str], tuple[str, str]] | None) -> str:
    """A pair case's ``text``: its two fields, as ``first || second``."""
    assert pair is not None
    return f"{pair[0][1]} || {pair[1][1]}"


class Contrast(CompiledTest[ContrastTest]):
    """A contrast set: each original and each substituted text is judged against its gold
    label, like MFT cases."""

    type_name = "contrast"
    spec_model = ContrastTest
    gold = True

    @classmethod
    def compile(cls, index: int, spec: ContrastTest, ctx: SuiteContext) -> Contrast:
        """Check every item's labels, alternatives and entity."""
        i = index
        fields = list(ctx.spec.text_fields)
        paired = len(fields) == 2
        if paired and spec.field not in fields:
            raise TemplateError(
                f"a contrast test of a sentence-pair suite needs 'field': one of {fields}",
                where=ctx.where("tests", i, "field", test=spec.name),
                fix=f"name the field the entity is substituted in, e.g. field: {fields[-1]}")
        if not paired and spec.field is not None:
            raise TemplateError("'field' applies to sentence-pair suites only",
                                where=ctx.where("tests", i, "field", test=spec.name),
                                fix="declare text_fields: [first, second] in the suite, or "
                                    "remove 'field'")
        for k, item in enumerate(spec.items):
            where = ctx.where("tests", i, "items", k, test=spec.name)
            if paired and (item.fields is None or sorted(item.fields) != sorted(fields)
                           or item.text is not None):
                raise TemplateError(f"a sentence-pair item needs 'fields' with exactly "
                                    f"{fields} (and no 'text')", where=where,
                                    fix=f"write fields: {{{fields[0]}: ..., {fields[1]}: ...}}")
            if not paired and (item.text is None or item.fields is not None):
                raise TemplateError("an item needs 'text' (and 'fields' only in a "
                                    "sentence-pair suite)", where=where,
                                    fix="give the item's text")
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
            target = (item.fields[spec.field] if paired and item.fields and spec.field
                      else item.text or "")
            if item.entity.lower() not in target.lower():
                raise TemplateError(f"entity {item.entity!r} does not occur in {target!r}",
                                    where=where, fix="copy the entity as it is in the text")
        test = cls(spec, lexicons=ctx.lexicons)
        test.text_fields = tuple(fields)
        return test

    @classmethod
    def label_uses(cls, spec: ContrastTest) -> Iterator[LabelUse]:
        """The test's default labels, then each item's."""
        for fld in ("label", "contrast_label"):
            if getattr(spec, fld) is not None:
                yield (fld,), getattr(spec, fld)
        for k, item in enumerate(spec.items):
            for fld in ("label", "contrast_label"):
                if getattr(item, fld) is not None:
                    yield ("items", k, fld), getattr(item, fld)

    @classmethod
    def uses_lexicon(cls, spec: ContrastTest, names: set[str]) -> bool:
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

    text_fields: tuple[str, ...] = ("text",)

    def _pair(self, item: ContrastItem, value: str | None = None
              ) -> tuple[tuple[str, str], tuple[str, str]] | None:
        """A pair item's two fields, the substituted one set to ``value`` if given."""
        if len(self.text_fields) != 2 or item.fields is None:
            return None
        a, b = self.text_fields
        vals = dict(item.fields)
        if value is not None:
            vals[str(self.spec.field)] = value
        return (a, vals[a]), (b, vals[b])

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Each original (``label``), then its substituted texts (``contrast_label``). In a
        sentence-pair suite only the test's ``field`` is substituted."""
        spec = self.spec
        base = self.base()
        dedupe = Deduper()
        for k, item in enumerate(spec.items):
            bid = f"{self.slug}:{k}"
            pair = self._pair(item)
            target = pair[self.text_fields.index(str(spec.field))][1] if pair else item.text
            assert target is not None
            original = _joined(pair) if pair else target
            if spec.include_original and dedupe.first(original):
                yield Case(**base, case_id=bid, text=original,
                           label=item.label or spec.label, base_id=bid,
                           fills=(("ENTITY", "original", item.entity),), pair=pair)
            source = item.lexicon or "alternatives"
            for a, (alt, text) in enumerate(
                    iter_contrasts(target, item.entity, self._alternatives(item))):
                new_pair = self._pair(item, text)
                shown = _joined(new_pair) if new_pair else text
                if dedupe.first(shown):
                    yield Case(**base, case_id=f"{bid}.{a}", text=shown,
                               label=item.contrast_label or spec.contrast_label,
                               fills=(("ENTITY", source, alt),), base_id=bid,
                               orig_text=original, pair=new_pair)

    @classmethod
    def judge(cls, spec: ContrastTest, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Pass when the top prediction is the gold label."""
        pred = predict(probs, labels)
        return pred, pred == case.label, None
