"""The template runner: expand a suite, score it with task models in batches, judge each case."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from discovery import TaskScorer
from formalize._aggregate import Aggregates
from formalize._expand import Case, StratifiedSample
from formalize._labels import check_model_labels
from formalize._suite import Suite
from formalize.types import TEST_TYPES, CompiledTest
from formalize.types._base import predict
from synth.core import DataError, SynthcheckError, atomic_open, dumps_record, length_sorted_batches

if TYPE_CHECKING:
    from formalize._result import VerifyResult

__all__ = ["TemplateRunner", "TestSample", "judge", "predict", "sampling_plan"]


@dataclass(frozen=True)
class TestSample:
    """How ``verify`` samples one test over its per-test cap: the cases it would expand to
    (``total``), the cases it is cut to (``sampled``), the template draws that gives, and
    whether the cap was lowered to keep the suite within its case limit."""

    total: int
    sampled: int
    draws: int
    lowered: bool = False

    def note(self, test: str) -> str:
        """The line ``verify`` prints for this test."""
        why = ("verify.max_cases_per_test, lowered to keep the suite within its case limit"
               if self.lowered else "verify.max_cases_per_test")
        return (f"note: test {test!r} expands to {self.total:,} cases; sampling "
                f"{self.sampled:,} ({why}; --sample N to choose)")


def sampling_plan(suite: Suite, sample: int | None = None,
                  max_cases_per_test: int | None = None,
                  max_cases: int | None = None) -> dict[str, TestSample]:
    """The tests to sample under ``max_cases_per_test``: those that would expand to more
    cases and are not sampled already (no ``sample`` given, none of the test's own) and can
    be (templated tests). Counted, never expanded; each is drawn stratified over its
    templates with the suite's seed (:class:`~formalize._expand.StratifiedSample`).

    When the sampled suite is still over ``max_cases`` (default: the suite's), the cap is
    lowered to the largest that fits (a bisection on the counts), so a suite of many huge
    tests is sampled rather than refused; if even one draw per test is too many, the plan
    stays at the cap and the case limit refuses it."""
    if max_cases_per_test is None or sample is not None:
        return {}
    limit = suite.spec.max_cases if max_cases is None else max_cases
    big = [t for t in suite.tests
           if t.effective_sample(None) is None and t.count() > max_cases_per_test
           and t.sample_for(max_cases_per_test) is not None]
    if not big:
        return {}
    rest = sum(t.count() for t in suite.tests if t not in big)

    def plan_at(cap: int, lowered: bool) -> dict[str, TestSample]:
        out = {}
        for t in big:
            draws = t.sample_for(cap)
            assert draws is not None
            out[t.name] = TestSample(t.count(), t.count(StratifiedSample(draws)), draws, lowered)
        return out

    def total(plan: dict[str, TestSample]) -> int:
        return rest + sum(p.sampled for p in plan.values())

    plan = plan_at(max_cases_per_test, False)
    if total(plan) <= limit:
        return plan
    lo, hi = 0, max_cases_per_test - 1  # the largest cap whose plan fits (0: none)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if total(plan_at(mid, True)) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return plan_at(lo, True) if lo >= 1 and total(plan_at(lo, True)) <= limit else plan


def judge(case: Case, probs: Mapping[str, float], orig: Mapping[str, float] | None,
          labels: Sequence[str], spec: Any) -> tuple[str, bool | None, str | None]:
    """Return (prediction, passed, original prediction) for one case, judged by its test
    type; ``passed`` is None for test-group variants, which have no pass/fail."""
    return TEST_TYPES.get(case.type).judge(spec, case, probs, orig, labels)


def _chunks(items: Iterable[Case], size: int) -> Iterator[list[Case]]:
    chunk: list[Case] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class TemplateRunner:
    """Expand a suite and measure task models on it.

    Texts are de-duplicated within each chunk of ``chunk_size`` cases (an INV/DIR pair's two
    texts are always in the same chunk), sorted by length and scored ``batch_size`` at a time,
    once per model. Cases stream through: memory is bounded by the chunk, not the suite.

    Args:
        sample: draw this many fills per templated test (seeded) instead of all of them.
        seed: seed of sampling and perturbations (default: the suite's).
        batch_size: texts per ``predict_proba`` call.
        chunk_size: cases expanded and scored together.
        max_cases: refuse exhaustive expansion above this many cases (default: the suite's).
        max_cases_per_test: sample a test that would expand to more cases down to this many,
            stratified over its templates (see :func:`sampling_plan`; None: no cap).
        max_examples: failures kept per test and model for the report.
        keep_cases: keep every case's row in ``result.cases`` (turn off for huge suites).
        heldout_recall: ``{model: {label: recall}}`` measured on held-out data, shown beside
            the per-capability results.
        progress: draw a progress bar of cases (rate and ETA) on stderr when it is a
            terminal; it moves after every model batch.
    """

    def __init__(self, *, sample: int | None = None, seed: int | None = None,
                 batch_size: int = 64, chunk_size: int = 4096, max_cases: int | None = None,
                 max_cases_per_test: int | None = None, max_examples: int = 5,
                 keep_cases: bool = True,
                 heldout_recall: Mapping[str, Mapping[str, float]] | None = None,
                 progress: bool = False) -> None:
        for name, value in (("batch_size", batch_size), ("chunk_size", chunk_size),
                            ("max_examples", max_examples + 1)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if sample is not None and sample < 1:
            raise ValueError(f"sample must be a positive integer, got {sample!r}")
        self.sample, self.seed = sample, seed
        self.batch_size, self.chunk_size = batch_size, chunk_size
        self.max_cases, self.max_examples = max_cases, max_examples
        self.max_cases_per_test = max_cases_per_test
        self.keep_cases = keep_cases
        self.progress = progress
        self.heldout_recall = {m: dict(r) for m, r in (heldout_recall or {}).items()}

    def run(self, suite: Suite, scorers: Sequence[TaskScorer] | Mapping[str, TaskScorer], *,
            cases_path: str | Path | None = None) -> VerifyResult:
        """Run ``suite`` against every scorer; optionally stream per-case rows to ``cases_path``
        (JSON Lines, written atomically: the file appears only when the run completes).

        Raises:
            TemplateError: the expansion is over the case limit.
            DataError: a model's labels differ from the suite's, or it returns a bad row.
        """
        from formalize._result import VerifyResult

        models = _named(scorers)
        check_model_labels(models, suite.labels, suite.source)
        total, plan = self.check(suite)
        seed = suite.spec.seed if self.seed is None else self.seed
        agg = Aggregates(self.max_examples)
        tests = {t.name: t for t in suite.tests}
        for t in suite.tests:
            agg.tests[t.name] = {"capability": t.capability, "type": t.type}
            if getattr(t.spec, "scale", None) is not None:  # a test group's fixed scale
                agg.tests[t.name]["scale"] = t.spec.scale
            if t.type == "dir":  # what a directional test checks, for its failing examples
                agg.tests[t.name]["checks"] = direction_checked(t.spec)
        rows: list[dict[str, Any]] | None = [] if self.keep_cases else None
        cases = (c for t in suite.tests for c in t.cases(
            StratifiedSample(plan[t.name].draws) if t.name in plan else self.sample, seed))
        from synth.core import progress_bar

        with progress_bar(total, f"verify {suite.name}", "case", enabled=self.progress) as bar:
            if cases_path is not None:
                with atomic_open(cases_path) as handle:
                    self._loop(cases, models, suite.labels, tests, agg, rows, handle, bar)
            else:
                self._loop(cases, models, suite.labels, tests, agg, rows, None, bar)
        return VerifyResult.build(suite, list(models), agg, rows, self.heldout_recall,
                                  sample=self.sample, seed=seed, upper_bound=total,
                                  sampled=plan)

    def check(self, suite: Suite) -> tuple[int, dict[str, TestSample]]:
        """The cases this runner would expand (an upper bound) and the tests it samples under
        its per-test cap, refusing a suite still over the case limit after that; counted
        only, so callers check before loading any model.

        Raises:
            TemplateError: the (sampled) expansion is over the case limit.
        """
        plan = sampling_plan(suite, self.sample, self.max_cases_per_test, self.max_cases)
        counts = {t.name: plan[t.name].sampled if t.name in plan else t.count(self.sample)
                  for t in suite.tests}
        return suite.check_limit(self.sample, self.max_cases, counts=counts), plan

    def _loop(self, cases: Iterable[Case], models: dict[str, TaskScorer], labels: list[str],
              tests: dict[str, CompiledTest], agg: Aggregates,
              rows: list[dict[str, Any]] | None, handle: IO[str] | None, bar: Any) -> None:
        for chunk in _chunks(cases, self.chunk_size):
            # Originals are scored only where judging needs them (INV/DIR pairs).
            texts = list(dict.fromkeys(
                t for c in chunk
                for t in ((c.model_input, c.orig_text) if tests[c.test].paired
                          else (c.model_input,))
                if t is not None))
            agg.n_texts_scored += len(texts)
            work = len(texts) * len(models)
            scored = {name: self._score(name, scorer, texts, labels, _case_progress(
                bar, agg.n_cases, len(chunk), work, i * len(texts)))
                for i, (name, scorer) in enumerate(models.items())}
            for case in chunk:
                agg.n_cases += 1
                test = tests[case.test]
                for name in models:
                    probs = scored[name][case.model_input]
                    orig = (scored[name][case.orig_text]
                            if test.paired and case.orig_text is not None else None)
                    pred, passed, orig_pred = test.judge(test.spec, case, probs, orig, labels)
                    row = _row(case, name, pred, probs, passed, orig_pred, orig)
                    test.aggregate(agg, case, name, row, labels)
                    if handle is not None:
                        handle.write(dumps_record(row) + "\n")
                    if rows is not None:
                        rows.append(row)

    def _score(self, name: str, scorer: TaskScorer, texts: list[Any], labels: list[str],
               moved: Callable[[int], None] | None = None) -> dict[Any, dict[str, float]]:
        # A text, or a sentence pair (first, second), which adapters take as documented.
        lengths = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
        out: dict[Any, dict[str, float]] = {}
        done = 0
        for idx in length_sorted_batches(lengths, self.batch_size, longest_first=False):
            batch = [texts[i] for i in idx]
            probs = scorer.predict_proba(batch)
            if len(probs) != len(batch):
                raise DataError(f"model {name!r} returned {len(probs)} rows for {len(batch)} texts",
                                where="predict_proba", fix="return one dict per input text")
            for text, p in zip(batch, probs, strict=True):
                out[text] = {lab: float(p[lab]) for lab in labels}
            done += len(batch)
            if moved is not None:
                moved(done)
        return out


def _case_progress(bar: Any, start: int, n_cases: int, work: int, offset: int
                   ) -> Callable[[int], None]:
    """Move ``bar`` (counting cases) as a model's texts are scored: a chunk of ``n_cases``
    cases from ``start`` is done in proportion to its ``work`` (texts times models) done;
    this model's texts begin at ``offset``."""
    def moved(done: int) -> None:
        bar.update(start + n_cases * (offset + done) // max(work, 1) - bar.n)
    return moved


def _named(scorers: Sequence[TaskScorer] | Mapping[str, TaskScorer]) -> dict[str, TaskScorer]:
    if isinstance(scorers, Mapping):
        models = dict(scorers)
    else:
        models = {}
        for scorer in scorers:
            name = str(getattr(scorer, "name", type(scorer).__name__))
            base, k = name, 2
            while name in models:
                name, k = f"{base}#{k}", k + 1
            models[name] = scorer
    if not models:
        raise SynthcheckError("no task models to run", fix="pass at least one --model")
    return models


def _row(case: Case, model: str, pred: str, probs: dict[str, float], passed: bool | None,
         orig_pred: str | None, orig: Mapping[str, float] | None) -> dict[str, Any]:
    row = case.to_record()
    row.update(model=model, pred=pred, probs=probs, passed=passed, orig_pred=orig_pred,
               orig_probs=dict(orig) if orig is not None else None)
    return row


def direction_checked(spec: Any) -> str:
    """What a directional test checks, in words: ``p(positive) down`` (``by >= 0.1``)."""
    delta = f" by >= {spec.min_delta:g}" if spec.min_delta else ""
    return f"p({spec.label}) {spec.direction}{delta}"
