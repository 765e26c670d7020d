"""read_labeled_file reads through synth.core.iter_records."""

from __future__ import annotations

from pathlib import Path

import pytest

from discovery import read_labeled_file
from synth.core import DataError

LABELS = ["negative", "positive"]


def test_csv_and_jsonl_give_texts_and_label_names(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("text,label\nbad,0\ngood,positive\n", encoding="utf-8")
    (tmp_path / "d.jsonl").write_text('{"text": "bad", "label": 0}\n\n'
                                      '{"text": "good", "label": "positive"}\n', encoding="utf-8")
    for name in ("d.csv", "d.jsonl"):
        data = read_labeled_file(tmp_path / name, LABELS)
        assert (list(data.texts), list(data.labels)) == (["bad", "good"],
                                                         ["negative", "positive"])


def test_undecodable_csv_names_the_file_and_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"text,label\ncaf\xe9,0\n")
    with pytest.raises(DataError, match=r"labeled data file is not valid utf-8 text \(byte 0xe9 "
                                        r"at byte offset 14\) \(.*d.csv\)"):
        read_labeled_file(path, LABELS)


def test_unknown_format_and_missing_field_name_what_exists(tmp_path: Path) -> None:
    (tmp_path / "d.xlsx").write_text("text\tlabel\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"unknown labeled data format '.xlsx'.*use .jsonl, "
                                        r".csv or .tsv"):
        read_labeled_file(tmp_path / "d.xlsx", LABELS)
    (tmp_path / "d.csv").write_text("text\nbad\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"CSV has no column 'label' \(its columns: text\) "
                                        r"\(.*d.csv\): set evaluation.label_field"):
        read_labeled_file(tmp_path / "d.csv", LABELS)
    (tmp_path / "d.csv").write_text("text,label\nbad\n", encoding="utf-8")  # a short row
    with pytest.raises(DataError, match=r"example lacks 'label' \(its fields: text, label\) "
                                        r"\(.*d.csv, row 1\)"):
        read_labeled_file(tmp_path / "d.csv", LABELS)
    (tmp_path / "d.jsonl").write_text('{"body": "bad", "label": 0}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"example lacks 'text' \(its fields: body, label\) "
                                        r"\(.*d.jsonl, line 1\): .*set evaluation.text_field"):
        read_labeled_file(tmp_path / "d.jsonl", LABELS)
