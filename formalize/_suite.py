"""Suites: load a suite YAML, check it against its lexicons and labels, and expand it lazily."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import yaml
from pydantic import ValidationError

from formalize._expand import Case, CompiledTemplate, Deduper, TemplateSource, case_rng, slugify
from formalize._groups import (
    GroupVariantMaker,
    iter_contrasts,
    read_run_texts,
    read_texts_file,
)
from formalize._lexicons import (
    RENAMED_LEXICONS,
    LexiconSet,
    _clean,
    builtin_lexicons,
    check_lexicon_name,
    read_lexicon_file,
    read_lexicon_yaml,
    renamed_hint,
)
from formalize._perturb import Perturbation, make_perturbation
from formalize._spec import (
    ContrastTest,
    DIRTest,
    GroupTest,
    INVTest,
    LabelRule,
    MFTTest,
    PerturbTest,
    SuiteSpec,
)
from formalize._template import Slot, parse_template
from synth.core import (
    ConfigError,
    TemplateError,
    describe_field_error,
    did_you_mean,
    format_loc,
    load_yaml,
    node_line,
)


class _CaseBase(TypedDict):
    """The fields every case of one test shares."""

    test: str
    capability: str
    type: str


@dataclass
class CompiledTest:
    """One test of a suite, resolved against the lexicons: it counts and yields its cases."""

    spec: MFTTest | INVTest | DIRTest | GroupTest | ContrastTest
    slug: str
    source: TemplateSource = field(default_factory=TemplateSource)
    perturbations: tuple[Perturbation, ...] = ()
    group_maker: GroupVariantMaker | None = None
    base_texts: tuple[str, ...] = ()
    lexicons: LexiconSet | None = field(default=None, repr=False, compare=False)
    """The suite's lexicons: where a contrast item without ``alternatives`` draws them."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def type(self) -> str:
        return self.spec.type

    @property
    def capability(self) -> str:
        return self.spec.capability

    def effective_sample(self, sample: int | None) -> int | None:
        """The number of template fills drawn: ``sample`` (CLI) over the test's own setting."""
        if sample is not None:
            return sample
        return getattr(self.spec, "sample", None)

    def count(self, sample: int | None = None) -> int:
        """Cases this test produces at most (before duplicates and inapplicable perturbations
        are removed), computed without expanding."""
        spec = self.spec
        n = self.source.count(self.effective_sample(sample))
        if isinstance(spec, MFTTest):
            return n + len(spec.cases)
        if isinstance(spec, PerturbTest):
            return n * len(self.perturbations) * spec.variants
        if isinstance(spec, GroupTest):
            assert self.group_maker is not None
            return len(self.base_texts) * len(self.group_maker.groups)
        assert isinstance(spec, ContrastTest)
        return sum(int(spec.include_original) + len(self._alternatives(it)) for it in spec.items)

    def cases(self, sample: int | None = None, seed: int = 0) -> Iterator[Case]:
        """Yield this test's cases lazily, duplicates (same text) removed."""
        spec = self.spec
        rng = random.Random(f"{seed}|{spec.name}|sample")
        base = _CaseBase(test=spec.name, capability=spec.capability, type=spec.type)
        dedupe = Deduper()
        if isinstance(spec, MFTTest):
            i = 0
            for text, fills, tpl in self.source.iter(self.effective_sample(sample), rng):
                if dedupe.first(text):
                    label = self._label(spec.label, fills)
                    yield Case(**base, case_id=f"{self.slug}:{i}", text=text, label=label,
                               fills=fills, template=tpl)
                    i += 1
            for case in spec.cases:
                if dedupe.first(case.text):
                    label = case.label or (spec.label if isinstance(spec.label, str) else None)
                    yield Case(**base, case_id=f"{self.slug}:{i}", text=case.text, label=label)
                    i += 1
        elif isinstance(spec, PerturbTest):
            yield from self._perturbed(base, sample, seed, rng, dedupe)
        elif isinstance(spec, GroupTest):
            assert self.group_maker is not None
            for b, text in enumerate(self.base_texts):
                variants = self.group_maker.variants(text)
                for group, variant in (variants or {}).items():
                    yield Case(**base, case_id=f"{self.slug}:{b}:{group}", text=variant,
                               group=group, base_id=f"{self.slug}:{b}", orig_text=text)
        else:
            assert isinstance(spec, ContrastTest)
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

    def _perturbed(self, base: _CaseBase, sample: int | None, seed: int,
                   rng: random.Random, dedupe: Deduper) -> Iterator[Case]:
        spec = self.spec
        assert isinstance(spec, PerturbTest)
        base_dedupe = Deduper()
        i = 0
        for text, fills, tpl in self.source.iter(self.effective_sample(sample), rng):
            if not base_dedupe.first(text):
                continue
            for j, pert in enumerate(self.perturbations):
                for v in range(spec.variants):
                    out = pert(text, case_rng(seed, spec.name, i, j, v))
                    if out is None or out == text or not dedupe.first(out):
                        continue
                    yield Case(**base, case_id=f"{self.slug}:{i}.{j}.{v}", text=out,
                               label=getattr(spec, "label", None) if spec.type == "dir" else None,
                               fills=fills, orig_text=text, base_id=f"{self.slug}:{i}",
                               template=tpl, perturbation=pert.describe())
            i += 1

    @staticmethod
    def _label(label: str | LabelRule | None,
               fills: tuple[tuple[str, str, str], ...]) -> str | None:
        if isinstance(label, LabelRule):
            source = next(s for k, s, _ in fills if k == label.by)
            return label.map[source]
        return label

    def _alternatives(self, item: Any) -> list[str]:
        if item.alternatives is not None:
            return [a for a in item.alternatives if a != item.entity]
        if self.lexicons is None:
            raise ValueError(f"test {self.name!r} has no lexicons to draw "
                             f"{item.lexicon!r} alternatives from")
        return [a for a in self.lexicons.values(item.lexicon) if a != item.entity]


