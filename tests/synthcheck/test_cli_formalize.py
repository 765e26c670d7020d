"""The verify, validate, export and import commands; user errors exit with status 2."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pandas as pd
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

    def broken(texts):
        return [{"positive": 0.5, "negative": 0.5}] * (len(texts) - 1)
    """)


LEFT_OUT = "left out (INV, DIR and group tests have no gold labels, which this format needs): "


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
    assert LEFT_OUT + "typo (inv)" in capsys.readouterr().out
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


# -- bad input at the command line -----------------------------------------------------------
def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def verified(files, capsys):
    """A run whose verify/toy outputs exist; returns (run dir, their bytes)."""
    run = files / "run"
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                 "python:toy_model_mod:predict", "--run", str(run), "--sample", "5"]) == 0
    capsys.readouterr()
    return run, snapshot(run)


# Each bad suite is named "toy", like the good one, so a verify that wrote anything would
# overwrite the existing run's outputs.
BAD_SUITES = {
    "unknown lexicon": ("""\
        name: toy
        labels: [negative, positive]
        tests:
          - name: revised
            type: inv
            template: "This {NOUN} is good."
            perturb: [{name: revision, lexicon: REVISONS}]
        """, r"unknown lexicon 'REVISONS' \({file}, test 'revised', perturb.0, line 7\): "
             r"did you mean 'REVISION'\?"),
    "unknown lexicon in a slot alias": ("""\
        name: toy
        labels: [negative, positive]
        slots: {ADJ: [POS_AJD]}
        tests:
          - {name: adj, type: mft, template: "This {NOUN} is {ADJ}.", label: positive}
        """, r"slot alias 'ADJ' names unknown lexicon 'POS_AJD' \({file}, test 'adj', template, "
             r"line 5\): did you mean 'POS_ADJ'\?"),
    "empty lexicon": ("""\
        name: toy
        labels: [negative, positive]
        lexicons:
          THING: ["", "  "]
        tests:
          - {name: adj, type: mft, template: "This {THING} is good.", label: positive}
        """, r"lexicon 'THING' is empty \(used by test 'adj'\) \({file}, lexicons.THING, "
             r"line 4\): give it at least one value"),
    "empty lexicon file": ("""\
        name: toy
        labels: [negative, positive]
        lexicons:
          DRUG: {file: drugs.txt}
        tests:
          - {name: took, type: mft, template: "I took {DRUG}.", label: positive}
        """, r"lexicon 'DRUG' is empty \(used by test 'took'\) \({file}, lexicons.DRUG, line 4: "
             r".*drugs.txt\): give it at least one value"),
    "label outside the labels": ("""\
        name: toy
        labels: [negative, positive]
        tests:
          - {name: adj, type: mft, template: "This {NOUN} is good.", label: positve}
        """, r"label 'positve' is not one of the suite's labels \(negative, positive\) "
             r"\({file}, test 'adj', label, line 4\): did you mean 'positive'\?"),
    "malformed YAML": ("""\
        name: toy
        labels: [negative, positive
        tests: []
        """, r"malformed YAML: .* \({file}, line 3\): fix the YAML syntax"),
    "unbalanced brace": ("""\
        name: toy
        labels: [negative, positive]
        tests:
          - name: adj
            type: mft
            template: "This {NOUN is good."
            label: positive
        """, r"unclosed '\{{' at column 6 in 'This \{{NOUN is good.' \({file}, test 'adj', "
             r"template, line 6\): close the placeholder with '\}}', or write '\{{\{{'"),
    "unmatched closing brace": ("""\
        name: toy
        labels: [negative, positive]
        tests:
          - {name: adj, type: mft, template: "This {NOUN} is good.}", label: positive}
        """, r"unmatched '\}}' at column 21 .*\({file}, test 'adj', template, line 4\): write "
             r"'\}}\}}' for a literal brace"),
}


