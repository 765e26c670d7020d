"""N-gram mining: which words and phrases are over-represented in the hard subset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from discovery._artifacts import HARD
from discovery._stats import (
    benjamini_hochberg,
    fisher_enrichment,
    g_test,
    log_odds_dirichlet,
    wilson_interval,
)
from synth.core import ConfigError, DataError

# Words are runs of letters, digits, underscores and apostrophes, so "n't" and "don't" stay
# tokens (the packaged Rotten Tomatoes text is tokenized as "does n't").
TOKEN_PATTERN = r"(?u)[\w']+"
# Negations and contrast words carry sentiment; they are never treated as stopwords.
KEEP_WORDS = frozenset({"not", "no", "nor", "never", "nothing", "none", "nobody", "nowhere",
                        "neither", "cannot", "without", "but", "although", "though", "however",
                        "n't", "very", "too", "enough", "least", "less", "more", "most",
                        "few", "only", "against"})

# Each ranking statistic's column in the n-gram table, and whether smaller is stronger.
SORT_KEYS = {
    "z": ("z", False),
    "log_odds": ("log_odds", False),
    "frequency": ("hard_count", False),
    "q_value": ("q_value", True),
    "disagreement": ("disagreement_rate", False),
    "divergence": ("mean_divergence", False),
}


def english_stopwords() -> frozenset[str]:
    """scikit-learn's English stopwords without negations and contrast words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) - KEEP_WORDS


