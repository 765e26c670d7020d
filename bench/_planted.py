"""Planted slices for bench/discovery_power.py: what a slice is, how slices are drawn at random
by counting a corpus, the task model that fails on them, and how findings are matched to them.

A helper module (its name starts with ``_``), not a bench script: tests/bench/test_benches.py
runs every ``bench/[!_]*.py`` in its small mode.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from synth.core import derive_rng

TOKEN = re.compile(r"(?u)[\w']+")  # mining's TOKEN_PATTERN (discovery._mining)

# Share of corpus sentences that contain a word, per frequency band, and the fewest sentences
# each band's bounds take (so that a small corpus keeps the bands apart); "rare" is a count.
WORD_BANDS = {"frequent": (0.03, 0.10), "medium": (0.006, 0.015)}
BAND_FLOORS = {"frequent": (8, 12), "medium": (4, 6)}
RARE_COUNTS = (2, 3)  # seen at most 3 times (and at least twice: once is indistinguishable)
PHRASE_COUNTS = (4, 12)
CATEGORY_COUNTS = (1, 3)  # each word of a category
CATEGORY_WORDS = (4, 6)  # words per category: at least, at most (the closest to its centre)
CATEGORY_SIZE = 12  # candidate words per k-means cluster, on average
OWN = 3  # changed sentences in no other slice a frequent/medium word or the phrase needs
LONG_WORDS = 30  # the length slice: sentences of at least this many words
WORDS = ("frequent", "medium", "rare")
# The structural slices (a sentence is a member by its form, never by a word list the finders
# share): each a predicate on the raw sentence.
_NEG = frozenset({"not", "no", "never", "nothing", "nobody", "none", "neither", "nor",
                  "cannot", "nowhere"})
_FIRST = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours",
                    "ourselves", "i'm", "i've", "i'd", "i'll", "we're", "we've"})
STRUCTURES: dict[str, Callable[[str], bool]] = {
    "question": lambda t: "?" in t,
    "digits": lambda t: any(c.isdigit() for c in t),
    "negation": lambda t: "n't" in t.lower() or not _NEG.isdisjoint(tokens(t)),
    "quotes": lambda t: any(q in t for q in ('"', "\u201c", "\u201d", "``", "''")),
    "first person": lambda t: not _FIRST.isdisjoint(tokens(t)),
    "long": lambda t: len(t.split()) >= LONG_WORDS,
}
STRUCTURES_PER_MODEL = 2  # structural slices drawn per planted model
KINDS = (*WORDS, "phrase", "category", *(f"structure: {s}" for s in STRUCTURES))
"""Every kind the bench reports, in table order."""


def tokens(text: str) -> list[str]:
    """The mining tokens of ``text``, lowercased."""
    return TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Slice:
    """One planted slice: ``kind`` is ``word`` (its band in ``band``), ``phrase`` (``terms`` is
    one two-word phrase), ``category`` (``terms`` are its words; a sentence with any of them is
    a member) or ``structure`` (``band`` names a :data:`STRUCTURES` predicate). ``effect`` is
    what the planted model does on a member: ``flip`` (its top label becomes the other end of
    its probabilities) or ``force:<label>`` (that label becomes its top label)."""

    name: str
    kind: str
    terms: tuple[str, ...] = ()
    band: str = ""
    effect: str = "flip"

    def member(self, text: str) -> bool:
        """Is ``text`` in the slice."""
        if self.kind == "structure":
            return STRUCTURES[self.band](text)
        toks = tokens(text)
        grams = set(toks) | {" ".join(p) for p in zip(toks, toks[1:], strict=False)}
        return any(t in grams for t in self.terms)

    @property
    def report_kind(self) -> str:
        """The kind the tables report it under (one of :data:`KINDS`)."""
        if self.kind == "word":
            return self.band
        if self.kind == "structure":
            return f"structure: {self.band}"
        return self.kind

    def named_by(self, terms: Sequence[str]) -> bool:
        """Do a finding's ``terms`` name this slice: a term holds the word or the phrase as
        whole words; for a category, terms hold at least two of its words. A structural slice
        is never named by words (only its examples can find it)."""
        if self.kind == "structure":
            return False
        found = {t for t in self.terms for term in terms if _holds(term, t)}
        return len(found) >= (2 if self.kind == "category" else 1)

    def label(self) -> str:
        """A short column title, e.g. ``word rare "mist" (flip)`` or ``structure: long
        (force:positive)``."""
        if self.kind == "structure":
            what = (f"structure: long (>= {LONG_WORDS} words)" if self.band == "long"
                    else f"structure: {self.band}")
        elif self.kind == "category":
            what = f"category: {', '.join(self.terms)}"
        elif self.kind == "word":
            what = f'word {self.band} "{self.terms[0]}"'
        else:
            what = f'phrase "{self.terms[0]}"'
        return f"{what} ({self.effect})"

    def apply(self, values: list[float], labels: Sequence[str]) -> list[float]:
        """The planted probabilities for a member, from the base model's ``values`` (in
        ``labels`` order)."""
        if self.effect == "flip":
            return values[::-1]
        forced = labels.index(self.effect.partition(":")[2])
        top = max(range(len(values)), key=values.__getitem__)
        out = list(values)
        out[top], out[forced] = values[forced], values[top]
        return out


def _holds(term: str, phrase: str) -> bool:
    """``term`` holds ``phrase`` as whole words."""
    t, p = tokens(term), tokens(phrase)
    return any(t[i:i + len(p)] == p for i in range(len(t) - len(p) + 1)) if p else False


def sentence_counts(texts: Sequence[str]) -> tuple[Counter[str], Counter[str]]:
    """How many sentences hold each word, and each two-word phrase."""
    words: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for text in texts:
        toks = tokens(text)
        words.update(set(toks))
        pairs.update({f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)})
    return words, pairs


def band_counts(band: str, n: int, bands: dict[str, tuple[tuple[float, float], tuple[int, int]]]
                | None = None) -> tuple[int, int]:
    """The sentence counts (lowest, highest) of a word in frequency ``band`` over ``n``
    sentences: its shares of ``WORD_BANDS``, at least ``BAND_FLOORS`` (or ``bands[band]``:
    (shares, floors))."""
    import math

    (lo, hi), (flo, fhi) = (bands or {}).get(band, (WORD_BANDS[band], BAND_FLOORS[band]))
    return max(flo, math.ceil(lo * n)), max(fhi, math.floor(hi * n))


def draw_plan(seed: int, labels: Sequence[str]) -> list[tuple[str, str]]:
    """The kinds planted in the model of ``seed`` and each one's effect, drawn at random:
    every word band, a phrase and a category, and :data:`STRUCTURES_PER_MODEL` structural
    kinds; each effect a flip or one label forced (half and half, the label uniform)."""
    rng = derive_rng(seed, "plan")
    structures = rng.sample(sorted(STRUCTURES), STRUCTURES_PER_MODEL)
    kinds = [*WORDS, "phrase", "category", *(f"structure: {s}" for s in structures)]
    out = []
    for kind in kinds:
        r = derive_rng(seed, "effect", kind)
        out.append((kind, "flip" if r.random() < 0.5 else f"force:{r.choice(list(labels))}"))
    return out


def choose_slices(texts: Sequence[str], *, seed: int = 0, labels: Sequence[str],
                  base_top: Sequence[str] | None = None,
                  plan: Sequence[tuple[str, str]] | None = None,
                  embed: Callable[[list[str]], Any] | None = None,
                  bands: dict[str, tuple[tuple[float, float], tuple[int, int]]] | None = None
                  ) -> list[Slice]:
    """Draw the slices of ``plan`` (default :func:`draw_plan`) by counting ``texts``, seeded;
    a kind with no candidate in this corpus is left out (a category also without ``embed``,
    the encoder that groups words into categories). ``bands`` replaces a word band's shares
    and floors (:func:`band_counts`).

    Words are content words (no stopword, letters only, longer than 3), distinct across
    slices, and the slices are disjoint: no sentence is in two of them, except that a word of
    the bigger bands (frequent, medium) or the phrase needs only ``OWN`` changed sentences of
    its own (dcbench plants one slice per model for the same reason: a sentence already
    changed by one slice hides another's trigger, so each slice's evidence must be its own).
    A sentence is *changed* when the effect moves the base model's top label there
    (``base_top``, the base model's top label per sentence; None: every member is changed):
    forcing a label the model already gives changes nothing, and a slice nothing changes is
    no planted failure at all.
    """
    from discovery._mining import KEEP_WORDS, english_stopwords

    plan = list(plan if plan is not None else draw_plan(seed, labels))
    stop = english_stopwords() | KEEP_WORDS
    words, pairs = sentence_counts(texts)
    n = max(len(texts), 1)
    where: dict[str, set[int]] = {}
    for i, ts in enumerate(tokens(t) for t in texts):
        for g in set(ts) | {" ".join(p) for p in zip(ts, ts[1:], strict=False)}:
            where.setdefault(g, set()).add(i)
    out: list[Slice] = []
    used: set[str] = set()
    taken: set[int] = set()
    effects = dict(plan)

    def changed(hits: set[int], effect: str) -> set[int]:
        if base_top is None or effect == "flip":
            return hits
        return {i for i in hits if base_top[i] != effect.partition(":")[2]}

    def content(w: str) -> bool:
        return w not in stop and w.isalpha() and len(w) > 3 and w not in used

    def usable(term: str, effect: str, own: int | None) -> bool:
        """``term`` changes ``own`` sentences in no other slice (None: all its sentences
        are in no other slice, and it changes at least one)."""
        hits = where.get(term, set())
        if own is None:
            return not hits & taken and bool(changed(hits, effect))
        return len(changed(hits - taken, effect)) >= own

    def take(name: str, kind: str, terms: Sequence[str], band: str, effect: str) -> None:
        out.append(Slice(name, kind, tuple(terms), band=band, effect=effect))
        used.update(w for term in terms for w in term.split())
        for term in terms:
            taken.update(where.get(term, set()))

    for kind, effect in plan:  # structures first: their members are fixed
        if kind.startswith("structure: "):
            band = kind.partition(": ")[2]
            hits = {i for i, t in enumerate(texts) if STRUCTURES[band](t)}
            if len(changed(hits - taken, effect)) >= OWN:
                out.append(Slice(f"structure:{band}", "structure", band=band, effect=effect))
                taken.update(hits)
    if "category" in effects and embed is not None:  # before the single words it keeps out
        effect = effects["category"]
        pool = sorted(w for w, c in words.items() if CATEGORY_COUNTS[0] <= c <= CATEGORY_COUNTS[1]
                      and content(w) and usable(w, effect, None))
        # Embed every word of the count range once (the same for every seed: cacheable).
        universe = sorted(w for w, c in words.items()
                          if CATEGORY_COUNTS[0] <= c <= CATEGORY_COUNTS[1]
                          and w not in stop and w.isalpha() and len(w) > 3)
        vectors = dict(zip(universe, embed(universe) if universe else [], strict=True))
        chosen = pick_category(pool, lambda ws: [vectors[w] for w in ws], seed)
        if chosen:
            take("category", "category", chosen, "", effect)
    for kind in ("rare", "phrase", "medium", "frequent"):
        if kind not in effects:
            continue
        effect = effects[kind]
        if kind == "rare":
            pool = sorted(w for w, c in words.items()
                          if RARE_COUNTS[0] <= c <= RARE_COUNTS[1] and content(w)
                          and usable(w, effect, None)
                          and len(changed(where[w], effect)) >= RARE_COUNTS[0])
        elif kind == "phrase":
            pool = sorted(p for p, c in pairs.items()
                          if PHRASE_COUNTS[0] <= c <= PHRASE_COUNTS[1]
                          and all(content(w) for w in p.split()) and usable(p, effect, OWN))
        else:
            lo, hi = band_counts(kind, n, bands)
            pool = sorted(w for w, c in words.items()
                          if lo <= c <= hi and content(w) and usable(w, effect, OWN))
        if pool:
            term = derive_rng(seed, "term", kind).choice(pool)
            if kind == "phrase":
                take("phrase", "phrase", [term], "phrase", effect)
            else:
                take(f"word:{kind}", "word", [term], kind, effect)
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda s: order[s.report_kind])


def pick_category(pool: Sequence[str], embed: Callable[[list[str]], Any], seed: int
                  ) -> list[str]:
    """A category of related words from ``pool``, seeded: the words are embedded
    (``embed``: the packaged MiniLM encoder in the bench) and split by k-means into clusters of
    about ``CATEGORY_SIZE``; one cluster of at least ``CATEGORY_WORDS[0]`` words is drawn at
    random, and its ``CATEGORY_WORDS[1]`` words closest to its centre are the category. No
    hand-made list: the categories are whatever the encoder groups in this corpus."""
    import numpy as np
    from sklearn.cluster import KMeans

    if len(pool) < 2 * CATEGORY_WORDS[0]:
        return []
    vectors = np.asarray(embed(list(pool)), dtype=np.float64)
    k = max(2, len(pool) // CATEGORY_SIZE)
    state = derive_rng(seed, "category").randrange(2**31)
    km = KMeans(n_clusters=k, random_state=state, n_init=3).fit(vectors)
    sizes = np.bincount(km.labels_, minlength=k)
    ok = [c for c in range(k) if sizes[c] >= CATEGORY_WORDS[0]]
    if not ok:
        return []
    c = derive_rng(seed, "category", "cluster").choice(ok)
    idx = np.flatnonzero(km.labels_ == c)
    dist = np.linalg.norm(vectors[idx] - km.cluster_centers_[c], axis=1)
    return sorted(pool[i] for i in idx[np.argsort(dist, kind="stable")][:CATEGORY_WORDS[1]])


def slices_to_json(slices: Sequence[Slice]) -> list[dict[str, Any]]:
    return [asdict(s) for s in slices]


def slices_from_json(rows: Sequence[dict[str, Any]]) -> list[Slice]:
    return [Slice(**{**r, "terms": tuple(r.get("terms", ()))}) for r in rows]


class PlantedModel:
    """A task model with planted failures: the base task model (default: the demo sentiment
    model) with each planted slice's effect (:meth:`Slice.apply`) on its members (the first
    slice a sentence is in decides); elsewhere it is the base model, unchanged."""

    def __init__(self, slices: Sequence[Slice], *, labels: Sequence[str],
                 base: str = "demo:sentiment") -> None:
        self.slices = list(slices)
        self.labels = list(labels)
        self.base = base
        self._scorer: Any = None

    def slice_of(self, text: str) -> Slice | None:
        """The planted slice that decides ``text`` (None: not planted)."""
        return next((s for s in self.slices if s.member(text)), None)

    def base_proba(self, texts: list[str]) -> list[list[float]]:
        """The base model's probabilities, in ``labels`` order."""
        if self._scorer is None:
            from discovery import load_task_scorer

            self._scorer = load_task_scorer(self.base, self.labels)
        rows = self._scorer.predict_proba(list(texts))
        return [[float(row[lab]) for lab in self.labels] for row in rows]

    def predict_proba(self, texts: list[str]) -> list[dict[str, float]]:
        """The base model's probabilities, with the planted effects on members."""
        out = []
        for text, values in zip(texts, self.base_proba(list(texts)), strict=True):
            sl = self.slice_of(text)
            if sl is not None:
                values = sl.apply(values, self.labels)
            out.append(dict(zip(self.labels, values, strict=True)))
        return out


