"""CI gates: verify --max-fail-rate / per-test max_fail_rate exit codes, JUnit XML, the
Markdown summary, and `synthcheck diff` of two models and of two runs."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET

import pytest

from synthcheck.cli import main

SUITE = textwrap.dedent("""\
    name: toy
    labels: [negative, positive]
    tests:
      - {name: adj, type: mft, template: "This {NOUN} is {POS_ADJ}.", label: positive,
         max_fail_rate: 0.95}
      - {name: negation, type: mft, template: "This {NOUN} is not <b>good</b>.",
         label: negative}
      - {name: typo, type: inv, template: "This {NOUN} is good.", perturb: [typo]}
    """)

MODELS = textwrap.dedent("""\
    def keyword(texts):
        pos = [("good" in t or " fun." in t) for t in texts]
        return [{"positive": 0.9 if p else 0.2, "negative": 0.1 if p else 0.8} for p in pos]

    def negation(texts):
        return [{"positive": 0.1 if " not " in t else 0.9, "negative": 0.9 if " not " in t else 0.1}
                for t in texts]
    """)


@pytest.fixture
def files(tmp_path, monkeypatch):
    (tmp_path / "toy.yaml").write_text(SUITE)
    (tmp_path / "gate_models.py").write_text(MODELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def verify(files, run, *models, extra=()):
    args = ["verify", "--suite", str(files / "toy.yaml"), "--run", str(files / run),
            "--sample", "30", *extra]
    for m in models:
        args += ["--model", f"python:gate_models:{m}"]
    return main(args)


def test_max_fail_rate_exit_codes_and_per_test_gate(files, capsys):
    # keyword fails 'adj' on 27/30 fills (0.90 <= its own gate 0.95) and 'typo' on some:
    # no flag, no exceeded gate.
    assert verify(files, "r0", "keyword") == 0
    assert "gate exceeded" not in capsys.readouterr().err
    # The flag gates the tests without their own gate; 'adj' keeps its 0.95.
    assert verify(files, "r1", "keyword", extra=["--max-fail-rate", "0.05"]) == 1
    err = capsys.readouterr().err
    assert "gate exceeded: typo [python:gate_models:keyword]" in err
    assert "gate exceeded: adj" not in err
    assert verify(files, "r2", "negation", extra=["--max-fail-rate", "0.05"]) == 0
    assert verify(files, "r3", "keyword", extra=["--max-fail-rate", "1"]) == 0
    # A rate outside 0..1 is refused by argparse (status 2) before anything runs.
    with pytest.raises(SystemExit) as exc:
        verify(files, "r4", "keyword", extra=["--max-fail-rate", "1.5"])
    assert exc.value.code == 2
    assert not (files / "r4").exists()


def test_junit_xml_parses_with_one_testcase_per_test(files, capsys):
    junit = files / "out" / "junit.xml"
    assert verify(files, "run", "keyword", "negation",
                  extra=["--max-fail-rate", "0.1", "--junit", str(junit)]) == 1
    root = ET.parse(junit).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["toy [python:gate_models:keyword]",
                                               "toy [python:gate_models:negation]"]
    kw = suites[0]
    assert [c.get("name") for c in kw.findall("testcase")] == ["adj", "negation", "typo"]
    assert kw.get("tests") == "3" and kw.get("failures") == "2"
    failed = {c.get("name"): c.find("failure") for c in kw.findall("testcase")}
    assert failed["adj"] is None  # 27/30 is under its own 0.95
    assert failed["negation"].get("message").startswith("fail rate 1.000 (30/30 cases")
    # The failure lists the worst examples: texts the model got wrong, most confident first.
    lines = failed["negation"].text.splitlines()
    assert 1 <= len(lines) <= 5
    assert all("expected negative, predicted positive" in line for line in lines)
    assert suites[1].get("failures") == "0"
    try:
        import junitparser
    except ImportError:
        return
    xml = junitparser.JUnitXml.fromfile(str(junit))
    assert sum(1 for s in xml for _ in s) == 6


def test_markdown_summary_is_escaped_and_names_the_failures(files, capsys):
    md = files / "summary.md"
    assert verify(files, "run", "keyword", extra=["--max-fail-rate", "0.1",
                                                   "--markdown", str(md)]) == 1
    text = md.read_text()
    assert "**2 gate(s) exceeded**" in text
    assert "| negation | General | 10% | **100.0% (30/30) ✗** |" in text
    assert "### negation on python:gate_models:keyword" in text
    assert "&lt;b>" in text and "<b>" not in text  # the template's HTML is escaped


def test_diff_two_models_regressions_first_and_exit_code(files, capsys):
    assert verify(files, "run", "negation", "keyword") == 0
    capsys.readouterr()
    run = files / "run"
    assert main(["diff", str(run), "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("regression",
                                                                           "unchanged",
                                                                           "improvement"))]
    assert rows[0][:2] == ["regression", "negation"] and rows[0][2:4] == ["0.0%", "100.0%"]
    assert {r[1] for r in rows} == {"adj", "negation", "typo"}
    assert "A = python:gate_models:negation, B = python:gate_models:keyword" in out
    # Without --fail-on-regression it reports and exits 0; the other way round improves.
    assert main(["diff", str(run)]) == 0
    assert main(["diff", str(run), "--model-a", "python:gate_models:keyword", "--model-b",
                 "python:gate_models:negation", "--fail-on-regression"]) == 0
    assert "0 significant regression(s)" in capsys.readouterr().out


def test_diff_two_runs_of_one_model(files, capsys):
    assert verify(files, "a", "keyword") == 0
    assert verify(files, "b", "keyword") == 0
    capsys.readouterr()
    assert main(["diff", str(files / "a"), str(files / "b" / "verify" / "toy"),
                 "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert "(two runs)" in out and "regression " not in out
    assert main(["diff", str(files / "a"), str(files / "nothing")]) == 2
    assert "error: no such file or directory" in capsys.readouterr().err
    assert main(["diff", str(files / "a"), str(files)]) == 2
    assert "error: no verify result here" in capsys.readouterr().err
    assert main(["diff", str(files / "a")]) == 2
    assert "one result with 1 model(s): nothing to pair" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["directory", "under a file", "two missing folders"])
def test_gate_output_paths_are_checked_before_any_scoring(files, capsys, case):
    (files / "adir").mkdir()
    (files / "afile").write_text("x")
    path, message = {
        "directory": (files / "adir", "cannot write: the path is a directory, not a file"),
        "under a file": (files / "afile" / "j.xml",
                         "cannot write: a parent of the path is a file, not a folder"),
        "two missing folders": (files / "no" / "such" / "j.xml",
                                f"cannot write: the folder {files}/no/such does not exist, "
                                f"nor its parent {files}/no"),
    }[case]
    fix = {"directory": "give a file path (e.g. a new name inside that directory)",
           "under a file": f"choose another path ({files / 'afile'} is a file)",
           "two missing folders": f"create the folder first (mkdir -p {files}/no/such), or "
                                  f"write into an existing folder"}[case]
    for flag in ("--junit", "--markdown"):
        assert verify(files, "r", "keyword", extra=[flag, str(path)]) == 2
        assert capsys.readouterr().err == f"error: {message} ({flag} {path}): {fix}\n"
        assert not (files / "r").exists() and not (files / "no").exists()


def test_gate_output_into_one_missing_folder_is_created(files, capsys):
    assert verify(files, "r", "keyword", extra=["--markdown", str(files / "out" / "s.md")]) == 0
    assert (files / "out" / "s.md").read_text().startswith("#")


def test_diff_of_results_that_share_no_test_is_an_error(files, capsys):
    """Issue 19: "0 regressions" of two results that share no test passed --fail-on-regression."""
    assert verify(files, "a", "keyword") == 0
    (files / "other.yaml").write_text(SUITE.replace("name: toy", "name: other").replace(
        "name: adj", "name: adj2").replace("name: negation", "name: neg2").replace(
        "name: typo", "name: typo2"))
    assert main(["verify", "--suite", str(files / "other.yaml"), "--run", str(files / "b"),
                 "--sample", "30", "--model", "python:gate_models:keyword"]) == 0
    capsys.readouterr()
    a, b = files / "a" / "verify" / "toy" / "summary.json", \
        files / "b" / "verify" / "other" / "summary.json"
    assert main(["diff", str(files / "a"), str(files / "b"), "--fail-on-regression"]) == 2
    assert capsys.readouterr().err == (
        f"error: the two results share no scored test (A: adj, negation, typo; B: adj2, neg2, "
        f"typo2) ({a} {b}): compare results of the same suite (pick one with --suite NAME)\n")
