"""The peers of bench/discovery_power.py, run on labelled data the way their users would: a
per-word Fisher test on the task model's errors (with and without "?" as a token) and
SliceLine (the ``sliceline`` package, at its default alpha and at alpha 0.999). Each returns
its top findings as :class:`_planted.Finding` rows, so the same :func:`_planted.match` scores
them and the project's ``discover``.

A helper module (its name starts with ``_``), not a bench script.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from _planted import Finding

WORD = re.compile(r"(?u)[\w']+")
WORD_AND_MARK = re.compile(r"(?u)[\w']+|\?")  # "?" kept as a token
SLICELINE_ALPHAS = {"default": 0.6, "tuned": 0.999}  # 0.6: Slicefinder's default alpha
SLICELINE_MIN_SUP = 10  # Slicefinder's default min_sup
SLICELINE_MAX_L = 2  # predicates per slice (the package's default is 4; 2 keeps it minutes-free)


def errors_of(predicted: Sequence[str], gold: Sequence[str]) -> np.ndarray:
    """1 where the task model's top label is not the gold label."""
    return np.array([p != g for p, g in zip(predicted, gold, strict=True)], dtype=bool)


def _examples(texts: Sequence[str], rows: np.ndarray, errors: np.ndarray, k: int = 10
              ) -> list[str]:
    """The first ``k`` failing texts among ``rows`` (what a user reads of the finding)."""
    return [texts[i] for i in np.flatnonzero(rows & errors)[:k]]


def fisher_words(texts: Sequence[str], errors: np.ndarray, *, question_mark: bool,
                 top: int = 10) -> list[Finding]:
    """The per-word Fisher baseline: for every token of the labelled texts, a one-sided
    Fisher exact test of "the sentence holds it" against "the model errs" (2x2 table over all
    texts), the ``top`` smallest p-values first (ties: more errors first). Tokens are words
    (lowercased), and "?" when ``question_mark``."""
    from scipy.stats import fisher_exact

    pattern = WORD_AND_MARK if question_mark else WORD
    where: dict[str, set[int]] = {}
    for i, t in enumerate(texts):
        for tok in set(pattern.findall(t.lower())):
            where.setdefault(tok, set()).add(i)
    n, n_err = len(texts), int(errors.sum())
    scored = []
    for tok, rows in where.items():
        a = int(sum(errors[i] for i in rows))
        if a == 0:
            continue
        b = len(rows) - a
        p = fisher_exact([[a, b], [n_err - a, n - n_err - b]], alternative="greater")[1]
        scored.append((float(p), -a, tok))
    scored.sort()
    out = []
    for rank, (_, _, tok) in enumerate(scored[:top], start=1):
        mask = np.zeros(n, dtype=bool)
        mask[list(where[tok])] = True
        out.append(Finding(rank, "fisher", tok, [tok], _examples(texts, mask, errors)))
    return out


def sliceline_features(texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The table a user gives SliceLine for text: one column per token (words and "?") seen
    in at least ``SLICELINE_MIN_SUP`` texts, 1 absent / 2 present, and a length column (the
    quartile of the word count, 1-4)."""
    toks = [set(WORD_AND_MARK.findall(t.lower())) for t in texts]
    counts: dict[str, int] = {}
    for ts in toks:
        for tok in ts:
            counts[tok] = counts.get(tok, 0) + 1
    vocab = sorted(t for t, c in counts.items() if c >= SLICELINE_MIN_SUP)
    x = np.ones((len(texts), len(vocab) + 1), dtype=np.int64)
    col = {t: j for j, t in enumerate(vocab)}
    for i, ts in enumerate(toks):
        for tok in ts:
            if tok in col:
                x[i, col[tok]] = 2
    words = np.array([len(t.split()) for t in texts])
    x[:, -1] = 1 + np.searchsorted(np.quantile(words, [0.25, 0.5, 0.75]), words, side="right")
    return x, [*vocab, "length quartile"]


def sliceline(texts: Sequence[str], errors: np.ndarray, *, alpha: float, top: int = 10,
              features: tuple[np.ndarray, list[str]] | None = None) -> list[Finding]:
    """SliceLine (``sliceline.Slicefinder``, k=``top``, the package's min_sup, max_l
    ``SLICELINE_MAX_L``) over :func:`sliceline_features`; a slice's terms are the tokens
    its predicates say are present, its examples the failing texts in it."""
    import warnings

    from sliceline import Slicefinder

    x, names = features or sliceline_features(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sliceline warns when numba is missing (the plain path)
        sf = Slicefinder(alpha=alpha, k=top, max_l=SLICELINE_MAX_L,
                         min_sup=SLICELINE_MIN_SUP, verbose=False)
        sf.fit(x, errors.astype(np.float64))
    if sf.top_slices_ is None or len(sf.top_slices_) == 0:
        return []
    masks = np.asarray(sf.transform(x), dtype=bool)
    out = []
    for j, row in enumerate(sf.top_slices_[:top]):
        terms, parts = [], []
        for name, value in zip(names, row, strict=True):
            if value is None or (isinstance(value, float) and np.isnan(value)):
                continue
            if name == "length quartile":
                parts.append(f"length quartile {int(value)}")
            else:
                parts.append(f"{name}={'yes' if int(value) == 2 else 'no'}")
                if int(value) == 2:
                    terms.append(name)
        out.append(Finding(j + 1, "sliceline", " & ".join(parts), terms,
                           _examples(texts, masks[:, j], errors)))
    return out


def run_peers(texts: Sequence[str], gold: Sequence[str], predicted: Sequence[str]
              ) -> dict[str, tuple[list[Finding], dict[str, Any]]]:
    """Every peer on one labelled set: its findings and what it was run with."""
    import time

    errors = errors_of(predicted, gold)
    out: dict[str, tuple[list[Finding], dict[str, Any]]] = {}
    for name, qm in (("Fisher per word", False), ('Fisher per word, "?" a token', True)):
        t0 = time.perf_counter()
        found = fisher_words(texts, errors, question_mark=qm)
        out[name] = (found, {"seconds": round(time.perf_counter() - t0, 1)})
    features = sliceline_features(texts)
    for which, alpha in SLICELINE_ALPHAS.items():
        t0 = time.perf_counter()
        found = sliceline(texts, errors, alpha=alpha, features=features)
        out[f"SliceLine alpha {alpha:g} ({which})"] = (found, {
            "seconds": round(time.perf_counter() - t0, 1), "alpha": alpha,
            "min_sup": SLICELINE_MIN_SUP, "max_l": SLICELINE_MAX_L,
            "columns": len(features[1])})
    return out
