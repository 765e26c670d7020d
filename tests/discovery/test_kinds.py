"""Task-model kinds: one registry entry per spec scheme, each with its own check."""

from __future__ import annotations

import pytest

from discovery import TASK_MODEL_KINDS, check_task_model, is_few_shot, task_model_kind
from synth.core import ConfigError, ModelNotAvailable


def test_every_scheme_is_a_registered_kind() -> None:
    assert TASK_MODEL_KINDS.names() == ["demo", "fewshot", "hatesonar", "hf", "python",
                                        "sklearn"]
    assert task_model_kind("demo:sentiment").scheme == "demo"
    assert [s for s in TASK_MODEL_KINDS.names() if TASK_MODEL_KINDS.get(s).few_shot] == [
        "fewshot"]
    assert is_few_shot("fewshot:packaged:smollm2-135m-instruct")
    assert not is_few_shot("demo:sentiment") and not is_few_shot("nope:x")


def test_unknown_scheme_suggests_the_closest_kind() -> None:
    with pytest.raises(ConfigError) as err:
        check_task_model("hatesonr:default", ["hateful", "non-hateful"], where="task_models[0]")
    assert err.value.format() == (
        "unknown task-model scheme 'hatesonr' in 'hatesonr:default' (task_models[0]): did you "
        "mean 'hatesonar'? (choices: demo, fewshot, hatesonar, hf, python, sklearn)")


def test_hatesonar_is_checked_before_any_work() -> None:
    pytest.importorskip("hatesonar")
    check_task_model("hatesonar:default", ["hateful", "non-hateful"], where="task_models[0] (h)")
    with pytest.raises(ConfigError) as err:
        check_task_model("hatesonar:default", ["positive", "negative"],
                         where="task_models[0] (h)")
    assert err.value.format() == (
        "task model labels ['hate_speech', 'offensive_language', 'neither'] do not match the "
        "task's labels ['positive', 'negative'] (task_models[0] (h): hatesonar:default): add "
        "label_map to the task model's config, e.g. label_map: {hate_speech: positive, "
        "offensive_language: negative}")
    with pytest.raises(ModelNotAvailable) as missing:
        check_task_model("hatesonar:/nowhere/model.onnx", ["hateful", "non-hateful"],
                         where="task_models[0] (h)")
    assert missing.value.format() == (
        "hatesonar model file not found (task_models[0] (h): hatesonar:/nowhere/model.onnx): "
        "use hatesonar:default, or the path of an .onnx file")
