"""What a test type needs from its suite to compile: lexicons, labels, files, locations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from formalize._expand import CompiledTemplate, TemplateSource
from formalize._labels import check_gold_label
from formalize._lexicons import RENAMED_LEXICONS, LexiconSet, renamed_hint
from formalize._schema import suite_where
from formalize._spec import SuiteSpec
from formalize._template import Slot, parse_template
from synth.core import LabelSpace, TemplateError, did_you_mean

OUTSIDE_FIX = ("copy the file into the suite's folder (or a subfolder) and name it "
               "relative to the suite file, or pass --allow-outside-files if you trust "
               "the suite")


def suite_file(base_dir: Path, name: str, where: str, *, allow_outside: bool = False) -> Path:
    """Resolve a file that a suite names (``lexicons: {X: {file: ...}}``, ``lexicon_files``,
    ``texts_file``) relative to the suite's folder ``base_dir``.

    A suite is data that may come from elsewhere, so it may read only files in its own
    folder: an absolute path, or one that leaves the folder (``..``, a link pointing out)
    is refused unless ``allow_outside`` (the user's ``--allow-outside-files``).

    Raises:
        TemplateError: the path leaves the suite's folder.
    """
    path = Path(name)
    full = path if path.is_absolute() else base_dir / path
    if allow_outside:
        return full
    if path.is_absolute() or name.startswith("~"):
        raise TemplateError(f"the suite names a file by an absolute path ({name}); a suite "
                            f"may only read files in its own folder", where=where,
                            fix=OUTSIDE_FIX)
    try:
        full.resolve().relative_to(base_dir.resolve())
    except ValueError:
        raise TemplateError(f"the file {name} is outside the suite's folder "
                            f"({base_dir.resolve()}); a suite may only read files in its "
                            f"own folder", where=where, fix=OUTSIDE_FIX) from None
    return full


@dataclass(frozen=True)
class SuiteContext:
    """A suite being compiled, as its tests see it."""

    spec: SuiteSpec
    """The validated suite."""
    source: str
    """The suite's file name (for messages)."""
    node: yaml.Node | None
    """The suite's YAML node (for line numbers), if read from a file."""
    base_dir: Path
    """The folder relative paths in the suite are relative to."""
    labels: LabelSpace
    """The suite's labels."""
    lexicons: LexiconSet
    """The suite's lexicons (built-in, files and its own)."""
    allow_outside_files: bool = False
    """Let the suite read files outside its folder (``--allow-outside-files``)."""

    def file(self, name: str, where: str) -> Path:
        """The file a suite field names (see :func:`suite_file`)."""
        return suite_file(self.base_dir, name, where,
                          allow_outside=self.allow_outside_files)

    @property
    def seed(self) -> int:
        """The suite's seed."""
        return self.spec.seed

    def where(self, *loc: int | str, test: str | None = None) -> str:
        """``file, test 'name', field.path, line N`` for a suite location ``loc``."""
        return suite_where(self.source, self.node, *loc, test=test)

    def check_label(self, label: str | None, i: int, fld: str, test: str) -> None:
        """Refuse a gold label of ``tests[i].<fld>`` that is not one of the suite's labels."""
        check_gold_label(label, self.labels, self.where("tests", i, fld, test=test))

    def template_source(self, i: int, spec: Any) -> TemplateSource:
        """Parse and resolve the ``templates`` and ``texts`` of ``tests[i]``.

        Raises:
            TemplateError: a template does not parse or names an undefined lexicon.
        """
        templates = []
        for j, text in enumerate(spec.templates):
            where = self.where("tests", i, "templates", j, test=spec.name)
            if "templates" not in (self._raw_test(i) or {}):
                where = self.where("tests", i, "template", test=spec.name)
            nodes = parse_template(text, where)
            domains = {}
            groups: dict[str, str] = {}  # key -> the paired draw it belongs to
            for node in nodes:
                if isinstance(node, Slot) and node.key not in domains:
                    if node.lexicon not in self.lexicons:
                        raise self._undefined(node, text, where)
                    domains[node.key] = self.lexicons.domain(node.lexicon, where)
                    pair = self.lexicons.pair_of(node.lexicon)
                    if pair is not None:  # {A} and {B} share a draw; {A1} and {B1} another
                        groups[node.key] = f"{pair}|{node.key[len(node.lexicon):]}"
            templates.append(CompiledTemplate.build(text, nodes, domains, groups))
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
        node = self.node
        if not isinstance(node, yaml.MappingNode):
            return None
        for k, v in node.value:
            if k.value == "tests" and isinstance(v, yaml.SequenceNode) and i < len(v.value):
                item = v.value[i]
                if isinstance(item, yaml.MappingNode):
                    return {kk.value: None for kk, _ in item.value}
        return None