@pytest.mark.parametrize("case", list(BAD_SUITES))
def test_bad_suite_exits_2_naming_file_test_line_and_fix(case, files, verified, capsys):
    run, before = verified
    text, pattern = BAD_SUITES[case]
    (files / "drugs.txt").write_text("# no drugs yet\n\n")
    bad = files / "bad.yaml"
    bad.write_text(textwrap.dedent(text))
    expected = "error: " + pattern.format(file=re.escape(str(bad)))
    for argv in (["validate", "--suite", str(bad)],
                 ["verify", "--suite", str(bad), "--model", "python:toy_model_mod:predict",
                  "--run", str(run)]):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert re.match(expected, err), err
        assert "Traceback" not in err and "wrote" not in out
    assert snapshot(run) == before  # the failing verify left every output as it was


def test_failing_model_mid_run_keeps_outputs(files, verified, capsys):
    run, before = verified
    code = main(["verify", "--suite", str(files / "toy.yaml"), "--model",
                 "python:toy_model_mod:broken", "--run", str(run), "--sample", "5"])
    assert code == 2
    assert re.match(r"error: the callable returned \d+ results for \d+ ", capsys.readouterr().err)
    assert snapshot(run) == before
    leftovers = [p.name for p in (run / "verify" / "toy").iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temporary file left behind


# -- the suite's labels against the task's (run config) ---------------------------------------
def config(files: Path, labels: str = "[negative, positive]", **extra: str) -> Path:
    lines = [f"task: {{name: toy, labels: {labels}}}",
             "task_models: [{name: toy, spec: 'python:toy_model_mod:predict'}]"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    path = files / "run.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_verify_with_config_refuses_a_suite_of_another_task(files, verified, capsys):
    run, before = verified
    cfg = config(files, "[negative, neutral, positive]")
    # python:nope:nope would fail to load: the labels are refused before any model loads.
    code = main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg),
                 "--model", "python:nope:nope", "--run", str(run)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"error: the suite lacks the task's label 'neutral' (task labels: negative, neutral, "
        f"positive, from config {cfg}, task.labels) ({files / 'toy.yaml'}, labels, line 2): "
        "write labels: [negative, neutral, positive] in the suite")
    assert main(["validate", "--suite", str(files / "toy.yaml"), "--config", str(cfg)]) == 2
    assert "the suite lacks the task's label 'neutral'" in capsys.readouterr().err
    # A gold label the task does not have is named with its test and line.
    three = files / "three.yaml"
    three.write_text(SUITE.replace("labels: [negative, positive]",
                                   "labels: [negative, positive, mixed]")
                     + '  - {name: meh, type: mft, cases: ["It was okay."], label: mixed}\n')
    cfg = config(files)
    assert main(["verify", "--suite", str(three), "--config", str(cfg),
                 "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert re.match(rf"error: label 'mixed' is not one of the task's labels \(negative, "
                    rf"positive\) from config {re.escape(str(cfg))}, task.labels "
                    rf"\({re.escape(str(three))}, test 'meh', label, line 6\)", err), err
    assert snapshot(run) == before


def test_verify_takes_models_and_suite_from_the_config(files, capsys):
    cfg = config(files, "[positive, negative]", suite=str(files / "toy.yaml"))
    run = files / "run2"
    assert main(["verify", "--config", str(cfg), "--run", str(run), "--sample", "5"]) == 0
    out = capsys.readouterr().out
    assert "M1 = toy" in out  # named by the config's task-model name
    meta = json.loads((run / "verify" / "toy" / "summary.json").read_text())
    assert meta["models"] == ["toy"]
    assert main(["verify", "--run", str(run)]) == 2
    assert "error: no suite to verify (--suite)" in capsys.readouterr().err
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--run", str(run)]) == 2
    assert "error: no task model to verify (--model)" in capsys.readouterr().err
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--run", str(run),
                 "--model", "python:toy_model_mod:predict", "-P", "evaluation.size=3"]) == 2
    assert "error: -P overrides need a --config" in capsys.readouterr().err


# -- held-out recall beside the suite's results -----------------------------------------------
HELDOUT = [("a good film", "positive"), ("not good at all", "negative"), ("bad", "negative"),
           ("great fun", "positive"), ("awful", "negative")]
# The toy model says positive exactly when "good" occurs: positive recall 1/2 (misses "great
# fun"), negative recall 2/3 (misses "not good at all").
EXPECTED = {"positive": 0.5, "negative": 2 / 3}


