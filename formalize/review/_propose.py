"""Draft templates from reviewed sentences, try a draft against task models, and append
accepted drafts to a suite file.

A draft replaces words of a tagged sentence that a lexicon lists with that lexicon's
placeholder ("I was blown away by this movie." -> "I was blown away by this {NOUN}."). A draft
*covers* every tagged sentence that is one of its fills; drafts are ranked by coverage, then
by how few placeholders explain it (the least general template that fits the evidence).

Drafts stay grammatical: the sentence's own words are kept around the placeholders, tokens
that are not words (stray symbols, markup, an unmatched quote) are dropped first, and a word
is replaced only where *every* value of the lexicon fits the word's neighbours (see
:func:`~formalize.review._grammar.fits`): "I really looked forward" has no
``{INTENSIFIER}`` draft, since "very" cannot modify a verb ("I very looked forward"), while
"a really good film" has one.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from formalize.review._grammar import draft_text, fits, lexicon_kind
from synth.core import DataError, LabelSpace, TemplateError, write_text_atomic

_MAX_SPANS = 12  # lexicon words considered per sentence
_MAX_COMBOS = 4096  # candidate templates per sentence


@dataclass(frozen=True)
class TemplateDraft:
    """A drafted template and the tagged sentences it covers.

    Attributes:
        template: the template text, e.g. ``"I was blown away by this {NOUN}."``.
        coverage: how many of the given sentences it covers.
        ids: the covered sentences' ids (or their indices, as text).
        examples: up to five covered sentences.
        slots: the placeholder keys in order of appearance.
        cases: how many cases the template expands to with these lexicons.
        label: the most common label of the covered sentences (None if none had one).
        placeholders: how many words were replaced (a repeated key counts each time).
    """

    template: str
    coverage: int
    ids: tuple[str, ...]
    examples: tuple[str, ...]
    slots: tuple[str, ...]
    cases: int
    label: str | None
    placeholders: int = 0

    def to_test(self, name: str | None = None, *, label: str | None = None,
                capability: str = "Discovered", description: str | None = None
                ) -> dict[str, Any]:
        """This draft as an MFT test entry of a suite (a plain dict).

        Raises:
            TemplateError: no label was given and none was suggested.
        """
        gold = label or self.label
        if not gold:
            raise TemplateError(f"draft {self.template!r} has no gold label", where="propose",
                                fix="pass a label (e.g. --label positive)")
        test: dict[str, Any] = {
            "name": name or f"proposed: {self.template}",
            "capability": capability, "type": "mft",
            "description": description or (f"Drafted from {self.coverage} reviewed sentence(s): "
                                           + ", ".join(self.ids[:5])),
            "template": self.template, "label": gold}
        return test


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    value: str
    lexicons: tuple[str, ...]
    article: str | None  # "a"/"A" when an indefinite article directly precedes the value
    art_start: int


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _value_index(lexicons: Mapping[str, Sequence[str]]) -> tuple[re.Pattern[str] | None,
                                                                 dict[str, tuple[str, ...]]]:
    """One regex over every usable lexicon value (longest first) and value -> lexicons."""
    stop = _stopwords()
    index: dict[str, list[str]] = {}
    for name, values in lexicons.items():
        for value in values:
            v = str(value).strip()
            if not v or (" " not in v and v.lower() in stop):
                continue  # function words ("I", "he", "very") make ungrammatical templates
            index.setdefault(v.lower(), [])
            if name not in index[v.lower()]:
                index[v.lower()].append(name)
    if not index:
        return None, {}
    alts = sorted(index, key=lambda v: (-len(v), v))
    pattern = re.compile(r"(?<![\w'-])(?:" + "|".join(map(re.escape, alts)) + r")(?![\w'-])",
                         re.IGNORECASE)
    return pattern, {k: tuple(v) for k, v in index.items()}


_ARTICLE = re.compile(r"(?<![\w'-])(an?|An?|AN?) $")

def _spans(text: str, pattern: re.Pattern[str] | None,
           index: Mapping[str, tuple[str, ...]], adjectives: frozenset[str] = frozenset()
           ) -> list[_Span]:
    if pattern is None:
        return []
    out = []
    for m in pattern.finditer(text):
        lexes = tuple(lex for lex in index[m.group(0).lower()]
                      if fits(lex, text, m.start(), m.end(), adjectives))
        if not lexes:
            continue
        art = _ARTICLE.search(text, 0, m.start())
        article, art_start = None, m.start()
        if art is not None:
            article = "A" if art.group(1)[0] == "A" else "a"
            art_start = art.start(1)
        out.append(_Span(m.start(), m.end(), m.group(0), lexes, article, art_start))
        if len(out) >= _MAX_SPANS:
            break
    return out


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _render(text: str, chosen: Sequence[tuple[_Span, str]]) -> tuple[str, tuple[str, ...]]:
    """Replace the chosen spans by placeholders; equal values of one lexicon share a key."""
    parts, pos = [], 0
    keys: dict[tuple[str, str], str] = {}
    used: Counter[str] = Counter()
    slots: list[str] = []
    for span, lex in chosen:
        start = span.art_start if span.article else span.start
        parts.append(_escape(text[pos:start]))
        ident = (lex, span.value.lower())
        if ident not in keys:
            keys[ident] = lex if used[lex] == 0 else f"{lex}{used[lex]}"
            used[lex] += 1
            slots.append(keys[ident])
        key = keys[ident]
        parts.append("{" + (f"{span.article}:" if span.article else "") + key + "}")
        pos = span.end
    parts.append(_escape(text[pos:]))
    return "".join(parts), tuple(slots)


def _candidates(text: str, spans: list[_Span], max_slots: int
                ) -> dict[str, tuple[str, tuple[str, ...]]]:
    """normalised key -> (template, slots) for every way to replace 1..max_slots spans."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    made = 0
    for k in range(1, min(max_slots, len(spans)) + 1):
        for subset in itertools.combinations(spans, k):
            for lexes in itertools.product(*(s.lexicons for s in subset)):
                template, slots = _render(text, list(zip(subset, lexes, strict=True)))
                out.setdefault(" ".join(template.lower().split()), (template, slots))
                made += 1
                if made >= _MAX_COMBOS:
                    return out
    return out


