"""Planted slices for bench/discovery_power.py: what a slice is, how slices are chosen by
counting a corpus, the task model that fails on them, and how findings are matched to them.

A helper module (its name starts with ``_``), not a bench script: tests/bench/test_benches.py
runs every ``bench/[!_]*.py`` in its small mode.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from synth.core import derive_rng

TOKEN = re.compile(r"(?u)[\w']+")  # mining's TOKEN_PATTERN (discovery._mining)

# Share of corpus sentences that contain a word, per frequency band; "rare" is a count.
WORD_BANDS = {"frequent": (0.03, 0.10), "medium": (0.006, 0.015)}
RARE_COUNTS = (2, 3)  # seen at most 3 times (and at least twice: once is indistinguishable)
PHRASE_COUNTS = (4, 12)
GROUP_COUNTS = (1, 3)  # each word of a group
GROUP_MIN_WORDS = 4
OWN = 3  # sentences in no other slice a frequent/medium word or the phrase needs
LONG_WORDS = 30  # the structural slice: sentences of at least this many words
# Related words, each group one topic; the group planted is the one with the most words
# seen 1-3 times in the corpus.
GROUPS = {
    "family": "mother father brother sister wife husband son daughter uncle aunt grandmother "
              "grandfather cousin niece nephew",
    "jobs": "teacher doctor nurse lawyer soldier farmer priest cop detective pilot scientist "
            "professor singer dancer student",
    "countries": "america england france germany italy spain japan china india russia mexico "
                 "canada australia ireland scotland brazil egypt korea",
    "food": "pizza bread cheese coffee tea beer wine chicken meat cake chocolate apple rice "
            "soup sandwich burger",
    "animals": "dog cat horse bird cow pig lion tiger bear wolf snake monkey rabbit mouse",
}


def tokens(text: str) -> list[str]:
    """The mining tokens of ``text``, lowercased."""
    return TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Slice:
    """One planted slice: ``kind`` is ``word`` (band in ``band``), ``phrase`` (``terms`` is one
    two-word phrase), ``group`` (``terms`` are its words; a sentence with any of them is a
    member) or ``long`` (at least ``min_words`` words)."""

    name: str
    kind: str
    terms: tuple[str, ...] = ()
    band: str = ""
    min_words: int = 0

    def member(self, text: str) -> bool:
        """Is ``text`` in the slice."""
        if self.kind == "long":
            return len(text.split()) >= self.min_words
        toks = tokens(text)
        grams = set(toks) | {" ".join(p) for p in zip(toks, toks[1:], strict=False)}
        return any(t in grams for t in self.terms)

    def named_by(self, terms: Sequence[str]) -> bool:
        """Do a finding's ``terms`` name this slice: a term holds the word or the phrase as
        whole words; for a group, terms hold at least two of its words. A structural slice
        is never named by words (only its examples can find it)."""
        if self.kind == "long":
            return False
        found = {t for t in self.terms for term in terms if _holds(term, t)}
        return len(found) >= (2 if self.kind == "group" else 1)

    def label(self) -> str:
        """A short column title, e.g. ``word rare "mist"`` or ``long (>= 30 words)``."""
        if self.kind == "long":
            return f"long (>= {self.min_words} words)"
        if self.kind == "group":
            return f"group {self.band}: {', '.join(self.terms)}"
        if self.kind == "word":
            return f'word {self.band} "{self.terms[0]}"'
        return f'phrase "{self.terms[0]}"'


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


def choose_slices(texts: Sequence[str], *, seed: int = 0,
                  kinds: Sequence[str] = ("frequent", "medium", "rare", "phrase", "group",
                                          "long")) -> list[Slice]:
    """Choose one slice of each kind by counting ``texts`` (seeded; a kind with no candidate
    in this corpus is left out). Words are content words (no stopword, letters only, longer
    than 3), distinct across slices, and the slices are disjoint: no sentence is in two of
    them, except that a word of the bigger bands (frequent, medium) or the phrase needs only
    ``OWN`` sentences of its own (dcbench plants one slice per model for the same reason: a
    sentence already flipped by one slice hides another's trigger, so each slice's evidence
    must be its own).
    """
    from discovery._mining import KEEP_WORDS, english_stopwords

    stop = english_stopwords() | KEEP_WORDS
    words, pairs = sentence_counts(texts)
    n = max(len(texts), 1)
    out: list[Slice] = []
    used: set[str] = set()
    long_ok = "long" in kinds and any(len(t.split()) >= LONG_WORDS for t in texts)
    taken = {i for i, t in enumerate(texts) if long_ok and len(t.split()) >= LONG_WORDS}
    toks = [tokens(t) for t in texts]
    where: dict[str, set[int]] = {}
    for i, ts in enumerate(toks):
        for g in set(ts) | {" ".join(p) for p in zip(ts, ts[1:], strict=False)}:
            where.setdefault(g, set()).add(i)

    def content(w: str) -> bool:
        return w not in stop and w.isalpha() and len(w) > 3 and w not in used

    def free(term: str, own: int | None = None) -> bool:
        """``term`` has ``own`` sentences (or all, if fewer) in no other slice (None: all
        of them)."""
        hits = where.get(term, set())
        return len(hits - taken) >= (len(hits) if own is None else min(own, len(hits)))

    def take(terms: Sequence[str]) -> None:
        used.update(w for term in terms for w in term.split())
        for term in terms:
            taken.update(where.get(term, set()))

    if "group" in kinds:  # first: its words are kept out of the single-word bands
        def members(g: str) -> list[str]:
            return [w for w in GROUPS[g].split()
                    if GROUP_COUNTS[0] <= words[w] <= GROUP_COUNTS[1] and free(w)]
        best = max(GROUPS, key=lambda g: (len(members(g)), g))
        chosen = tuple(members(best))
        if len(chosen) >= GROUP_MIN_WORDS:
            out.append(Slice(f"group:{best}", "group", chosen, band=best))
            take(chosen)
    for kind in ("frequent", "medium", "rare"):
        if kind not in kinds:
            continue
        if kind == "rare":
            pool = sorted(w for w, c in words.items()
                          if RARE_COUNTS[0] <= c <= RARE_COUNTS[1] and content(w) and free(w))
        else:
            lo, hi = WORD_BANDS[kind]
            pool = sorted(w for w, c in words.items()
                          if lo <= c / n < hi and content(w) and free(w, OWN))
        if pool:
            w = derive_rng(seed, "word", kind).choice(pool)
            out.append(Slice(f"word:{kind}", "word", (w,), band=kind))
            take([w])
    if "phrase" in kinds:
        pool = sorted(p for p, c in pairs.items()
                      if PHRASE_COUNTS[0] <= c <= PHRASE_COUNTS[1]
                      and all(content(w) for w in p.split()) and free(p, OWN))
        if pool:
            p = derive_rng(seed, "phrase").choice(pool)
            out.append(Slice("phrase", "phrase", (p,), band="phrase"))
            take([p])
    if long_ok:
        out.append(Slice("long", "long", min_words=LONG_WORDS, band="structure"))
    order = {k: i for i, k in enumerate(("frequent", "medium", "rare", "phrase"))}
    return sorted(out, key=lambda s: (order.get(s.band, 9), s.kind))


def slices_to_json(slices: Sequence[Slice]) -> list[dict[str, Any]]:
    return [asdict(s) for s in slices]


def slices_from_json(rows: Sequence[dict[str, Any]]) -> list[Slice]:
    return [Slice(**{**r, "terms": tuple(r.get("terms", ()))}) for r in rows]


class PlantedModel:
    """A task model with planted failures: the base task model (default: the demo sentiment
    model) with its top label flipped (its probabilities in reverse label order) on every
    sentence in any planted slice; elsewhere it is the base model, unchanged."""

    def __init__(self, slices: Sequence[Slice], *, labels: Sequence[str],
                 base: str = "demo:sentiment") -> None:
        self.slices = list(slices)
        self.labels = list(labels)
        self.base = base
        self._scorer: Any = None

    def planted(self, text: str) -> bool:
        return any(s.member(text) for s in self.slices)

    def predict_proba(self, texts: list[str]) -> list[dict[str, float]]:
        """The base model's probabilities, label order reversed on planted sentences."""
        if self._scorer is None:
            from discovery import load_task_scorer

            self._scorer = load_task_scorer(self.base, self.labels)
        rows = self._scorer.predict_proba(list(texts))
        out = []
        for text, row in zip(texts, rows, strict=True):
            values = [float(row[lab]) for lab in self.labels]
            if self.planted(text):
                values = values[::-1]
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


