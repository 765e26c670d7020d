"""Bringing your own model: a skops-saved sklearn pipeline or a Python function with other
label names, mapped with verify --label-map; pickles refused with a conversion hint."""

from __future__ import annotations

import re

import pytest

from synthcheck.cli import main
from tests.synthcheck.toy_models import write_toy_suite


@pytest.fixture
def files(tmp_path, monkeypatch):
    return write_toy_suite(tmp_path, monkeypatch, "ab_model", {"A": 0.2, "B": 0.8})


def verify(files, spec, *extra):
    return main(["verify", "--suite", str(files / "toy.yaml"), "--model", spec, "--run",
                 str(files / "run"), "--sample", "10", *extra])


def test_python_function_with_a_label_map(files, capsys):
    assert verify(files, "python:ab_model:predict") == 2
    assert "error:" in capsys.readouterr().err
    assert verify(files, "python:ab_model:predict", "--label-map", "A=negative,B=positive") == 0
    assert re.search(r"^adj +mft +10 +0\.0%$", capsys.readouterr().out, re.M)
    assert verify(files, "python:ab_model:predict", "--label-map", "A=negative,B") == 2
    assert "error: bad --label-map entry 'B' (--label-map)" in capsys.readouterr().err


def test_skops_pipeline_with_other_class_names(files, capsys):
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["great film", "lovely book", "awful film", "bad book", "great day", "bad day"]
    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(
        texts, ["pos", "pos", "neg", "neg", "pos", "neg"])
    sio.dump(pipe, files / "mine.skops")
    spec = f"sklearn:{files / 'mine.skops'}"
    assert verify(files, spec, "--label-map", "neg=negative,pos=positive") == 0
    assert "per capability" in capsys.readouterr().out


def test_joblib_is_refused_with_how_to_convert(files, capsys):
    (files / "model.joblib").write_bytes(b"not read")
    assert verify(files, f"sklearn:{files / 'model.joblib'}") == 2
    err = capsys.readouterr().err
    assert ".joblib files are pickles" in err and "sio.dump(joblib.load(" in err
    assert f"sklearn:{files / 'model.skops'}" in err
    assert not (files / "run").exists()


TEXTS = ["great film", "lovely book", "awful film", "bad book", "great day", "bad day",
         "lovely day", "awful book", "great book", "bad film", "lovely film", "awful day"]
GOLD = ["pos", "pos", "neg", "neg", "pos", "neg", "pos", "neg", "pos", "neg", "pos", "neg"]


def _dump(files, estimator, name):
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(TfidfVectorizer(), estimator).fit(TEXTS, GOLD)
    sio.dump(pipe, files / name)
    return pipe, f"sklearn:{files / name}"


def test_calibrated_classifier_cv_is_trusted_as_scikit_learns_own(files, capsys):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import LinearSVC

    _, spec = _dump(files, CalibratedClassifierCV(LinearSVC(), cv=3), "cal.skops")
    assert verify(files, spec, "--label-map", "neg=negative,pos=positive") == 0
    out, err = capsys.readouterr()
    assert "per capability" in out and "note:" not in err


def test_untrusted_types_are_listed_with_the_flag_that_trusts_them(files, capsys, monkeypatch):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import LinearSVC

    import discovery._scorers as scorers

    _, spec = _dump(files, CalibratedClassifierCV(LinearSVC(), cv=3), "cal.skops")
    monkeypatch.setattr(scorers, "TRUSTED_SKOPS_TYPES", [])  # as a type skops does not know
    assert verify(files, spec, "--label-map", "neg=negative,pos=positive") == 2
    types = "sklearn.calibration._CalibratedClassifier,sklearn.calibration._SigmoidCalibration"
    assert capsys.readouterr().err == (
        "error: refusing to load untrusted types ['sklearn.calibration._CalibratedClassifier', "
        "'sklearn.calibration._SigmoidCalibration']: sklearn.calibration._CalibratedClassifier "
        "is _CalibratedClassifier from sklearn (installed here), a data or estimator type; "
        "sklearn.calibration._SigmoidCalibration is _SigmoidCalibration from sklearn "
        f"(installed here), a data or estimator type ({spec}): if you trust this file, list "
        "these types under the task model's trusted_types (on the command line: verify "
        f"--trusted-types {types})\n")
    assert not (files / "run").exists()
    assert verify(files, spec, "--label-map", "neg=negative,pos=positive",
                  "--trusted-types", types) == 0


def test_decision_function_models_get_sigmoid_scores_labelled_uncalibrated(files, capsys):
    import json

    import numpy as np
    from sklearn.svm import LinearSVC

    from discovery import load_task_scorer

    pipe, spec = _dump(files, LinearSVC(), "svc.skops")
    assert verify(files, spec, "--label-map", "neg=negative,pos=positive") == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == (
        f"note: {spec} has no predict_proba; its probabilities are the sigmoid of "
        "decision_function (uncalibrated)")
    summary = json.loads((files / "run" / "verify" / "toy" / "summary.json").read_text())
    assert summary["uncalibrated"] == {spec: "sigmoid of decision_function (uncalibrated)"}
    scorer = load_task_scorer(spec, ["negative", "positive"],
                              label_map={"neg": "negative", "pos": "positive"})
    got = scorer.predict_proba(["great film", "awful day"])
    d = pipe.decision_function(["great film", "awful day"])
    want = 1 / (1 + np.exp(-d))
    assert [round(g["positive"], 12) for g in got] == [round(w, 12) for w in want]
    assert [g["positive"] > 0.5 for g in got] == list(pipe.predict(["great film", "awful day"])
                                                      == "pos")


def test_label_mismatch_on_a_model_run_points_at_label_map(files, capsys):
    from sklearn.linear_model import LogisticRegression

    _, spec = _dump(files, LogisticRegression(), "lr.skops")
    assert verify(files, spec) == 2
    assert capsys.readouterr().err == (
        f"error: task model labels ['neg', 'pos'] do not match the task's labels ['negative', "
        f"'positive'] ({spec}): pass --label-map neg=negative,pos=positive (model label=suite "
        "label, for each model label)\n")

def test_a_python_model_that_raises_is_exit_2_naming_it(files, capsys):
    (files / "raising_model.py").write_text(
        "def predict(texts):\n    raise RuntimeError('weights not found\\nsecond line')\n")
    assert verify(files, "python:raising_model:predict") == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "error: the task model raised RuntimeError: weights not found on a batch of "
        "10 texts (python:raising_model:predict): fix the model's code (call it on a list of "
        "texts in Python to see the traceback)\n")
    assert [p for p in (files / "run").rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("label_map,message", [
    ("A=negative,B=negative",
     "label_map {A: negative, B: negative} maps no model label to ['positive'] (every task "
     "label needs one) (python:ab_model:predict): map each task label from one of the model's "
     "labels, e.g. label_map: {A: negative, B: positive}"),
    ("A=negative,B=positive,foo=negative",
     "label_map {A: negative, B: positive, foo: negative} names ['foo'], which the model does "
     "not have (its labels: ['A', 'B']) (python:ab_model:predict): map the model's own labels, "
     "e.g. label_map: {A: negative, B: positive}"),
])
def test_a_label_map_that_does_not_fit_the_model_is_named(files, capsys, label_map, message):
    assert verify(files, "python:ab_model:predict", "--label-map", label_map) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