def recall_rows(run: Path) -> dict[tuple[str, str], float]:
    meta = json.loads((run / "verify" / "toy" / "summary.json").read_text())
    return {(r["model"], r["label"]): r["recall"] for r in meta["recall"]}


def test_verify_heldout_measures_recall_on_labeled_data(files, capsys):
    data = files / "held.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": lab}) + "\n" for t, lab in HELDOUT))
    run = files / "run"
    spec = "python:toy_model_mod:predict"
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--sample", "5", "--heldout", str(data)]) == 0
    out = capsys.readouterr().out
    assert "held-out recall per class" in out and " 66.7%" in out and " 50.0%" in out
    assert recall_rows(run) == pytest.approx({(spec, lab): r for lab, r in EXPECTED.items()})
    # Without DATA: the config's evaluation set (here the same file, cut to 3 examples: recall
    # positive 1/1, negative 1/2).
    cfg = config(files, evaluation=f"{{data: {data}, size: 3}}")
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg),
                 "--run", str(run), "--sample", "5", "--heldout"]) == 0
    assert recall_rows(run) == pytest.approx({("toy", "positive"): 1.0,
                                              ("toy", "negative"): 0.5})
    # The heldout set's labels must be the task's: refused before scoring the suite.
    before = snapshot(run)
    (files / "odd.jsonl").write_text('{"text": "meh", "label": "mixed"}\n')
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--heldout", str(files / "odd.jsonl")]) == 2
    assert "error: unknown label 'mixed'" in capsys.readouterr().err
    assert snapshot(run) == before


def test_verify_recall_from_a_runs_eval_json(files, capsys):
    spec = "python:toy_model_mod:predict"
    evaluation = {"reports": {
        "toy": {"n": 5, "accuracy": 0.6, "per_class": {
            lab: {"precision": 1.0, "recall": r, "f1": 0.5, "support": 2}
            for lab, r in EXPECTED.items()}},
        "reference": {"n": 5, "per_class": {"positive": {"recall": 1.0},
                                            "negative": {"recall": 1.0}}}}}
    old = files / "old_run"
    old.mkdir()
    (old / "eval.json").write_text(json.dumps(evaluation))
    run = files / "run"
    # Named by the config's task-model name: the config maps it to the --model spec.
    cfg = config(files)
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg), "--model",
                 spec, "--run", str(run), "--sample", "5", "--recall",
                 str(old / "eval.json")]) == 0
    assert recall_rows(run) == pytest.approx({(spec, lab): r for lab, r in EXPECTED.items()})
    # A run directory holding eval.json works as well, and the config's own models match by
    # name; the reference is left out.
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg),
                 "--run", str(run), "--sample", "5", "--recall", str(old)]) == 0
    assert recall_rows(run) == pytest.approx({("toy", lab): r for lab, r in EXPECTED.items()})
    # A run directory with only evaluation.json (a name no release wrote) is not read.
    (old / "eval.json").rename(old / "evaluation.json")
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg),
                 "--run", str(run), "--sample", "5", "--recall", str(old)]) == 2
    assert "error: no eval.json in the run directory" in capsys.readouterr().err
    (old / "evaluation.json").rename(old / "eval.json")
    # Plain {model: {label: recall}}.
    (files / "r.json").write_text(json.dumps({spec: {"positive": 0.25, "negative": 0.75}}))
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--sample", "5", "--recall", str(files / "r.json")]) == 0
    assert recall_rows(run) == {(spec, "positive"): 0.25, (spec, "negative"): 0.75}
    capsys.readouterr()
    before = snapshot(run)
    # Without the config, the report's name matches no --model: a clear error, nothing written.
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--recall", str(old)]) == 2
    err = capsys.readouterr().err
    assert f"error: held-out recall names no model being verified (it has: reference, toy; " \
           f"verifying: {spec})" in err and "pass the --config" in err
    (files / "bad.json").write_text(json.dumps({spec: {"positve": 0.5}}))
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--recall", str(files / "bad.json")]) == 2
    assert "has label 'positve', not one of the suite's" in capsys.readouterr().err
    (files / "shape.json").write_text("[1, 2]")
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--recall", str(files / "shape.json")]) == 2
    assert "held-out recall has the wrong shape" in capsys.readouterr().err
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(run), "--recall", str(files / "none")]) == 2
    assert "cannot read held-out recall" in capsys.readouterr().err
    assert snapshot(run) == before


