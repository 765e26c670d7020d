"""Draft templates from reviewed sentences (what happens to a draft next is
:mod:`formalize.review._drafts`).

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
from typing import Any

from formalize.review._grammar import draft_text, fits, garbled, lexicon_kind
from synth.core import DataError, TemplateError

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
        if garbled(original):  # see skipped(): named with the reason, never drafted from
            continue
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


def suite_lexicons(suite: Any) -> dict[str, tuple[str, ...]] | None:
    """The lexicons a suite defines itself (``lexicons:`` and ``lexicon_files``), the
    domain ``propose`` drafts in when it appends to that suite; None for a suite that
    defines none (drafts then use the built-in lexicons, as the suite does)."""
    own = set(suite.spec.lexicons)
    for rel in suite.spec.lexicon_files:
        from formalize._lexicons import read_lexicon_yaml

        own.update(read_lexicon_yaml(suite.base_dir / rel, {}))
    names = [n for n in suite.lexicons.names() if n in own]
    return {n: suite.lexicons.values(n) for n in names} if names else None


def skipped(sentences: Sequence[str | Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``(id, why)`` of the tagged sentences too garbled to draft from (see
    :func:`~formalize.review._grammar.garbled`); :func:`propose_templates` leaves them out."""
    out = []
    for sid, text, _ in _as_items(sentences):
        why = garbled(text)
        if why:
            out.append((sid, why))
    return out


def uncovered(sentences: Sequence[str | Mapping[str, Any]], drafts: Sequence[TemplateDraft]
              ) -> list[str]:
    """The ids (or texts) of tagged sentences no draft covers: none of their words is in a
    lexicon, or none fits where it stands (garbled ones: see :func:`skipped`)."""
    seen = {i for d in drafts for i in d.ids}
    bad = {sid for sid, _ in skipped(sentences)}
    return [str(sid) for sid, _, _ in _as_items(sentences) if sid not in seen | bad]
