"""Atomic writes: output files get the permissions a plain open() would give them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from synth.core import DataError, append_jsonl, iter_records, write_json_atomic, write_jsonl
from synth.core._io import atomic_open, current_umask

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)

    def set_umask(value: int) -> None:
        os.umask(value)

    yield set_umask
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600),
                                                (0o002, 0o664)], ids=["022", "077", "002"])
def test_atomic_writes_honour_umask(tmp_path: Path, umask, mask: int, expected: int) -> None:
    umask(mask)
    assert current_umask() == mask
    write_json_atomic(tmp_path / "manifest.json", {"a": 1})
    write_jsonl(tmp_path / "scores" / "task.jsonl", [{"id": "1"}])
    with atomic_open(tmp_path / "model.bin", "wb") as handle:
        handle.write(b"\0")
    append_jsonl(tmp_path / "review" / "decisions.jsonl", {"id": "1"})
    with open(tmp_path / "plain.txt", "w") as handle:
        handle.write("x")
    for name in ["manifest.json", "scores/task.jsonl", "model.bin",
                 "review/decisions.jsonl", "plain.txt"]:
        assert _mode(tmp_path / name) == expected, name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_rewrite_keeps_umask_mode_and_failed_write_leaves_file(tmp_path: Path, umask) -> None:
    umask(0o022)
    target = tmp_path / "hard.jsonl"
    write_jsonl(target, [{"id": "a"}])
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("partial")
        raise RuntimeError("boom")
    assert target.read_text(encoding="utf-8") == '{"id": "a"}\n'
    assert _mode(target) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["hard.jsonl"]


def test_current_umask_without_proc(monkeypatch: pytest.MonkeyPatch, umask) -> None:
    umask(0o027)
    real_open = open

    def no_proc(file, *args, **kwargs):
        if str(file) == "/proc/self/status":
            raise FileNotFoundError(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_proc)
    assert current_umask() == 0o027
    umask(0o022)
    assert current_umask() == 0o022


def test_iter_records_reads_jsonl_by_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"text": "a", "n": 1}\r\n\n{"text": "b"}\n')
    records = iter_records(path)
    assert records.columns is None
    assert list(records) == [(1, {"text": "a", "n": 1}), (3, {"text": "b"})]
    (tmp_path / "bad.json").write_text('{"text": "a"}\n[1]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"line is not a JSON object \(.*bad.json, line 2\)"):
        list(iter_records(tmp_path / "bad.json"))


def test_iter_records_reads_csv_and_tsv_rows(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text('text,label\n"a, b",pos\nc,neg\n', encoding="utf-8")
    records = iter_records(tmp_path / "r.csv")
    assert records.columns == ["text", "label"]
    assert list(records) == [(1, {"text": "a, b", "label": "pos"}),
                             (2, {"text": "c", "label": "neg"})]
    (tmp_path / "r.tsv").write_text("text\tlabel\na, b\tpos\n", encoding="utf-8")
    assert list(iter_records(tmp_path / "r.tsv")) == [(1, {"text": "a, b", "label": "pos"})]


def test_iter_records_reads_txt_lines_and_decodes_with_encoding(tmp_path: Path) -> None:
    path = tmp_path / "r.TXT"
    path.write_bytes("caf\u00e9  \r\n\n   \nb\n".encode("latin-1"))
    assert list(iter_records(path, encoding="latin-1", text_field="t")) == [
        (1, {"t": "caf\u00e9  "}), (4, {"t": "b"})]
    with pytest.raises(DataError, match=r"texts is not valid utf-8 text \(byte 0xe9 at byte "
                                        r"offset 3\) \(.*r.TXT\)"):
        iter_records(path, kind="texts")


def test_iter_records_refuses_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    path.write_bytes(b"x")
    with pytest.raises(DataError, match=r"unknown records file type '.parquet'.*use one of: "
                                        r".jsonl, .json, .csv, .tsv, .txt, .text"):
        iter_records(path)
    with pytest.raises(DataError, match=r"records file not found \(.*gone.csv\)"):
        iter_records(tmp_path / "gone.csv")