# -- export and import at the command line ---------------------------------------------------
GOLD_SUITE = textwrap.dedent("""\
    name: gold
    labels: [negative, positive]
    lexicons: {THING: [movie, album, book]}
    tests:
      - {name: pos, capability: Vocabulary, type: mft, template: "This {THING} is {POS_ADJ}.",
         label: positive}
      - name: negated
        capability: Negation
        type: mft
        template: "I bought {a:THING}, it is not {ADJ}."
        label: {by: ADJ, map: {POS_ADJ: negative, NEG_ADJ: positive}}
      - {name: hand, capability: Misc, type: mft, label: positive,
         cases: ["Fine, {really}.", {text: "Awful.", label: negative}]}
      - {name: robust, type: inv, template: "This {THING} is good.", perturb: [typo]}
    slots: {ADJ: [POS_ADJ, NEG_ADJ]}
    """)


def gold_cases(path: Path) -> set[tuple[str, str]]:
    from formalize import load_suite

    return {(c.text, c.label) for c in load_suite(path).cases() if c.type == "mft"}


def test_export_capability_csv_at_the_cli(files, capsys):
    suite = files / "gold.yaml"
    suite.write_text(GOLD_SUITE)
    csv_path = files / "out" / "templates.csv"
    assert main(["export", "--suite", str(suite), "--format", "capability-csv",
                 "--out", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {csv_path}" in out and LEFT_OUT + "robust (inv)" in out
    df = pd.read_csv(csv_path, index_col=0, keep_default_na=False)
    assert list(df.columns) == ["capability", "label", "template"]
    assert df.values.tolist() == [
        ["Vocabulary", 1, "This {thing} is {pos_adj}."],
        ["Negation", 0, "I bought {a:thing}, it is not {pos_adj}."],
        ["Negation", 1, "I bought {a:thing}, it is not {neg_adj}."],
        ["Misc", 1, "Fine, {{really}}."],
        ["Misc", 0, "Awful."]]
    # The suite's own lexicon THING is not in the CSV: importing it alone is refused with the
    # placeholder named, and nothing is written.
    back = files / "back.yaml"
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--out", str(back)]) == 2
    assert "error: undefined placeholder {THING} at column 6" in capsys.readouterr().err
    assert not back.exists()


def test_verify_takes_the_configs_verify_section_and_flags_override_it(files, capsys):
    cfg = config(files, suite=str(files / "toy.yaml"), verify="{seed: 7, max_examples: 1}")
    run = files / "run"
    assert main(["verify", "--config", str(cfg), "-P", "verify.sample=3", "--run",
                 str(run)]) == 0
    meta = json.loads((run / "verify" / "toy" / "summary.json").read_text())
    assert meta["sample"] == 3 and meta["seed"] == 7
    # 3 sampled fills of each test (without the section's sample: 2,998 cases).
    assert meta["cases"] == 6
    rows = [json.loads(line) for line in (run / "verify" / "toy" / "cases.jsonl").open()]
    assert len(rows) == 6
    # Flags given on the command line win over the section.
    assert main(["verify", "--config", str(cfg), "-P", "verify.sample=3", "--sample", "4",
                 "--seed", "2", "--run", str(run)]) == 0
    meta = json.loads((run / "verify" / "toy" / "summary.json").read_text())
    assert meta["sample"] == 4 and meta["seed"] == 2 and meta["cases"] == 8
    # The section's max_cases refuses an oversized suite (before any model loads).
    cfg = config(files, suite=str(files / "toy.yaml"), verify="{max_cases: 100}")
    capsys.readouterr()
    assert main(["verify", "--config", str(cfg), "--run", str(run)]) == 2
    assert "over the limit of 100" in capsys.readouterr().err


def test_verify_model_spec_gets_the_configs_evaluation_split(files, capsys, monkeypatch):
    # demo:sentiment trains on the train side of the config's evaluation split, so that
    # --heldout (which evaluates on that split's held-out side) does not overlap it.
    import discovery._scorers as scorers

    seen: list[object] = []

    def fake_demo(rest, labels, *, evaluation=None, **kw):
        seen.append(evaluation)
        return scorers._load_python("toy_model_mod:predict", labels, evaluation=evaluation,
                                    **kw)

    monkeypatch.setattr(scorers, "_load_demo", fake_demo)
    data = files / "held.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": lab}) + "\n" for t, lab in HELDOUT))
    cfg = config(files, evaluation=f"{{data: {data}, split_seed: 11, holdout_fraction: 0.3}}")
    run = files / "run"
    assert main(["verify", "--suite", str(files / "toy.yaml"), "--config", str(cfg),
                 "--model", "demo:sentiment", "--run", str(run), "--sample", "2",
                 "--heldout"]) == 0
    assert len(seen) == 1
    assert (seen[0].split_seed, seen[0].holdout_fraction) == (11, 0.3)


