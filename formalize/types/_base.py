"""The base class of test types: a compiled test that counts, expands, judges and aggregates."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypedDict, TypeVar

from formalize._expand import Case, TemplateSource, slugify
from formalize._template import Node, Slot, parse_template
from formalize.types._fields import TestSpecBase
from synth.core import TemplateError

if TYPE_CHECKING:
    from formalize._aggregate import Aggregates
    from formalize._compile import SuiteContext
    from formalize._lexicons import LexiconSet

class CaseBase(TypedDict):
    """The fields every case of one test shares."""

    test: str
    capability: str
    type: str


#: (field path inside the test, gold label) - where a test names a gold label.
LabelUse = tuple[tuple[int | str, ...], str]


def predict(probs: Mapping[str, float], labels: Sequence[str]) -> str:
    """Return the label with the highest probability (ties go to the earlier label)."""
    best, best_p = labels[0], float("-inf")
    for label in labels:
        p = probs.get(label, 0.0)
        if p > best_p:
            best, best_p = label, p
    return best


SpecT = TypeVar("SpecT", bound=TestSpecBase)
"""A test type's spec model (``MFTTest`` for ``MFT``)."""


class CompiledTest(Generic[SpecT]):
    """One test of a suite, resolved against the suite's lexicons and files.

    A test type subclasses it with its spec model as the type parameter
    (``class MFT(CompiledTest[MFTTest])``) and sets ``type_name`` (the suite's ``type:``)
    and ``spec_model`` (the same pydantic model, with ``type: Literal[name]``); it
    implements :meth:`count`,
    :meth:`expand` and :meth:`judge`, and may override :meth:`compile` (checks that need the
    lexicons or files), :meth:`aggregate` and :meth:`label_uses`. Register it in
    ``formalize.types.TEST_TYPES``.
    """

    #: The ``type:`` value of this test type.
    type_name: ClassVar[str] = ""
    #: The pydantic model of this type's entry under ``tests:``.
    spec_model: ClassVar[type[TestSpecBase]] = TestSpecBase
    #: Cases carry gold labels (judged against them, counted per label, exportable to
    #: formats that need gold labels).
    gold: ClassVar[bool] = False
    #: Judging a case needs the probabilities of its original text (``case.orig_text``).
    paired: ClassVar[bool] = False
    #: Cases pass or fail (False: cases are compared across groups, see ``aggregate``).
    scored: ClassVar[bool] = True
    #: :meth:`count` is only an upper bound: base texts a perturbation or group value does
    #: not apply to are skipped.
    count_is_bound: ClassVar[bool] = False

    def __init__(self, spec: SpecT, *, lexicons: LexiconSet | None = None) -> None:
        self.spec: SpecT = spec
        self.slug = slugify(spec.name)
        self.lexicons = lexicons
        """The suite's lexicons (where a test draws values it names by lexicon)."""
        self.source = TemplateSource()
        """Templates and plain texts (the base texts of templated tests)."""
        self.base_texts: tuple[str, ...] = ()
        """Base texts read from files or a run (part of the suite's fingerprint)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.name!r})"

    @property
    def name(self) -> str:
        """The test's name."""
        return str(self.spec.name)

    @property
    def type(self) -> str:
        """The test's type (``mft``, ``inv``, ...)."""
        return str(getattr(self.spec, "type", self.type_name))

    @property
    def capability(self) -> str:
        """The capability the test belongs to."""
        return str(self.spec.capability)

    # -- building ---------------------------------------------------------------------
    @classmethod
    def compile(cls, index: int, spec: SpecT, ctx: SuiteContext) -> CompiledTest[SpecT]:
        """Build the test ``tests[index]`` of a suite and check it against the suite's
        lexicons, labels and files.

        Raises:
            TemplateError: naming the test, field and line.
        """
        return cls(spec, lexicons=ctx.lexicons)

    @classmethod
    def label_uses(cls, spec: SpecT) -> Iterator[LabelUse]:
        """Yield (field path, gold label) for every gold label the spec names."""
        return iter(())

    @classmethod
    def uses_lexicon(cls, spec: SpecT, names: set[str]) -> bool:
        """Whether the spec draws from any lexicon in ``names`` (for error messages)."""
        for text in getattr(spec, "templates", []):
            try:
                nodes = parse_template(text)
            except TemplateError:
                continue
            if any(isinstance(n, Slot) and n.lexicon in names for n in nodes):
                return True
        return False

    def gold_templates(self) -> list[tuple[tuple[Node, ...], str | None]] | None:
        """The test as (template nodes, gold label) pairs, for formats that write templates;
        None: the test has no such form (its cases are written instead)."""
        return None

    # -- expansion --------------------------------------------------------------------
    def effective_sample(self, sample: int | None) -> int | None:
        """The number of template fills drawn: ``sample`` (CLI) over the test's own setting."""
        if sample is not None:
            return sample
        return getattr(self.spec, "sample", None)

    def count(self, sample: int | None = None) -> int:
        """Cases this test produces at most (before duplicates and inapplicable perturbations
        are removed), computed without expanding."""
        raise NotImplementedError

    def sample_for(self, max_cases: int) -> int | None:
        """The number of template draws that keeps :meth:`count` at or under ``max_cases``
        (at least one); None: the test does not sample (contrast sets, test groups)."""
        return None

    def expand(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Yield this test's cases lazily, duplicates (same text) removed."""
        raise NotImplementedError

    def cases(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Yield this test's cases lazily (see :meth:`expand`)."""
        return self.expand(sample, seed)

    def base(self) -> CaseBase:
        """The fields every case of this test shares."""
        return CaseBase(test=self.name, capability=self.capability, type=self.type)

    # -- judging ----------------------------------------------------------------------
    @classmethod
    def judge(cls, spec: SpecT, case: Case, probs: Mapping[str, float],
              orig: Mapping[str, float] | None, labels: Sequence[str]
              ) -> tuple[str, bool | None, str | None]:
        """Return (prediction, passed, original prediction) for one scored case; ``passed``
        is None where a case has no pass/fail of its own."""
        raise NotImplementedError

    def aggregate(self, agg: Aggregates, case: Case, model: str, row: Mapping[str, Any],
                  labels: Sequence[str]) -> None:
        """Add one judged case (``row``: the case's output row) to the summary counters:
        pass/fail per test, capability, gold label and fill, and the first failures."""
        passed = bool(row["passed"])
        agg.by_test[(case.test, model)].add(passed)
        agg.by_capability[(case.capability, model)].add(passed)
        if self.gold and case.label is not None:
            agg.by_label[(case.label, model)].add(passed)
        for slot, source, value in case.fills:
            agg.by_fill[(case.test, slot, source, value, model)].add(passed)
        if not passed:
            agg.keep_example(case.test, model, row)
