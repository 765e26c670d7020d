"""Per-word occlusion evidence over every sentence of the corpus.

For each sentence and each of its content words (not a stopword), the word is deleted and
the task model scores the shortened sentence: ``task_shift`` is how much its probability of
its own top label y* falls. All deletions of the corpus go to the task model in one batched
call (task models are cheap). The shifts are aggregated per word over all its occurrences,
and a word's task-side z-score is its mean shift against the corpus-wide spread of shifts
(``sd / sqrt(n)``), so a word seen twice that moves the model a lot still stands out.

The reference is an LLM and expensive, so it only checks the ``reference_words`` words with
the highest task-side z, on at most ``reference_sentences`` occurrences each (those where the
task model moved most), in one batched call: ``reference_shift`` is how much the reference's
probability of the same y* falls. A word that moves the task model but not the reference is
evidence of a failure (the task model leans on a word that does not carry the label); a
sentiment word moves both. The final z-score is on the excess ``task_shift -
reference_shift`` of the checked occurrences, with a one-sided p-value and a
Benjamini-Hochberg q-value across the checked words.
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


def deletions(text: str, stopwords: frozenset[str]) -> list[tuple[str, str]]:
    """``(word, text without that occurrence)`` for each content-word occurrence of
    ``text`` (lowercased word; tokens as mining's; the gap left is one space)."""
    out = []
    for m in _TOKEN.finditer(text):
        word = m.group(0).lower()
        if word in stopwords or word.isdigit() or len(word) < 2:
            continue
        shorter = (text[:m.start()].rstrip() + " " + text[m.end():].lstrip()).strip()
        out.append((word, shorter))
    return out


class OcclusionScorer:
    """Occlusion evidence per word (see the module docstring).

    Args:
        reference_words: words whose occurrences the reference checks.
        reference_sentences: occurrences the reference checks per word.
        min_count: words seen fewer times are left out.
        max_examples: example ids kept per word (failing sentences first, largest shift
            first).
        alpha: a word is significant when its q-value is below ``alpha``.
        stopwords: words never deleted (default: mining's English list).
    """

    def __init__(self, *, reference_words: int = 40, reference_sentences: int = 4,
                 min_count: int = 1, max_examples: int = 20, alpha: float = 0.05,
                 stopwords: frozenset[str] | None = None) -> None:
        self.reference_words = reference_words
        self.reference_sentences = reference_sentences
        self.min_count = min_count
        self.max_examples = max_examples
        self.alpha = alpha
        self.stopwords = stopwords

    def fit(self, texts: Sequence[str], task: np.ndarray, reference: np.ndarray,
            failures: np.ndarray, *, task_fn: Callable[[list[str]], np.ndarray],
            reference_fn: Callable[[list[str]], np.ndarray] | None,
            ids: Sequence[str] | None = None) -> OcclusionScorer:
        """Score every deletion with ``task_fn`` (one call) and the candidates' sampled
        deletions with ``reference_fn`` (one call; None: task side only).

        Args:
            texts: every corpus sentence.
            task, reference: n x labels probabilities of the corpus (reference calibrated).
            failures: the per-sentence failure flags (for each word's failure rate).
            task_fn, reference_fn: texts -> n x labels probabilities, columns as ``task``.

        Sets ``words_`` (checked words, highest z first: ``word``, ``n``, ``failures``,
        ``rate``, ``low``, ``high``, ``base_rate``, ``task_shift``, ``reference_shift``,
        ``checked``, ``z``, ``p_value``, ``q_value``, ``significant``, ``example_ids``),
        ``deletions_`` and ``reference_calls_`` (sentences each model scored).
        """
        from scipy.stats import norm

        from discovery._mining import english_stopwords

        stop = english_stopwords() if self.stopwords is None else self.stopwords
        n = len(texts)
        ids = [str(i) for i in range(n)] if ids is None else [str(x) for x in ids]
        task = np.asarray(task, dtype=np.float64)
        ref = np.asarray(reference, dtype=np.float64)
        fail = np.asarray(failures, dtype=bool)
        top = task.argmax(axis=1)
        pairs = [(s, w, short) for s, t in enumerate(texts) for w, short in deletions(t, stop)]
        self.deletions_ = len(pairs)
        self.reference_calls_ = 0
        if not pairs:
            self.words_: list[dict[str, Any]] = []
            return self
        shorter = np.asarray(task_fn([p[2] for p in pairs]), dtype=np.float64)
        sent = np.array([p[0] for p in pairs])
        shift = task[sent, top[sent]] - shorter[np.arange(len(pairs)), top[sent]]
        sd = float(np.std(shift)) or 1e-9
        occ: dict[str, list[int]] = defaultdict(list)
        for j, (_, w, _) in enumerate(pairs):
            occ[w].append(j)
        stats = []
        for w, js in occ.items():
            sents = sorted({int(sent[j]) for j in js})
            if len(sents) < self.min_count:
                continue
            mean = float(shift[js].mean())
            stats.append((mean / (sd / math.sqrt(len(js))), w, js, sents))
        stats.sort(key=lambda s: (-s[0], s[1]))
        chosen = [s for s in stats if s[0] > 0][:self.reference_words]
        # The reference checks each chosen word's most-shifted occurrences, in one call.
        checks = [(w, j) for _, w, js, _ in chosen
                  for j in sorted(js, key=lambda j: (-shift[j], j))[:self.reference_sentences]]
        ref_shift: dict[int, float] = {}
        if reference_fn is not None and checks:
            probs = np.asarray(reference_fn([pairs[j][2] for _, j in checks]), dtype=np.float64)
            self.reference_calls_ = len(checks)
            for (_, j), row in zip(checks, probs, strict=True):
                s = int(sent[j])
                ref_shift[j] = float(ref[s, top[s]] - row[top[s]])
        k_all, n_all = int(fail.sum()), n
        # The spread of the checked excesses (reference noise included), never below the
        # corpus-wide spread of task shifts.
        if ref_shift:
            sd = max(sd, float(np.std([shift[j] - ref_shift[j] for j in ref_shift])))
        rows = []
        for _, w, js, sents in chosen:
            checked = [j for j in js if j in ref_shift]
            excess = np.array([shift[j] - ref_shift[j] for j in checked]) if checked \
                else shift[js]
            m = len(excess)
            z = float(excess.mean() / (sd / math.sqrt(m)))
            k = int(fail[sents].sum())
            lo, hi = wilson_interval(np.array([k]), np.array([len(sents)]))
            rest_n, rest_k = n_all - len(sents), k_all - k
            best = sorted(js, key=lambda j: (not fail[sent[j]], -shift[j], j))
            rows.append({
                "word": w, "n": len(sents), "failures": k, "rate": k / len(sents),
                "low": float(lo[0]), "high": float(hi[0]),
                "base_rate": rest_k / rest_n if rest_n else 0.0,
                "task_shift": float(shift[js].mean()),
                "reference_shift": (float(np.mean([ref_shift[j] for j in checked]))
                                    if checked else None),
                "checked": len(checked), "z": z, "p_value": float(norm.sf(z)),
                "example_ids": list(dict.fromkeys(ids[int(sent[j])] for j in best))[
                    :self.max_examples],
            })
        q = benjamini_hochberg(np.array([r["p_value"] for r in rows]))
        for r, qv in zip(rows, q, strict=True):
            r["q_value"] = float(qv)
            r["significant"] = bool(qv < self.alpha and r["failures"] > 0)
        rows.sort(key=lambda r: (-r["z"], r["word"]))
        self.words_ = rows
        return self