def _as_items(sentences: Sequence[str | Mapping[str, Any]]) -> list[tuple[str, str, str | None]]:
    items: list[tuple[str, str, str | None]] = []
    for i, s in enumerate(sentences):
        if isinstance(s, str):
            items.append((str(i), s, None))
        elif isinstance(s, Mapping) and "text" in s:
            label = s.get("label")
            items.append((str(s.get("id", i)), str(s["text"]),
                          str(label) if label is not None else None))
        else:
            raise DataError(f"sentence {i} is neither a string nor a record with 'text'",
                            where="propose_templates", fix="pass strings or {'id', 'text'} dicts")
    return items


def propose_templates(sentences: Sequence[str | Mapping[str, Any]], lexicons: Mapping[
        str, Sequence[str]] | None = None, max_drafts: int = 10, *, max_slots: int = 3,
        min_coverage: int = 1) -> list[TemplateDraft]:
    """Draft templates from tagged sentences, ranked by how many sentences each covers.

    Args:
        sentences: strings, or records with ``text`` (and optional ``id`` and ``label``).
        lexicons: name -> values (default: :func:`formalize.builtin_lexicons`). Single-word
            values that are English stopwords are never replaced.
        max_drafts: return at most this many drafts.
        max_slots: at most this many placeholders per draft.
        min_coverage: drop drafts covering fewer sentences.

    Returns:
        Drafts, best first: more coverage, then fewer placeholders. Of drafts that cover the
        same sentences only the least and the most general are kept. Each is made from the
        sentence's :func:`draft_text` (tokens that are not words dropped), and a word is
        replaced only where the lexicon's values fit (see the module docstring).
    """
    if max_drafts < 1 or max_slots < 1:
        raise ValueError(f"max_drafts and max_slots must be >= 1, got {max_drafts}, {max_slots}")
    if lexicons is None:
        from formalize._lexicons import builtin_lexicons

        lexicons = builtin_lexicons()
    pattern, index = _value_index(lexicons)
    items = _as_items(sentences)
    adjectives = frozenset(str(v).lower() for name, values in lexicons.items()
                           if lexicon_kind(name) == "adjective" for v in values)
    covered: dict[str, list[int]] = {}
    shown: dict[str, tuple[str, tuple[str, ...]]] = {}
    for n, (_, original, _) in enumerate(items):
        text = draft_text(original)
        spans = _spans(text, pattern, index, adjectives)
        for key, cand in _candidates(text, spans, max_slots).items():
            if n not in covered.setdefault(key, []):
                covered[key].append(n)
            shown.setdefault(key, cand)
    sizes = {name: len(set(v)) for name, v in lexicons.items()}
    drafts = []
    for key, members in covered.items():
        if len(members) < min_coverage:
            continue
        template, slots = shown[key]
        cases = 1
        for slot in slots:
            cases *= sizes.get(re.sub(r"\d+$", "", slot), 1)
        labels = Counter(items[i][2] for i in members if items[i][2] is not None)
        drafts.append(TemplateDraft(
            template=template, coverage=len(members), ids=tuple(items[i][0] for i in members),
            examples=tuple(items[i][1] for i in members[:5]), slots=slots, cases=cases,
            label=labels.most_common(1)[0][0] if labels else None,
            placeholders=template.count("{") - 2 * template.count("{{")))
    drafts.sort(key=lambda d: (-d.coverage, d.placeholders, -d.cases, d.template))
    return _thin(drafts)[:max_drafts]


