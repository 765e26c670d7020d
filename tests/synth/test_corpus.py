from __future__ import annotations

from pathlib import Path

import pytest

from synth import SeedCorpusConfig, load_movie_reviews, load_seed_corpus
from synth.core import DataError


def test_jsonl_csv_txt(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"body": "one two"}\n\n{"body": "three<br />four"}\n')
    (tmp_path / "a.csv").write_text('id,review\n1,"hello, world"\n2,bye\n')
    (tmp_path / "a.txt").write_text("first line\nsecond line\n\n")
    docs = load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.jsonl"), text_field="body"))
    assert [d.text for d in docs] == ["one two", "three four"]
    docs = load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.csv"), text_field="review"))
    assert [d.text for d in docs] == ["hello, world", "bye"]
    docs = load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.txt"), limit=1))
    assert [d.text for d in docs] == ["first line"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"corpus file not found \(.*nope.jsonl\)"):
        load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "nope.jsonl")))


def test_csv_without_column_lists_columns(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("id,review\n1,x\n")
    with pytest.raises(DataError, match=r"CSV has no column 'text'.*one of: id, review"):
        load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.csv")))


def test_jsonl_without_field_names_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "ok"}\n{"body": "x"}\n')
    with pytest.raises(DataError, match=r"no field 'text'.*line 2"):
        load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.jsonl")))


def test_empty_corpus(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("\n \n")
    with pytest.raises(DataError, match="the seed corpus is empty"):
        load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.txt")))


def test_packaged_corpora() -> None:
    imdb = load_movie_reviews("imdb")
    rt = load_movie_reviews("rotten_tomatoes")
    assert len(imdb) == 25_000 and len(rt) == 8_530
    assert not any("<br" in d.text for d in imdb[:2000])
    assert {d.label for d in rt} == {"negative", "positive"}
    with pytest.raises(DataError, match="did you mean 'imdb'"):
        load_movie_reviews("imbd")


def test_a_utf8_bom_never_breaks_the_first_column(tmp_path: Path) -> None:
    """Issue 19: Excel's BOM was read into the first column's name (``\\ufefftext``)."""
    (tmp_path / "a.csv").write_bytes(b"\xef\xbb\xbftext,label\nA good film,positive\n")
    docs = load_seed_corpus(SeedCorpusConfig(source=str(tmp_path / "a.csv")))
    assert [d.text for d in docs] == ["A good film"]
