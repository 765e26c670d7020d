"""Bringing your own model: a skops-saved sklearn pipeline or a Python function with other
label names, mapped with verify --label-map; pickles refused with a conversion hint."""

from __future__ import annotations

import re

import pytest
from toy_models import write_toy_suite

from synthcheck.cli import main


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