class NgramMiner:
    """Mines 1- to 4-grams over-represented in a hard subset against the whole corpus.

    Counts are documents (binary): an n-gram counts once per sentence. The vocabulary is the
    n-grams found in at least ``min_support`` hard sentences; the whole corpus is counted
    with it in one sparse matrix (scikit-learn's CountVectorizer).

    Args:
        ngram_range: (shortest, longest) n-gram in words.
        min_support: minimum number of hard sentences containing an n-gram.
        statistic: sort key of ``table_`` (``z``, ``log_odds``, ``frequency``, ``q_value``,
            ``disagreement``, ``divergence``).
        test: ``fisher`` (one-sided, enrichment) or ``g`` (two-sided G-test).
        prior_strength: pseudo-documents of the informative Dirichlet prior.
        stopwords: ``english``, ``none`` or a list; n-grams made only of them are dropped.
        drop_subsumed: drop an n-gram that occurs in exactly the same sentences as a longer
            n-gram containing it.
        max_examples: example ids kept per n-gram (highest-ranked hard sentences first).

    Attributes (after ``fit``):
        table_: a pandas DataFrame, one row per n-gram, sorted by ``statistic``.
        n_hard_, n_corpus_: sentence counts.
    """

    def __init__(self, ngram_range: tuple[int, int] = (1, 4), *, min_support: int = 3,
                 statistic: str = "z", test: str = "fisher", prior_strength: float = 100.0,
                 stopwords: str | Sequence[str] = "english", drop_subsumed: bool = True,
                 max_examples: int = 5) -> None:
        self.ngram_range = ngram_range
        self.min_support = min_support
        self.statistic = statistic
        self.test = test
        self.prior_strength = prior_strength
        self.stopwords = stopwords
        self.drop_subsumed = drop_subsumed
        self.max_examples = max_examples

    def _validate(self) -> None:
        lo, hi = self.ngram_range
        if not 1 <= lo <= hi:
            raise ConfigError(f"The 'ngram_range' parameter of NgramMiner must satisfy "
                              f"1 <= min <= max. Got {self.ngram_range} instead.")
        if self.statistic not in SORT_KEYS:
            raise ConfigError(f"The 'statistic' parameter of NgramMiner must be one of "
                              f"{', '.join(SORT_KEYS)}. Got {self.statistic!r} instead.")
        if self.test not in ("fisher", "g"):
            raise ConfigError(f"The 'test' parameter of NgramMiner must be 'fisher' or 'g'. "
                              f"Got {self.test!r} instead.")

    def _stopword_set(self) -> frozenset[str]:
        if self.stopwords == "english":
            return english_stopwords()
        if self.stopwords == "none":
            return frozenset()
        if isinstance(self.stopwords, str):
            raise ConfigError(f"The 'stopwords' parameter of NgramMiner must be 'english', "
                              f"'none' or a list of words. Got {self.stopwords!r} instead.")
        return frozenset(w.lower() for w in self.stopwords)

    def fit(
        self,
        texts: Sequence[str],
        hard_indices: Sequence[int],
        *,
        ids: Sequence[str] | None = None,
        divergence: np.ndarray | None = None,
        disagree: np.ndarray | None = None,
    ) -> NgramMiner:
        """Mine ``texts`` (the whole corpus) for n-grams enriched in ``hard_indices``.

        Args:
            texts: every corpus sentence.
            hard_indices: the hard subset as indices into ``texts``, rank order.
            ids: sentence ids (for examples); default: the indices as text.
            divergence: per-sentence divergence (for the mean divergence column).
            disagree: per-sentence task/reference top-label disagreement (for the rate).

        Raises:
            DataError: the hard subset is empty, or is the whole corpus.
        """
        from sklearn.feature_extraction.text import CountVectorizer

        self._validate()
        hard = np.asarray(hard_indices, dtype=np.int64)
        n_all = len(texts)
        if len(hard) == 0:
            raise DataError("cannot mine an empty hard subset", where=HARD.file,
                            fix="rank with a larger ranking.top_k / top_fraction, or a "
                                "lower ranking.min_reference_margin")
        if len(hard) >= n_all:
            raise DataError("the hard subset is the whole corpus; nothing to compare against",
                            where="ranking", fix="keep a smaller top_k or top_fraction")
        ids = [str(i) for i in range(n_all)] if ids is None else list(ids)
        self.n_hard_, self.n_corpus_ = len(hard), n_all
        vec = CountVectorizer(ngram_range=tuple(self.ngram_range), binary=True, lowercase=True,
                              token_pattern=TOKEN_PATTERN, min_df=self.min_support,
                              dtype=np.int32)
        try:
            vec.fit([texts[i] for i in hard])
        except ValueError:  # no n-gram reaches min_support
            self.table_ = self._empty_table()
            return self
        vocab = vec.get_feature_names_out()
        X = vec.transform(texts).tocsc()  # noqa: N806  (sentences x n-grams, binary)
        y_all = np.asarray(X.sum(axis=0)).ravel()
        y_hard = np.asarray(X[hard].sum(axis=0)).ravel()
        keep = self._keep(vocab, y_hard, y_all)
        X, vocab, y_all, y_hard = X[:, keep], vocab[keep], y_all[keep], y_hard[keep]  # noqa: N806
        if len(vocab) == 0:
            self.table_ = self._empty_table()
            return self
        n_hard, n_rest = len(hard), n_all - len(hard)
        y_rest = y_all - y_hard
        log_odds, z = log_odds_dirichlet(y_hard, n_hard, y_rest, n_rest, y_all / n_all,
                                         self.prior_strength)
        p = (fisher_enrichment(y_hard, n_hard, y_all, n_all) if self.test == "fisher"
             else g_test(y_hard, n_hard, y_rest, n_rest))
        columns: dict[str, Any] = {
            "ngram": vocab,
            "n": np.array([v.count(" ") + 1 for v in vocab]),
            "hard_count": y_hard,
            "corpus_count": y_all,
            "hard_frequency_rank": _dense_rank_desc(y_hard),
            "hard_share": y_hard / n_hard,
            "corpus_share": y_all / n_all,
            "log_odds": log_odds,
            "z": z,
            "p_value": p,
            "q_value": benjamini_hochberg(p),
        }
        if disagree is not None:
            k = X.T @ np.asarray(disagree, dtype=np.float64)
            lo, hi = wilson_interval(k, y_all)
            columns.update(disagreement_rate=k / y_all, disagreement_lo=lo, disagreement_hi=hi)
        if divergence is not None:
            columns["mean_divergence"] = (X.T @ np.asarray(divergence, dtype=np.float64)) / y_all
        columns["examples"] = self._examples(X[hard].tocsc(), [ids[i] for i in hard])
        self.table_ = self._sorted(columns)
        return self

    def _keep(self, vocab: np.ndarray, y_hard: np.ndarray, y_all: np.ndarray) -> np.ndarray:
        """Mask of n-grams to keep: not stopword-only, not subsumed by a longer n-gram."""
        stop = self._stopword_set()
        keep = np.array([not all(w in stop for w in g.split(" ")) for g in vocab], dtype=bool)
        if self.drop_subsumed:
            index = {g: i for i, g in enumerate(vocab)}
            lo = self.ngram_range[0]
            for j, g in enumerate(vocab):
                words = g.split(" ")
                for size in range(lo, len(words)):
                    for s in range(len(words) - size + 1):
                        i = index.get(" ".join(words[s:s + size]))
                        # h contains g, so docs(h) is a subset of docs(g): equal counts mean
                        # g never occurs outside h.
                        if i is not None and y_all[i] == y_all[j] and y_hard[i] == y_hard[j]:
                            keep[i] = False
        return keep

    def _examples(self, X_hard: Any, hard_ids: list[str]) -> list[list[str]]:  # noqa: N803
        """Per n-gram, the ids of the first hard sentences (rank order) that contain it."""
        m = self.max_examples
        indptr, rows = X_hard.indptr, X_hard.indices
        out = []
        for j in range(X_hard.shape[1]):
            col = np.sort(rows[indptr[j]:indptr[j + 1]])[:m]
            out.append([hard_ids[r] for r in col])
        return out

    def _sorted(self, columns: dict[str, Any]) -> Any:
        import pandas as pd

        table = pd.DataFrame(columns)
        key, ascending = SORT_KEYS[self.statistic]
        if key not in table:
            raise ConfigError(f"statistic {self.statistic!r} needs per-sentence "
                              f"{'divergences' if key == 'mean_divergence' else 'disagreement'}",
                              where="mining.statistic", fix="pass them to fit()")
        table = table.sort_values([key, "hard_count", "ngram"],
                                  ascending=[ascending, False, True], kind="mergesort")
        return table.reset_index(drop=True)

    @staticmethod
    def _empty_table() -> Any:
        import pandas as pd

        return pd.DataFrame({c: [] for c in (
            "ngram", "n", "hard_count", "corpus_count", "hard_frequency_rank", "hard_share",
            "corpus_share", "log_odds", "z", "p_value", "q_value", "examples")})

    def to_records(self) -> list[dict[str, Any]]:
        """The table as JSON-ready records (ngram first, examples last)."""
        out = []
        for row in self.table_.to_dict(orient="records"):
            rec = {}
            for k, v in row.items():
                if isinstance(v, np.integer):
                    v = int(v)
                elif isinstance(v, np.floating | float):
                    v = float(v)
                rec[k] = v
            out.append(rec)
        return out


def _dense_rank_desc(values: np.ndarray) -> np.ndarray:
    """1 for the largest value; ties share a rank (competition ranking, "min")."""
    from scipy.stats import rankdata

    return rankdata(-np.asarray(values), method="min").astype(np.int64)