def _thin(drafts: list[TemplateDraft]) -> list[TemplateDraft]:
    """Per covered set, keep the first (least general) and the most general draft."""
    by_set: dict[tuple[str, ...], list[TemplateDraft]] = {}
    for d in drafts:
        by_set.setdefault(tuple(sorted(d.ids)), []).append(d)
    keep = set()
    for group in by_set.values():
        keep.add(id(group[0]))
        keep.add(id(max(group, key=lambda d: (d.placeholders, d.cases))))
    return [d for d in drafts if id(d) in keep]


def format_drafts(drafts: Sequence[TemplateDraft]) -> str:
    """A numbered text listing of drafts (1-based, as ``--accept K`` counts them)."""
    lines = []
    for k, d in enumerate(drafts, start=1):
        lines.append(f"{k:>3}. covers {d.coverage}  ({d.cases:,} cases, label "
                     f"{d.label or '?'})  {d.template}")
        for ex in d.examples[:3]:
            lines.append(f"       e.g. {ex}")
    return "\n".join(lines)


def suite_lexicons(suite: Any) -> dict[str, tuple[str, ...]]:
    """The lexicons a suite defines itself (``lexicons:`` and ``lexicon_files``), the
    domain ``propose`` drafts in when it appends to that suite; a suite that defines none
    gives every lexicon it can use (the built-in ones)."""
    own = set(suite.spec.lexicons)
    for rel in suite.spec.lexicon_files:
        from formalize._lexicons import read_lexicon_yaml

        own.update(read_lexicon_yaml(suite.base_dir / rel, {}))
    names = [n for n in suite.lexicons.names() if n in own] or suite.lexicons.names()
    return {n: suite.lexicons.values(n) for n in names}


def uncovered(sentences: Sequence[str | Mapping[str, Any]], drafts: Sequence[TemplateDraft]
              ) -> list[str]:
    """The ids (or texts) of tagged sentences no draft covers: none of their words is in a
    lexicon, or none fits where it stands."""
    seen = {i for d in drafts for i in d.ids}
    return [str(sid) for sid, _, _ in _as_items(sentences) if sid not in seen]


# -- trying and accepting drafts -------------------------------------------------------
def draft_suite(tests: Sequence[Mapping[str, Any]], labels: Sequence[str], *,
                name: str = "draft", lexicons: Mapping[str, Sequence[str]] | None = None) -> Any:
    """A Suite (built-in lexicons plus ``lexicons``) holding ``tests``, checked."""
    from formalize._suite import Suite

    data: dict[str, Any] = {"name": name, "labels": list(labels), "tests": list(tests)}
    if lexicons:
        data["lexicons"] = {k: list(v) for k, v in lexicons.items()}
    return Suite.from_dict(data, source=f"<{name}>")


def load_run_scorers(run_dir: str | Path) -> dict[str, Any]:
    """Load the task models a run's config names (``task_models``), by name, the way
    ``discover`` loads them: each entry's settings (label map, batch size, ...) apply, and a
    ``fewshot:`` task model uses the run config's ``reference`` prompt, shots, label words and
    calibration.

    Raises:
        RunDirError: no manifest; ConfigError: the run config names no task models, two with
            one name, or a ``task_models``, ``reference`` or ``evaluation`` entry that does not
            validate.
    """
    from pydantic import ValidationError

    from discovery import (
        EvaluationConfig,
        ReferenceConfig,
        TaskModelConfig,
        build_task_scorers,
    )
    from formalize._run_outputs import RunOutputs
    from synth.core import ConfigError

    run = RunOutputs(Path(run_dir))
    where = str(run.path / "manifest.json")

    def validate(model: Any, data: Any, field: str) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in (field, *first["loc"]))
            raise ConfigError(f"the run's config has an invalid {loc}: {first['msg']}",
                              where=where, fix="fix the run config and rerun, or pass scorers "
                                               "yourself") from None

    entries = run.config.get("task_models") or []
    if not isinstance(entries, list) or not entries:
        raise ConfigError("the run's config names no task models", where=where,
                          fix="pass scorers yourself, or add task_models to the run config")
    task_models = [validate(TaskModelConfig, t, f"task_models[{i}]")
                   for i, t in enumerate(entries)]
    bases = model_path_bases(run.path)
    task_models = [t.model_copy(update={"spec": resolve_model_path(t.spec, bases)})
                   for t in task_models]
    try:
        return build_task_scorers(
            task_models, LabelSpace.of(run.labels),
            reference=validate(ReferenceConfig, run.section("reference"), "reference"),
            evaluation=validate(EvaluationConfig, run.section("evaluation"), "evaluation"))
    except ConfigError as exc:
        if exc.where == "task_models":  # a check of the config as a whole (unique names)
            raise ConfigError(exc.what, where=where, fix=exc.fix) from None
        raise


