"""Discovery on labelled data: where the task model's errors concentrate, by gold labels.

The corpus finders judge the task model against the reference; on data the user has already
labelled, the gold label is the judge. A labelled example *fails* when the task model's top
label is not its gold label (:func:`gold_failures`, the one place that rule lives). Four
finders, each a small estimator over the labelled rows:

- :class:`ErrorEnrichment`: 1- to ``ngram_max``-grams over words *and* punctuation ("?" and
  "!" are tokens), each tested for over-representation among the errors (one-sided Fisher
  exact test, Benjamini-Hochberg q-values): the per-word Fisher baseline of the field, with
  punctuation kept, since a slice of questions is named by "?";
- :func:`column_slices`: slices over the file's own metadata columns (a categorical column's
  frequent values, a numeric column's quartile bands), as Giskard and Domino slice on
  metadata; :class:`discovery.MetadataSlicer`'s text properties (length bands, "?",
  negation, ...) are tested beside them;
- semantic slices: :class:`discovery.SemanticSlicer` on the labelled rows' embeddings with the
  gold failures;
- :class:`GoldOcclusion`: each content word of each row deleted, the task model rescoring
  the shorter text; a word whose deletion moves the task model *towards the gold label*
  (its probability of the gold label rises, read against the row's median deletion) is one
  the model leans on wrongly.

Every row has the fields of a slice row (``n``, ``failures``, ``rate``, ``low``, ``high``,
``base_rate``, ``p_value``, ``q_value``, ``significant``, ``example_ids``) plus ``kind``
(``ngram``, ``metadata``, ``semantic``, ``word``, ``group``), ``name`` and ``terms``.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from discovery._stats import benjamini_hochberg, fisher_enrichment, wilson_interval
from synth.core import DataError

TOKEN_PATTERN = r"(?u)[\w']+|[^\w\s]"
"""Words (runs of letters, digits and apostrophes, as mining's) and single punctuation marks."""
KEEP_PUNCTUATION = frozenset("?!\"")
"""Punctuation that is a finding on its own (a question, an exclamation, a quotation);
n-grams made only of stopwords and other punctuation are dropped."""


def gold_failures(task: np.ndarray, golds: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Per row: the task model's top label is not the gold label (the run's one failure rule,
    :func:`discovery.judge`, with gold labels: nothing abstains; ties go to the first label,
    as ``argmax``)."""
    from discovery._judge import judge

    index = {lab: i for i, lab in enumerate(labels)}
    gold = np.array([index[g] for g in golds], dtype=np.int64)
    return judge(np.asarray(task, dtype=np.float64).reshape(len(gold), len(labels)),
                 gold=gold).fails


def _check(n: int, fail: np.ndarray) -> None:
    if n == 0:
        raise DataError("cannot look for slices in empty labelled data", where="labelled.data",
                        fix="name a labelled file with rows")
    if len(fail) != n:
        raise DataError(f"{n} labelled rows but {len(fail)} failure flags", where="labelled",
                        fix="score the labelled rows again")


def _slice_row(kind: str, name: str, terms: Sequence[str], members: np.ndarray,
               fail: np.ndarray, ids: Sequence[str], order_key: np.ndarray | None,
               max_examples: int) -> dict[str, Any]:
    n = int(members.sum())
    k = int((members & fail).sum())
    rest_n, rest_k = len(fail) - n, int(fail.sum()) - k
    lo, hi = wilson_interval(np.array([k]), np.array([n]))
    failing = [int(i) for i in np.flatnonzero(members & fail)]
    if order_key is not None:
        failing.sort(key=lambda i: (-float(order_key[i]), i))
    return {"kind": kind, "name": name, "terms": list(terms), "n": n, "failures": k,
            "rate": k / n if n else 0.0, "low": float(lo[0]), "high": float(hi[0]),
            "base_rate": rest_k / rest_n if rest_n else 0.0,
            "example_ids": [ids[i] for i in failing[:max_examples]]}


def _finish(rows: list[dict[str, Any]], p: Sequence[float], alpha: float
            ) -> list[dict[str, Any]]:
    """Add p- and q-values (Benjamini-Hochberg over ``rows``) and ``significant`` (q below
    ``alpha`` and the rate above the rest's); significant first, then by p and rate."""
    q = benjamini_hochberg(np.asarray(p, dtype=np.float64)) if rows else np.zeros(0)
    for r, pv, qv in zip(rows, p, q, strict=True):
        r["p_value"], r["q_value"] = float(pv), float(qv)
        r["significant"] = bool(qv < alpha and r["rate"] > r["base_rate"])
    rows.sort(key=lambda r: (not r["significant"], r["p_value"], -r["rate"], r["name"]))
    return rows


class ErrorEnrichment:
    """N-grams of words and punctuation over-represented among the labelled errors.

    Args:
        ngram_max: longest n-gram in tokens (a punctuation mark is a token).
        min_support: failing rows an n-gram must be in.
        alpha: significance level of the q-value.
        stopwords: n-grams made only of these and punctuation outside
            :data:`KEEP_PUNCTUATION` are dropped (default: mining's English list).
        max_examples: failing example ids kept per n-gram.
    """

    def __init__(self, *, ngram_max: int = 3, min_support: int = 2, alpha: float = 0.05,
                 stopwords: frozenset[str] | None = None, max_examples: int = 20) -> None:
        self.ngram_max = ngram_max
        self.min_support = min_support
        self.alpha = alpha
        self.stopwords = stopwords
        self.max_examples = max_examples

    def fit(self, texts: Sequence[str], failures: np.ndarray, *,
            ids: Sequence[str] | None = None) -> ErrorEnrichment:
        """Sets ``rows_`` (``kind`` ``ngram``; significant first): each n-gram found in at
        least ``min_support`` failing rows, with its rows' failure rate against the rest's
        and a one-sided Fisher exact p-value (hypergeometric: the failing rows holding it,
        given how many rows hold it). An n-gram found in exactly the rows of a longer one
        holding it is dropped."""
        from sklearn.feature_extraction.text import CountVectorizer

        from discovery._mining import english_stopwords

        fail = np.asarray(failures, dtype=bool)
        _check(len(texts), fail)
        ids = [str(i) for i in range(len(texts))] if ids is None else [str(x) for x in ids]
        self.rows_: list[dict[str, Any]] = []
        failing = [t for t, f in zip(texts, fail, strict=True) if f]
        if len(failing) < self.min_support or fail.all():
            return self
        vec = CountVectorizer(ngram_range=(1, self.ngram_max), binary=True, lowercase=True,
                              token_pattern=TOKEN_PATTERN, min_df=self.min_support,
                              dtype=np.int32)
        try:
            vec.fit(failing)
        except ValueError:  # nothing reaches min_support
            return self
        vocab = vec.get_feature_names_out()
        x = vec.transform(texts).tocsc()
        y_all = np.asarray(x.sum(axis=0)).ravel()
        y_fail = np.asarray(x[np.flatnonzero(fail)].sum(axis=0)).ravel()
        stop = english_stopwords() if self.stopwords is None else self.stopwords
        keep = np.array([self._content(g, stop) for g in vocab], dtype=bool)
        keep &= y_all < len(texts)
        keep &= ~_subsumed(vocab, y_all, y_fail)
        cols = np.flatnonzero(keep)
        n_fail = int(fail.sum())
        p = fisher_enrichment(y_fail[cols], n_fail, y_all[cols], len(texts))
        # Tarone: an n-gram in few rows cannot reach significance however many of them fail;
        # it is not counted as a test (the rare n-grams would otherwise drown the rest).
        testable = tarone_testable(fisher_enrichment(np.minimum(y_all[cols], n_fail), n_fail,
                                                     y_all[cols], len(texts)), self.alpha)
        rows = []
        for j in cols[testable]:
            members = np.zeros(len(texts), dtype=bool)
            members[x.indices[x.indptr[j]:x.indptr[j + 1]]] = True
            g = str(vocab[j])
            rows.append(_slice_row("ngram", _display(g), [_display(g)], members, fail, ids,
                                   None, self.max_examples))
            rows[-1]["tokens"] = g
        self.tests_ = len(rows)
        self.rows_ = _drop_explained(_finish(rows, list(p[testable]), self.alpha))
        return self

    @staticmethod
    def _content(gram: str, stop: frozenset[str]) -> bool:
        toks = gram.split(" ")
        if len(toks) == 1 and toks[0] in KEEP_PUNCTUATION:
            return True
        return any(t not in stop and re.fullmatch(r"[^\w\s]", t) is None for t in toks)


def tarone_testable(min_p: np.ndarray, alpha: float) -> np.ndarray:
    """Mask of the tests that count (Tarone 1990): the smallest ``k`` such that at most
    ``k`` tests can reach a p-value of ``alpha / k`` at all (``min_p``: each test's smallest
    achievable p-value); a test that cannot is left out of the multiple-testing count."""
    m = len(min_p)
    if m == 0:
        return np.zeros(0, dtype=bool)
    ks = np.arange(1, m + 1)
    reachable = np.searchsorted(np.sort(min_p), alpha / ks, side="right")
    k = int(ks[np.argmax(reachable <= ks)])
    return np.asarray(min_p) <= alpha / k


def _drop_explained(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop a significant n-gram whose rate's 95% lower bound is not above the rate of a
    significant shorter n-gram inside it ("the film" under "film"): it says nothing more."""
    sig = {r["tokens"]: r for r in rows if r["significant"]}
    out = []
    for r in rows:
        toks = r["tokens"].split(" ")
        inner = [" ".join(toks[s:s + size]) for size in range(1, len(toks))
                 for s in range(len(toks) - size + 1)]
        if r["significant"] and any(h in sig and r["low"] <= sig[h]["rate"] for h in inner):
            continue
        out.append(r)
    return out


def _display(gram: str) -> str:
    """An n-gram of tokens as text: ``"good ?"`` reads ``"good?"`` (no space before a mark),
    which :func:`discovery.ngram_pattern` finds in a text either way."""
    return re.sub(r" (?=[^\w\s'])", "", gram)


def _subsumed(vocab: np.ndarray, y_all: np.ndarray, y_fail: np.ndarray) -> np.ndarray:
    """Mask of n-grams found in exactly the rows of a longer n-gram that contains them."""
    index = {str(g): i for i, g in enumerate(vocab)}
    out = np.zeros(len(vocab), dtype=bool)
    for j, g in enumerate(vocab):
        toks = str(g).split(" ")
        for size in range(1, len(toks)):
            for s in range(len(toks) - size + 1):
                i = index.get(" ".join(toks[s:s + size]))
                if i is not None and y_all[i] == y_all[j] and y_fail[i] == y_fail[j]:
                    out[i] = True
    return out


def _number(value: str) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def column_slices(columns: Mapping[str, Sequence[str]], failures: np.ndarray, *,
                  ids: Sequence[str] | None = None, min_size: int = 10, alpha: float = 0.05,
                  max_values: int = 50, max_examples: int = 20) -> list[dict[str, Any]]:
    """Slices over metadata columns (``kind`` ``metadata``), each tested against the rest
    (one-sided Fisher exact test of the failure counts, Benjamini-Hochberg over all of them).

    A column whose non-empty values are all numbers with more than 10 distinct values is cut
    into quartile bands (``rating <= 4``, ``4 < rating <= 8``, ...); any other column gives
    one slice per value held by at least ``min_size`` rows (the ``max_values`` most frequent),
    named ``column = value``, with the value as its term when it holds a letter (a drug name
    can be a focus candidate; a rating cannot). Slices of the whole data are left out.
    """
    from scipy.stats import fisher_exact

    fail = np.asarray(failures, dtype=bool)
    _check(len(fail), fail)
    n = len(fail)
    ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
    named: list[tuple[str, list[str], np.ndarray]] = []
    for col, values in columns.items():
        vals = [str(v).strip() for v in values]
        nums = [_number(v) for v in vals]
        present = [x for x, v in zip(nums, vals, strict=True) if v]
        if present and all(x is not None for x in present) and len(set(present)) > 10:
            arr = np.array([np.nan if x is None else x for x in nums])
            qs = sorted(set(np.nanquantile(arr, [0.25, 0.5, 0.75]).tolist()))
            edges = [-np.inf, *qs, np.inf]
            for lo, hi in zip(edges, edges[1:], strict=False):
                mask = (arr > lo) & (arr <= hi)
                name = (f"{col} <= {hi:g}" if lo == -np.inf else
                        f"{col} > {lo:g}" if hi == np.inf else f"{lo:g} < {col} <= {hi:g}")
                named.append((name, [], mask))
            continue
        counts: dict[str, int] = defaultdict(int)
        for v in vals:
            if v:
                counts[v] += 1
        frequent = sorted((v for v, c in counts.items() if c >= min_size),
                          key=lambda v: (-counts[v], v))[:max_values]
        for v in frequent:
            terms = [v] if re.search(r"[^\W\d_]", v) else []
            named.append((f"{col} = {v}", terms, np.array([x == v for x in vals])))
    rows, p = [], []
    total = int(fail.sum())
    for name, terms, mask in named:
        size = int(mask.sum())
        if size < min_size or size >= n:
            continue
        k = int((mask & fail).sum())
        p.append(float(fisher_exact([[k, size - k], [total - k, n - size - (total - k)]],
                                    alternative="greater").pvalue))
        rows.append(_slice_row("metadata", name, terms, mask, fail, ids, None, max_examples))
    return _finish(rows, p, alpha)


def text_slices(texts: Sequence[str], failures: np.ndarray, *, ids: Sequence[str],
                min_size: int = 10, alpha: float = 0.05, max_examples: int = 20
                ) -> list[dict[str, Any]]:
    """:class:`discovery.MetadataSlicer`'s text properties (length bands, "?", negation, ...)
    on the labelled rows, tested on the gold failure counts (``kind`` ``metadata``)."""
    from discovery._slices import MetadataSlicer

    slicer = MetadataSlicer(min_size=min_size, max_examples=max_examples, alpha=alpha).fit(
        texts, failures, ids=ids)
    return [{"kind": "metadata", "name": r["slice"], **{k: v for k, v in r.items()
                                                        if k != "slice"}}
            for r in slicer.slices_]


class GoldOcclusion:
    """Words the task model leans on wrongly, by deleting them (see the module docstring).

    For each row and each of its content words, every occurrence is deleted and the task
    model rescores the text (all deletions in one call); ``gold_shift`` is how much its
    probability of the *gold* label rises, minus the row's median over its content words
    (rows with at least five). A word's z-score is its mean centred shift over the spread of
    all centred shifts (``sd / sqrt(n)``), with a one-sided p-value; groups of related words
    (by ``embed_fn``, as :class:`discovery.OcclusionScorer`'s) pool their words' deletions.

    Args:
        max_words: words (highest z first, positive only) that become rows.
        alpha: significance level of the q-value (words and groups together).
        group_similarity, group_min_words, group_neighbours: as
            :class:`discovery.OcclusionScorer`'s (the neighbours read among every word
            deleted from the rows).
        max_examples: example ids kept per row (failing rows first, largest shift first).
        min_fixed: a significant row's deletions make at least this many failing rows right
            (and its rows fail more often than the rest), so a word the model merely leans on
            where it is right anyway is no failure.
    """

    def __init__(self, *, max_words: int = 40, alpha: float = 0.05,
                 group_similarity: float = 0.45, group_min_words: int = 2,
                 group_neighbours: int = 25,
                 max_examples: int = 20, min_fixed: int = 2) -> None:
        self.max_words = max_words
        self.alpha = alpha
        self.group_similarity = group_similarity
        self.group_neighbours = group_neighbours
        self.group_min_words = group_min_words
        self.max_examples = max_examples
        self.min_fixed = min_fixed

    def fit(self, texts: Sequence[str], golds: Sequence[str], labels: Sequence[str],
            task: np.ndarray, *, task_fn: Callable[[list[str]], np.ndarray],
            ids: Sequence[str] | None = None,
            embed_fn: Callable[[list[str]], np.ndarray] | None = None) -> GoldOcclusion:
        """Sets ``rows_`` (``kind`` ``word`` or ``group``, highest z first, each with
        ``gold_shift`` (mean raw rise of p(gold)), ``centred_shift``, ``fixed`` (failing rows
        the deletion makes right), ``z``) and ``deletions_``."""
        from scipy.stats import norm

        from discovery._mining import english_stopwords
        from discovery._occlusion import OcclusionScorer, centred, deletions, memo_embed

        n = len(texts)
        task = np.asarray(task, dtype=np.float64)
        fail = gold_failures(task, golds, labels)
        _check(n, fail)
        ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
        index = {lab: i for i, lab in enumerate(labels)}
        gold = np.array([index[g] for g in golds], dtype=np.int64)
        stop = english_stopwords()
        pairs = [(s, w, short) for s, t in enumerate(texts) for w, short in deletions(t, stop)]
        self.deletions_ = len(pairs)
        self.rows_: list[dict[str, Any]] = []
        if not pairs:
            return self
        shorter = np.asarray(task_fn([p[2] for p in pairs]), dtype=np.float64)
        sent = np.array([p[0] for p in pairs])
        raw = shorter[np.arange(len(pairs)), gold[sent]] - task[sent, gold[sent]]
        now_right = shorter.argmax(axis=1) == gold[sent]
        shift = centred(raw, sent)
        sd = float(np.std(shift)) or 1e-9
        occ: dict[str, list[int]] = defaultdict(list)
        for j, (_, w, _) in enumerate(pairs):
            occ[w].append(j)

        def z_of(js: Sequence[int]) -> float:
            return float(shift[list(js)].mean() / (sd / math.sqrt(len(js))))

        def row(kind: str, terms: list[str], js: list[int]) -> dict[str, Any]:
            sents = np.zeros(n, dtype=bool)
            sents[sent[js]] = True
            best = sorted(js, key=lambda j: (not fail[sent[j]], -shift[j], j))
            name = " | ".join(terms[:4]) if kind == "group" else terms[0]
            r = _slice_row(kind, name, terms, sents, fail, ids, None, 0)
            z = z_of(js)
            r.update(example_ids=list(dict.fromkeys(ids[int(sent[j])] for j in best))[
                :self.max_examples],
                gold_shift=float(raw[js].mean()), centred_shift=float(shift[js].mean()),
                fixed=int(sum(bool(fail[sent[j]] and now_right[j]) for j in js)),
                z=z, p_value=float(norm.sf(z)))
            return r

        # Every word is a test (the correction counts them all, not only those shown).
        stats = sorted(((z_of(js), w) for w, js in occ.items()), key=lambda s: (-s[0], s[1]))
        p_all = norm.sf(np.array([z for z, _ in stats]))
        rows = [row("word", [w], occ[w]) for z, w in stats if z > 0][:self.max_words]
        tests = len(stats)
        if embed_fn is not None and rows:
            grouper = OcclusionScorer(group_similarity=self.group_similarity,
                                      group_min_words=self.group_min_words,
                                      group_neighbours=self.group_neighbours)
            best_z = {r["name"]: r["z"] for r in rows}
            for terms in grouper._groups([{**r, "word": r["name"]} for r in rows],
                                         memo_embed(embed_fn), vocabulary=sorted(occ)):
                tests += 1
                group = row("group", terms, [j for t in terms for j in occ[t]])
                if group["z"] > max(best_z[t] for t in terms):
                    rows.append(group)
        # Benjamini-Hochberg over every test: the shown rows' q-values with the unshown
        # words' p-values in the ranking (groups not kept count as tests with p = 1).
        p = np.concatenate([[r["p_value"] for r in rows],
                            p_all[len([r for r in rows if r["kind"] == "word"]):],
                            np.ones(tests - len(stats) - sum(r["kind"] == "group"
                                                             for r in rows))])
        q = benjamini_hochberg(p)[:len(rows)]
        for r, qv in zip(rows, q, strict=True):
            r["q_value"] = float(qv)
            # evidence of a failure, not only of leaning: its rows fail more often than the
            # rest, and deleting it makes at least min_fixed of them right
            r["significant"] = bool(qv < self.alpha and r["rate"] > r["base_rate"]
                                    and r["fixed"] >= self.min_fixed)
        rows.sort(key=lambda r: (not r["significant"], -r["z"], r["name"]))
        self.rows_ = rows
        return self
