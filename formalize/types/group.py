"""Test groups: one variant of each base text per group value, compared across groups."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from formalize._expand import Case
from formalize._groups import GroupVariantMaker, read_run_texts, read_texts_file
from formalize.types._base import CompiledTest, predict
from formalize.types._fields import RunTexts, TestSpecBase
from synth.core import TemplateError

if TYPE_CHECKING:
    from formalize._aggregate import Aggregates
    from formalize._compile import SuiteContext


class GroupTest(TestSpecBase):
    """A test group: one variant of each base text per group value; no gold labels."""

    type: Literal["group"]
    texts: list[str] = Field(default_factory=list)
    """Base texts (and/or ``texts_file``, ``texts_from_run``; all given sources are used)."""
    texts_file: str | None = None
    """A ``.txt`` (one per line), ``.jsonl`` or ``.csv`` file (``text`` field/column),
    relative to the suite file's folder."""
    texts_from_run: RunTexts | None = None
    """Base texts from a run's generated corpus: a run directory (``texts_from_run: runs/demo``,
    every corpus text) or ``{run: runs/demo, limit: 200, seed: 1}`` (a seeded sample)."""
    attribute: str = "group"
    """The attribute that varies (gender, age, ethnicity)."""
    words: dict[str, list[str]] | None = None
    """Group value -> its marker words, aligned by position (``man``/``woman``,
    ``he``/``she``); a marker of any group is changed into the target group's."""
    pattern: str | None = None
    """Regular expression matching an existing mention (e.g. ``\\b\\d+ ?yo\\b``)."""
    values: dict[str, str] | None = None
    """With ``pattern``: group value -> the mention text that replaces the match."""
    add: str | None = None
    """When a text has no mention: insert this (``{mention}`` is the group's mention);
    without ``add`` such texts are skipped."""
    at: Literal["start", "end", "inline"] = "start"
    """Where ``add`` goes: ``inline`` puts it right before the first match of ``anchor``
    (texts without one are skipped)."""
    anchor: str | None = None
    """With ``at: inline``: a regular expression (case-insensitive) before whose first match
    the mention is inserted, e.g. ``'\b(?:man|woman|male|female|patient)\b'``."""
    scale: float | None = Field(None, gt=0)
    """Fixed symmetric colour scale of this test's heatmaps (deviations from ``-scale`` to
    ``+scale``); ``None``: scaled to the largest deviation."""

    @field_validator("texts_from_run", mode="before")
    @classmethod
    def _run_shorthand(cls, value: Any) -> Any:
        # `texts_from_run: runs/demo` is shorthand for `{run: runs/demo}`.
        return {"run": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_mode(self) -> GroupTest:
        if (self.words is None) == (self.pattern is None):
            raise ValueError("give either 'words' or 'pattern' (with 'values')")
        if self.pattern is not None and not self.values:
            raise ValueError("'pattern' needs 'values' (group value -> mention text)")
        groups = self.words if self.words is not None else self.values
        if groups is not None and len(groups) < 2:
            raise ValueError("a test group needs at least two group values")
        if self.words is not None:
            lengths = {len(v) for v in self.words.values()}
            if len(lengths) != 1:
                raise ValueError("every group's 'words' list must have the same length")
        if self.add is not None and "{mention}" not in self.add:
            raise ValueError("'add' must contain '{mention}'")
        if (self.at == "inline") != (self.anchor is not None):
            raise ValueError("'at: inline' and 'anchor' go together")
        return self


class Group(CompiledTest[GroupTest]):
    """A test group: cases have no pass/fail; the result compares the mean probabilities of
    the groups (see ``formalize.group_deviations``)."""

    type_name = "group"
    spec_model = GroupTest
    scored = False
    count_is_bound = True

    def __init__(self, spec: GroupTest, *, group_maker: GroupVariantMaker, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.group_maker = group_maker

    @classmethod
    def compile(cls, index: int, spec: GroupTest, ctx: SuiteContext) -> Group:
        """Build the variant maker and read the base texts (lists, a file, a run's corpus)."""
        i = index
        maker = GroupVariantMaker(
            words=spec.words, pattern=spec.pattern, values=spec.values, add=spec.add,
            at=spec.at, anchor=spec.anchor,
            where=ctx.where("tests", i, "pattern", test=spec.name))
        test = cls(spec, group_maker=maker, lexicons=ctx.lexicons)
        texts = list(spec.texts)
        if spec.texts_file:
            where = ctx.where("tests", i, "texts_file", test=spec.name)
            texts += read_texts_file(ctx.file(spec.texts_file, where), where)
        if spec.texts_from_run is not None:
            src = spec.texts_from_run
            if not ctx.allow_outside_files and (Path(src.run).is_absolute()
                                                or str(src.run).startswith("~")):
                raise TemplateError(
                    f"the suite names a run by an absolute path ({src.run}); a suite may "
                    f"only name runs relative to its own file",
                    where=ctx.where("tests", i, "texts_from_run", test=spec.name),
                    fix="name the run directory relative to the suite file (e.g. "
                        "../runs/demo), or pass --allow-outside-files if you trust the suite")
            seed = ctx.seed if src.seed is None else src.seed
            from_run = read_run_texts(
                src.run, ctx.where("tests", i, "texts_from_run", test=spec.name),
                base_dir=ctx.base_dir, limit=src.limit, seed=seed, stream=spec.name,
                keep=maker.applies)
            if not from_run:
                raise TemplateError(
                    "no corpus text of the run mentions the attribute",
                    where=ctx.where("tests", i, "texts_from_run", test=spec.name),
                    fix="check 'words'/'pattern', or set 'add' to insert a mention")
            texts += from_run
        if not texts:
            raise TemplateError("test group has no base texts", where=ctx.where(
                "tests", i, test=spec.name),
                fix="add 'texts', 'texts_file' or 'texts_from_run'")
        test.base_texts = tuple(texts)
        return test

    def count(self, sample: int | None = None) -> int:
        """Base texts x group values."""
        return len(self.base_texts) * len(self.group_maker.groups)

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """One variant of each base text per group value (texts it does not apply to
        skipped)."""
        base = self.base()
        for b, text in enumerate(self.base_texts):
            variants = self.group_maker.variants(text)
            for group, variant in (variants or {}).items():
                yield Case(**base, case_id=f"{self.slug}:{b}:{group}", text=variant,
                           group=group, base_id=f"{self.slug}:{b}", orig_text=text)

    @classmethod
    def judge(cls, spec: GroupTest, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """No pass/fail: just the prediction."""
        return predict(probs, labels), None, None

    def aggregate(self, agg: Aggregates, case: Case, model: str, row: Mapping[str, Any],
                  labels: Sequence[str]) -> None:
        """Sum each label's probability per group (the means and deviations come later)."""
        assert case.group is not None
        agg.group_n[(case.test, model, case.group)] += 1
        for lab in labels:
            agg.group_sum[(case.test, model, case.group, lab)] += row["probs"][lab]