def model_path_bases(run_dir: Path) -> list[Path]:
    """Where a run config's relative model paths may be relative to, in order: the working
    directory, its parent (a notebook's kernel starts in ``notebooks/``, the run was made
    from the repository root) and the folders above the run directory (``runs/NAME`` made
    from ``ROOT`` is ``ROOT/runs/NAME``)."""
    cwd = Path.cwd()
    return list(dict.fromkeys([cwd, cwd.parent, *Path(run_dir).resolve().parents]))


def resolve_model_path(spec: str, bases: Sequence[Path]) -> str:
    """``spec`` with a relative ``sklearn:``/``hf:`` path made absolute against the first of
    ``bases`` where it exists (unchanged when it is absolute, found nowhere or not a path:
    the loader's own error then names it)."""
    scheme, sep, rest = spec.partition(":")
    if scheme not in ("sklearn", "hf") or not sep or not rest:
        return spec
    path = Path(rest).expanduser()
    if path.is_absolute():
        return spec
    for base in bases:
        if (base / path).exists():
            return f"{scheme}:{base / path}"
    return spec


def run_draft(draft: TemplateDraft | str, scorers: Mapping[str, Any], labels: Sequence[str], *,
              label: str | None = None, sample: int | None = None,
              lexicons: Mapping[str, Sequence[str]] | None = None, seed: int = 0) -> Any:
    """Expand one draft (or template text) as an MFT test and run it with TemplateRunner;
    return the VerifyResult (``result.format_table()``, ``result.cases``)."""
    from formalize._runner import TemplateRunner

    if isinstance(draft, str):
        draft = TemplateDraft(draft, 0, (), (), (), 0, None)
    suite = draft_suite([draft.to_test("draft", label=label)], labels, lexicons=lexicons)
    return TemplateRunner(sample=sample, seed=seed).run(suite, dict(scorers))


def append_tests(suite_path: str | Path, tests: Sequence[Mapping[str, Any]], *,
                 labels: Sequence[str] | None = None, name: str | None = None) -> Any:
    """Append tests to a suite file (created when missing) and return the loaded Suite.

    The file is checked as a whole before it is replaced (atomically), so a duplicate test
    name or a bad template leaves it untouched. Existing tests are kept; so are comments,
    when ``tests:`` is the file's last top-level key (else the file is re-written as YAML).

    Raises:
        TemplateError: the result would not load (names the problem), or a new file needs
            ``labels``.
    """
    import yaml

    from formalize._suite import Suite, dump_suite_yaml, load_suite

    path = Path(suite_path)
    new = [dict(t) for t in tests]
    if path.is_file():
        old_text = path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(old_text)
        except yaml.YAMLError as exc:
            raise TemplateError(f"suite file is not valid YAML: {exc}", where=str(path),
                                fix="fix the file before appending to it") from None
        if not isinstance(data, dict) or not isinstance(data.get("tests", []), list):
            raise TemplateError("suite file has no 'tests' list", where=str(path),
                                fix="append to a suite file (name:, labels:, tests:)")
        merged = {**data, "tests": list(data.get("tests") or []) + new}
        text = _append_text(old_text, data, new) or dump_suite_yaml(merged)
        if yaml.safe_load(text) != merged:
            text = dump_suite_yaml(merged)
    else:
        if not labels:
            raise TemplateError("a new suite file needs the task's labels", where=str(path),
                                fix="pass labels=[...] (the CLI takes them from the run)")
        merged = {"name": name or path.stem, "labels": list(labels), "tests": new}
        text = dump_suite_yaml(merged)
    Suite.from_dict(merged, source=str(path), base_dir=path.parent)  # refuse before writing
    write_text_atomic(path, text)
    return load_suite(path)


def _append_text(old_text: str, data: dict[str, Any], new: list[dict[str, Any]]) -> str | None:
    """The old text with ``new`` appended as block-list items, or None if the layout does not
    allow it (``tests`` not last, a flow list, or no items to copy the indent from)."""
    import yaml

    if not data.get("tests") or list(data)[-1] != "tests":
        return None
    node = yaml.compose(old_text)
    seq = next((v for k, v in node.value if k.value == "tests"), None)
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style:
        return None
    indent = " " * seq.start_mark.column
    items = yaml.safe_dump(new, sort_keys=False, allow_unicode=True, width=100)
    block = "".join(indent + line if line.strip() else line
                    for line in items.splitlines(keepends=True))
    return old_text.rstrip("\n") + "\n" + block
