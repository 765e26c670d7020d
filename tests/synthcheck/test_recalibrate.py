"""Changing only `reference.calibration` refits the calibration over the stored raw log-probs:
no LLM is loaded, the raw scores are not rewritten, the calibrated probabilities change."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

from synth.core import read_jsonl  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from synthcheck._pipeline import discover, evaluate_run_config  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402


@pytest.fixture
def cfg_path(tiny_dir: Path, mini_config: Callable[..., Path]) -> Path:
    return mini_config(
        name="recal",
        generator={"model": "hf:unused", "n": 24, "shard_size": 8,
                   "segment": {"min_words": 3, "max_words": 40}},
        task_models=[{"name": "toy", "spec": "python:toy_models:keyword_sentiment"},
                     {"name": "few", "spec": f"fewshot:hf:{tiny_dir}"}],
        evaluation={"size": 12},
        # Focus rounds generate and score new sentences, and word occlusion scores sentences
        # with words deleted: a calibration change re-runs both with the models (their raw
        # scores are not kept apart yet), so they are off here.
        focus={"enabled": False},
        slices={"occlusion": {"enabled": False}},
    )


@pytest.fixture(autouse=True)
def _fake_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    runbuilder.fake_backends(monkeypatch)


def raw_files(run: Path) -> dict[str, tuple[bytes, int]]:
    """The stored raw label log-probs (corpus and held-out chunks, content-free inputs):
    bytes and modification times."""
    parts = run / "scores" / ".parts"
    return {str(p.relative_to(run)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(parts.rglob("*")) if p.is_file()}


def probs(path: Path, key: str = "probs") -> np.ndarray:
    return np.array([[r[key]["negative"], r[key]["positive"]] for r in read_jsonl(path)])


def no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every way of loading an LLM or a transformers model fail loudly."""
    import synth.engines

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(synth.engines, "make_backend", refuse)
    monkeypatch.setattr(synth.engines, "load_hf_model", refuse)


def test_changing_only_the_calibration_rescores_nothing(cfg_path: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "r"
    first = discover(load_run_config(cfg_path), run, progress=False, log=lambda s: None)
    assert first.stages["score"] == "ran" and first.stages["evaluate"] == "ran"
    raw_before = raw_files(run)
    # Corpus chunks and the held-out set's, for the reference and the fewshot task model,
    # and the content-free inputs' raw log-probs of both.
    kinds = {Path(k).parent.name + "/" + Path(k).name.split("-")[0] for k in raw_before}
    assert kinds == {"reference/chunk", "reference/content", "task-few/chunk", "task-toy/chunk",
                     "task-few/content", "heldout-reference/chunk", "heldout-few/chunk"}
    ref_before = probs(run / "scores" / "reference.jsonl")
    logp_before = probs(run / "scores" / "reference.jsonl", "logprobs")
    few_before = probs(run / "scores" / "task-few.jsonl")
    toy_bytes = (run / "scores" / "task-toy.jsonl").read_bytes()

    for method in ("none", "batch"):
        cfg = load_run_config(cfg_path, [f"reference.calibration={method}"])
        # What evaluate gives with the models loaded (no stored raw scores used).
        want, _ = evaluate_run_config(cfg, progress=False)
        with monkeypatch.context() as m:
            no_models(m)
            again = discover(cfg, run, progress=False, log=lambda s: None)
        assert {s: again.stages[s] for s in ("generate", "score", "evaluate")} == {
            "generate": "skipped (current)", "score": "ran", "evaluate": "ran"}
        assert raw_files(run) == raw_before  # not a byte nor a timestamp changed
        ref = probs(run / "scores" / "reference.jsonl")
        assert not np.allclose(ref, ref_before)  # the calibrated probabilities changed
        assert np.array_equal(probs(run / "scores" / "reference.jsonl", "logprobs"),
                              logp_before)  # the raw log-probs are the stored ones
        assert not np.allclose(probs(run / "scores" / "task-few.jsonl"), few_before)
        assert (run / "scores" / "task-toy.jsonl").read_bytes() == toy_bytes
        meta = json.loads((run / "scores" / "reference.jsonl.meta.json").read_text())
        assert meta["calibration"]["method"] == method
        got = json.loads((run / "eval.json").read_text())["reports"]
        for name in ("reference", "few", "toy"):
            for key in ("accuracy", "macro_f1", "per_class"):
                assert got[name][key] == want[name][key], (method, name, key)
    # Calibration "none" is the raw log-probs renormalised over the labels.
    raw = probs(run / "scores" / "reference.jsonl", "logprobs")
    cfg = load_run_config(cfg_path, ["reference.calibration=none"])
    with monkeypatch.context() as m:
        no_models(m)
        discover(cfg, run, progress=False, log=lambda s: None)
    norm = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
    assert np.allclose(probs(run / "scores" / "reference.jsonl"), norm)


def test_evaluate_cli_keeps_the_held_out_raw_scores_in_the_run(
        cfg_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from synthcheck.cli import main

    run = tmp_path / "r"
    discover(load_run_config(cfg_path), run, progress=False, log=lambda s: None)
    held = sorted((run / "scores" / ".parts" / "heldout-reference").glob("chunk-*.jsonl"))
    assert held and len(read_jsonl(held[0])) == 12
    stamp = {p: p.stat().st_mtime_ns for p in held}
    with monkeypatch.context() as m:
        no_models(m)
        assert main(["evaluate", "-c", str(cfg_path), "--run", str(run), "-q",
                     "-P", "reference.calibration=batch"]) == 0
    assert {p: p.stat().st_mtime_ns for p in held} == stamp
    assert "reference" in json.loads((run / "eval.json").read_text())["reports"]
    # Without --run there is nowhere to keep raw scores: the model is needed.
    with monkeypatch.context() as m:
        no_models(m)
        with pytest.raises(AssertionError, match="a model was loaded"):
            main(["evaluate", "-c", str(cfg_path), "-q", "-P", "reference.calibration=batch"])
