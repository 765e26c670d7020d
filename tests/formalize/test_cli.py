"""The verify, validate, export and import commands; user errors exit with status 2."""

from __future__ import annotations

import json
import textwrap

import pytest

from synthcheck.cli import main

SUITE = textwrap.dedent("""\
    name: toy
    labels: [negative, positive]
    tests:
      - {name: adj, type: mft, template: "This {NOUN} is {POS_ADJ}.", label: positive}
      - {name: typo, type: inv, template: "This {NOUN} is good.", perturb: [typo], sample: 10}
    """)

TOY_MODEL = textwrap.dedent("""\
    def predict(texts):
        return [{"positive": 0.9 if "good" in t else 0.2, "negative": 0.1 if "good" in t else 0.8}
                for t in texts]
    """)


@pytest.fixture
def files(tmp_path, monkeypatch):
    (tmp_path / "toy.yaml").write_text(SUITE)
    (tmp_path / "toy_model_mod.py").write_text(TOY_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_validate_prints_counts(files, capsys):
    assert main(["validate", "--suite", str(files / "toy.yaml")]) == 0
    out = capsys.readouterr().out
    assert "adj" in out and "2,988" in out and "total: up to 2,998 cases" in out


def test_verify_writes_outputs_and_prints_side_by_side(files, capsys):
    run = files / "run"
    code = main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                 "python:toy_model_mod:predict", "--model", "python:toy_model_mod:predict",
                 "--run", str(run), "--sample", "20", "--seed", "3"])
    assert code == 0
    out = capsys.readouterr().out
    assert "M1 = python:toy_model_mod:predict" in out and "per capability" in out
    base = run / "verify" / "toy"
    assert {p.name for p in base.iterdir()} >= {"cases.jsonl", "summary.csv", "summary.json",
                                                "fills.csv", "groups.csv", "examples.jsonl"}
    meta = json.loads((base / "summary.json").read_text())
    assert meta["sample"] == 20 and meta["seed"] == 3 and meta["config_hash"]


def test_user_errors_exit_2_and_keep_outputs(files, capsys):
    run = files / "run"
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                 "python:toy_model_mod:predict", "--run", str(run)]) == 0
    before = (run / "verify" / "toy" / "cases.jsonl").read_bytes()
    capsys.readouterr()
    # Over the case limit: refused before any model is loaded or any file is touched.
    code = main(["verify", "--suite", str(files / "toy.yaml"), "--model", "python:nope:nope",
                 "--run", str(run), "--max-cases", "100"])
    err = capsys.readouterr().err
    assert code == 2 and "expansion would produce 2,998 cases, over the limit of 100" in err
    assert (run / "verify" / "toy" / "cases.jsonl").read_bytes() == before
    bad = files / "bad.yaml"
    bad.write_text(SUITE.replace("{POS_ADJ}", "{POS_ADJJ}"))
    assert main(["validate", "--suite", str(bad)]) == 2
    assert "error: undefined placeholder {POS_ADJJ} at column 16" in capsys.readouterr().err


def test_export_and_import_commands(files, capsys):
    out = files / "hc"
    assert main(["export", "--suite", str(files / "toy.yaml"), "--format", "hatecheck",
                 "--out", str(out)]) == 0
    assert "left out (no gold labels in this format): typo" in capsys.readouterr().out
    suite_out = files / "back.yaml"
    assert main(["import", "--format", "hatecheck", "--in", str(out), "--labels",
                 "negative,positive", "--out", str(suite_out)]) == 0
    assert "1 tests, 2,988 cases" in capsys.readouterr().out
    assert main(["export", "--suite", str(files / "toy.yaml"), "--format", "native-cases",
                 "--out", str(files / "cases.jsonl")]) == 0
    (files / "nolabel.csv").write_text(",capability,template\n")
    before = suite_out.read_bytes()
    assert main(["import", "--format", "capability-csv", "--in", str(files / "nolabel.csv"),
                 "--out", str(suite_out)]) == 2
    assert "capability CSV has no column 'label'" in capsys.readouterr().err
    assert suite_out.read_bytes() == before
