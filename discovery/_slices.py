"""Slices of the corpus where the task model fails more often than elsewhere.

Two slicers, each a small estimator over the whole scored corpus (not only the hard cut):

- :class:`SemanticSlicer` groups sentences by their embeddings (a seeded k-means over the
  whole corpus) and tests each group's failure rate against the rest (Domino, Eyuboglu et
  al. 2022, without failure-aware clustering, so the test stays honest): a failure spread
  over many related words, each rare, falls into one group.
- :class:`MetadataSlicer` tests fixed properties of a sentence (length bands, ``!``, ``?``,
  digits, questions, negation, all-caps words, ...), as Giskard's text scan does.

Every slice gets its size, failures, failure rate with its 95% Wilson interval, the rate
of the rest of the corpus, a one-sided Fisher exact p-value (is the slice's rate above the
rest's?) and a Benjamini-Hochberg q-value across the slicer's slices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from discovery._stats import benjamini_hochberg, wilson_interval
from synth.core import DataError

NEGATIONS = ("not", "no", "never", "nothing", "none", "nobody", "neither", "nor", "nowhere",
             "cannot", "without")
_NEGATION = re.compile(r"\b(?:" + "|".join(NEGATIONS) + r")\b|n't\b", re.IGNORECASE)
_WH = re.compile(r"^\W*(?:who|what|when|where|why|how|which|is|are|do|does|did|can|could|"
                 r"would|will|should)\b", re.IGNORECASE)
_CAPS = re.compile(r"\b[A-Z]{2,}\b")
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|(?-i:[Uu]s)|our|ours|ourselves)\b",
                           re.IGNORECASE)  # "us", never "US"
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")
_URL = re.compile(r"\bhttps?://\S|\bwww\.\w", re.IGNORECASE)
_MENTION = re.compile(r"(?<![\w@])@\w")  # "@united", not "a@b.com"
_HASHTAG = re.compile(r"(?<![\w#&])#\w*[^\W\d_]\w*")  # "#fail", "#1K"; not "#3", "C#", "&#39;"
# An emoji: a character of the supplementary planes' emoji blocks (U+1F000-1FAFF: emoticons,
# pictographs, transport, flags' regional indicators, skin tones), one of the basic plane's
# characters Unicode presents as emoji by default (Emoji_Presentation: watch, hourglass,
# umbrella, zodiac, high voltage, soccer ball, check mark button, sparkles, cross mark,
# question marks, plus signs, star, circle, ...), or any character followed by the emoji
# presentation selector U+FE0F ("\u2764\ufe0f", a red heart) or the keycap U+20E3. Rating
# stars, check marks and hearts written as text ("\u2605", "\u2713", "\u2665") are not.
_EMOJI = re.compile(
    "[\U0001F000-\U0001FAFF\u231a\u231b\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615"
    "\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4"
    "\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e"
    "\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55]"
    "|\\S\ufe0f|\u20e3")


def slice_table(members: np.ndarray, failures: np.ndarray,
                p_wrong: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Failure statistics of each slice (rows of the boolean ``members`` matrix, slices x
    sentences) against the rest of the corpus: ``n``, ``failures``, ``rate``, ``low``,
    ``high`` (95% Wilson), ``base_rate`` (the rest's rate), ``p_value`` and ``q_value``
    (Benjamini-Hochberg). The p-value is a one-sided Fisher exact test of the failure
    counts; with ``p_wrong`` (the reference's probability that the task model is wrong, per
    sentence) it is a one-sided Welch t-test of ``p_wrong``, members against the rest,
    which weighs every sentence's evidence, not only those past the failure threshold (a
    slice where a weak reference leans against the task model without being confident), and
    ``mean_p_wrong``/``base_p_wrong`` are added."""
    from scipy.stats import fisher_exact, ttest_ind

    members = np.asarray(members, dtype=bool).reshape(-1, len(failures))
    fail = np.asarray(failures, dtype=bool)
    n = members.sum(axis=1)
    k = (members & fail).sum(axis=1)
    n_rest = len(fail) - n
    k_rest = int(fail.sum()) - k
    low, high = wilson_interval(k, n)
    p = np.array([1.0 if ni == 0 else float(fisher_exact(
        [[ki, ni - ki], [kr, nr - kr]], alternative="greater").pvalue)
        for ki, ni, kr, nr in zip(k, n, k_rest, n_rest, strict=True)])
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(n > 0, k / np.maximum(n, 1), 0.0)
        base = np.where(n_rest > 0, k_rest / np.maximum(n_rest, 1), 0.0)
    extra: dict[str, np.ndarray] = {}
    if p_wrong is not None:
        pw = np.asarray(p_wrong, dtype=np.float64)
        mean = np.array([pw[m].mean() if m.any() else 0.0 for m in members])
        rest = np.array([pw[~m].mean() if (~m).any() else 0.0 for m in members])
        p = np.array([1.0 if m.sum() < 2 or (~m).sum() < 2 else float(np.nan_to_num(
            ttest_ind(pw[m], pw[~m], equal_var=False, alternative="greater").pvalue,
            nan=1.0)) for m in members])
        extra = {"mean_p_wrong": mean, "base_p_wrong": rest}
    return {"n": n, "failures": k, "rate": rate, "low": low, "high": high, "base_rate": base,
            "p_value": p, "q_value": benjamini_hochberg(p), **extra}


