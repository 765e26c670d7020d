"""One ranked list of findings of every kind: ``findings.jsonl``.

Each row (the schema other tools read; fields may be added, never removed)::

    {"id": "f0001", "rank": 1,
     "kind": one of the kinds of :func:`discovery.finding_kinds` (``ngram``, ``semantic``,
             ``metadata``, ``word``, ``phrase``, ``group``, ``focus``, ...),
     "name": str, "terms": [str], "example_ids": [corpus ids, most telling first, <= 20],
     "n": int, "failures": int, "rate": float, "low": float, "high": float,
     "base_rate": float, "score": float, "confirmed": bool, "reason": str,
     "data": "corpus"|"labelled"}

``data`` says which data a finding was read from: ``corpus`` (the synthetic corpus, judged by
the reference; focus rows: the focus rounds' new sentences) or ``labelled`` (the user's
labelled rows, judged by their gold labels; ``n``/``failures`` count labelled rows, the task
model's errors, and ``example_ids`` are labelled row ids ``L<row>``; ``examples`` hold their
texts). Labelled rows rank among the others by the same keys.
``n``/``failures`` count corpus sentences under the slices' failure rule (for ``focus``
rows: the focus rounds' new sentences under the focus rule), ``low``/``high`` are the
rate's 95% Wilson interval, ``score`` is ``low - base_rate`` (how far above the rest of the
corpus the rate is, at least, with 95% confidence). Every count is over judged sentences
(:func:`discovery.judge`: abstained ones are in none), so every corpus row of a run shares
one base rate (a focus row's ``base_rate`` is the judged corpus's, the same), and every
labelled row the labelled data's (the task model's error rate on the labelled rows, by
the same rule with gold labels). Two kinds of confirmed row carry a base of their own
test, each saying so: a focus row confirmed by invariance (its ``rule``), and a metadata
slice confirmed by replication (``confirmed_by: "replication"``: ``n``/``failures``
count the focus rounds' new sentences with its property, ``base_rate`` is ``expected /
n``, what they would fail at were it unrelated to failure within their candidates,
``base_rule`` says so). ``q_value`` is the
finding's own Benjamini-Hochberg q-value (within its kind); ``evidence_q`` is what ranks
it. A candidate that focus rounds tested appears once, as its ``focus`` row (``source``
names the kind that proposed it, ``corpus_n``/``corpus_failures`` keep its corpus counts).

Ranking means what it says:

- confirmed rows first; only a row tested on new sentences is confirmed, and only when a
  failure rate on them is significantly above its base rate: a focus row, by its rate of
  disagreeing with the reference above the corpus's, or its rate of invariance failures
  (deleting it changes the task model's label and not the reference's) above deleting as
  many other words does (a row confirmed by invariance carries that test's counts, base
  rate and ``rule``; the paired Wilcoxon test of the shifts is shown as evidence, never a
  confirmation); or a metadata slice read again on the focus rounds' new sentences,
  failing more there than the other new sentences of the same candidates
  (``confirmed_by: "replication"``, its ``base_rate`` the ``expected`` rate:
  :func:`discovery._finding_sources.replications`);
- then rows whose rate is above their base rate (``above_base``), before every row whose
  rate is not, whatever their q-values;
- a focus test that did not replicate (its new sentences' rate is not significantly above
  the base rate even on its own test) drops its finding: the row is kept, marked
  ``status: "not replicated"``, after every other row, never ranked on the evidence that
  proposed it; one significant on its own test but not after the correction across the
  candidates is ``status: "supported"``: not confirmed, ranked by the evidence that
  proposed it (``source_q``);
- within each group, by ``evidence_q``, then by ``score``;
- one slice is one finding: rows that name the same terms (a word found on the corpus and
  on the labelled data, an n-gram and its focus test) or, without terms, the same name are
  merged into the best-ranked of them, which lists the others under ``also`` (``kind``,
  ``data``, ``n``, ``failures``, ``rate``, ``base_rate``, ``q_value``, and ``confirmed_by``
  for a confirmed one) and every data it was read from under ``data_all``;
- one slice is named once: a row whose words are a subset or superset of a higher-ranked
  row's ("having" under "having seen", "too" under the group "too | really"), or whose
  sentences lie inside such a row's or one folded into it ("just too" inside "just"), folds
  into it the same way, unless its rate is significantly above that row's (a worse
  sub-slice); a confirmed focus group under one of its words whose other words fail too
  names the finding instead (a category, :func:`generalizes`);
  semantic and metadata rows never fold (:func:`fold_nested`); each finding is checked
  again once every row is read, so "a great", ranked above the word "great" that folded
  under "great way", folds there too; a worse sub-slice of a row that itself fails
  significantly above its base rate ("great example" at 30/32 under "great" at 25/33)
  stays a finding, with ``refines`` naming the higher finding (the one holding that row
  after every fold below) and ``refines_row`` the row, and is listed after the findings of
  its standing (confirmed; above its base rate) that refine none: one word's failure must
  not fill the top of the list under three names;
- one failure is explained once: rows whose every term lies inside a metadata slice that
  fails above its base rate ("never", "can't believe" inside ``negation``) fold with that
  slice into the best-ranked of them, which names it under ``explained_by``, unless their
  rate is significantly worse than the slice's (:func:`fold_explained`); so do failing
  rows whose every word is a marker of one such property with no failing slice to name
  ("not", "don't", "isn't"), into the best-ranked of them, which names it under
  ``shared_property``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from discovery._finding_sources import (
    FindingContext,
    ScoredCorpus,
    corpus_counts,
    finding_kinds,
    finding_sources,
    group_name,
    labelled_candidate,
    labelled_findings,
)
from discovery._focus_rounds import ngram_pattern
from discovery._mining import TOKEN_PATTERN

__all__ = ["build_findings", "corpus_counts", "group_name", "labelled_candidate",
           "labelled_findings"]


RARE = 3
"""A finding in at most this many corpus sentences, all of them in higher-ranked findings'
sentences, is moved after the others (its evidence is theirs: "uncle" under a family group)."""


def _covered_last(rows: list[dict[str, Any]], texts: Sequence[str]) -> list[dict[str, Any]]:
    """``rows`` in order, except that a rare row (corpus sentences <= :data:`RARE`) whose
    sentences are all in higher-ranked rows' is moved after every row that is not, with
    ``covered_by`` naming the first row holding its sentences. Metadata rows (no terms) and
    focus rows' new sentences do not count; a row's corpus sentences are those holding any
    of its terms. A confirmed row is never moved: its evidence is its own new sentences,
    not the corpus sentences it shares ("grey", confirmed on 11 new sentences, is no echo
    of "no | not | only | just" because its two corpus sentences hold "not")."""
    hits: list[set[int]] = []
    for r in rows:
        terms = [t for t in r.get("terms") or [] if t]
        pattern = ngram_pattern(" | ".join(terms)) if terms and r["kind"] != "metadata" \
            and r.get("data", "corpus") == "corpus" else None
        hits.append({i for i, t in enumerate(texts) if pattern.search(t)} if pattern else set())
    kept: list[tuple[dict[str, Any], set[int]]] = []
    moved: list[dict[str, Any]] = []
    covered: set[int] = set()
    for r, h in zip(rows, hits, strict=True):
        if h and len(h) <= RARE and h <= covered and not r.get("confirmed"):
            holder = next(k for k, kh in kept if h & kh)
            moved.append({**r, "covered_by": holder["name"]})
            continue
        kept.append((r, h))
        covered |= h
    return [r for r, _ in kept] + moved


ALSO_FIELDS = ("kind", "name", "data", "n", "failures", "rate", "base_rate", "q_value")
UNNESTED = frozenset({"semantic", "metadata"})
"""Kinds whose terms describe a slice without defining it (a semantic cluster's top words)
or that have none: never folded by :func:`fold_nested`."""


def slice_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    """What makes two rows the same slice: their terms (case-folded, as a set), else the name."""
    terms = sorted({str(t).casefold() for t in row.get("terms") or [] if t})
    return tuple(terms) if terms else ("name:" + str(row["name"]).casefold(),)


def merge_same_slice(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` in order, each slice once: a row whose :func:`slice_key` an earlier row has
    is folded into it (under ``also``); ``data_all`` lists the data each slice was read from."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in rows:
        key = slice_key(r)
        if key not in out:
            out[key] = {**r, "data_all": [r.get("data", "corpus")]}
            continue
        if not out[key].get("example_ids") and r.get("example_ids"):
            # a replicated slice (its examples new sentences) shows its corpus sentences too
            out[key]["example_ids"] = list(r["example_ids"])
        _fold(out[key], r)
    return list(out.values())


def fold_bands(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` in order (after :func:`merge_same_slice`), every length band of one
    direction folded into the best-ranked of them (under its ``also``): "long (>= 20
    words)", "long (>= 25 words)" on the labelled data and "very long (>= 27 words)" are
    one failure through length, named at the threshold the evidence ranks first, not three
    findings (each read again on the new sentences can be confirmed: one planted slice of
    sentences of 30 words or more filled four places of a top 10)."""
    from discovery._slices import length_band

    return _fold_by(rows, lambda _, r: length_band(str(r["name"]))
                    if r["kind"] == "metadata" else None)


def _fold_by(rows: Sequence[dict[str, Any]],
             key: Callable[[int, dict[str, Any]], Hashable | None],
             on_head: Callable[[int, Hashable, dict[str, Any]], None] | None = None
             ) -> list[dict[str, Any]]:
    """``rows`` in order, each row whose ``key(index, row)`` is not None folded into the
    first row of its key (that row's :func:`_head`, passed to ``on_head`` when made)."""
    heads: dict[Hashable, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for i, r in enumerate(rows):
        g = key(i, r)
        if g is None:
            out.append(r)
        elif g in heads:
            _fold(heads[g], r)
        else:
            heads[g] = _head(r)
            if on_head is not None:
                on_head(i, g, heads[g])
            out.append(heads[g])
    return out


def _words_of(row: Mapping[str, Any]) -> frozenset[str]:
    """The words a row's terms name (empty for the kinds of :data:`UNNESTED`)."""
    if row["kind"] in UNNESTED:
        return frozenset()
    return frozenset(w for t in row.get("terms") or [] for w in str(t).casefold().split())


def _fold(head: dict[str, Any], row: Mapping[str, Any]) -> None:
    head.setdefault("also", []).append({k: row.get(k) for k in ALSO_FIELDS} | (
        {"confirmed_by": row["confirmed_by"]} if row.get("confirmed_by") else {}))
    head["also"] += list(row.get("also") or [])
    for d in row.get("data_all") or [row.get("data", "corpus")]:
        if d not in head["data_all"]:
            head["data_all"].append(d)


def fold_nested(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` in order (after :func:`merge_same_slice`), each slice once at its best
    granularity: a row whose words are a subset or a superset of a higher-ranked row's
    ("having" and "having seen"; "too" and the group "too | really") is the same slice named
    coarser or finer, and folds into that row's ``also`` (the higher rank says which
    description the evidence prefers), unless its failure rate is significantly above the
    higher row's (its 95% low bound above that rate: a worse sub-slice is news of its own).
    A row whose sentences all lie inside a higher-ranked row's or one folded into it (every
    term holds one of its terms: "too much" inside the group "too | really"; "just too"
    inside "just", folded under the phrase "just plain") folds the same way, unless it
    fails significantly more than that row: a sub-slice of a sub-slice is still the same
    failure. A confirmed focus group of a higher-ranked word ("galli | milani | thati" under
    "galli") whose other words fail too (:func:`generalizes`) takes the finding's name
    instead, the word folded under it: the category is what the reader needs to know.
    Semantic and metadata rows never fold."""
    # each finding: its head row, the head's words, and every row folded into it
    kept: list[tuple[dict[str, Any], frozenset[str], list[Mapping[str, Any]]]] = []
    for r in rows:
        words = _words_of(r)
        at = next((j for j, e in enumerate(kept) if words and e[1]
                   and (words <= e[1] or e[1] <= words)
                   and not _by_errors(r)[0] > _by_errors(e[0])[1]), None) if words else None
        if at is None and words:
            at = next((j for j, e in enumerate(kept)
                       if any(_inside(r, m) and not _by_errors(r)[0] > _by_errors(m)[1]
                              for m in e[2])), None)
        if at is None:
            kept.append((_head(r), words, [r]))
        elif kept[at][1] < words and generalizes(r, kept[at][1]) \
                and not _by_errors(kept[at][0])[0] > _by_errors(r)[1]:
            # a confirmed group whose other words fail too: the category is the finding
            # (unless its word fails significantly worse: news of its own), and a later
            # finding of another of its words is the same failure
            head, _, members = kept[at]
            kept[at] = (_head(r), words, [*members, r])
            _fold(kept[at][0], head)
            for e in [e for e in kept[at + 1:] if e[1] <= words
                      and not _by_errors(e[0])[0] > _by_errors(r)[1]]:
                kept.remove(e)
                _fold(kept[at][0], e[0])
                kept[at][2].extend(e[2])
        else:
            _fold(kept[at][0], r)
            kept[at][2].append(r)
    return _refine(kept)


def _fails(row: Mapping[str, Any]) -> bool:
    """Whether a row fails significantly above its base rate by the rule rows share
    (:func:`_by_errors`: a focus row confirmed by invariance counts by its errors)."""
    low, _, base = _by_errors(row)
    return low > base


def _refine(kept: list[tuple[dict[str, Any], frozenset[str], list[Mapping[str, Any]]]]
            ) -> list[dict[str, Any]]:
    """The findings of :func:`fold_nested` in order, each checked again against every
    higher-ranked finding as it ended up (a finding's rows are only known once every row is
    read: "a great" ranked above the word "great" that later folded under "great way"): a
    finding whose sentences lie inside a row of a higher-ranked finding that fails
    significantly above its base rate (every term holds one of that row's terms; by the
    rule both share, :func:`_fails`) is the same failure. It folds into that finding unless it
    fails significantly more than that row; then it stays, a worse sub-slice, with
    ``refines`` naming that finding and ``refines_row`` the row it lies inside
    (:func:`_refinements_last` lists it after the findings of its standing that refine none:
    three findings of one word must not fill the top of the list)."""
    out: list[tuple[dict[str, Any], list[Mapping[str, Any]]]] = []
    for head, _, members in kept:
        at, inside = None, None
        for j, (_, rows) in enumerate(out):
            inside = next((x for x in rows if _fails(x) and _inside(head, x)), None)
            if inside is not None:
                at = j
                break
        if at is None or inside is None:
            out.append((head, members))
        elif _by_errors(head)[0] > _by_errors(inside)[1]:
            out.append(({**head, "refines": str(out[at][0]["name"]),
                         "refines_row": str(inside["name"])}, members))
        else:
            _fold(out[at][0], head)
            out[at][1].extend(members)
    return [h for h, _ in out]


def _refinements_last(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (after :func:`fold_explained`) in order, except that a row that ``refines``
    a higher-ranked finding moves after the rows of its standing (confirmed; above its base
    rate; neither) that do not: never below a weaker standing. ``refines`` is brought up to
    date first: the finding it named may since have folded under another head (``not``
    under the metadata slice ``negation``), which it then names; a row that has become the
    head of a failure of its own (``explained_by``, ``shared_property``) refines nothing."""
    owner = {str(r["name"]): str(r["name"]) for r in rows}
    for r in rows:
        for a in r.get("also") or []:
            owner.setdefault(str(a.get("name")), str(r["name"]))
    out = []
    for r in rows:
        if "refines" in r:
            target = owner.get(str(r["refines"]))
            r = {k: v for k, v in r.items() if k not in ("refines", "refines_row")} \
                if target in (None, str(r["name"])) or r.get("explained_by") \
                or r.get("shared_property") else {**r, "refines": target}
        out.append(r)
    return sorted(out, key=lambda r: (not r["confirmed"], not r["above_base"],
                                      "refines" in r))


def _head(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**row, "data_all": list(row.get("data_all") or [row.get("data", "corpus")])}


def generalizes(group: Mapping[str, Any], words: frozenset[str]) -> bool:
    """Whether a confirmed focus ``group`` ("galli | milani | thati") fails beyond
    ``words`` (a higher-ranked finding's words: "galli"): the new sentences that hold one
    of its terms only, a term without any of ``words`` (``term_counts``: "milani",
    "thati"; not "ida galli"), fail above the base rate by either of the focus rounds'
    two tests, each at one-sided 2.5% (a 95% Wilson low bound above the base): their
    failure rate above the corpus's, or their invariance failures (deleting the term
    changes the task model's label and not the reference's) above deleting other words
    does. Then the group, not its strongest word, names the finding."""
    from discovery._finding_sources import _interval

    counts = group.get("term_counts")
    if not counts or not group.get("confirmed"):
        return False
    head = {tok for w in words for tok in _TOKEN.findall(w)}
    rest = [c for t, c in counts.items() if head.isdisjoint(_TOKEN.findall(str(t).casefold()))]
    inv = group.get("confirmed_by") == "invariance"
    tests = [("failures", "n", group.get("error_base_rate" if inv else "base_rate")),
             ("flipped", "invariance_n", group.get("invariance_base"))]
    for k_key, n_key, base in tests:
        k = sum(int(c.get(k_key, 0)) for c in rest)
        n = sum(int(c.get(n_key, 0)) for c in rest)
        if base is not None and n and _interval(k, n)[0] > float(base):
            return True
    return False


_TOKEN = re.compile(TOKEN_PATTERN)


def _inside(row: Mapping[str, Any], outer: Mapping[str, Any]) -> bool:
    """Every sentence of ``row`` is one of ``outer``'s: each of its terms holds one of
    ``outer``'s terms as whole words ("just too" holds "just"; a group of several words
    holds none of one word's). Kinds of :data:`UNNESTED` are inside nothing."""
    if row["kind"] in UNNESTED or outer["kind"] in UNNESTED:
        return False
    inner = [str(t).casefold().split() for t in row.get("terms") or [] if str(t).strip()]
    outs = [str(t).casefold().split() for t in outer.get("terms") or [] if str(t).strip()]
    return bool(inner and outs) and all(
        any(o == t[i:i + len(o)] for o in outs for i in range(len(t) - len(o) + 1))
        for t in inner)


def _by_errors(row: Mapping[str, Any]) -> tuple[float, float, float]:
    """A row's failure rate's 95% low bound, the rate and its base rate by the rule the
    other rows share: a row confirmed by invariance carries that rule's counts, and its
    errors under ``error_failures``/``error_n``/``error_base_rate``; rows of two rules are
    compared by the one they share."""
    if "error_n" not in row:
        return float(row["low"]), float(row["rate"]), float(row["base_rate"])
    from discovery._finding_sources import _interval

    k, n = int(row["error_failures"]), int(row["error_n"])
    low = _interval(k, n)[0] if n else 0.0
    return low, (k / n if n else 0.0), float(row["error_base_rate"])


def _slice_excess(row: Mapping[str, Any]) -> float:
    """A metadata slice's rate above its base rate on the data it was found on: for a slice
    read again on the focus rounds' new sentences (``confirmed_by: replication``, whose
    base is the rate expected within their candidates, another scale), its own corpus or
    labelled row's, folded under it, where there is one."""
    if row.get("confirmed_by") == "replication":
        own = next((a for a in row.get("also") or [] if a.get("kind") == "metadata"
                    and a.get("name") == row["name"]), None)
        if own is not None:
            row = own
    return float(row["rate"]) - float(row["base_rate"])


def fold_explained(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` in order (after :func:`fold_nested`), each failure explained once: a row
    whose every term has the property of a metadata slice above its base rate (of
    :data:`discovery._slices.CONTAINED`: "never", "can't believe" and "isn't | don't" all
    lie inside ``negation``) is a sub-slice of it. Unless its failure rate is significantly
    worse than that slice's (its 95% low bound's excess over its own base rate above the
    slice's excess: a sub-slice failing more is news of its own), it adds nothing the slice
    does not say, so the slice and its sub-slices are one finding, at the rank of the best
    of them: that row is the head (``explained_by`` names the slice when the head is a
    sub-slice) and the others fold under its ``also``. DivExplorer's redundancy pruning
    (Pastor et al. 2021) in one step: without it one broad failure fills the top of the
    list under ten names and pushes every other finding out of it.

    The same holds without a metadata slice to name: of the rows left that are confirmed
    or above their base rate, those whose every word is a marker of one property, the same
    for all ("not", "don't", "isn't | aren't": ``negation``; not "it's not", a slice of its
    own; :func:`discovery._slices.shared_property`, the first property in
    :data:`discovery._slices.METADATA` order), fold into the best-ranked of them, unless
    significantly worse than it (as above, against its excess), and that head names the
    property under ``shared_property``. A failure through one property is one finding
    whether or not the corpus's property slice as a whole is above its base rate (a label
    forced on negations fails only where the model did not already give it). A property
    whose metadata slice does fail above its base rate is left alone here: the rows it
    left are each worse than it."""
    from discovery._slices import CONTAINED, METADATA, shared_property

    broad = [(j, r, METADATA[str(r["name"])]) for j, r in enumerate(rows)
             if r["kind"] == "metadata" and r["name"] in CONTAINED and r.get("above_base")]
    excess = {j: _slice_excess(a) for j, a, _ in broad}
    group = {j: j for j, _, _ in broad}
    for i, r in enumerate(rows):
        terms = [str(t) for t in r.get("terms") or [] if t]
        if i in group or not terms or r["kind"] in UNNESTED:
            continue
        low, _, base = _by_errors(r)
        worse = low - base
        for j, _, holds in broad:
            if all(holds(t) for t in terms) and not worse > excess[j]:
                group[i] = j
                break
    # One property, one finding: failing rows left whose every word is a marker of the same
    # property fold into the best-ranked of them, with no metadata slice to name (the
    # corpus's negation slice need not fail above its base rate while "not", "don't" and
    # "isn't" each do). Where that slice fails, the rows it left are worse than it: news.
    named = {str(a["name"]) for _, a, _ in broad}
    first: dict[str, int] = {}
    shared: dict[int, str] = {}
    for i, r in enumerate(rows):
        terms = [str(t) for t in r.get("terms") or [] if t]
        if i in group or not terms or r["kind"] in UNNESTED \
                or not (r.get("confirmed") or r.get("above_base")):
            continue
        prop = shared_property(terms)
        if prop is None or prop in named:
            continue
        if prop not in first:
            first[prop] = i
            continue
        head = rows[first[prop]]
        low, _, base = _by_errors(r)
        _, h_rate, h_base = _by_errors(head)
        if not low - base > h_rate - h_base:  # not significantly worse than its head
            group[i] = group[first[prop]] = -1 - first[prop]
            shared[-1 - first[prop]] = prop
    def name(i: int, g: Hashable, head: dict[str, Any]) -> None:
        j = cast(int, g)  # group's values: a row index, or -1 - index for a shared property
        if j in shared:
            head["shared_property"] = shared[j]
        elif i != j:
            head["explained_by"] = str(rows[j]["name"])

    return _fold_by(rows, lambda i, _: group.get(i), name)


def build_findings(*, texts: Sequence[str], ids: Sequence[str], fail: np.ndarray,
                   p_wrong: np.ndarray, rule: str,
                   rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
                   focus_rule: str = "", max_per_kind: int = 20,
                   focus_alpha: float = 0.05) -> list[dict[str, Any]]:
    """The ranked findings (see the module docstring) from each finding source's rows.

    Args:
        texts, ids, fail, p_wrong: the corpus, its failure flags under ``rule`` and the
            reference's probability that the task model is wrong.
        rows: stage name -> the rows of its file that may enter (for ``mine``, the
            ``ngrams.jsonl`` rows in mining order; for the slice stages and ``labelled``,
            their significant rows; for ``focus``, ``focus.jsonl``); each source turns them
            into findings (see :data:`discovery.FINDING_SOURCES`), the first
            ``max_per_kind`` of a kind.
        focus_alpha: the focus rounds' significance level, at which a slice the sources
            name ``replicable`` is read again on their new sentences
            (:func:`discovery._finding_sources.replications`).
    """
    fail = np.asarray(fail, dtype=bool)
    p_wrong = np.asarray(p_wrong, dtype=np.float64)
    corpus = ScoredCorpus(ids=ids, texts=texts, fail=fail, p_wrong=p_wrong)
    sources = finding_sources()
    got = {stage: list((rows or {}).get(stage) or []) for stage in sources}
    tested: set[str] = set()
    proposed: dict[str, float] = {}
    replicable: dict[str, None] = {}
    for stage, source in sources.items():
        if source.tests is not None:
            tested |= source.tests(got[stage])
        if source.proposes is not None:
            proposed.update(source.proposes(got[stage]))
        if source.replicable is not None:
            replicable.update(dict.fromkeys(source.replicable(got[stage], max_per_kind)))
    ctx = FindingContext(corpus, max_per_kind=max_per_kind, tested=frozenset(tested),
                         proposed=proposed, focus_rule=focus_rule,
                         replicable=tuple(replicable), alpha=focus_alpha)
    found: list[dict[str, Any]] = []
    for stage, source in sources.items():
        found += source.findings(got[stage], ctx)
    for r in found:
        r.setdefault("data", "corpus")
        r.setdefault("evidence_q", 1.0 if r.get("q_value") is None else float(r["q_value"]))
        r["above_base"] = bool(r["n"] and r["rate"] > float(r["base_rate"]))
    order = {k: i for i, k in enumerate(finding_kinds())}
    found.sort(key=lambda r: (r.get("status") == "not replicated", not r["confirmed"],
                              not r["above_base"], r["evidence_q"], -r["score"],
                              order[r["kind"]], r["name"]))
    dropped = [r for r in found if r.get("status") == "not replicated"]
    kept = _refinements_last(fold_explained(fold_nested(fold_bands(merge_same_slice(
        [r for r in found if r.get("status") != "not replicated"])))))
    # Moving covered rare rows down stays within each group: never below a weaker group.
    found = (_covered_last([r for r in kept if r["confirmed"] or r["above_base"]], texts)
             + _covered_last([r for r in kept if not (r["confirmed"] or r["above_base"])],
                             texts) + dropped)
    return [{"id": f"f{rank:04d}", "rank": rank, **{k: v for k, v in r.items() if k != "rule"},
             "rule": r.get("rule") or rule}
            for rank, r in enumerate(found, start=1)]