class Suite:
    """A loaded, checked suite: its spec, lexicons and compiled tests.

    Build one with :meth:`from_yaml` or :meth:`from_dict`; every problem is a TemplateError
    that names the suite, the test and (in templates) the column.
    """

    def __init__(self, spec: SuiteSpec, *, source: str = "<suite>",
                 base_dir: str | Path = ".", node: yaml.Node | None = None,
                 extra_lexicons: Mapping[str, list[str]] | None = None) -> None:
        self.spec = spec
        self.source = source
        self.base_dir = Path(base_dir)
        self._node = node
        self.lexicons = self._build_lexicons(extra_lexicons or {})
        self.tests = [self._compile(i, t) for i, t in enumerate(spec.tests)]

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path) -> Suite:
        """Load and check a suite file.

        Raises:
            TemplateError: malformed YAML (with the line), a schema error (field and line),
                or any problem with templates, lexicons or labels.
        """
        path = Path(path)
        data, node = _read_yaml(path)
        return cls.from_dict(data, source=str(path), base_dir=path.parent, node=node)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<suite>", base_dir: str | Path = ".",
                  node: yaml.Node | None = None) -> Suite:
        """Check a suite given as a dict (the YAML's content)."""
        return cls(_validate(data, source, node), source=source, base_dir=base_dir, node=node)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def labels(self) -> list[str]:
        return list(self.spec.labels)

    def _where(self, *loc: int | str, test: str | None = None) -> str:
        return _where(self.source, self._node, *loc, test=test)

    def _build_lexicons(self, extra: Mapping[str, list[str]]) -> LexiconSet:
        spec = self.spec
        merged: dict[str, Any] = dict(builtin_lexicons()) if spec.builtin_lexicons else {}
        for k, rel in enumerate(spec.lexicon_files):
            try:
                merged.update(read_lexicon_yaml(self.base_dir / rel))
            except TemplateError as exc:
                raise self._lexicon_error(exc, "lexicon_files", k) from None
        for name, entry in spec.lexicons.items():
            try:
                if isinstance(entry, list):
                    merged[name] = _clean(entry, name, self.source)
                else:
                    merged[name] = read_lexicon_file(self.base_dir / entry.file, name=name,
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
        return LexiconSet(merged, spec.slots, where=self.source)

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
            for text in getattr(spec, "templates", []):
                try:
                    nodes = parse_template(text)
                except TemplateError:
                    continue
                if any(isinstance(n, Slot) and n.lexicon in via for n in nodes):
                    return spec.name
            if any(p.get("lexicon") in via for p in getattr(spec, "perturb", [])):
                return spec.name
            if any(it.lexicon in via for it in getattr(spec, "items", [])):
                return spec.name
        return None

    # -- compilation ------------------------------------------------------------------
    def _compile(self, i: int, spec: Any) -> CompiledTest:
        names = [t.name for t in self.spec.tests]
        if names.count(spec.name) > 1:
            raise TemplateError(f"duplicate test name {spec.name!r}",
                                where=self._where("tests", i, "name", test=spec.name),
                                fix="give every test a unique name")
        test = CompiledTest(spec=spec, slug=slugify(spec.name), lexicons=self.lexicons)
        if isinstance(spec, MFTTest | INVTest | DIRTest):
            test.source = self._source(i, spec)
        if isinstance(spec, MFTTest):
            self._check_mft(i, spec, test)
        elif isinstance(spec, INVTest | DIRTest):
            if isinstance(spec, DIRTest):
                self._check_label(spec.label, i, "label", spec.name)
            test.perturbations = tuple(
                make_perturbation(p, self.lexicons.values,
                                  self._where("tests", i, "perturb", j, test=spec.name))
                for j, p in enumerate(spec.perturb))
            if test.source.size == 0:
                raise TemplateError("test has no base texts", where=self._where(
                    "tests", i, test=spec.name), fix="add 'templates' or 'texts'")
        elif isinstance(spec, GroupTest):
            test.group_maker = GroupVariantMaker(
                words=spec.words, pattern=spec.pattern, values=spec.values, add=spec.add,
                at=spec.at, where=self._where("tests", i, "pattern", test=spec.name))
            texts = list(spec.texts)
            if spec.texts_file:
                texts += read_texts_file(self.base_dir / spec.texts_file,
                                         self._where("tests", i, "texts_file", test=spec.name))
            if spec.texts_from_run is not None:
                src = spec.texts_from_run
                seed = self.spec.seed if src.seed is None else src.seed
                from_run = read_run_texts(
                    src.run, self._where("tests", i, "texts_from_run", test=spec.name),
                    base_dir=self.base_dir, limit=src.limit, seed=f"{seed}|{spec.name}",
                    keep=test.group_maker.applies)
                if not from_run:
                    raise TemplateError(
                        "no corpus text of the run mentions the attribute",
                        where=self._where("tests", i, "texts_from_run", test=spec.name),
                        fix="check 'words'/'pattern', or set 'add' to insert a mention")
                texts += from_run
            if not texts:
                raise TemplateError("test group has no base texts", where=self._where(
                    "tests", i, test=spec.name),
                    fix="add 'texts', 'texts_file' or 'texts_from_run'")
            test.base_texts = tuple(texts)
        else:
            self._check_contrast(i, spec, test)
        return test

    def _source(self, i: int, spec: Any) -> TemplateSource:
        templates = []
        for j, text in enumerate(spec.templates):
            where = self._where("tests", i, "templates", j, test=spec.name)
            if "templates" not in (self._raw_test(i) or {}):
                where = self._where("tests", i, "template", test=spec.name)
            nodes = parse_template(text, where)
            domains = {}
            for node in nodes:
                if isinstance(node, Slot) and node.key not in domains:
                    if node.lexicon not in self.lexicons:
                        raise self._undefined(node, text, where)
                    domains[node.key] = self.lexicons.domain(node.lexicon, where)
            templates.append(CompiledTemplate.build(text, nodes, domains))
        return TemplateSource(tuple(templates), tuple(spec.texts))

    def _undefined(self, node: Slot, text: str, where: str) -> TemplateError:
        """The error for a placeholder whose lexicon is not defined; a key with trailing
        digits is explained (``{X_3}`` draws from ``X_``), above all when ``X_3`` exists."""
        at = f"undefined placeholder {{{node.key}}} at column {node.column} in {text!r}"
        names = self.lexicons.names()
        if node.key == node.lexicon:
            return TemplateError(at, where=where,
                                 fix=did_you_mean(node.lexicon, names) +
                                 renamed_hint(node.key) + "; or define it under 'lexicons:'")
        reads = (f"{at}: a trailing digit marks another draw, so {{{node.key}}} draws from "
                 f"the lexicon {node.lexicon!r}, which is not defined")
        if node.key in self.lexicons:
            return TemplateError(
                f"{reads}; the lexicon {node.key!r} exists, but its name ends with a digit, so "
                f"no placeholder can name it", where=where,
                fix=f"rename the lexicon so that it does not end with a digit, or give it a slot "
                    f"alias (slots: {{ALIAS: [{node.key}]}}) and write {{ALIAS}}")
        new = RENAMED_LEXICONS.get(node.key)
        if new is not None:
            return TemplateError(f"{reads}; the built-in lexicon {node.key!r} was renamed",
                                 where=where, fix=f"write {{{new}}}")
        return TemplateError(reads, where=where,
                             fix=did_you_mean(node.lexicon, names) +
                             "; or define it under 'lexicons:'")

    def _raw_test(self, i: int) -> dict[str, Any] | None:
        node = self._node
        if not isinstance(node, yaml.MappingNode):
            return None
        for k, v in node.value:
            if k.value == "tests" and isinstance(v, yaml.SequenceNode) and i < len(v.value):
                item = v.value[i]
                if isinstance(item, yaml.MappingNode):
                    return {kk.value: None for kk, _ in item.value}
        return None

    def _check_label(self, label: str | None, i: int, fld: str, test: str) -> None:
        if label is not None and label not in self.spec.labels:
            raise TemplateError(
                f"label {label!r} is not one of the suite's labels ({', '.join(self.spec.labels)})",
                where=self._where("tests", i, fld, test=test),
                fix=did_you_mean(label, list(self.spec.labels)))

    def _check_mft(self, i: int, spec: MFTTest, test: CompiledTest) -> None:
        label = spec.label
        if isinstance(label, LabelRule):
            for lab in label.map.values():
                self._check_label(lab, i, "label", spec.name)
            for tpl in test.source.templates:
                if label.by not in tpl.keys:
                    raise TemplateError(
                        f"the label depends on slot {label.by!r}, which template "
                        f"{tpl.text!r} lacks",
                        where=self._where("tests", i, "label", test=spec.name),
                        fix=f"use {{{label.by}}} in every template, or a fixed label")
                sources = {s for _, s in tpl.domains[tpl.keys.index(label.by)]}
                missing = sorted(sources - set(label.map))
                if missing:
                    raise TemplateError(
                        f"the label rule has no label for fills from {', '.join(missing)}",
                        where=self._where("tests", i, "label", test=spec.name),
                        fix="add them under label.map")
            if spec.texts:
                raise TemplateError("plain 'texts' cannot take a fill-dependent label",
                                    where=self._where("tests", i, "texts", test=spec.name),
                                    fix="write them as 'cases' with a label each")
        else:
            self._check_label(label, i, "label", spec.name)
            if label is None and test.source.size:
                raise TemplateError("an MFT test with templates needs a 'label'",
                                    where=self._where("tests", i, test=spec.name),
                                    fix=f"add label: one of {', '.join(self.spec.labels)}")
        for k, case in enumerate(spec.cases):
            self._check_label(case.label, i, f"cases.{k}.label", spec.name)
            if case.label is None and not isinstance(label, str):
                raise TemplateError("a case has no label and the test has no fixed label",
                                    where=self._where("tests", i, "cases", k, test=spec.name),
                                    fix="give the case a label")
        if test.source.size == 0 and not spec.cases:
            raise TemplateError("test has no templates, texts or cases",
                                where=self._where("tests", i, test=spec.name),
                                fix="add at least one")

    def _check_contrast(self, i: int, spec: ContrastTest, test: CompiledTest) -> None:
        for k, item in enumerate(spec.items):
            where = self._where("tests", i, "items", k, test=spec.name)
            for lab, fld in ((item.label or spec.label, "label"),
                             (item.contrast_label or spec.contrast_label, "contrast_label")):
                if lab is None:
                    raise TemplateError(f"contrast item has no {fld}", where=where,
                                        fix=f"set {fld} on the item or the test")
                self._check_label(lab, i, f"items.{k}.{fld}", spec.name)
            if (item.alternatives is None) == (item.lexicon is None):
                raise TemplateError("give either 'alternatives' or 'lexicon'", where=where,
                                    fix="list the replacement entities")
            if item.lexicon is not None:
                self.lexicons.domain(item.lexicon, where)
            if item.entity not in item.text:
                raise TemplateError(f"entity {item.entity!r} does not occur in {item.text!r}",
                                    where=where, fix="copy the entity exactly as in the text")

    # -- expansion --------------------------------------------------------------------
    def counts(self, sample: int | None = None) -> dict[str, int]:
        """Cases per test (an upper bound: before duplicates are removed), without expanding."""
        return {t.name: t.count(sample) for t in self.tests}

    def check_limit(self, sample: int | None = None, max_cases: int | None = None) -> int:
        """Return the total case count, or refuse if it is over the limit.

        Raises:
            TemplateError: the expansion would exceed ``max_cases`` (default: the suite's).
        """
        limit = max_cases if max_cases is not None else self.spec.max_cases
        counts = self.counts(sample)
        total = sum(counts.values())
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
                "base_texts": {t.name: digest(t.base_texts) for t in self.tests if t.base_texts}}

    def check_labels(self, task_labels: Sequence[str], *, task_source: str = "the task") -> None:
        """Refuse a suite whose labels are not the task's (the same names, in any order).

        Call it before scoring: the task models are loaded over the task's labels.

        Args:
            task_labels: the run config's ``task.labels``.
            task_source: where they come from, for the message (e.g. ``config C, task.labels``).

        Raises:
            TemplateError: a gold label (or a suite label) is not one of the task's labels
                (naming the test and line that uses it), or the suite lacks a task label.
        """
        check_spec_labels(self.spec, task_labels, source=self.source, node=self._node,
                          task_source=task_source)


