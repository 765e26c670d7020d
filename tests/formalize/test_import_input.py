"""`synthcheck import` on bad files (issue 19): non-UTF-8 bytes, a BOM, short rows, no test
rows, one label. Each is one ``error:`` line, exit 2, and no suite file written."""

from __future__ import annotations

import pytest

from synthcheck.cli import main

ADATEST = "topic,input,output,label,labeler,description\n"
HATECHECK = "functionality,test_case,label_gold,case_templ\n"


def run_import(tmp_path, fmt, name, data: bytes, *extra):
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out.yaml"
    code = main(["import", "--format", fmt, "--in", str(path), "--out", str(out), *extra])
    return code, path, out


@pytest.mark.parametrize("fmt,kind,header", [
    ("capability-csv", "capability CSV", "capability,label,template\n"),
    ("adatest", "AdaTest CSV", ADATEST),
    ("hatecheck", "HateCheck cases CSV", HATECHECK),
])
def test_non_utf8_files_name_the_byte_offset(tmp_path, capsys, fmt, kind, header):
    data = header.encode() + "caf\xe9,0,x\n".encode("latin-1")
    code, path, out = run_import(tmp_path, fmt, "in.csv", data)
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == (
        f"error: {kind} is not valid utf-8 text (byte 0xe9 at byte offset {len(header) + 3}) "
        f"({path}): convert it to utf-8, or set --encoding to its encoding; a binary file is "
        f"not a valid input\n")
    # --encoding reads it (the import then fails or succeeds on its content, not its bytes).
    code, _, _ = run_import(tmp_path, fmt, "in.csv", data, "--encoding", "latin-1")
    assert "not valid utf-8" not in capsys.readouterr().err


def test_an_unknown_encoding_names_the_flag(tmp_path, capsys):
    code, _, out = run_import(tmp_path, "adatest", "in.csv", ADATEST.encode(),
                              "--encoding", "klingon")
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == (
        "error: unknown encoding 'klingon' (use e.g. utf-8, latin-1, cp1252) (--encoding): use "
        "a Python codec name such as utf-8, latin-1 or cp1252\n")


def test_a_bom_never_breaks_a_column_name(tmp_path, capsys):
    data = b"\xef\xbb\xbfcapability,label,template\nVocab,positive,This is good.\n" \
           b"Vocab,negative,This is bad.\n"
    code, _, out = run_import(tmp_path, "capability-csv", "in.csv", data)
    assert code == 0, capsys.readouterr().err
    assert "capability: Vocab" in out.read_text()


def test_a_hatecheck_row_missing_trailing_columns(tmp_path, capsys):
    data = (HATECHECK + "derog_neg_emote_h,I hate women.,hateful,I hate [IDENTITY_P].\n"
            "derog_neg_emote_h,I hate men.\n").encode()
    code, path, out = run_import(tmp_path, "hatecheck", "test_suite_cases.csv", data)
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == (
        f"error: row 2 has 2 columns, expected 4 ({path}, line 3): give every row the "
        f"header's 4 columns (functionality, test_case, label_gold, case_templ), empty ones "
        f"as ,,\n")


@pytest.mark.parametrize("body", ["", "/Neg,,,topic_marker,,about negation\n"])
def test_adatest_without_test_rows(tmp_path, capsys, body):
    code, path, out = run_import(tmp_path, "adatest", "tree.csv", (ADATEST + body).encode())
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == (
        f"error: the AdaTest file has no test rows ({path}): check that it is the right file "
        f"(it needs rows that hold test cases)\n")


def test_one_label_asks_for_labels(tmp_path, capsys):
    data = (ADATEST + "/Neg/simple,This is bad.,negative,pass,me,\n").encode()
    code, path, out = run_import(tmp_path, "adatest", "tree.csv", data)
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == (
        f"error: only one label found (negative); a suite needs at least 2 ({path}): pass "
        f"--labels a,b naming every label of the task (e.g. --labels negative,positive)\n")
    code, _, out = run_import(tmp_path, "adatest", "tree.csv", data,
                              "--labels", "negative,positive")
    assert code == 0 and "labels:\n- negative\n- positive\n" in out.read_text()