@pytest.mark.parametrize(("argv", "flag"), [
    (["verify", "--suite", "s.yaml", "--model", "m", "--run", "r", "--sample", "0"], "--sample"),
    (["verify", "--suite", "s.yaml", "--model", "m", "--run", "r", "--max-cases", "-1"],
     "--max-cases"),
    (["verify", "--suite", "s.yaml", "--model", "m", "--run", "r", "--batch-size", "0"],
     "--batch-size"),
    (["validate", "--suite", "s.yaml", "--sample", "0"], "--sample"),
    (["validate", "--suite", "s.yaml", "--max-cases", "0"], "--max-cases"),
    (["export", "--suite", "s.yaml", "--format", "adatest", "--out", "o", "--sample", "0"],
     "--sample"),
    (["export", "--suite", "s.yaml", "--format", "adatest", "--out", "o", "--max-cases", "x"],
     "--max-cases"),
    (["import", "--format", "capability-csv", "--in", "i.csv", "--out", "o", "--sample", "0"],
     "--sample"),
    (["propose", "--run", "r", "--top", "0"], "--top"),
    (["propose", "--run", "r", "--max-slots", "0"], "--max-slots"),
])
def test_count_flags_must_be_positive_integers(argv, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    value = argv[argv.index(flag) + 1]
    assert f"error: argument {flag}: must be a positive integer, got {value!r}" in err


def test_verify_recall_help_names_the_file_evaluate_writes(capsys):
    # `synthcheck evaluate --run DIR` writes eval.json (not evaluation.json): the help and the
    # docstring of read_recall say so.
    from synthcheck._cmd_verify import read_recall

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "the eval.json that 'synthcheck evaluate --run DIR' and 'discover' write" in help_text
    assert "evaluation.json (synthcheck evaluate)" not in help_text
    doc = " ".join(read_recall.__doc__.split())
    assert "the ``eval.json`` that ``synthcheck evaluate --run DIR`` and ``discover`` write" in doc


def test_export_capability_csv_writes_contrast_cases(files, capsys):
    # Contrast tests have gold labels: the capability CSV holds their cases as plain rows, and
    # importing the file back gives every case with its label.
    suite = files / "contrast.yaml"
    suite.write_text(textwrap.dedent("""\
        name: contrast
        labels: [negative, positive]
        tests:
          - {name: pos, capability: Vocabulary, type: mft, template: "A {POS_ADJ} {{film}}.",
             label: positive}
          - name: swapped
            capability: Contrast set
            type: contrast
            label: positive
            contrast_label: negative
            items:
              - {text: "The {plot} was great.", entity: great, alternatives: [dull, awful]}
          - {name: robust, type: inv, template: "This {NOUN} is good.", perturb: [typo]}
          - {name: gender, type: group, texts: [He liked it.], words: {m: [he], f: [she]}}
        """))
    csv_path = files / "contrast.csv"
    assert main(["export", "--suite", str(suite), "--format", "capability-csv",
                 "--out", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert LEFT_OUT + "robust (inv), gender (group)" in out
    assert "swapped" not in out
    df = pd.read_csv(csv_path, index_col=0, keep_default_na=False)
    assert df.values.tolist()[1:] == [
        ["Contrast set", 1, "The {{plot}} was great."],
        ["Contrast set", 0, "The {{plot}} was dull."],
        ["Contrast set", 0, "The {{plot}} was awful."]]
    back = files / "back.yaml"
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--out", str(back)]) == 0
    from formalize import load_suite

    def gold(path):
        return {(c.text, c.label) for c in load_suite(path).cases() if c.label is not None
                and c.type in ("mft", "contrast")}

    assert gold(back) == gold(suite) and len(gold(suite)) == 36 + 3


def test_import_lexicon_files_and_sample(files, capsys):
    (files / "csv").mkdir()
    csv_path = files / "csv" / "t.csv"
    csv_path.write_text(",capability,label,template\n0,Food,1,I loved the {dish}.\n"
                        "1,Food,0,The {dish} at {place} was {neg_adj}.\n")
    (files / "lex").mkdir()
    (files / "lex" / "food.yaml").write_text("DISH: [soup, stew, pie]\nPLACE: [a diner]\n")
    (files / "lex" / "more.yaml").write_text("PLACE: [a bistro, a cafe]\n")
    out = files / "suites" / "food.yaml"
    out.parent.mkdir()
    # The lexicon files are named relative to the suite file, in the order given.
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--lexicon-file", str(files / "lex" / "food.yaml"),
                 "--lexicon-file", str(files / "lex" / "more.yaml"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out}: 2 tests, {3 + 3 * 2 * 30:,} cases" in captured.out
    assert captured.err == (
        f"warning: {out} reads ../lex/food.yaml, ../lex/more.yaml outside its folder: "
        f"validate, verify and export will need --allow-outside-files (or copy the file next "
        f"to the suite and pass that copy to --lexicon-file)\n")
    import yaml

    data = yaml.safe_load(out.read_text())
    assert data["lexicon_files"] == ["../lex/food.yaml", "../lex/more.yaml"]
    assert "sample" not in data["tests"][0]
    # Lexicon files outside the suite's folder are read only when allowed (issue 19).
    assert main(["validate", "--suite", str(out)]) == 2
    assert "error: the file ../lex/food.yaml is outside the suite's folder" in \
        capsys.readouterr().err
    assert main(["validate", "--suite", str(out), "--allow-outside-files"]) == 0
    capsys.readouterr()
    # --sample N writes sample: N on every test with templates.
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--lexicon-file", str(files / "lex" / "food.yaml"),
                 "--sample", "5", "--out", str(out)]) == 0
    assert f"wrote {out}: 2 tests, {3 + 5:,} cases" in capsys.readouterr().out
    assert [t["sample"] for t in yaml.safe_load(out.read_text())["tests"]] == [5, 5]
    # Without the lexicon files the slots are unknown: refused, the good file kept.
    before = out.read_bytes()
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--out", str(out)]) == 2
    assert "error: undefined placeholder {DISH}" in capsys.readouterr().err
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path),
                 "--lexicon-file", str(files / "nope.yaml"), "--out", str(out)]) == 2
    assert "error: lexicon file not found (--lexicon-file " in capsys.readouterr().err
    assert main(["import", "--format", "hatecheck", "--in", str(csv_path),
                 "--lexicon-file", str(files / "lex" / "food.yaml"), "--out", str(out)]) == 2
    assert "--lexicon-file applies to --format capability-csv only" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse refuses it (test_count_flags_must_be_...)
        main(["import", "--format", "capability-csv", "--in", str(csv_path),
              "--sample", "0", "--out", str(out)])
    assert "argument --sample: must be a positive integer" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_import_over_the_case_limit_warns_with_a_sample_that_fits(files, capsys):
    # The ADE suite exported to a capability CSV loses its `sample:` settings; imported back it
    # is millions of cases. The import writes it (it is a faithful conversion, usable with
    # --sample) and warns with the count and a --sample N that fits.
    csv_path = files / "ade.csv"
    suites = Path(__file__).resolve().parents[2] / "configs" / "suites"
    assert main(["export", "--suite", str(suites / "ade.yaml"), "--format", "capability-csv",
                 "--out", str(csv_path)]) == 0
    capsys.readouterr()
    out = files / "ade_back.yaml"
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "no_ade,ade", "--out", str(out)]) == 0
    std = capsys.readouterr()
    total = int(re.search(r"tests, ([\d,]+) cases", std.out).group(1).replace(",", ""))
    assert total > 10_000_000
    m = re.search(r"--sample ([\d,]+) or less keeps it under the limit", std.err)
    assert std.err.startswith(f"warning: {out} would expand to {total:,} cases, over the case "
                              f"limit of 100,000") and m
    fits = int(m.group(1).replace(",", ""))
    # validate follows verify's rule (issue 19): the tests over the per-test cap are sampled,
    # and it says so.
    assert main(["validate", "--suite", str(out)]) == 0
    assert "note: test 'Temporal order: ade' expands to 8,551,500 cases; sampling" in \
        capsys.readouterr().out
    assert main(["validate", "--suite", str(out), "--sample", str(fits)]) == 0
    assert main(["validate", "--suite", str(out), "--sample", str(fits + 1)]) == 2
    capsys.readouterr()
    # With --sample the imported suite validates as written; no warning.
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "no_ade,ade", "--sample", "300", "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert main(["validate", "--suite", str(out)]) == 0