def write_model_module(folder: Path, name: str, slices: Sequence[Slice],
                       labels: Sequence[str], base: str = "demo:sentiment") -> str:
    """Write ``folder/name.py`` holding a :class:`PlantedModel` as ``model``; return its
    task-model spec ``python:<name>:model`` (``folder`` must be on ``sys.path``)."""
    folder.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"slices": slices_to_json(slices), "labels": list(labels),
                          "base": base}, indent=1)
    (folder / f"{name}.py").write_text(
        '"""A planted task model written by bench/discovery_power.py."""\n'
        "import json\nimport sys\n\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from _planted import PlantedModel, slices_from_json  # noqa: E402\n\n"
        f"_SPEC = json.loads({payload!r})\n"
        "model = PlantedModel(slices_from_json(_SPEC['slices']), labels=_SPEC['labels'],\n"
        "                     base=_SPEC['base'])\n", encoding="utf-8")
    return f"python:{name}:model"


@dataclass
class Finding:
    """One finding as the benchmark reads it: its rank, kind, terms and example sentences."""

    rank: int
    kind: str
    name: str
    terms: list[str]
    examples: list[str] = field(default_factory=list)
    confirmed: bool = False


def read_findings(run: Path, id_text: dict[str, str]) -> tuple[str, list[Finding]]:
    """A run's ranked findings and where they came from: ``findings.jsonl`` when the run has
    one (every kind together), else the focus rows (``focus.jsonl``, its order) followed by
    the mined n-grams not tested (``ngrams.jsonl``'s order). Example ids are read as corpus
    sentences; focus rows' examples are their generated sentences."""
    from synth.core import iter_jsonl

    path = run / "findings.jsonl"
    if path.is_file():
        rows = sorted(iter_jsonl(path), key=lambda r: r["rank"])
        return "findings.jsonl", [Finding(
            int(r["rank"]), str(r["kind"]), str(r["name"]), [str(t) for t in r["terms"]],
            [id_text[i] for i in r.get("example_ids", []) if i in id_text]
            + [e["text"] if isinstance(e, dict) else str(e) for e in r.get("examples", [])],
            bool(r.get("confirmed"))) for r in rows]
    out: list[Finding] = []
    tested: set[str] = set()
    focus = run / "focus.jsonl"
    source = []
    if focus.is_file():
        source.append("focus.jsonl")
        for r in sorted(iter_jsonl(focus), key=lambda r: r["rank"]):
            tested.add(r["ngram"])
            out.append(Finding(len(out) + 1, "focus", r["ngram"], [r["ngram"]],
                               [e["text"] for e in r.get("examples", [])]))
    ngrams = run / "ngrams.jsonl"
    if ngrams.is_file():
        source.append("ngrams.jsonl")
        for r in iter_jsonl(ngrams):
            if r["ngram"] not in tested:
                out.append(Finding(len(out) + 1, "ngram", r["ngram"], [r["ngram"]],
                                   [id_text[i] for i in r.get("examples", []) if i in id_text]))
    return " + ".join(source) or "none", out


