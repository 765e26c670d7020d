"""Task models that return bad values, model files that are not what they claim, and model
folders that do not exist: each is a clear error, never a traceback or silent acceptance."""

from __future__ import annotations

import sys
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest

from discovery import CallableScorer, check_task_model, load_task_scorer
from synth.core import ConfigError, DataError, ModelNotAvailable

LABELS = ["negative", "positive"]


def scorer(result):
    return CallableScorer(lambda texts: result(texts), LABELS, where="python:m:f")


@pytest.mark.parametrize(("result", "pattern"), [
    (lambda t: [{"negative": float("nan"), "positive": 0.5} for _ in t],
     r"probability that is not a finite number for text 0: \{negative: nan, positive: 0.5\}"),
    (lambda t: [{"negative": float("inf"), "positive": 0.0} for _ in t],
     r"not a finite number for text 0: \{negative: inf, positive: 0\}"),
    (lambda t: [0.3 for _ in t], r"result 0 is a float, not a dict \{label: probability\}"),
    (lambda t: ["positive" for _ in t], r"result 0 is a str, not a dict"),
    (lambda t: 0.5, r"the callable returned a float, not a list with one result per text"),
    (lambda t: None, r"the callable returned None, not a list with one result per text"),
    (lambda t: {"negative": 0.5, "positive": 0.5},
     r"the callable returned a dict, not a list with one result per text"),
    (lambda t: [{"negative": 3.0, "positive": 5.0} for _ in t],
     r"probability outside \[0, 1\] for text 0: \{negative: 3, positive: 5\}"),
    (lambda t: [{"negative": 0.9, "positive": 0.9} for _ in t],
     r"probabilities for text 0 sum to 1.8, not 1 \(within 0.001\)"),
    (lambda t: [{"negative": None, "positive": 1.0} for _ in t],
     r"result 0 gives label 'negative' None \(None\), not a probability"),
    (lambda t: [{"negative": "0.5", "positive": 0.5} for _ in t],
     r"result 0 gives label 'negative' a str \('0.5'\), not a probability"),
    (lambda t: [{"negative": 0.5, "positive": 0.5}] + [{"negative": 1.0} for _ in t[1:]],
     r"result 1 has labels \['negative'\], expected \['negative', 'positive'\]"),
    (lambda t: [], r"the callable returned 0 results for 2 texts"),
])
def test_bad_python_model_results_are_clear_errors(result, pattern) -> None:
    with pytest.raises(DataError, match=pattern) as info:
        scorer(result).predict_proba(["a", "b"])
    assert info.value.where == "python:m:f" and info.value.fix


def test_good_results_pass_within_tolerance() -> None:
    rows = scorer(lambda t: [{"negative": 0.3, "positive": 0.7004} for _ in t]).predict_proba(
        ["a"])
    assert rows == [{"negative": 0.3, "positive": 0.7004}]


class ArrayModel:
    """scikit-learn style: classes_ plus predict_proba returning an array."""

    classes_ = np.array(["negative", "positive"])

    def __init__(self, rows: np.ndarray | None = None) -> None:
        self.rows = rows

    def predict_proba(self, texts):
        if self.rows is not None:
            return self.rows
        return np.array([[0.25, 0.75] for _ in texts])


def _module(monkeypatch: pytest.MonkeyPatch, **objects: object) -> str:
    mod = types.ModuleType("bad_models_mod")
    for name, obj in objects.items():
        setattr(mod, name, obj)
    monkeypatch.setitem(sys.modules, "bad_models_mod", mod)
    return "bad_models_mod"


def test_numpy_predict_proba_with_classes_is_accepted(monkeypatch) -> None:
    mod = _module(monkeypatch, good=ArrayModel(), wrong_shape=ArrayModel(np.ones((1, 3)) / 3),
                  bad=ArrayModel(np.array([[2.0, -1.0]])))
    model = load_task_scorer(f"python:{mod}:good", LABELS)
    assert model.predict_proba(["a", "b"]) == [{"negative": 0.25, "positive": 0.75}] * 2
    with pytest.raises(DataError, match=r"predict_proba returned an array of shape \(1, 3\) "
                                        r"for 1 texts and classes_ \['negative', 'positive'\]"):
        load_task_scorer(f"python:{mod}:wrong_shape", LABELS).predict_proba(["a"])
    with pytest.raises(DataError, match=r"probability outside \[0, 1\] for text 0"):
        load_task_scorer(f"python:{mod}:bad", LABELS).predict_proba(["a"])


