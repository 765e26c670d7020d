"""Per-word occlusion evidence over every sentence of the corpus, and groups of related words.

For each sentence and each of its content words (not a stopword), every occurrence of the
word is deleted and the task model scores the shortened sentence: ``task_shift`` is how much
its probability of its own top label y* falls. All deletions of the corpus go to the task
model in one batched call (task models are cheap). A shift is read against the sentence's
own median shift (over its content words, when it has at least five): a sentence where
deleting *any* word moves the model (one near a length or punctuation threshold, say) is
evidence about the sentence, not about each of its words. The centred shifts are aggregated
per word over all its occurrences, and a word's task-side z-score is its mean against the
corpus-wide spread of shifts (``sd / sqrt(n)``), so a word seen twice that moves the model a
lot still stands out.

The reference is an LLM and expensive, so it only checks the ``reference_words`` words with
the highest task-side z, on at most ``reference_sentences`` occurrences each (those where the
task model moved most), in one batched call: ``reference_shift`` is how much the reference's
probability of the same y* falls. A word that moves the task model but not the reference is
evidence of a failure (the task model leans on a word that does not carry the label); a
sentiment word moves both. The final z-score is on the excess ``task_shift -
reference_shift`` of the checked occurrences, with a one-sided p-value.

Abstained sentences (``judged`` false, see :func:`discovery.judge`) are deleted from like any
other: their deletions are evidence of a word the task model leans on without cause, but they
are in no count (a row's ``n``, ``failures``, rate and examples are over judged sentences;
``abstained`` counts the rest).

Groups: a failure spread over related words, each rare (family words, say), is weak evidence
word by word. The checked words with some evidence (excess z at least ``group_min_z``) are
embedded by a sentence encoder and joined by average-linkage clustering (cosine similarity
at least ``group_similarity``, mutual nearest neighbours counting as closer: each among
the other's ``group_neighbours`` nearest words of every word deleted, see
:func:`related_clusters`: the encoder puts first names at cosine 0.4-0.55 of each other,
adverbs at 0.7, so no one threshold fits every kind of word, while a name's nearest words
are names); a cluster of at least ``group_min_words`` words becomes a ``group`` row whose
z-score pools every checked occurrence of its words. Each such word may
be too weak on the task side alone to be among the ``reference_words`` the reference checks,
so before the reference is called the words with task z at least ``group_min_z`` (at most
``GROUP_CANDIDATES``) are clustered the same way, each cluster's task z pools its words'
occurrences, and the words (at most ``GROUP_WORDS``, strongest first) of the
``reference_groups`` clusters whose pooled z is above each of their words' own are checked
too. Words and groups
share one Benjamini-Hochberg correction.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from discovery._stats import benjamini_hochberg, wilson_interval

_TOKEN = re.compile(r"[\w']+")
Z95 = 1.6448536269514722  # one-sided 95% normal quantile
GROUP_CANDIDATES = 300
"""Words (highest task z first) clustered on the task side to choose the groups the
reference checks."""
NEAREST_SHARE = 100
"""Mutual nearest neighbours join only within the nearest 1/NEAREST_SHARE of the vocabulary
(:func:`related_clusters`)."""
GROUP_WORDS = 8
"""Words of one task-side group the reference checks (its strongest)."""


def deletions(text: str, stopwords: frozenset[str]) -> list[tuple[str, str]]:
    """``(word, text without it)`` for each distinct content word of ``text``, in order of
    first occurrence (lowercased word; tokens as mining's; every occurrence is deleted, so
    a word written twice is really gone; each gap left is one space)."""
    spans: dict[str, list[re.Match[str]]] = {}
    for m in _TOKEN.finditer(text):
        word = m.group(0).lower()
        if word in stopwords or word.isdigit() or len(word) < 2:
            continue
        spans.setdefault(word, []).append(m)
    out = []
    for word, ms in spans.items():
        shorter = text
        for m in reversed(ms):
            shorter = (shorter[:m.start()].rstrip() + " " + shorter[m.end():].lstrip()).strip()
        out.append((word, shorter))
    return out


def centred(shift: np.ndarray, sent: np.ndarray, min_words: int = 5) -> np.ndarray:
    """``shift`` minus the median shift of its sentence (over the sentence's deletions, when
    it has at least ``min_words``, so a two-word trigger cannot be its median; else
    unchanged)."""
    out = shift.astype(np.float64).copy()
    order = np.argsort(sent, kind="stable")
    bounds = np.flatnonzero(np.diff(sent[order])) + 1
    for js in np.split(order, bounds):
        if len(js) >= min_words:
            out[js] -= float(np.median(shift[js]))
    return out


class OcclusionScorer:
    """Occlusion evidence per word, and per group of related words (see the module
    docstring).

    Args:
        reference_words: words whose occurrences the reference checks.
        reference_sentences: occurrences the reference checks per word.
        min_count: words seen fewer times are left out.
        max_examples: example ids kept per word (failing sentences first, largest shift
            first).
        alpha: a word or group is significant when its q-value is below ``alpha``.
        stopwords: words never deleted (default: mining's English list).
        centre: read each shift against its sentence's median shift.
        group_similarity: cosine similarity that joins two words' clusters (average
            linkage).
        group_min_words: words a group needs.
        group_min_z: excess z a checked word needs to join a group (and task z a word needs
            to join a task-side group).
        reference_groups: task-side groups whose words the reference also checks (see the
            module docstring; needs ``embed_fn``).
        phrase_min_sentences: sentences a two-word phrase needs to be weighed against its
            word (see :func:`_phrases`).
        group_neighbours: two words are also similar enough to join when each is among the
            other's this many nearest words of every word deleted (mutual nearest
            neighbours, :func:`related_clusters`; 0: the cosine threshold alone).
    """

    def __init__(self, *, reference_words: int = 40, reference_sentences: int = 4,
                 min_count: int = 1, max_examples: int = 20, alpha: float = 0.05,
                 stopwords: frozenset[str] | None = None, centre: bool = True,
                 group_similarity: float = 0.45, group_min_words: int = 2,
                 group_min_z: float = 1.0, phrase_min_sentences: int = 2,
                 reference_groups: int = 5, group_neighbours: int = 25) -> None:
        self.reference_words = reference_words
        self.reference_sentences = reference_sentences
        self.min_count = min_count
        self.max_examples = max_examples
        self.alpha = alpha
        self.stopwords = stopwords
        self.centre = centre
        self.group_similarity = group_similarity
        self.group_min_words = group_min_words
        self.group_min_z = group_min_z
        self.phrase_min_sentences = phrase_min_sentences
        self.reference_groups = reference_groups
        self.group_neighbours = group_neighbours
        self._vocabulary: list[str] = []

    def fit(self, texts: Sequence[str], task: np.ndarray, reference: np.ndarray,
            failures: np.ndarray, *, task_fn: Callable[[list[str]], np.ndarray],
            reference_fn: Callable[[list[str]], np.ndarray] | None,
            ids: Sequence[str] | None = None,
            embed_fn: Callable[[list[str]], np.ndarray] | None = None,
            judged: np.ndarray | None = None) -> OcclusionScorer:
        """Score every deletion with ``task_fn`` (one call) and the candidates' sampled
        deletions with ``reference_fn`` (one call; None: task side only).

        Args:
            texts: every corpus sentence.
            task, reference: n x labels probabilities of the corpus (reference calibrated).
            failures: the per-sentence failure flags (for each word's failure rate).
            task_fn, reference_fn: texts -> n x labels probabilities, columns as ``task``.
            embed_fn: words -> L2-normalized embeddings, one row each (None: no groups).
            judged: which sentences the reference judged (None: all). An abstained sentence
                (see :func:`discovery.judge`) is in no count (``n``, ``failures``, rates,
                examples; its ``failures`` flag must be False), but its deletions are
                evidence like any other's: a word whose deletion moves the task model on a
                sentence that carries no label, and not the reference, is one the task model
                leans on without cause (an invariance failure in CheckList's sense).
                ``abstained`` counts a row's abstained sentences.

        Sets ``words_`` (words, phrases and groups, highest z first: ``kind`` (``word``,
        ``phrase`` or ``group``), ``word`` (a group's: its first four terms joined by
        `` | ``), ``terms``,
        ``n``, ``failures``, ``rate``, ``low``, ``high``, ``base_rate``, ``task_shift``
        (raw), ``centred_shift``, ``reference_shift``, ``checked``, ``excess`` (mean) and
        ``excess_low`` (its one-sided 95% lower bound: how large the effect surely is, what
        focus rounds need), ``z``, ``p_value``, ``q_value``, ``significant``,
        ``example_ids``), ``deletions_`` and ``reference_calls_`` (sentences each model
        scored).
        """
        from discovery._mining import english_stopwords

        stop = english_stopwords() if self.stopwords is None else self.stopwords
        n = len(texts)
        ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
        task = np.asarray(task, dtype=np.float64)
        ref = np.asarray(reference, dtype=np.float64)
        fail = np.asarray(failures, dtype=bool)
        judged = np.ones(n, dtype=bool) if judged is None else np.asarray(judged, dtype=bool)
        if np.any(fail & ~judged):
            raise ValueError("an abstained sentence cannot fail")
        top = task.argmax(axis=1)
        pairs = [(s, w, short) for s, t in enumerate(texts) for w, short in deletions(t, stop)]
        self.deletions_ = len(pairs)
        self.reference_calls_ = 0
        if not pairs:
            self.words_: list[dict[str, Any]] = []
            return self
        shorter = np.asarray(task_fn([p[2] for p in pairs]), dtype=np.float64)
        sent = np.array([p[0] for p in pairs])
        raw = task[sent, top[sent]] - shorter[np.arange(len(pairs)), top[sent]]
        shift = centred(raw, sent) if self.centre else raw
        sd = float(np.std(shift)) or 1e-9
        occ: dict[str, list[int]] = defaultdict(list)
        for j, (_, w, _) in enumerate(pairs):
            occ[w].append(j)
        self._vocabulary = sorted(occ)  # every word deleted: the neighbours' universe
        if embed_fn is not None:
            embed_fn = memo_embed(embed_fn)  # the vocabulary is embedded once, not per use
        stats = []
        for w, js in occ.items():
            if len(js) < self.min_count:  # one deletion per sentence: len(js) sentences
                continue
            stats.append((float(shift[js].mean()) / (sd / math.sqrt(len(js))), w, js))
        stats.sort(key=lambda s: (-s[0], s[1]))
        chosen = [s for s in stats if s[0] > 0][:self.reference_words]
        if embed_fn is not None and self.reference_groups:
            chosen += self._task_groups(stats, {w for _, w, _ in chosen}, shift, sd, embed_fn)
        # The reference checks each chosen word's most-shifted occurrences, in one call.
        checks = [(w, j) for _, w, js in chosen
                  for j in sorted(js, key=lambda j: (-shift[j], j))[:self.reference_sentences]]
        ref_shift: dict[int, float] = {}
        if reference_fn is not None and checks:
            probs = np.asarray(reference_fn([pairs[j][2] for _, j in checks]), dtype=np.float64)
            self.reference_calls_ = len(checks)
            for (_, j), row in zip(checks, probs, strict=True):
                s = int(sent[j])
                ref_shift[j] = float(ref[s, top[s]] - row[top[s]])
        # Under the null an excess is a task shift minus a reference shift: its spread is the
        # corpus-wide spread of task shifts and the checked reference shifts' together (not
        # the checked excesses' own, which are chosen for large task shifts).
        task_sd = sd
        if ref_shift:
            sd = math.hypot(sd, float(np.std(list(ref_shift.values()))))
        ev = _Evidence(shift=shift, raw=raw, sent=sent, fail=fail, ids=ids, ref_shift=ref_shift,
                       sd=sd, task_sd=task_sd, max_examples=self.max_examples, judged=judged)
        rows = [ev.row("word", [w], js) for _, w, js in chosen]
        rows += [ev.row("phrase", [p], js)
                 for p, js in _phrases(texts, [(w, js) for _, w, js in chosen], pairs, shift,
                                       ev, min_sentences=self.phrase_min_sentences, stop=stop)]
        if embed_fn is not None:  # a group is kept where it says more than its best word
            best_z = {r["word"]: r["z"] for r in rows}
            for terms in self._groups([r for r in rows if r["kind"] == "word"], embed_fn):
                group = ev.row("group", terms, [j for t in terms for j in occ[t]])
                if group["z"] > max(best_z[t] for t in terms):
                    rows.append(group)
        q = benjamini_hochberg(np.array([r["p_value"] for r in rows]))
        for r, qv in zip(rows, q, strict=True):
            r["q_value"] = float(qv)
            r["significant"] = bool(qv < self.alpha)
        rows.sort(key=lambda r: (-r["z"], r["word"]))
        self.words_ = rows
        return self

    def _task_groups(self, stats: Sequence[tuple[float, str, list[int]]], chosen: set[str],
                     shift: np.ndarray, sd: float,
                     embed_fn: Callable[[list[str]], np.ndarray]
                     ) -> list[tuple[float, str, list[int]]]:
        """The words, not in ``chosen``, of the ``reference_groups`` strongest task-side
        clusters whose pooled task z is above each of their words' own (see the module
        docstring), as ``stats`` rows."""
        strong = [s for s in stats if s[0] >= self.group_min_z][:GROUP_CANDIDATES]
        clusters = self._cluster([w for _, w, _ in strong], embed_fn)
        by_word = {w: (z, w, js) for z, w, js in strong}
        pooled = []
        for words in clusters:
            js = [j for w in words for j in by_word[w][2]]
            z = float(shift[js].mean()) / (sd / math.sqrt(len(js)))
            if z > max(by_word[w][0] for w in words):
                pooled.append((z, words))
        pooled.sort(key=lambda g: (-g[0], g[1]))
        out: list[tuple[float, str, list[int]]] = []
        for _, words in pooled[:self.reference_groups]:
            out += [by_word[w] for w in words[:GROUP_WORDS]
                    if w not in chosen and w not in {o[1] for o in out}]
        return out

    def _cluster(self, words: Sequence[str], embed_fn: Callable[[list[str]], np.ndarray],
                 vocabulary: Sequence[str] | None = None) -> list[list[str]]:
        """:func:`related_clusters` of ``words`` with this scorer's settings, the
        neighbours read among ``vocabulary`` (default: every word :meth:`fit` deleted)."""
        return related_clusters(words, embed_fn, similarity=self.group_similarity,
                                min_words=self.group_min_words,
                                neighbours=self.group_neighbours,
                                vocabulary=self._vocabulary if vocabulary is None
                                else vocabulary)

    def _groups(self, rows: Sequence[dict[str, Any]],
                embed_fn: Callable[[list[str]], np.ndarray],
                vocabulary: Sequence[str] | None = None) -> list[list[str]]:
        """Clusters of related words among ``rows`` with excess z >= ``group_min_z`` (each
        cluster's words highest z first; clusters by their best word's z; ``vocabulary``:
        the neighbours' universe, default every word :meth:`fit` deleted). The caller keeps
        a cluster only when its pooled z is above each of its words' own."""
        strong = sorted((r for r in rows if r["z"] >= self.group_min_z),
                        key=lambda r: (-r["z"], r["word"]))
        return self._cluster([r["word"] for r in strong], embed_fn, vocabulary)


def memo_embed(embed_fn: Callable[[list[str]], np.ndarray]
               ) -> Callable[[list[str]], np.ndarray]:
    """``embed_fn`` that embeds each distinct word once (rows in input order)."""
    seen: dict[str, np.ndarray] = {}

    def embed(words: list[str]) -> np.ndarray:
        new = [w for w in dict.fromkeys(words) if w not in seen]
        if new:
            seen.update(zip(new, np.asarray(embed_fn(new), dtype=np.float64), strict=True))
        return np.stack([seen[w] for w in words]) if words else np.zeros((0, 0))

    return embed


def related_clusters(words: Sequence[str], embed_fn: Callable[[list[str]], np.ndarray], *,
                     similarity: float, min_words: int, neighbours: int = 0,
                     vocabulary: Sequence[str] = ()) -> list[list[str]]:
    """Average-linkage clusters of the distinct ``words`` with at least ``min_words`` words,
    each in ``words``' order; clusters join while their average distance is at most
    ``1 - similarity``. Two words are at cosine distance ``1 - cos``, except that mutual
    nearest neighbours (each among the other's ``neighbours`` nearest words of
    ``vocabulary`` and ``words``, and among its nearest 1/:data:`NEAREST_SHARE`: in a small
    vocabulary every word is near every other) are at half that threshold, so a cluster
    joins where about half its pairs are mutual neighbours and the rest are not far.

    Why both: an encoder's cosine scale differs by kind of word (first names sit at
    0.4-0.55 of each other, near-synonyms at 0.7), so a threshold that joins names joins
    any two adverbs; a word's nearest words in the corpus's own vocabulary are its kind
    whatever the scale (mutual k-nearest neighbours)."""
    words = list(dict.fromkeys(words))
    if len(words) < max(2, min_words):
        return []
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    universe = list(dict.fromkeys([*words, *vocabulary]))
    k = min(neighbours, len(universe) // NEAREST_SHARE)
    if not k:
        universe = words
    emb = np.asarray(embed_fn(universe), dtype=np.float64)
    emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    sim = emb[:len(words)] @ emb.T  # words x universe
    dist = np.clip(1.0 - sim[:, :len(words)], 0.0, 2.0)
    if k:
        sim[np.arange(len(words)), np.arange(len(words))] = -np.inf  # not its own neighbour
        # rank of b among a's neighbours: how many universe words are nearer to a than b
        rank = np.stack([len(universe) - np.searchsorted(np.sort(row), row[:len(words)],
                                                         side="right") for row in sim])
        near = (rank < k) & (rank.T < k)
        dist = np.where(near, np.minimum(dist, (1.0 - similarity) / 2), dist)
    dist = (dist + dist.T) / 2
    np.fill_diagonal(dist, 0.0)
    tree = linkage(squareform(dist, checks=False), method="average")
    label = fcluster(tree, t=1.0 - similarity, criterion="distance")
    clusters: dict[int, list[str]] = {}
    for w, c in zip(words, label, strict=True):
        clusters.setdefault(int(c), []).append(w)
    return [c for c in clusters.values() if len(c) >= min_words]

def _phrases(texts: Sequence[str], words: Sequence[tuple[str, list[int]]],
             pairs: Sequence[tuple[int, str, str]], shift: np.ndarray, ev: _Evidence, *,
             min_sentences: int, stop: frozenset[str]) -> list[tuple[str, list[int]]]:
    """Two-word phrases that explain a checked word's evidence better than the word: for
    each word, the phrases it forms with its neighbour token (either side, as mining's
    tokens) in at least ``min_sentences`` of its sentences; a phrase is kept when deleting
    the word moves the task model more where it is in the phrase than where it is not, by
    two standard errors (the failure sits on the phrase: "having seen", not "having").
    Returns (phrase, the word's deletion indices in the phrase's sentences), best z first."""
    out: list[tuple[float, str, list[int]]] = []
    for w, js in words:
        if len(js) <= min_sentences:
            continue
        by_phrase: dict[str, list[int]] = defaultdict(list)
        for j in js:
            toks = [t.lower() for t in _TOKEN.findall(texts[pairs[j][0]])]
            found = {f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)
                     if w in (a, b) and a not in stop and b not in stop}
            for p in found:
                by_phrase[p].append(j)
        for p, pj in by_phrase.items():
            rest = [j for j in js if j not in set(pj)]
            if min_sentences <= len(pj) and rest \
                    and shift[pj].mean() - shift[rest].mean() > 2 * ev.task_sd * math.sqrt(
                        1 / len(pj) + 1 / len(rest)):
                out.append((ev.z(pj), p, pj))
    out.sort(key=lambda x: (-x[0], x[1]))
    best: dict[str, list[int]] = {}
    for _, p, pj in out:
        best.setdefault(p, pj)
    return list(best.items())


class _Evidence:
    """One word's or group's row from the per-deletion shifts (see
    :meth:`OcclusionScorer.fit`)."""

    def __init__(self, *, shift: np.ndarray, raw: np.ndarray, sent: np.ndarray,
                 fail: np.ndarray, ids: Sequence[str], ref_shift: dict[int, float], sd: float,
                 task_sd: float, max_examples: int, judged: np.ndarray) -> None:
        self.shift, self.raw, self.sent, self.fail, self.ids = shift, raw, sent, fail, ids
        self.ref_shift, self.sd, self.max_examples = ref_shift, sd, max_examples
        self.task_sd, self.judged = task_sd, judged
        self.k_all, self.n_all = int(fail.sum()), int(judged.sum())

    def excess(self, js: Sequence[int]) -> np.ndarray:
        """The excesses of the deletions ``js``: task shift minus reference shift over the
        reference-checked ones when any is checked, else the task shifts alone."""
        checked = [j for j in js if j in self.ref_shift]
        return np.array([self.shift[j] - self.ref_shift[j] for j in checked]) if checked \
            else self.shift[list(js)]

    def z(self, js: Sequence[int]) -> float:
        """The excess z-score of the deletions ``js``."""
        e = self.excess(js)
        return float(e.mean() / (self.sd / math.sqrt(len(e))))

    def row(self, kind: str, terms: list[str], js: list[int]) -> dict[str, Any]:
        from scipy.stats import norm

        shift, sent, fail, ref_shift = self.shift, self.sent, self.fail, self.ref_shift
        checked = [j for j in js if j in ref_shift]
        e = self.excess(js)
        z = float(e.mean() / (self.sd / math.sqrt(len(e))))
        every = sorted({int(sent[j]) for j in js})
        sents = [i for i in every if self.judged[i]]  # what the counts read
        k = int(fail[sents].sum())
        lo, hi = wilson_interval(np.array([k]), np.array([len(sents)]))
        rest_n, rest_k = self.n_all - len(sents), self.k_all - k
        best = sorted((j for j in js if self.judged[sent[j]]),
                      key=lambda j: (not fail[sent[j]], -shift[j], j))
        return {
            "kind": kind, "word": " | ".join(terms[:4]) if kind == "group" else terms[0],
            "terms": list(terms), "n": len(sents), "failures": k,
            "rate": k / len(sents) if sents else 0.0, "abstained": len(every) - len(sents),
            "low": float(lo[0]), "high": float(hi[0]),
            "base_rate": rest_k / rest_n if rest_n else 0.0,
            "task_shift": float(self.raw[js].mean()),
            "centred_shift": float(shift[js].mean()),
            "reference_shift": (float(np.mean([ref_shift[j] for j in checked]))
                                if checked else None),
            "checked": len(checked), "excess": float(e.mean()),
            "excess_low": float(e.mean() - Z95 * self.sd / math.sqrt(len(e))),
            "z": z, "p_value": float(norm.sf(z)),
            "example_ids": list(dict.fromkeys(self.ids[int(sent[j])] for j in best))[
                :self.max_examples],
        }
