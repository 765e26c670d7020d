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
from dataclasses import dataclass, replace
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
        new_lexicons: lexicons the draft defines itself, ``((name, values), ...)``: a draft
            merged from sentences that share a frame and differ in one place (see
            :func:`propose_templates`) has a slot whose values are those sentences' own words.
    """

    template: str
    coverage: int
    ids: tuple[str, ...]
    examples: tuple[str, ...]
    slots: tuple[str, ...]
    cases: int
    label: str | None
    placeholders: int = 0
    new_lexicons: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def renamed(self, taken: Sequence[str]) -> TemplateDraft:
        """This draft with its own lexicons renamed so that none is in ``taken`` (the names a
        suite already defines): ``FILL`` becomes ``FILL_B``, ``FILL_C``, ... (a lexicon
        name may not end with a digit: that marks another draw in a template)."""
        if not self.new_lexicons:
            return self
        used = {str(n) for n in taken}
        template, slots, pairs = self.template, list(self.slots), []
        for name, values in self.new_lexicons:
            new, k = name, 0
            while new in used:
                k += 1
                new = f"{name}_{_letters(k)}"
            used.add(new)
            if new != name:
                template = re.sub(r"\{((?:an?|An?):)?" + re.escape(name) + r"\}",
                                  "{\\g<1>" + new + "}", template)
                slots = [new if x == name else x for x in slots]
            pairs.append((new, values))
        return replace(self, template=template, slots=tuple(slots), new_lexicons=tuple(pairs))

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


def _letters(k: int) -> str:
    """1 -> B, 2 -> C, ..., 25 -> Z, 26 -> BA (``FILL`` itself is the A)."""
    out = ""
    while True:
        k, r = divmod(k, 26)
        out = chr(ord("A") + r) + out
        if not k:
            return out


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
        Drafts, best first: more coverage, then fewer placeholders. Sentences with different
        labels are never covered by one draft. Besides the lexicon drafts (sentences that
        give the same template once lexicon words are placeholders), sentences sharing a
        frame (the same words around one place where they differ) merge into one draft
        whose slot holds their differing words (a ``FILL`` lexicon of its own, in
        ``new_lexicons``, or the lexicon that lists them all). Of drafts that cover the
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
    # A draft covers the sentences it is a fill of; sentences with different gold labels
    # are never merged into one draft (the key holds the label).
    covered: dict[tuple[str, str | None], list[int]] = {}
    shown: dict[tuple[str, str | None], tuple[str, tuple[str, ...]]] = {}
    usable = []
    for n, (_, original, label) in enumerate(items):
        if garbled(original):  # see skipped(): named with the reason, never drafted from
            continue
        usable.append(n)
        text = draft_text(original)
        spans = _spans(text, pattern, index, adjectives)
        for key, cand in _candidates(text, spans, max_slots).items():
            if n not in covered.setdefault((key, label), []):
                covered[(key, label)].append(n)
            shown.setdefault((key, label), cand)
    sizes = {name: len(set(v)) for name, v in lexicons.items()}
    drafts = []
    for (key, label), members in covered.items():
        if len(members) < min_coverage:
            continue
        template, slots = shown[(key, label)]
        cases = 1
        for slot in slots:
            cases *= sizes.get(re.sub(r"\d+$", "", slot), 1)
        drafts.append(TemplateDraft(
            template=template, coverage=len(members), ids=tuple(items[i][0] for i in members),
            examples=tuple(items[i][1] for i in members[:5]), slots=slots, cases=cases,
            label=label, placeholders=template.count("{") - 2 * template.count("{{")))
    frames = _frame_drafts(items, usable, lexicons, index)
    seen = {frozenset(d.ids) for d in frames}
    anchored = [d for d in _anchor_drafts(items, usable, lexicons, index)
                if frozenset(d.ids) not in seen]
    for draft in frames + anchored:
        if draft.coverage >= min_coverage and (
                " ".join(draft.template.lower().split()), draft.label) not in covered:
            drafts.append(draft)
    drafts.sort(key=lambda d: (-d.coverage, d.placeholders, -d.cases, d.template))
    return _thin(drafts)[:max_drafts]


_GLUED = re.compile(r"^(.*?[\w'’)\]\"”])([.,!?;:…]+)$")
_FRAME_CONTEXT = 3  # words a frame keeps around its slot, at least
_FRAME_FILL = 3  # words a frame's slot replaces, at most
FILL = "FILL"  # the name of a merged draft's own slot
_OWN_FILL = re.compile(r"^FILL(?:_[A-Z]+)?$")


def _frame_tokens(text: str) -> list[tuple[str, bool]]:
    """``(token, glued)``: the draft text's words, with trailing punctuation split off as
    tokens glued to the word before (so "bad." and "bad" share a frame)."""
    out: list[tuple[str, bool]] = []
    for tok in text.split():
        m = _GLUED.match(tok)
        if m and m.group(1):
            out += [(m.group(1), False), (m.group(2), True)]
        else:
            out.append((tok, False))
    return out


def _join(tokens: Sequence[tuple[str, bool]]) -> str:
    return "".join(("" if glued or not k else " ") + t for k, (t, glued) in enumerate(tokens))


def _is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def _frame_drafts(items: Sequence[tuple[str, str, str | None]], usable: Sequence[int],
                  lexicons: Mapping[str, Sequence[str]],
                  index: Mapping[str, tuple[str, ...]]) -> list[TemplateDraft]:
    """Drafts that merge tagged sentences sharing a frame: the same words (at least
    ``_FRAME_CONTEXT``) before and after one place where they differ (1 to ``_FRAME_FILL``
    words): "The side effects were awful." and "The side effects were unbearable." give
    "The side effects were {FILL}." with FILL = [awful, unbearable]. Where every differing
    word is a value of one lexicon, that lexicon is the slot. Only sentences with the same
    gold label are merged. Of frames with the same sentences, the one keeping most words."""
    groups: dict[tuple[Any, ...], dict[int, str]] = {}
    parts: dict[tuple[Any, ...], tuple[list[tuple[str, bool]], list[tuple[str, bool]]]] = {}
    for n in usable:
        toks = _frame_tokens(draft_text(items[n][1]))
        while len(toks) > 1 and toks[-1][1]:
            toks.pop()  # "awful." and "unbearable!" share a frame (the first one's end is kept)
        end = draft_text(items[n][1])[len(_join(toks)):]
        low = [t.lower() for t, _ in toks]
        words = sum(_is_word(t) for t in low)
        for i in range(len(toks)):
            if toks[i][1] or (i and low[i - 1] in ("a", "an")):
                continue  # a slot starts at a word, not right after an article
            for j in range(i + 1, min(len(toks), i + _FRAME_FILL) + 1):
                fill = toks[i:j]
                if not all(_is_word(t) and not g for t, g in fill):
                    break
                if words - len(fill) < _FRAME_CONTEXT:
                    continue
                key = (tuple(low[:i]), tuple(low[j:]), items[n][2])
                groups.setdefault(key, {}).setdefault(n, _join(fill))
                parts.setdefault(key, (toks[:i], toks[j:] + ([(end, True)] if end else [])))
    best: dict[tuple[int, ...], tuple[Any, ...]] = {}
    for key, members in groups.items():
        if len({v.lower() for v in members.values()}) < 2:
            continue  # the same words everywhere: no slot to merge on
        ident = tuple(sorted(members))
        keep = best.get(ident)
        if keep is None or (len(key[0]) + len(key[1]), key) > (len(keep[0]) + len(keep[1]), keep):
            best[ident] = key
    drafts = []
    for ident, key in best.items():
        members = groups[key]
        before, after = parts[key]
        values = tuple(dict.fromkeys(members[n] for n in ident))
        shared = set.intersection(*(set(index.get(v.lower(), ())) for v in values))
        lex = min(shared) if shared else None
        slot = lex or FILL
        template = _escape(_join([*before, ("{" + slot + "}", False), *after]))
        template = template.replace("{{" + slot + "}}", "{" + slot + "}")
        drafts.append(TemplateDraft(
            template=template, coverage=len(ident), ids=tuple(items[i][0] for i in ident),
            examples=tuple(items[i][1] for i in ident[:5]), slots=(slot,),
            cases=len(set(lexicons[lex])) if lex else len(values), label=key[2], placeholders=1,
            new_lexicons=() if lex else ((FILL, values),)))
    return drafts


_ANCHOR = 2  # the shared words next to an anchored draft's slot


def _anchor_drafts(items: Sequence[tuple[str, str, str | None]], usable: Sequence[int],
                   lexicons: Mapping[str, Sequence[str]],
                   index: Mapping[str, tuple[str, ...]]) -> list[TemplateDraft]:
    """Drafts that merge tagged sentences sharing an n-gram (``_ANCHOR`` words, not all
    stopwords) with a different content word right before or after it: "all of the horrible
    side effects experienced" and "very harsh side effects including ..." share "side
    effects" after "horrible"/"harsh". The draft is the shortest of those sentences (that
    starts with a capital letter, if one does) with
    that word a slot whose values are every sentence's word there (a ``FILL`` lexicon of its
    own, or the lexicon listing them all). Only sentences with the same gold label merge.
    Looser than a frame (:func:`_frame_drafts`): the rest of the template is one sentence's."""
    stop = _stopwords()
    groups: dict[tuple[Any, ...], dict[int, tuple[int, list[tuple[str, bool]]]]] = {}
    for n in usable:
        toks = _frame_tokens(draft_text(items[n][1]))
        low = [t.lower() for t, _ in toks]
        for i, (tok, glued) in enumerate(toks):
            if glued or not tok.isalpha() or low[i] in stop or (i and low[i - 1] in ("a", "an")):
                continue
            for side, anchor in (("after", low[i + 1:i + 1 + _ANCHOR]),
                                 ("before", low[max(0, i - _ANCHOR):i])):
                if (len(anchor) < _ANCHOR or not all(_is_word(a) for a in anchor)
                        or all(a in stop for a in anchor)):
                    continue
                key = (side, tuple(anchor), items[n][2])
                groups.setdefault(key, {}).setdefault(n, (i, toks))
    drafts, made = [], set()
    for key in sorted(groups, key=lambda k: (-len(groups[k]), k[0], k[1], str(k[2]))):
        members = groups[key]
        ident = tuple(sorted(members))
        values = tuple(dict.fromkeys(members[n][1][members[n][0]][0] for n in ident))
        if len(ident) < 2 or len({v.lower() for v in values}) < 2 or ident in made:
            continue
        made.add(ident)
        # the shortest sentence that starts as one (a capital letter), else the shortest
        rep = min(ident, key=lambda n: (not members[n][1][0][0][:1].isupper(),
                                        len(members[n][1]), n))
        at, toks = members[rep]
        shared = set.intersection(*(set(index.get(v.lower(), ())) for v in values))
        lex = min(shared) if shared else None
        slot = lex or FILL
        template = _escape(_join([*toks[:at], ("\0", False), *toks[at + 1:]]))
        template = template.replace("\0", "{" + slot + "}")
        drafts.append(TemplateDraft(
            template=template, coverage=len(ident), ids=tuple(items[i][0] for i in ident),
            examples=tuple(items[i][1] for i in ident[:5]), slots=(slot,),
            cases=len(set(lexicons[lex])) if lex else len(values), label=key[2],
            placeholders=1, new_lexicons=() if lex else ((FILL, values),)))
    return drafts


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


