"""A missing local ``hf:`` folder is refused at once (issue 27): a user's ``hf:models/svc``
(one slash, so it also reads as a hub id) once cost 52 s of hub retries before the error."""

from __future__ import annotations

from pathlib import Path

import pytest

import synth.engines._models as models
from synth.core import ModelNotAvailable
from synth.engines._models import hub_reachable, resolve_model_path


@pytest.fixture(autouse=True)
def no_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    def never(*a: object, **k: object) -> None:
        raise AssertionError("transformers was asked (hub retries) before the refusal")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", never)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_a_missing_folder_under_an_existing_one(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    monkeypatch.setattr(models, "_REACHABLE", {"huggingface.co": True})  # even with a hub
    with pytest.raises(ModelNotAvailable, match=r"^model folder not found: models/svc "
                                                r"\(hf:models/svc\): check the path \(the "
                                                r"folder models/ is here, but holds no svc\)$"):
        resolve_model_path("hf:models/svc")


def test_a_hub_id_without_a_reachable_hub(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(models, "_REACHABLE", {"huggingface.co": False})
    with pytest.raises(ModelNotAvailable, match=r"model folder not found: org/svc "
                                                r"\(hf:org/svc\): give a local model folder "
                                                r"\(org/svc is not one here, and the hub "
                                                r"huggingface.co cannot be reached"):
        from synth.engines import load_hf_model

        load_hf_model("hf:org/svc", "sequence-classifier", device="cpu", dtype=None)
    monkeypatch.setattr(models, "_REACHABLE", {"huggingface.co": True})
    assert resolve_model_path("hf:org/svc") == "org/svc"  # a reachable hub: a hub id


def test_the_probe_answers_for_a_name_that_does_not_resolve() -> None:
    assert hub_reachable("no-such-host.invalid", timeout=3.0) is False