def _where(source: str, node: yaml.Node | None, *loc: int | str,
           test: str | None = None) -> str:
    """``file, test 'name', field.path, line N`` for a suite location ``loc``."""
    line = node_line(node, loc) if node is not None else None
    where = source
    if test is not None:
        where += f", test {test!r}"
    field_path = ".".join(str(p) for p in loc[2:]) if test is not None else ""
    if field_path:
        where += f", {field_path}"
    return where + (f", line {line}" if line else "")


def check_spec_labels(spec: SuiteSpec, task_labels: Sequence[str], *, source: str = "<suite>",
                      node: yaml.Node | None = None, task_source: str = "the task") -> None:
    """Refuse a suite spec whose labels are not the task's (see :meth:`Suite.check_labels`).

    Reads only the spec and its YAML nodes (for line numbers), never lexicons or texts.

    Args:
        spec: the validated suite.
        task_labels: the run config's ``task.labels``.
        source: the suite's file name, for the message.
        node: the suite's YAML node, for line numbers (optional).
        task_source: where the task labels come from, for the message.

    Raises:
        TemplateError: as :meth:`Suite.check_labels`.
    """
    task = list(task_labels)
    listed = ", ".join(task)
    extra = [lab for lab in spec.labels if lab not in task]
    missing = [lab for lab in task if lab not in spec.labels]
    if extra:
        for i, fld, lab, test in _label_uses(spec):
            if lab in extra:
                raise TemplateError(
                    f"label {lab!r} is not one of the task's labels ({listed}) from "
                    f"{task_source}", where=_where(source, node, "tests", i, *fld, test=test),
                    fix=did_you_mean(lab, task) + "; or run the suite with a config of "
                    "its own task")
        raise TemplateError(
            f"the suite's label {extra[0]!r} is not one of the task's labels ({listed}) "
            f"from {task_source}", where=_labels_where(source, node),
            fix=f"write labels: [{listed}] in the suite")
    if missing:
        raise TemplateError(
            f"the suite lacks the task's label {missing[0]!r} (task labels: {listed}, "
            f"from {task_source})", where=_labels_where(source, node),
            fix=f"write labels: [{listed}] in the suite (the models score every label)")