_CORPUS_WORD = re.compile(r"[@#]?[^\W\d_][\w'’-]*")
_SLOT = re.compile(r"(?<!\{)\{(?:(?:an?|An?):)?([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")


def _slot_contexts(template: str) -> list[tuple[str, str | None, str | None]]:
    """``(slot, word before, word after)`` for each placeholder of a template (lowercased;
    ``^``/``$`` at the template's start/end, None next to another placeholder)."""
    out = []
    for m in _SLOT.finditer(template):
        head, tail = template[:m.start()], template[m.end():]
        before = _CORPUS_WORD.findall(head.split("}")[-1])
        after = _CORPUS_WORD.findall(tail.split("{")[0])
        out.append((m.group(1),
                    before[-1].lower() if before else None if "}" in head else "^",
                    after[0].lower() if after else None if "{" in tail else "$"))
    return out


def suggest_fills(drafts: Sequence[TemplateDraft], corpus: Sequence[str],
                  lexicons: Mapping[str, Sequence[str]] | None = None, *, k: int = 8,
                  max_sentences: int = 50_000, seed: int = 0
                  ) -> list[dict[str, tuple[str, ...]]]:
    """Words of the run's own corpus that could fill each draft's slots, for the reviewer to
    add (nothing is added by this): per draft, slot -> up to ``k`` words.

    A word is suggested for a slot where the corpus has it in the slot's position: between
    the words the template has before and after the placeholder ("were {FILL}." with the
    corpus's "were horrible." suggests "horrible"), ranked by how often it stands between
    both, then next to either (a word must stand between both where the placeholder has
    words on both sides; ``^`` and ``$`` stand for the sentence's start and end, so a
    slot that opens the template takes words that open a corpus sentence); words already
    among the slot's values (its lexicon's, or the merged sentences' own), English
    stopwords and the template's own words are left out. Ties break alphabetically. A
    corpus over ``max_sentences`` is sampled with ``seed``, so the same corpus and seed give
    the same suggestions.
    """
    import random

    texts = list(corpus)
    if len(texts) > max_sentences:
        texts = random.Random(seed).sample(texts, max_sentences)
    stop = _stopwords()
    lex = {name: {str(v).lower() for v in values} for name, values in (lexicons or {}).items()}
    wanted = [_slot_contexts(d.template) for d in drafts]
    lefts = {b for ctx in wanted for _, b, _ in ctx if b}
    rights = {a for ctx in wanted for _, _, a in ctx if a}
    both: Counter[tuple[str, str, str]] = Counter()
    after_left: Counter[tuple[str, str]] = Counter()
    before_right: Counter[tuple[str, str]] = Counter()
    for text in texts:
        words = ["^", *(w.lower() for w in _CORPUS_WORD.findall(text)), "$"]
        for i in range(1, len(words) - 1):
            w = words[i]
            if words[i - 1] in lefts:
                after_left[(words[i - 1], w)] += 1
                if words[i + 1] in rights:
                    both[(words[i - 1], w, words[i + 1])] += 1
            if words[i + 1] in rights:
                before_right[(w, words[i + 1])] += 1
    out = []
    for draft, ctx in zip(drafts, wanted, strict=True):
        own = dict(draft.new_lexicons)
        mine = {w.lower() for w in _CORPUS_WORD.findall(_SLOT.sub(" ", draft.template))}
        per: dict[str, tuple[str, ...]] = {}
        for slot, left, right in ctx:
            have = lex.get(re.sub(r"\d+$", "", slot), set()) | {
                str(v).lower() for v in own.get(slot, ())}
            score: dict[str, tuple[int, int]] = {}
            for (a, w), c in after_left.items():
                if a == left:
                    score[w] = (both.get((left, w, right), 0) if right else 0, c)
            for (w, b), c in before_right.items():
                if b == right:
                    two, one = score.get(w, (0, 0))
                    score[w] = (two, one + c)
            ranked = sorted((w for w in score if w not in have and w not in stop
                             and w not in mine and len(w) > 1
                             and (score[w][0] or left is None or right is None)),
                            key=lambda w: (-score[w][0], -score[w][1], w))
            if ranked:
                per[slot] = tuple(ranked[:k])
        out.append(per)
    return out


