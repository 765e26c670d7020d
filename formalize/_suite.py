"""Suites: load a suite YAML, check it against its lexicons and labels, and expand it lazily.

A suite compiles each entry under ``tests:`` with its registered test type
(``formalize.types.TEST_TYPES``); the schema and its error messages live in ``_schema``, the
label checks in ``_labels``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from formalize._compile import SuiteContext, suite_file
from formalize._expand import SEED_SCHEME, Case
from formalize._labels import check_spec_labels
from formalize._lexicons import (
    LexiconSet,
    _clean,
    builtin_lexicons,
    builtin_pairs,
    check_lexicon_name,
    paired_lexicon,
    read_lexicon_file,
    read_lexicon_yaml,
)
from formalize._schema import read_suite_yaml, validate_suite
from formalize._spec import PairedLexiconSpec, SuiteSpec
from formalize.types import TEST_TYPES, CompiledTest
from synth.core import LabelSpace, TemplateError, did_you_mean, node_line

MAX_CASES = 10_000_000
"""The most cases any suite expands to, whatever its ``max_cases`` (a larger expansion would
take hours and gigabytes of ``cases.jsonl``): sample instead."""


class Suite:
    """A loaded, checked suite: its spec, lexicons and compiled tests.

    Build one with :meth:`from_yaml` or :meth:`from_dict`; every problem is a TemplateError
    that names the suite, the test and (in templates) the column.
    """

    def __init__(self, spec: SuiteSpec, *, source: str = "<suite>",
                 base_dir: str | Path = ".", node: yaml.Node | None = None,
                 extra_lexicons: Mapping[str, list[str]] | None = None,
                 allow_outside_files: bool = False) -> None:
        self.spec = spec
        self.source = source
        self.base_dir = Path(base_dir)
        self._node = node
        self.allow_outside_files = allow_outside_files
        self.lexicons = self._build_lexicons(extra_lexicons or {})
        ctx = SuiteContext(spec=spec, source=source, node=node, base_dir=self.base_dir,
                           labels=self.label_space, lexicons=self.lexicons,
                           allow_outside_files=allow_outside_files)
        self.tests: list[CompiledTest] = [self._compile(i, t, ctx)
                                          for i, t in enumerate(spec.tests)]

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path, *, allow_outside_files: bool = False) -> Suite:
        """Load and check a suite file. The files it names are read relative to its folder
        and must lie in it unless ``allow_outside_files`` (see
        :func:`formalize._compile.suite_file`).

        Raises:
            TemplateError: malformed YAML (with the line), a schema error (field and line),
                a file outside the suite's folder, or any problem with templates, lexicons
                or labels.
        """
        path = Path(path)
        data, node = read_suite_yaml(path)
        return cls.from_dict(data, source=str(path), base_dir=path.parent, node=node,
                             allow_outside_files=allow_outside_files)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<suite>", base_dir: str | Path = ".",
                  node: yaml.Node | None = None, allow_outside_files: bool = False) -> Suite:
        """Check a suite given as a dict (the YAML's content)."""
        return cls(validate_suite(data, source, node), source=source, base_dir=base_dir,
                   node=node, allow_outside_files=allow_outside_files)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def labels(self) -> list[str]:
        """The suite's labels, in order."""
        return list(self.spec.labels)

    @property
    def label_space(self) -> LabelSpace:
        """The suite's labels as a :class:`synth.core.LabelSpace`."""
        return LabelSpace.of(self.spec.labels)

    def _build_lexicons(self, extra: Mapping[str, list[str]]) -> LexiconSet:
        spec = self.spec
        merged: dict[str, Any] = dict(builtin_lexicons()) if spec.builtin_lexicons else {}
        pairs = builtin_pairs() if spec.builtin_lexicons else {}
        for k, rel in enumerate(spec.lexicon_files):
            try:
                # Confined to the suite's folder like `lexicons: {X: {file: ...}}` and
                # `texts_file` (issue 19: their values reached exported cases and reports).
                merged.update(read_lexicon_yaml(self._file(rel), pairs))
            except TemplateError as exc:
                raise self._lexicon_error(exc, "lexicon_files", k) from None
        for name, entry in spec.lexicons.items():
            try:
                if isinstance(entry, list):
                    merged[name] = _clean(entry, name, self.source)
                elif isinstance(entry, PairedLexiconSpec):
                    pairs[name] = paired_lexicon(name, entry.slots, entry.values, self.source)
                else:
                    merged[name] = read_lexicon_file(self._file(entry.file), name=name,
                                                     column=entry.column, key=entry.key)
            except TemplateError as exc:
                raise self._lexicon_error(exc, "lexicons", name) from None
        merged.update(extra)
        for section, names, kind in (("lexicons", spec.lexicons, "lexicon"),
                                     ("slots", spec.slots, "slot alias")):
            for name in names:
                line = node_line(self._node, (section, name)) if self._node is not None else None
                check_lexicon_name(name, f"{self.source}, {section}.{name}" +
                                   (f", line {line}" if line else ""), kind)
        try:
            return LexiconSet(merged, spec.slots, where=self.source, pairs=pairs)
        except TemplateError as exc:
            raise TemplateError(exc.what, where=f"{self.source}, lexicons", fix=exc.fix) from None

    def _file(self, name: str) -> Path:
        """A lexicon file the suite names (the caller names the entry in errors)."""
        return suite_file(self.base_dir, name, self.source,
                          allow_outside=self.allow_outside_files)

    def _lexicon_error(self, exc: TemplateError, section: str, key: int | str
                       ) -> TemplateError:
        """Re-raise a lexicon problem naming the suite entry (and line) that defines it, the
        file it read, and the first test that uses the lexicon."""
        line = node_line(self._node, (section, key)) if self._node is not None else None
        where = f"{self.source}, {section}.{key}" + (f", line {line}" if line else "")
        if exc.where and exc.where != self.source:
            where += f": {exc.where}"
        what = exc.what
        user = self._first_user(str(key)) if section == "lexicons" else None
        if user is not None:
            what += f" (used by test {user!r})"
        return TemplateError(what, where=where, fix=exc.fix)

    def _first_user(self, lexicon: str) -> str | None:
        """Name of the first test that draws from ``lexicon`` (directly or via a slot alias)."""
        via = {lexicon} | {a for a, names in self.spec.slots.items() if lexicon in names}
        for spec in self.spec.tests:
            if TEST_TYPES.get(spec.type).uses_lexicon(spec, via):
                return spec.name
        return None

    # -- compilation ------------------------------------------------------------------
    def _compile(self, i: int, spec: Any, ctx: SuiteContext) -> CompiledTest:
        names = [t.name for t in self.spec.tests]
        if names.count(spec.name) > 1:
            raise TemplateError(f"duplicate test name {spec.name!r}",
                                where=ctx.where("tests", i, "name", test=spec.name),
                                fix="give every test a unique name")
        if len(self.spec.text_fields) == 2 and spec.type != "contrast":
            raise TemplateError(
                f"test type {spec.type!r} does not take sentence pairs",
                where=ctx.where("tests", i, "type", test=spec.name),
                fix="a sentence-pair suite (two text_fields) holds contrast tests")
        return TEST_TYPES.get(spec.type).compile(i, spec, ctx)


    # -- expansion --------------------------------------------------------------------
    def counts(self, sample: int | None = None) -> dict[str, int]:
        """Cases per test (an upper bound: before duplicates are removed), without expanding."""
        return {t.name: t.count(sample) for t in self.tests}

    def check_limit(self, sample: int | None = None, max_cases: int | None = None, *,
                    counts: Mapping[str, int] | None = None) -> int:
        """Return the total case count, or refuse if it is over the limit.

        ``counts`` (cases per test) stands in for :meth:`counts` where the caller samples
        tests itself (``verify``'s per-test cap).

        Raises:
            TemplateError: the expansion would exceed ``max_cases`` (default: the suite's).
        """
        limit = max_cases if max_cases is not None else self.spec.max_cases
        counts = dict(counts) if counts is not None else self.counts(sample)
        total = sum(counts.values())
        if total > MAX_CASES and limit > MAX_CASES:
            biggest = max(counts, key=lambda k: counts[k])
            raise TemplateError(
                f"expansion would produce {total:,} cases, over the most synthcheck expands "
                f"({MAX_CASES:,}; the case limit {limit:,} is higher) (largest: test "
                f"{biggest!r} with {counts[biggest]:,})", where=self.source,
                fix="sample with --sample N (or a test's 'sample:')")
        if total > limit:
            biggest = max(counts, key=lambda k: counts[k])
            raise TemplateError(
                f"expansion would produce {total:,} cases, over the limit of {limit:,} "
                f"(largest: test {biggest!r} with {counts[biggest]:,})", where=self.source,
                fix="sample with --sample N (or a test's 'sample:'), or raise max_cases")
        return total

    def cases(self, sample: int | None = None, seed: int | None = None,
              max_cases: int | None = None) -> Iterator[Case]:
        """Yield every case of every test lazily (after checking the case limit)."""
        self.check_limit(sample, max_cases)
        seed = self.spec.seed if seed is None else seed
        for test in self.tests:
            yield from test.cases(sample, seed)

    def test(self, name: str) -> CompiledTest:
        """Return the test called ``name``."""
        for t in self.tests:
            if t.name == name:
                return t
        raise TemplateError(f"no test {name!r} in suite {self.name!r}", where=self.source,
                            fix=did_you_mean(name, [t.name for t in self.tests]))

    def to_dict(self) -> dict[str, Any]:
        """Return the suite as plain data (what a suite YAML holds), defaults left out."""
        return self.spec.model_dump(mode="json", exclude_defaults=True)

    def fingerprint(self) -> dict[str, Any]:
        """Return what the suite's cases depend on, for output hashes: the suite data plus
        digests of what it reads from files (lexicons, ``texts_file``, ``texts_from_run``),
        so a changed lexicon file or a regenerated corpus changes the hash."""
        def digest(values: Any) -> str:
            return hashlib.sha256("\n".join(values).encode("utf-8")).hexdigest()[:16]

        return {"suite": self.to_dict(),
                "lexicons": {n: digest(self.lexicons.values(n)) for n in self.lexicons.names()},
                "base_texts": {t.name: digest(t.base_texts) for t in self.tests if t.base_texts},
                "seeds": SEED_SCHEME}

    def check_labels(self, task_labels: Iterable[str], *, task_source: str = "the task") -> None:
        """Refuse a suite whose labels are not the task's (the same names, in any order).

        Call it before scoring: the task models are loaded over the task's labels.

        Args:
            task_labels: the task's labels (a ``LabelSpace`` or the run config's
                ``task.labels``).
            task_source: where they come from, for the message (e.g. ``config C, task.labels``).

        Raises:
            TemplateError: a gold label (or a suite label) is not one of the task's labels
                (naming the test and line that uses it), or the suite lacks a task label.
        """
        check_spec_labels(self.spec, task_labels, source=self.source, node=self._node,
                          task_source=task_source)


def load_suite(path: str | Path, *, allow_outside_files: bool = False) -> Suite:
    """Load and check a suite YAML file (see :meth:`Suite.from_yaml`)."""
    return Suite.from_yaml(path, allow_outside_files=allow_outside_files)


def dump_suite_yaml(data: Mapping[str, Any]) -> str:
    """Return suite data as YAML text (keys in schema order, unicode kept)."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)