def test_import_capability_csv_at_the_cli_keeps_every_case(files, capsys):
    suite = files / "gold.yaml"
    suite.write_text(GOLD_SUITE.replace(
        "lexicons: {THING: [movie, album, book]}\n", "").replace("THING", "NOUN"))
    csv_path = files / "templates.csv"
    assert main(["export", "--suite", str(suite), "--format", "capability-csv",
                 "--out", str(csv_path)]) == 0
    back = files / "back.yaml"
    assert main(["import", "--format", "capability-csv", "--in", str(csv_path), "--labels",
                 "negative,positive", "--out", str(back)]) == 0
    n = len(gold_cases(suite))
    assert n == 83 * 36 + 83 * 66 + 2
    assert f"wrote {back}: 5 tests, {n:,} cases" in capsys.readouterr().out
    assert gold_cases(back) == gold_cases(suite)


def test_export_hatecheck_and_import_it_back_keeps_every_case(files, capsys):
    suite = files / "gold.yaml"
    suite.write_text(GOLD_SUITE)
    out = files / "hc"
    assert main(["export", "--suite", str(suite), "--format", "hatecheck", "--out", str(out)]) == 0
    capsys.readouterr()
    back = files / "back.yaml"
    assert main(["import", "--format", "hatecheck", "--in", str(out / "test_suite_cases.csv"),
                 "--labels", "negative,positive", "--out", str(back)]) == 0
    n = len(gold_cases(suite))
    assert n == 3 * 36 + 3 * 66 + 2
    assert f"wrote {back}: 3 tests, {n:,} cases" in capsys.readouterr().out
    assert gold_cases(back) == gold_cases(suite)


