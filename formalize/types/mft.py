"""MFT: minimum functionality tests - every case has a gold label."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from formalize._expand import Case, Deduper
from formalize._template import Node, Slot, Text
from formalize.types._base import CompiledTest, LabelUse, predict
from formalize.types._fields import STRICT, LabelRule, SourcedSpec
from synth.core import TemplateError, derive_rng

if TYPE_CHECKING:
    from formalize._compile import SuiteContext


class CaseSpec(BaseModel):
    """One hand-written case: its text and (for MFT tests) its gold label."""

    model_config = STRICT

    text: str
    """The text, used verbatim (no placeholders)."""
    label: str | None = None
    """Gold label (MFT; defaults to the test's label)."""


class MFTTest(SourcedSpec):
    """Minimum functionality test: every case has a gold label."""

    type: Literal["mft"]
    label: str | LabelRule | None = None
    """The gold label, or a rule that picks it from a fill's source lexicon."""
    cases: list[CaseSpec] = Field(default_factory=list)
    """Hand-written cases (each with its own label, or the test's)."""
    case_meta: dict[str, list[dict[str, str]]] = Field(default_factory=dict)
    """Metadata of cases by their text: the rows of an imported file that gave this text
    (every column), so that an export reproduces the file. Written by imports."""

    @field_validator("cases", mode="before")
    @classmethod
    def _plain_cases(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value


def gold_of(label: str | LabelRule | None, fills: tuple[tuple[str, str, str], ...]) -> str | None:
    """The gold label of a fill: the fixed label, or the one its rule picks."""
    if isinstance(label, LabelRule):
        source = next(s for k, s, _ in fills if k == label.by)
        return label.map[source]
    return label


class MFT(CompiledTest[MFTTest]):
    """A minimum functionality test: the top prediction must be the gold label."""

    type_name = "mft"
    spec_model = MFTTest
    gold = True

    @classmethod
    def compile(cls, index: int, spec: MFTTest, ctx: SuiteContext) -> MFT:
        """Resolve the templates and check every label (a fill-dependent one per template)."""
        test = cls(spec, lexicons=ctx.lexicons)
        test.source = ctx.template_source(index, spec)
        i, label = index, spec.label
        if isinstance(label, LabelRule):
            for lab in label.map.values():
                ctx.check_label(lab, i, "label", spec.name)
            for tpl in test.source.templates:
                if label.by not in tpl.keys:
                    raise TemplateError(
                        f"the label depends on slot {label.by!r}, which template "
                        f"{tpl.text!r} lacks",
                        where=ctx.where("tests", i, "label", test=spec.name),
                        fix=f"use {{{label.by}}} in every template, or a fixed label")
                sources = {s for _, s in tpl.domains[tpl.keys.index(label.by)]}
                missing = sorted(sources - set(label.map))
                if missing:
                    raise TemplateError(
                        f"the label rule has no label for fills from {', '.join(missing)}",
                        where=ctx.where("tests", i, "label", test=spec.name),
                        fix="add them under label.map")
            if spec.texts:
                raise TemplateError("plain 'texts' cannot take a fill-dependent label",
                                    where=ctx.where("tests", i, "texts", test=spec.name),
                                    fix="write them as 'cases' with a label each")
        else:
            ctx.check_label(label, i, "label", spec.name)
            if label is None and test.source.size:
                raise TemplateError("an MFT test with templates needs a 'label'",
                                    where=ctx.where("tests", i, test=spec.name),
                                    fix=f"add label: one of {', '.join(ctx.labels)}")
        for k, case in enumerate(spec.cases):
            ctx.check_label(case.label, i, f"cases.{k}.label", spec.name)
            if case.label is None and not isinstance(label, str):
                raise TemplateError("a case has no label and the test has no fixed label",
                                    where=ctx.where("tests", i, "cases", k, test=spec.name),
                                    fix="give the case a label")
        if test.source.size == 0 and not spec.cases:
            raise TemplateError("test has no templates, texts or cases",
                                where=ctx.where("tests", i, test=spec.name),
                                fix="add at least one")
        return test

    @classmethod
    def label_uses(cls, spec: MFTTest) -> Iterator[LabelUse]:
        """The test's label (or each label of its rule) and each case's label."""
        if isinstance(spec.label, LabelRule):
            for source, lab in spec.label.map.items():
                yield ("label", "map", source), lab
        elif spec.label is not None:
            yield ("label",), spec.label
        for k, case in enumerate(spec.cases):
            if case.label is not None:
                yield ("cases", k, "label"), case.label

    def gold_templates(self) -> list[tuple[tuple[Node, ...], str | None]]:
        """Each template with its label (a fill-dependent label split into one template per
        source lexicon), then the plain texts and the cases."""
        spec = self.spec
        out: list[tuple[tuple[Node, ...], str | None]] = []
        for tpl in self.source.templates:
            if isinstance(spec.label, LabelRule):
                rule = spec.label
                for source, label in rule.map.items():
                    nodes = tuple(Slot(source, source, n.article, n.column)
                                  if isinstance(n, Slot) and n.key == rule.by else n
                                  for n in tpl.nodes)
                    if any(s == source for _, s in tpl.domains[tpl.keys.index(rule.by)]):
                        out.append((nodes, label))
            else:
                out.append((tpl.nodes, spec.label))
        fixed = spec.label if isinstance(spec.label, str) else None
        out += [((Text(t),), fixed) for t in spec.texts]
        out += [((Text(c.text),), c.label or fixed) for c in spec.cases]
        return out

    def count(self, sample: int | None = None) -> int:
        """Template fills plus hand-written cases."""
        return self.source.count(self.effective_sample(sample)) + len(self.spec.cases)

    def sample_for(self, max_cases: int) -> int | None:
        """Draws that, with the hand-written cases (always kept), stay within ``max_cases``."""
        return max(1, max_cases - len(self.spec.cases)) if self.source.size else None

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Template fills (each with its gold label), then the hand-written cases."""
        spec = self.spec
        rng = derive_rng(seed, spec.name, "sample")
        base = self.base()
        dedupe = Deduper()
        meta = spec.case_meta
        i = 0
        for text, fills, tpl in self.source.iter(self.effective_sample(sample), rng):
            if dedupe.first(text):
                yield Case(**base, case_id=f"{self.slug}:{i}", text=text,
                           label=gold_of(spec.label, fills), fills=fills, template=tpl,
                           meta=tuple(meta.get(text, ())))
                i += 1
        for case in spec.cases:
            if dedupe.first(case.text):
                label = case.label or (spec.label if isinstance(spec.label, str) else None)
                yield Case(**base, case_id=f"{self.slug}:{i}", text=case.text, label=label,
                           meta=tuple(meta.get(case.text, ())))
                i += 1

    @classmethod
    def judge(cls, spec: MFTTest, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Pass when the top prediction is the gold label."""
        pred = predict(probs, labels)
        return pred, pred == case.label, None