def format_drafts(drafts: Sequence[TemplateDraft],
                  suggestions: Sequence[Mapping[str, Sequence[str]]] | None = None) -> str:
    """A numbered text listing of drafts (1-based, as ``--accept K`` counts them): each
    with its examples (and, merged from several sentences, their ids), its own slot's
    values and, given ``suggestions`` (see :func:`suggest_fills`), the corpus's suggested
    fills."""
    lines = []
    for k, d in enumerate(drafts, start=1):
        lines.append(f"{k:>3}. covers {d.coverage}  ({d.cases:,} cases, label "
                     f"{d.label or '?'})  {d.template}")
        if d.coverage > 1:  # a merged draft: the sentences it came from
            lines.append(f"       from: {', '.join(d.ids[:8])}"
                         + (f" (+{len(d.ids) - 8} more)" if len(d.ids) > 8 else ""))
        for ex in d.examples[:3]:
            lines.append(f"       e.g. {ex}")
        for name, values in d.new_lexicons:
            lines.append(f"       {name} = the sentences' own words: {', '.join(values)}")
        if suggestions is not None and k <= len(suggestions):
            for slot, words in suggestions[k - 1].items():
                lines.append(f"       suggested fills for {{{slot}}} from the run's corpus "
                             f"(not added): {', '.join(words)}")
    return "\n".join(lines)


def suite_lexicons(suite: Any) -> dict[str, tuple[str, ...]] | None:
    """The lexicons a suite defines itself (``lexicons:`` and ``lexicon_files``), the
    domain ``propose`` drafts in when it appends to that suite, less the ``FILL`` lexicons
    accepted drafts brought; None for a suite that defines none (drafts then use the
    built-in lexicons, as the suite does)."""
    own = set(suite.spec.lexicons)
    for rel in suite.spec.lexicon_files:
        from formalize._lexicons import read_lexicon_yaml

        own.update(read_lexicon_yaml(suite.base_dir / rel, {}))
    # A merged draft's own FILL lexicon (its sentences' words) is no domain: left out, so
    # accepting one draft does not change what the next listing drafts from.
    names = [n for n in suite.lexicons.names() if n in own and not _OWN_FILL.match(n)]
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
