"""Expansion: compiled templates, seeded sampling and lazy, de-duplicated case streams."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from formalize._template import MODIFIERS, Node, Slot, Text, apply_modifier, slot_keys

Fill = tuple[str, str, str]  # (slot key, source lexicon, value)
_MODS: tuple[str | None, ...] = (None, *MODIFIERS)


@dataclass(frozen=True, slots=True)
class Case:
    """One test case: a text to score, with what produced it.

    ``label`` is the gold label (MFT/contrast) or None; ``orig_text`` is the unperturbed text
    of an INV/DIR pair; ``pair`` holds a sentence-pair case's two named fields (``text`` then
    shows them joined); ``group`` is the group value of a test-group variant.
    """

    test: str
    capability: str
    type: str
    case_id: str
    text: str
    label: str | None = None
    fills: tuple[Fill, ...] = ()
    orig_text: str | None = None
    group: str | None = None
    base_id: str | None = None
    template: str | None = None
    perturbation: str | None = None
    meta: tuple[Mapping[str, str], ...] = ()
    pair: tuple[tuple[str, str], tuple[str, str]] | None = None

    @property
    def model_input(self) -> str | tuple[str, str]:
        """What a task model scores: the text, or a sentence pair's two field values."""
        return self.text if self.pair is None else (self.pair[0][1], self.pair[1][1])

    def fills_dict(self) -> dict[str, str]:
        """Return the fills as ``{slot key: value}``."""
        return {key: value for key, _, value in self.fills}

    def to_record(self) -> dict[str, Any]:
        """Return the flattened record (the native cases JSONL schema): every key always
        present, plus ``meta`` (a list of column -> value rows) where the case has some."""
        record: dict[str, Any] = {
            "test": self.test, "capability": self.capability, "type": self.type,
            "case_id": self.case_id, "text": self.text, "label": self.label,
            "fills": [{"slot": k, "lexicon": s, "value": v} for k, s, v in self.fills],
            "orig_text": self.orig_text, "group": self.group, "base_id": self.base_id,
            "template": self.template, "perturbation": self.perturbation,
        }
        if self.meta:
            record["meta"] = [dict(m) for m in self.meta]
        if self.pair is not None:
            record["pair"] = dict(self.pair)
        return record


@dataclass(frozen=True)
class CompiledTemplate:
    """A parsed template with each slot's domain resolved: it can count and render fills.

    Slots of one *paired* lexicon (see ``LexiconSet.pairs``) share one draw: the i-th fill of
    one member goes with the i-th fill of the others, so they count as one factor of
    :attr:`size`, not as a product.
    """

    text: str
    nodes: tuple[Node, ...]
    keys: tuple[str, ...]
    domains: tuple[tuple[tuple[str, str], ...], ...]  # per key: (value, source) pairs
    dims: tuple[int, ...] = ()  # per key: the draw it belongs to (keys of a pair share one)
    dim_sizes: tuple[int, ...] = ()  # per draw: the number of values
    _parts: tuple[tuple[int, int, int] | str, ...] = field(repr=False, default=())
    _tables: tuple[tuple[tuple[str, ...], ...], ...] = field(repr=False, default=())

    @classmethod
    def build(cls, text: str, nodes: tuple[Node, ...],
              domains: dict[str, tuple[tuple[str, str], ...]],
              groups: Mapping[str, str] | None = None) -> CompiledTemplate:
        """Compile ``nodes`` with ``domains`` (slot key -> (value, source) pairs); keys with
        the same ``groups`` id are filled together (their domains have one length)."""
        keys = tuple(slot_keys(nodes))
        doms = tuple(domains[k] for k in keys)
        dims: list[int] = []
        sizes: list[int] = []
        by_group: dict[str, int] = {}
        for key, dom in zip(keys, doms, strict=True):
            group = (groups or {}).get(key)
            if group is not None and group in by_group:
                dim = by_group[group]
                assert sizes[dim] == len(dom), f"paired slot {key!r} has another length"
            else:
                dim = len(sizes)
                sizes.append(len(dom))
                if group is not None:
                    by_group[group] = dim
            dims.append(dim)
        # Per key: the value as it is, with "a/an", with "A/An", capitalised.
        tables = tuple(
            tuple(tuple(apply_modifier(v, mod) for v, _ in dom) for mod in _MODS)
            for dom in doms)
        index = {k: i for i, k in enumerate(keys)}
        parts: list[tuple[int, int, int] | str] = []
        for node in nodes:
            if isinstance(node, Text):
                parts.append(node.value)
            else:
                assert isinstance(node, Slot)
                i = index[node.key]
                parts.append((i, _MODS.index(node.article), dims[i]))
        return cls(text, nodes, keys, doms, tuple(dims), tuple(sizes), tuple(parts), tables)

    @property
    def size(self) -> int:
        """Number of fill combinations (the product of the draws' domain sizes)."""
        return math.prod(self.dim_sizes)

    def render(self, combo: Sequence[int]) -> str:
        """Render the fill whose value index per draw is ``combo``."""
        tables = self._tables
        return "".join(p if isinstance(p, str) else tables[p[0]][p[1]][combo[p[2]]]
                       for p in self._parts)

    def fills(self, combo: Sequence[int]) -> tuple[Fill, ...]:
        """Return the ``(slot, source, value)`` triples of a combination."""
        doms, dims = self.domains, self.dims
        return tuple((k, doms[i][combo[dims[i]]][1], doms[i][combo[dims[i]]][0])
                     for i, k in enumerate(self.keys))

    def combos(self) -> Iterator[tuple[int, ...]]:
        """Yield every combination lazily (the cartesian product, first draw slowest)."""
        return itertools.product(*(range(n) for n in self.dim_sizes))

    def combo_at(self, index: int) -> tuple[int, ...]:
        """Return the ``index``-th combination of :meth:`combos` without enumerating."""
        out = []
        for n in reversed(self.dim_sizes):
            index, rem = divmod(index, n)
            out.append(rem)
        return tuple(reversed(out))