def test_export_adatest_at_the_cli(files, capsys):
    suite = files / "gold.yaml"
    suite.write_text(GOLD_SUITE)
    path = files / "tree.csv"
    assert main(["export", "--suite", str(suite), "--format", "adatest", "--out", str(path),
                 "--sample", "4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {path}" in out and LEFT_OUT + "robust (inv)" in out
    df = pd.read_csv(path, index_col=0, keep_default_na=False)
    assert list(df.columns) == ["topic", "input", "output", "label", "labeler", "description"]
    assert set(df[df.label == "topic_marker"].topic) == {"/Vocabulary/pos", "/Negation/negated",
                                                         "/Misc/hand"}
    rows = df[df.label == "pass"]
    assert rows.groupby("topic").size().to_dict() == {"/Vocabulary/pos": 4,
                                                      "/Negation/negated": 4, "/Misc/hand": 2}
    assert rows.set_index("input").loc["Awful.", "output"] == "negative"
    # The same seed gives the same file; the sample is the runner's sample.
    again = files / "again.csv"
    assert main(["export", "--suite", str(suite), "--format", "adatest", "--out", str(again),
                 "--sample", "4", "--seed", "1"]) == 0
    assert again.read_bytes() == path.read_bytes()
    # Over the case limit: refused, nothing written.
    assert main(["export", "--suite", str(suite), "--format", "adatest", "--out",
                 str(files / "big.csv"), "--max-cases", "10"]) == 2
    assert "expansion would produce" in capsys.readouterr().err
    assert not (files / "big.csv").exists()
