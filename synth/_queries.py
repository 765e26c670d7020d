"""Query sampling: short word windows drawn from seed documents with explicit seeded RNGs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from synth._config import QueryConfig
from synth._corpus import Document
from synth.core._errors import DataError
from synth.core._seeds import derive_rng


@dataclass(frozen=True)
class Query:
    """One sampled query: its global index, text and the seed document it came from."""

    index: int
    text: str
    doc_index: int


class QuerySampler:
    """Draws the query for any global prompt index, independently of every other index.

    Query ``i`` comes from ``derive_rng(seed, "query", i)`` alone, so any shard (or
    any process of an array job) can draw its queries without drawing the others first.

    Strategies:
        ``first-k``: the first k words of a random document (the original SynthEval code).
        ``random-k``: k consecutive words from a random sentence of a random document that
        has one of at least k words (the paper's description).

    Raises:
        DataError: no document has enough words for k (and min_doc_words).
    """

    def __init__(self, docs: Sequence[Document], cfg: QueryConfig, seed: int) -> None:
        self.cfg = cfg
        self.seed = seed
        self._docs = docs
        need = max(cfg.k, cfg.min_doc_words)
        self._eligible = [i for i, d in enumerate(docs) if len(d.text.split()) >= need]
        if not self._eligible:
            longest = max((len(d.text.split()) for d in docs), default=0)
            raise DataError(
                f"no seed document has {need} words (the longest has {longest})",
                where="queries.k / queries.min_doc_words",
                fix=f"lower queries.k (now {cfg.k}) or min_doc_words, or use a longer corpus",
            )
        self._sentences: dict[int, list[list[str]]] = {}

    @property
    def num_eligible(self) -> int:
        """How many documents are long enough to draw queries from."""
        return len(self._eligible)

    def query(self, index: int) -> Query:
        """Return the query for global prompt ``index``."""
        rng = derive_rng(self.seed, "query", index)
        doc_index = self._eligible[rng.randrange(len(self._eligible))]
        words = self._docs[doc_index].text.split()
        k = self.cfg.k
        if self.cfg.strategy == "first-k":
            return Query(index, " ".join(words[:k]), doc_index)
        candidates = [s for s in self._doc_sentences(doc_index) if len(s) >= k]
        if not candidates:  # only multi-sentence windows are long enough
            candidates = [words]
        sentence = candidates[rng.randrange(len(candidates))]
        start = rng.randrange(len(sentence) - k + 1)
        return Query(index, " ".join(sentence[start : start + k]), doc_index)

    def queries(self, indices: Sequence[int] | range) -> list[Query]:
        """Return the queries for several global indices, in order."""
        return [self.query(i) for i in indices]

    def _doc_sentences(self, doc_index: int) -> list[list[str]]:
        if doc_index not in self._sentences:
            from synth._segment import split_sentences

            text = self._docs[doc_index].text
            self._sentences[doc_index] = [s.split() for s in split_sentences(text)]
        return self._sentences[doc_index]