class StratifiedSample(int):
    """A sample size (an ``int``) to be drawn *stratified*: every template of the test keeps
    draws (in proportion to its size, at least one each while the sample allows), so no
    template drops out. ``verify`` passes it for a test over ``max_cases_per_test``."""


def allocate(sizes: Sequence[int], k: int, rng: random.Random) -> list[int]:
    """Split ``k`` draws over parts of ``sizes`` (``k`` below their sum): one per part while
    ``k`` allows (parts drawn by ``rng`` when it does not), the rest in proportion to what
    each part has left, largest remainders first."""
    parts = [i for i, n in enumerate(sizes) if n > 0]
    quota = [0] * len(sizes)
    if k < len(parts):
        for i in rng.sample(parts, k):
            quota[i] = 1
        return quota
    for i in parts:
        quota[i] = 1
    rest = k - len(parts)
    spare = [sizes[i] - quota[i] for i in range(len(sizes))]
    room = sum(spare)
    if rest and room:
        shares = [rest * n / room for n in spare]
        extra = [int(x) for x in shares]
        order = sorted(range(len(sizes)), key=lambda i: (extra[i] - shares[i], i))
        for i in order[:rest - sum(extra)]:
            extra[i] += 1
        quota = [q + e for q, e in zip(quota, extra, strict=True)]
    return quota


@dataclass(frozen=True)
class TemplateSource:
    """Where a test's base texts come from: compiled templates and plain texts."""

    templates: tuple[CompiledTemplate, ...] = ()
    texts: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        """Number of texts the full expansion produces (before removing duplicates)."""
        return sum(t.size for t in self.templates) + len(self.texts)

    def count(self, sample: int | None) -> int:
        """Number of draws (before removing duplicates) with ``sample`` or exhaustively."""
        return self.size if sample is None else min(sample, self.size)

    def iter(self, sample: int | None, rng: random.Random
             ) -> Iterator[tuple[str, tuple[Fill, ...], str | None]]:
        """Yield ``(text, fills, template text)``: all fills, or ``sample`` of them drawn
        without replacement by ``rng`` (then in expansion order). Lazy either way: a sample
        draws indices (memory and time grow with ``sample``, not with the expansion). A
        :class:`StratifiedSample` is split over the templates (and the plain texts) first,
        so every template keeps draws (see :func:`allocate`)."""
        if sample is None or sample >= self.size:
            for tpl in self.templates:
                for combo in tpl.combos():
                    yield tpl.render(combo), tpl.fills(combo), tpl.text
            for text in self.texts:
                yield text, (), None
            return
        if isinstance(sample, StratifiedSample):
            sizes = [t.size for t in self.templates] + [len(self.texts)]
            for part, k in enumerate(allocate(sizes, sample, rng)):
                offset = sum(sizes[:part])
                for index in sorted(rng.sample(range(sizes[part]), k)):
                    yield self._at(offset + index)
            return
        # range() sampling picks indices without materialising the product.
        for index in sorted(rng.sample(range(self.size), sample)):
            yield self._at(index)

    def _at(self, index: int) -> tuple[str, tuple[Fill, ...], str | None]:
        for tpl in self.templates:
            if index < tpl.size:
                combo = tpl.combo_at(index)
                return tpl.render(combo), tpl.fills(combo), tpl.text
            index -= tpl.size
        return self.texts[index], (), None


class Deduper:
    """Remembers the case texts seen so far (a set of them), so each text is expanded once."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def first(self, text: str) -> bool:
        """True the first time ``text`` is seen."""
        if text in self._seen:
            return False
        self._seen.add(text)
        return True


SEED_SCHEME = "derive_rng(seed, test, 'sample' | i, j, v | 'corpus')"
"""How a suite's draws are seeded (which fills are sampled, each perturbation's randomness,
a group's corpus draw): part of :meth:`Suite.fingerprint`, so cases drawn with the former
``"|"``-joined streams are never taken for current ones."""


def slugify(name: str) -> str:
    """Return a file- and id-safe slug of a test name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "test"