def test_check_task_model_probes_a_python_model(monkeypatch) -> None:
    mod = _module(monkeypatch, nan=lambda texts: [{"negative": float("nan"),
                                                   "positive": 0.5}] * len(texts))
    with pytest.raises(DataError, match="not a finite number"):
        check_task_model(f"python:{mod}:nan", LABELS, where="task_models[0] (x)")
    with pytest.raises(ConfigError, match=r"unknown task-model scheme 'sklarn'.*"
                                          r"\(task_models\[0\] \(x\)\).*sklearn"):
        check_task_model("sklarn:m.skops", LABELS, where="task_models[0] (x)")


SKOPS_FIX = r"save the fitted model with skops: `import skops.io as sio; sio.dump\(model"


@pytest.mark.parametrize(("name", "content", "pattern"), [
    ("m.skops", b"this is not a zip", r"not a skops file \(not a zip archive\)"),
    ("empty.skops", None, r"not a skops file: the zip archive is empty"),
    ("other.skops", "other-zip", r"not a skops file: the zip archive has no schema.json"),
    ("m.joblib", b"\x80\x04K\x01.", r"joblib and pickle files are refused for safety: "
                                    r"loading one runs arbitrary code"),
    ("m.skops", b"\x80\x04K\x01.", r"joblib and pickle files are refused for safety"),
    ("m.pkl", b"anything", r"joblib and pickle files are refused for safety"),
])
def test_model_files_that_are_not_skops(tmp_path: Path, name, content, pattern) -> None:
    path = tmp_path / name
    if content is None:
        zipfile.ZipFile(path, "w").close()
    elif content == "other-zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("readme.txt", "hi")
    else:
        path.write_bytes(content)
    for call in (lambda: load_task_scorer(f"sklearn:{path}", LABELS),
                 lambda: check_task_model(f"sklearn:{path}", LABELS, where="task_models[0]")):
        with pytest.raises(DataError, match=pattern) as info:
            call()
        assert str(path) in info.value.where
        assert "sio.dump(model, 'model.skops')" in info.value.fix
    assert SKOPS_FIX


def test_skops_directory_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected a .skops file but this is a directory"):
        load_task_scorer(f"sklearn:{tmp_path}", LABELS)
    with pytest.raises(DataError, match="skops file not found"):
        load_task_scorer(f"sklearn:{tmp_path / 'nope.skops'}", LABELS)


@pytest.mark.parametrize("spec", ["hf:/missing/folder", "hf:./missing", "hf:~/missing-model",
                                  "hf:a/b/c"])
def test_missing_hf_folder_is_named_not_read_as_a_hub_id(spec, monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    rest = spec[3:]
    with pytest.raises(ModelNotAvailable, match=rf"model folder not found: {rest}") as info:
        load_task_scorer(spec, LABELS)
    assert "Repo id" not in str(info.value)
    with pytest.raises(ModelNotAvailable, match=rf"model folder not found: {rest}"):
        check_task_model(spec, LABELS, where="task_models[0]")


def test_hf_classifier_labels_are_checked_from_config_json(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"id2label": {"0": "NEG", "1": "POS"}}')
    with pytest.raises(ConfigError, match=r"task model labels \['NEG', 'POS'\] do not match"):
        check_task_model(f"hf:{tmp_path}", LABELS, where="task_models[0]")
    check_task_model(f"hf:{tmp_path}", LABELS, where="task_models[0]",
                     label_map={"NEG": "negative", "POS": "positive"})
    (tmp_path / "config.json").unlink()
    with pytest.raises(ModelNotAvailable, match="no readable config.json"):
        check_task_model(f"hf:{tmp_path}", LABELS, where="task_models[0]")