def _labels_where(source: str, node: yaml.Node | None) -> str:
    line = node_line(node, ("labels",)) if node is not None else None
    return f"{source}, labels" + (f", line {line}" if line else "")


def _label_uses(spec: SuiteSpec) -> Iterator[tuple[int, tuple[int | str, ...], str, str]]:
    """Yield (test index, field path, gold label, test name) for every gold label."""
    for i, test in enumerate(spec.tests):
        if isinstance(test, MFTTest | DIRTest):
            if isinstance(test.label, LabelRule):
                for source, lab in test.label.map.items():
                    yield i, ("label", "map", source), lab, test.name
            elif test.label is not None:
                yield i, ("label",), test.label, test.name
        if isinstance(test, MFTTest):
            for k, case in enumerate(test.cases):
                if case.label is not None:
                    yield i, ("cases", k, "label"), case.label, test.name
        if isinstance(test, ContrastTest):
            for fld in ("label", "contrast_label"):
                if getattr(test, fld) is not None:
                    yield i, (fld,), getattr(test, fld), test.name
            for k, item in enumerate(test.items):
                for fld in ("label", "contrast_label"):
                    if getattr(item, fld) is not None:
                        yield i, ("items", k, fld), getattr(item, fld), test.name


def _read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    try:
        return load_yaml(path)
    except ConfigError as exc:
        what = exc.what.replace("config file", "suite file")
        raise TemplateError(what, where=exc.where, fix=exc.fix) from None