def _row(table: dict[str, np.ndarray], i: int, alpha: float) -> dict[str, Any]:
    worse = (table["mean_p_wrong"][i] > table["base_p_wrong"][i]) if "mean_p_wrong" in table \
        else table["rate"][i] > table["base_rate"][i]
    return {"n": int(table["n"][i]), "failures": int(table["failures"][i]),
            "rate": float(table["rate"][i]), "low": float(table["low"][i]),
            "high": float(table["high"][i]), "base_rate": float(table["base_rate"][i]),
            "p_value": float(table["p_value"][i]), "q_value": float(table["q_value"][i]),
            "significant": bool(table["q_value"][i] < alpha and worse),
            **{f: float(table[f][i]) for f in ("mean_p_wrong", "base_p_wrong") if f in table}}


def _check(n: int, failures: np.ndarray, p_wrong: np.ndarray | None) -> None:
    if n == 0:
        raise DataError("cannot slice an empty corpus", where="corpus",
                        fix="generate and score a corpus first")
    if len(failures) != n or (p_wrong is not None and len(p_wrong) != n):
        raise DataError(f"{n} sentences but {len(failures)} failure flags",
                        where="scores", fix="score the corpus again")


class SemanticSlicer:
    """Groups of semantically close sentences whose failure rate is above the rest's.

    Args:
        size: the mean group size k-means aims at (``k = ceil(n / size)``, at least 2).
        seed: k-means' random state.
        max_terms: distinguishing words kept per slice.
        max_examples: example ids kept per slice (failing ones, most typical first).
        alpha: a slice is significant when its q-value is below ``alpha`` and its rate is
            above the rest's.
    """

    def __init__(self, size: int = 25, *, seed: int = 0, max_terms: int = 6,
                 max_examples: int = 20, alpha: float = 0.05) -> None:
        self.size = size
        self.seed = seed
        self.max_terms = max_terms
        self.max_examples = max_examples
        self.alpha = alpha

    def fit(self, texts: Sequence[str], embeddings: np.ndarray, failures: np.ndarray, *,
            p_wrong: np.ndarray | None = None, ids: Sequence[str] | None = None,
            embed_words: Callable[[list[str]], np.ndarray] | None = None) -> SemanticSlicer:
        """Cluster ``embeddings`` (n x d, rows of ``texts``) and describe each cluster.

        A cluster's terms are the words most over-represented in its failing sentences
        (its sentences when none fails) against the corpus; given ``embed_words`` (the
        sentence encoder, words in, unit vectors out: one call for all clusters), the
        ``3 * max_terms`` most over-represented are re-ranked by their cosine to the mean
        of those sentences' embeddings, so a theme of words each seen once (several foods)
        is named by its words rather than by incidental ones.

        Sets ``slices_``: one dict per cluster (``slice``, ``terms``, ``example_ids``, the
        :func:`slice_table` fields, ``mean_p_wrong``), significant ones first, then by
        q-value and rate.
        """
        from sklearn.cluster import KMeans

        n = len(texts)
        fail = np.asarray(failures, dtype=bool)
        _check(n, fail, p_wrong)
        emb = np.asarray(embeddings, dtype=np.float64)
        if emb.shape[0] != n:
            raise DataError(f"{n} sentences but {emb.shape[0]} embeddings", where="slices",
                            fix="embed the corpus again")
        ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
        k = max(2, min(n - 1, -(-n // self.size))) if n > 2 else 1
        if k < 2:
            self.slices_: list[dict[str, Any]] = []
            return self
        km = KMeans(n_clusters=k, n_init=4, random_state=self.seed).fit(emb)
        labels = km.labels_
        members = np.stack([labels == c for c in range(k)])
        table = slice_table(members, fail)
        dist = np.linalg.norm(emb - km.cluster_centers_[labels], axis=1)
        pw = np.zeros(n) if p_wrong is None else np.asarray(p_wrong, dtype=np.float64)
        rows = []
        pools = []
        for c in range(k):
            idx = np.flatnonzero(members[c])
            failing = [int(i) for i in idx if fail[i]]
            pools.append((failing or [int(i) for i in idx],
                          self._terms(texts, failing or [int(i) for i in idx])))
        vocab = sorted({w for _, ws in pools for w in ws})
        vectors = {}
        if embed_words is not None and vocab:
            vectors = dict(zip(vocab, np.asarray(embed_words(vocab), dtype=np.float64),
                               strict=True))
        for c in range(k):
            idx = np.flatnonzero(members[c])
            failing = [int(i) for i in idx if fail[i]]
            order = sorted(failing, key=lambda i: (dist[i], -pw[i], i))
            terms = pools[c][1]
            if vectors:
                centre = emb[pools[c][0]].mean(axis=0)
                terms = sorted(terms, key=lambda w: (-float(vectors[w] @ centre), w))
            rows.append({
                "slice": f"cluster {c}",
                "terms": terms[:self.max_terms],
                "example_ids": [ids[i] for i in order[:self.max_examples]],
                **_row(table, c, self.alpha),
                "mean_p_wrong": float(pw[idx].mean()) if len(idx) else 0.0,
            })
        rows.sort(key=lambda r: (not r["significant"], r["q_value"], -r["rate"], r["slice"]))
        self.slices_ = rows
        return self

    def _terms(self, texts: Sequence[str], members: Sequence[int]) -> list[str]:
        """The words most over-represented in ``members`` against the whole corpus (the
        informative-Dirichlet log-odds z of :class:`discovery.NgramMiner`)."""
        from discovery._mining import NgramMiner

        if not members or len(members) >= len(texts):
            return []
        miner = NgramMiner((1, 1), min_support=1, statistic="z", max_examples=0,
                           drop_subsumed=False)
        table = miner.fit(texts, list(members)).table_
        return [str(g) for g, z in zip(table["ngram"], table["z"], strict=True)
                if z > 0][:3 * self.max_terms]


# Each metadata slice: a name, the words that name it in a query (none: not focusable),
# and its predicate on one sentence.
def _words(text: str) -> int:
    return len(_WORD.findall(text))


METADATA_SCHEME = "text properties v2"
"""The version of :data:`METADATA`'s predicates: bump it when one changes (its names are
hashed with it), so that the metadata and labelled stages of runs made before are redone."""
METADATA: dict[str, Callable[[str], bool]] = {
    "exclamation": lambda t: "!" in t,
    "question mark": lambda t: "?" in t,
    "question": lambda t: t.rstrip().endswith("?") or _WH.search(t) is not None,
    "digits": lambda t: any(c.isdigit() for c in t),
    "negation": lambda t: _NEGATION.search(t) is not None,
    "all-caps word": lambda t: _CAPS.search(t) is not None,
    "quotation": lambda t: '"' in t or "\u201c" in t,
    "parenthesis": lambda t: "(" in t,
    "ellipsis": lambda t: "..." in t or "\u2026" in t,
    "two or more commas": lambda t: t.count(",") >= 2,
    "first person": lambda t: _FIRST_PERSON.search(t) is not None,
    "second person": lambda t: _SECOND_PERSON.search(t) is not None,
    "url": lambda t: _URL.search(t) is not None,
    "mention": lambda t: _MENTION.search(t) is not None,
    "hashtag": lambda t: _HASHTAG.search(t) is not None,
    "emoji": lambda t: _EMOJI.search(t) is not None,
}


def metadata_key() -> list[str]:
    """What the stages that read :data:`METADATA` hash of it: :data:`METADATA_SCHEME` and
    the property names (a property added, or a predicate changed and the scheme bumped,
    redoes them)."""
    return [METADATA_SCHEME, *METADATA]


_BAND = re.compile(r"^(?:short \(<= (\d+)|(?:very )?long \(>= (\d+)) words\)$")


def length_band(name: str) -> str | None:
    """``long`` or ``short`` for a length band's name as :class:`MetadataSlicer` writes it
    ("very long (>= 30 words)" is ``long``), else None."""
    m = _BAND.match(name)
    return None if m is None else "short" if m.group(1) is not None else "long"


def property_predicate(name: str) -> Callable[[str], bool] | None:
    """The predicate of the metadata slice ``name`` on one sentence, for any text: a
    :data:`METADATA` property, or a length band as :class:`MetadataSlicer` names it
    ("long (>= 27 words)", "short (<= 8 words)"); None for any other name (a semantic
    cluster, a labelled file's column). So a slice found on the corpus can be read again on
    new sentences (:func:`discovery._finding_sources.replications`)."""
    if name in METADATA:
        return METADATA[name]
    m = _BAND.match(name)
    if m is None:
        return None
    if m.group(1) is not None:
        most = int(m.group(1))
        return lambda t: _words(t) <= most
    least = int(m.group(2))
    return lambda t: _words(t) >= least


CONTAINED = frozenset({"exclamation", "question mark", "digits", "negation", "quotation",
                       "parenthesis", "ellipsis", "first person", "second person", "emoji"})
"""The :data:`METADATA` properties that hold for a sentence as soon as they hold for any of
its words or phrases: a sentence holding "never" or "can't believe" is in ``negation``, one
holding "2" in ``digits``, one holding the labelled data's token "\U0001F600" in ``emoji``.
So a finding whose every term has the property is a sub-slice of that metadata slice
(:func:`discovery._findings.fold_explained`); ``question`` (how a sentence starts) and the
length bands are not, nor links, mentions and hashtags: no finder's tokens ("[\\w']+", or
one punctuation mark) hold the "://", "@" or "#" with the word they would need."""


def shared_property(terms: Sequence[str]) -> str | None:
    """The first property of :data:`CONTAINED` (in :data:`METADATA` order) that every word
    of every one of ``terms`` has on its own ("not", "isn't | don't" -> ``negation``;
    "i'm | we're" -> ``first person``; not "it's not" or "my uncle": a term that merely
    holds a marker is a slice of its own), or None (no terms, or none shared)."""
    words = [w for t in terms for w in str(t).split()]
    return next((name for name in METADATA if name in CONTAINED
                 and all(METADATA[name](w) for w in words)), None) if words else None


class MetadataSlicer:
    """Sentences sharing a surface property (see :data:`METADATA`) and length bands (the
    shortest quarter of the corpus by words, the longest quarter and the longest tenth),
    each tested against the rest (with ``p_wrong``: on it, see :func:`slice_table`).

    Args:
        min_size: slices with fewer sentences are left out.
        max_examples: example ids kept per slice (failing ones, highest ``p_wrong`` first).
        alpha: significance level of the q-value (as :class:`SemanticSlicer`).
    """

    def __init__(self, *, min_size: int = 5, max_examples: int = 20,
                 alpha: float = 0.05) -> None:
        self.min_size = min_size
        self.max_examples = max_examples
        self.alpha = alpha

    def fit(self, texts: Sequence[str], failures: np.ndarray, *,
            p_wrong: np.ndarray | None = None, ids: Sequence[str] | None = None
            ) -> MetadataSlicer:
        """Sets ``slices_``: one dict per slice of at least ``min_size`` sentences that is
        not the whole corpus (``slice``, ``terms`` (empty), ``example_ids``, the
        :func:`slice_table` fields), significant ones first."""
        n = len(texts)
        fail = np.asarray(failures, dtype=bool)
        _check(n, fail, p_wrong)
        ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
        pw = np.zeros(n) if p_wrong is None else np.asarray(p_wrong, dtype=np.float64)
        names, masks = [], []
        for name, pred in METADATA.items():
            names.append(name)
            masks.append(np.array([pred(t) for t in texts], dtype=bool))
        words = np.array([_words(t) for t in texts])
        lo, hi, top = (np.quantile(words, q) for q in (0.25, 0.75, 0.9))
        names += [f"short (<= {int(lo)} words)", f"long (>= {int(np.ceil(hi))} words)"]
        masks += [words <= lo, words >= np.ceil(hi)]
        if np.ceil(top) > np.ceil(hi):
            names.append(f"very long (>= {int(np.ceil(top))} words)")
            masks.append(words >= np.ceil(top))
        keep = [i for i, m in enumerate(masks) if self.min_size <= m.sum() < n]
        if not keep:
            self.slices_: list[dict[str, Any]] = []
            return self
        members = np.stack([masks[i] for i in keep])
        table = slice_table(members, fail, p_wrong)
        rows = []
        for j, i in enumerate(keep):
            failing = [s for s in np.flatnonzero(members[j]) if fail[s]]
            order = sorted(failing, key=lambda s: (-pw[s], s))
            rows.append({"slice": names[i], "terms": [],
                         "example_ids": [ids[s] for s in order[:self.max_examples]],
                         **_row(table, j, self.alpha)})
        rows.sort(key=lambda r: (not r["significant"], r["q_value"], -r["rate"], r["slice"]))
        self.slices_ = rows
        return self
