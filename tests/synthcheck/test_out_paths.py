"""`--out` writes (issue 28): one check for every command that writes where the user says.

An ``--out`` that is, or would replace, one of the run's own files, or another output of the
same command, is refused before any work with one ``error:`` line, exit 2 and every byte of
the run directory as it was; the atomic writer never replaces a symlink or a device.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from synth.core import DataError, check_outputs, write_text_atomic  # noqa: E402
from tests.synthcheck.runbuilder import build_run  # noqa: E402
from tests.synthcheck.test_cli_discovery import assert_user_error, cli, snapshot  # noqa: E402

SUITE_YAML = """name: mini
labels: [negative, positive]
builtin_lexicons: false
lexicons: {THING: [film, story]}
tests:
  - {name: good, capability: Vocabulary, type: mft, template: "The {THING} is great.",
     label: positive}
"""


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    return build_run(tmp_path / "run", verify=False)


@pytest.mark.parametrize("name", ["hard.jsonl", "report.html", "manifest.json",
                                  "corpus/shard-00000.jsonl", "ngrams.jsonl"])
def test_annotate_export_never_replaces_a_run_file(run: Path, name: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (run / "report.html").write_text("<html>earlier report</html>")
    before = snapshot(run)
    code, _, err = cli(["annotate", "export", "--run", run, "--format", "argilla",
                        "--out", run / name], capsys)
    assert_user_error(code, err, rf"cannot write: {name} is one of the run directory's own "
                                 r"files \(--out .*, run .*\): write outside the run directory")
    assert snapshot(run) == before


def test_annotate_export_a_new_name_in_the_run_is_fine(run: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["annotate", "export", "--run", run, "--format", "label-studio",
                        "--out", run / "tasks.json"], capsys)
    assert code == 0, err
    # A second export replaces its own tasks file and labeling config.
    code, _, err = cli(["annotate", "export", "--run", run, "--format", "label-studio",
                        "--out", run / "tasks.json"], capsys)
    assert code == 0, err


def test_label_studio_out_xml_is_its_own_config_and_a_users_xml_is_kept(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["annotate", "export", "--run", run, "--format", "label-studio",
                        "--out", tmp_path / "tasks.xml"], capsys)
    assert_user_error(code, err, r"the tasks file and its labeling config would be the same "
                                 r"file \(--out .*tasks.xml\): name the tasks file .json")
    assert not (tmp_path / "tasks.xml").exists()
    mine = tmp_path / "mine.xml"
    mine.write_text("<notes>my own</notes>")
    code, _, err = cli(["annotate", "export", "--run", run, "--format", "label-studio",
                        "--out", tmp_path / "mine.json"], capsys)
    assert_user_error(code, err, r"cannot write: mine.xml already exists and was not written "
                                 r"by this command")
    assert mine.read_text() == "<notes>my own</notes>"
    assert not (tmp_path / "mine.json").exists()


def test_report_out_never_replaces_a_run_file_nor_its_own_html(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(run)
    code, _, err = cli(["report", "--run", run, "--out", run / "hard.jsonl"], capsys)
    assert_user_error(code, err, r"cannot write: hard.jsonl is one of the run directory's own")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = cli(["report", "--run", run, "--out", out / "summary.md"], capsys)
    assert_user_error(code, err, r"--out \(summary.md beside it\) and --out would be the same "
                                 r"file")
    (out / "summary.md").write_text("my own notes\n")
    code, _, err = cli(["report", "--run", run, "--out", out / "r.html"], capsys)
    assert_user_error(code, err, r"cannot write: summary.md already exists and was not written "
                                 r"by this command \(--out \(summary.md beside it\) ")
    assert (out / "summary.md").read_text() == "my own notes\n"
    assert not (out / "r.html").exists()
    assert snapshot(run) == before
    (out / "summary.md").unlink()
    for _ in range(2):  # its own summary.md is replaced on the next report
        code, _, err = cli(["report", "--run", run, "--out", out / "r.html"], capsys)
        assert code == 0, err
    for _ in range(2):  # and the run's own report.html / summary.md
        code, _, err = cli(["report", "--run", run], capsys)
        assert code == 0, err


def test_export_train_demo_and_verify_outputs(run: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "mini.yaml"
    suite.write_text(SUITE_YAML)
    before = snapshot(run)
    code, _, err = cli(["export", "--suite", suite, "--format", "native-cases",
                        "--out", run / "hard.jsonl"], capsys)
    assert_user_error(code, err, r"hard.jsonl is one of the run directory's own files")
    code, _, err = cli(["export", "--suite", suite, "--format", "hatecheck",
                        "--out", run / "scores"], capsys)
    assert_user_error(code, err, r"scores/test_suite_cases.csv is one of the run directory's")
    code, _, err = cli(["train-demo", "--out", run / "manifest.json", "--limit", "50"], capsys)
    assert_user_error(code, err, r"manifest.json is one of the run directory's own files")
    same = tmp_path / "gate.txt"
    vrun = tmp_path / "vrun"
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--run", vrun, "--junit", same, "--markdown", same], capsys)
    assert_user_error(code, err, r"cannot write: --markdown and --junit would be the same file")
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--run", run, "--markdown", run / "eval.json"], capsys)
    assert_user_error(code, err, r"eval.json is one of the run directory's own files")
    # a new run directory (no manifest yet) is the verify's own: its folders are refused
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--run", vrun, "--junit", vrun / "verify" / "mini" / "cases.jsonl"],
                       capsys)
    assert_user_error(code, err, r"verify/mini/cases.jsonl is one of the run directory's own")
    assert not vrun.exists()
    assert snapshot(run) == before
    assert not same.exists()


def test_a_symlink_or_a_fifo_is_never_replaced(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               run: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("kept")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    with pytest.raises(DataError, match=r"cannot write: the path is a symbolic link \(to .*"
                                        r"target.txt\), not a regular file \(.*link.html\): "
                                        r"give the path of a regular file"):
        write_text_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "kept"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match=r"the path is a named pipe \(FIFO\), not a regular"):
        write_text_atomic(fifo, "new")  # refused, never opened (which would block)
    assert not fifo.is_file() and fifo.exists()
    with pytest.raises(DataError, match=r"the path is a symbolic link .* \(--out "):
        check_outputs([("--out", link)])
    code, _, err = cli(["report", "--run", run, "--out", link], capsys)
    assert_user_error(code, err, r"cannot write: the path is a symbolic link")
    assert link.is_symlink() and target.read_text() == "kept"
    assert not (tmp_path / "summary.md").exists()