def _validate(data: Any, source: str, node: yaml.Node | None) -> SuiteSpec:
    if not isinstance(data, dict):
        raise TemplateError("a suite must be a YAML mapping", where=source,
                            fix="write name:, labels: and tests: at the top level")
    try:
        return SuiteSpec.model_validate(data)
    except ValidationError as exc:
        raise _schema_error(exc, data, source, node) from None


_TYPE_TAG = re.compile(r"(?:str|int|float|bool|none|[A-Z]\w*|.*\[.*\])\Z")


def _user_loc(loc: Sequence[int | str], data: Any) -> tuple[tuple[int | str, ...], bool]:
    """Return a pydantic error location as the user wrote it, and whether it ended on a union
    member: union tags (a test's ``mft``, ``str``, ``LabelRule``, ``list[str]``) dropped, and
    ``templates`` written back as ``template`` where the test used the shorthand.

    A tag is a part that is not a key of the mapping the user wrote at that point (a field
    that is missing is one too, but only as the last part, and it is never a type name).
    """
    out: list[int | str] = []
    cur: Any = data
    parts = [p for p in loc if not (isinstance(p, str) and p.startswith("function-"))]
    tagged = False
    k = 0
    while k < len(parts):
        part = parts[k]
        last = k == len(parts) - 1
        tagged = False
        if isinstance(part, int):
            out.append(part)
            cur = cur[part] if isinstance(cur, list) and part < len(cur) else None
        elif isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and cur.get("type") == part:
            tagged = True  # the test type: pydantic's tag of the discriminated union
        elif (part == "templates" and isinstance(cur, dict) and "template" in cur):
            out.append("template")  # the shorthand: templates[0] is `template:` itself
            cur = cur["template"]
            if k + 1 < len(parts) and parts[k + 1] == 0:
                k += 1
        elif last and not _TYPE_TAG.match(part):
            out.append(part)  # a missing field
        else:
            tagged = True  # a union tag: the same input, seen as one member of the union
        k += 1
    return tuple(out), tagged