def category_words_in(finding: Finding, sl: Slice, k: int = 10) -> int:
    """How many distinct words of the category ``sl`` the finding's first ``k`` examples hold."""
    return len({w for t in finding.examples[:k] for w in sl.terms if w in tokens(t)})


def precision_at(finding: Finding, sl: Slice, k: int = 10) -> float | None:
    """Share of slice members among the finding's first ``k`` example sentences (None
    without examples)."""
    ex = finding.examples[:k]
    return sum(sl.member(t) for t in ex) / len(ex) if ex else None


MIN_EXAMPLES = 3  # found through its examples needs at least this many


def match(findings: Sequence[Finding], sl: Slice, top: int = 10) -> dict[str, Any]:
    """How the top ``top`` findings find ``sl``: ``found`` (a finding names it, or its
    precision@10 is >= 0.5 over at least 3 examples, which for a category must hold at least
    two of its words: one word of a category is not the category), the best-matching finding's
    rank, name, precision@10 and whether it is confirmed (the first that names it, else the
    most precise), and the rank of the first finding anywhere in the list that finds it."""
    def finds(f: Finding) -> bool:
        p = precision_at(f, sl)
        return sl.named_by(f.terms) or (
            p is not None and p >= 0.5 and len(f.examples[:10]) >= MIN_EXAMPLES
            and (sl.kind != "category" or category_words_in(f, sl) >= 2))

    head = list(findings[:top])
    named = [f for f in head if sl.named_by(f.terms)]
    scored = [(precision_at(f, sl), f) for f in head]
    best = named[0] if named else max(
        (f for p, f in scored if p is not None), default=None,
        key=lambda f: (precision_at(f, sl) or 0.0, -f.rank))
    first = next((f.rank for f in findings if finds(f)), None)
    return {"found": any(finds(f) for f in head),
            "best_rank": best.rank if best else None,
            "best_name": best.name if best else None,
            "precision_at_10": precision_at(best, sl) if best else None,
            "confirmed": bool(best and finds(best) and best.confirmed),
            "first_rank": first}