def group_words_in(finding: Finding, sl: Slice, k: int = 10) -> int:
    """How many distinct words of the group ``sl`` the finding's first ``k`` examples hold."""
    return len({w for t in finding.examples[:k] for w in sl.terms if w in tokens(t)})


def precision_at(finding: Finding, sl: Slice, k: int = 10) -> float | None:
    """Share of slice members among the finding's first ``k`` example sentences (None
    without examples)."""
    ex = finding.examples[:k]
    return sum(sl.member(t) for t in ex) / len(ex) if ex else None


MIN_EXAMPLES = 3  # found through its examples needs at least this many


def match(findings: Sequence[Finding], sl: Slice, top: int = 10) -> dict[str, Any]:
    """How the top ``top`` findings find ``sl``: ``found`` (a finding names it, or its
    precision@10 is >= 0.5 over at least 3 examples, which for a group must hold at least
    two of its words: one word of a group is not the group), the best-matching finding's
    rank, name, precision@10 and whether it is confirmed (the first that names it, else the
    most precise), and the rank of the first finding anywhere in the list that finds it."""
    def finds(f: Finding) -> bool:
        p = precision_at(f, sl)
        return sl.named_by(f.terms) or (
            p is not None and p >= 0.5 and len(f.examples[:10]) >= MIN_EXAMPLES
            and (sl.kind != "group" or group_words_in(f, sl) >= 2))

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