def _schema_where(source: str, data: Any, node: yaml.Node | None,
                  loc: Sequence[int | str], field_path: str) -> str:
    """``file, test 'name', field 'tests[0].templat', line 6`` (the line of that field)."""
    line = node_line(node, loc) if node is not None else None
    where = source
    tests = data.get("tests") if isinstance(data, dict) else None
    if len(loc) >= 2 and loc[0] == "tests" and isinstance(loc[1], int) and \
            isinstance(tests, list) and loc[1] < len(tests):
        test = tests[loc[1]]
        if isinstance(test, dict) and isinstance(test.get("name"), str):
            where += f", test {test['name']!r}"
    return where + f", field '{field_path}'" + (f", line {line}" if line else "")


def _schema_error(exc: ValidationError, data: Any, source: str,
                  node: yaml.Node | None) -> TemplateError:
    """The first schema error, named by the field path the user wrote (``tests[0].templat``,
    not pydantic's ``tests[0].mft.templat``) and the line of that field in the file."""
    errors = [(err, *_user_loc(err["loc"], data)) for err in exc.errors()]
    err, loc, tagged = errors[0]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):  # a test's `type:`
        field_path = format_loc((*loc, "type"))
        where = _schema_where(source, data, node, (*loc, "type"), field_path)
        if err["type"] == "union_tag_not_found":
            return TemplateError(f"missing required field '{field_path}'", where=where,
                                 fix="add type: mft, inv, dir, group or contrast")
        return TemplateError(f"unknown test type {err['input'].get('type')!r}", where=where,
                             fix=did_you_mean(str(err["input"].get("type")),
                                              ["mft", "inv", "dir", "group", "contrast"]))
    if tagged and err["type"].endswith("_type"):
        # The input is not of the first union member's type ("a string?" for a mapping):
        # report what is wrong inside the member it does match, if any.
        inner = [e for e in errors[1:] if e[1][:len(loc)] == loc and not e[0]["type"]
                 .endswith("_type")]
        if inner:
            err, loc, tagged = inner[0]
    fix = None
    if err["type"] == "missing":
        # A required field missing beside an unknown one is most likely misspelled: say so.
        extra = [e for e in errors if e[0]["type"] == "extra_forbidden"
                 and e[1][:-1] == loc[:-1]]
        if extra:
            fix = f"did you mean {loc[-1]!r}? (a required field, missing here)"
            err, loc, tagged = extra[0]
    field_path = format_loc(loc)
    what, default_fix = describe_field_error(err, field_path)
    return TemplateError(what, where=_schema_where(source, data, node, loc, field_path),
                         fix=fix or default_fix)


def check_suite_labels(path: str | Path, task_labels: Sequence[str], *,
                       task_source: str = "the task") -> None:
    """Check a suite file's labels against the task's (see :meth:`Suite.check_labels`)
    without reading its lexicons, texts files or run corpora: cheap enough for the start of
    a pipeline, before anything is generated or scored (the suite may read a corpus that the
    pipeline has yet to write).

    Raises:
        TemplateError: malformed YAML, a schema error, or labels that are not the task's.
    """
    path = Path(path)
    data, node = _read_yaml(path)
    check_spec_labels(_validate(data, str(path), node), task_labels, source=str(path),
                      node=node, task_source=task_source)


def load_suite(path: str | Path) -> Suite:
    """Load and check a suite YAML file (see :meth:`Suite.from_yaml`)."""
    return Suite.from_yaml(path)


def dump_suite_yaml(data: Mapping[str, Any]) -> str:
    """Return suite data as YAML text (keys in schema order, unicode kept)."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)
