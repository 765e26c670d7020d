"""`synthcheck.load_run_scorers`: a run's task models, loaded from the config its manifest
records, the way `discover` loads them (formalize.ipynb's scorers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthcheck import load_run_scorers  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402


def _set_config(run: Path, **changes: object) -> None:
    from synth.core import write_json_atomic

    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"].update(changes)
    write_json_atomic(run / "manifest.json", manifest)


def test_load_run_scorers_loads_the_configured_task_models(tmp_path: Path) -> None:
    run = runbuilder.build_run(tmp_path / "run", verify=False, ngrams=False)
    scorers = load_run_scorers(run)
    assert list(scorers) == ["keyword"]
    texts = ["This movie is good.", "I can't say I don't love this book."]
    assert scorers["keyword"].labels == runbuilder.LABELS
    for got, want in zip(scorers["keyword"].predict_proba(texts),
                         runbuilder.keyword_model.predict_proba(texts), strict=True):
        assert got == pytest.approx(want)


class FakeBackend:
    """Label log-probabilities that favour 'positive' when "good" follows the prefix."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], dict[str, str], str]] = []

    def label_logprobs(self, prefix: str, texts: list[str], words: dict[str, str],
                       suffix: str = "") -> list[dict[str, float]]:
        self.calls.append((prefix, list(texts), dict(words), suffix))
        return [{"negative": -0.2, "positive": -1.8} if "good" not in t else
                {"negative": -1.8, "positive": -0.2} for t in texts]


def test_load_run_scorers_fewshot_uses_the_runs_reference_prompt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import synth.engines

    made: list[tuple[str, dict[str, object]]] = []
    backend = FakeBackend()

    def fake_make_backend(model: str, **kw: object) -> FakeBackend:
        made.append((model, kw))
        return backend

    monkeypatch.setattr(synth.engines, "make_backend", fake_make_backend)
    run = runbuilder.build_run(tmp_path / "run", verify=False, ngrams=False)
    reference = {"model": "packaged:smollm2-135m-instruct", "prompt": "Review: {text}\nVerdict:",
                 "shots": [{"text": "Loved it.", "label": "positive"},
                           {"text": "Hated it.", "label": "negative"}],
                 "label_words": {"negative": " bad", "positive": " good"},
                 "calibration": "none", "batch_size": 3}
    _set_config(run, reference=reference, task_models=[
        {"name": "llm", "spec": "fewshot:hf:/models/tiny-llm"},
        {"name": "keyword", "spec": "python:runbuilder:keyword_model"}])
    scorers = load_run_scorers(run)
    assert list(scorers) == ["llm", "keyword"]
    llm = scorers["llm"]
    # the task model's own LLM, with the run's reference settings for everything else
    assert made == [("hf:/models/tiny-llm", {"backend": "hf", "device": "auto",
                                             "batch_size": 3})]
    assert (llm.name, llm.config.prompt, llm.config.calibration) == (
        "llm", "Review: {text}\nVerdict:", "none")
    assert llm.prefix.startswith("Review: Loved it.\nVerdict: good\n\nReview: Hated it.\n"
                                 "Verdict: bad\n\nReview:")
    probs = llm.predict_proba(["A good film.", "A dull film."])
    assert probs[0]["positive"] > 0.75 > probs[1]["positive"]
    assert backend.calls[-1][2] == {"negative": " bad", "positive": " good"}


def test_load_run_scorers_fewshot_without_a_reference_section_uses_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import synth.engines
    from discovery import ReferenceConfig

    monkeypatch.setattr(synth.engines, "make_backend", lambda model, **kw: FakeBackend())
    run = runbuilder.build_run(tmp_path / "run", verify=False, ngrams=False)
    _set_config(run, task_models=[{"name": "llm", "spec": "fewshot:hf:/models/tiny-llm"}])
    assert load_run_scorers(run)["llm"].config == ReferenceConfig()


@pytest.mark.parametrize(("changes", "pattern"), [
    ({"task_models": []}, r"the run's config names no task models \(.*manifest\.json\): "
                          r"pass scorers yourself"),
    ({"task_models": [{"name": "a", "spec": "python:runbuilder:keyword_model"},
                      {"name": "a", "spec": "python:runbuilder:keyword_model"}]},
     r"task model names must be unique, got \['a'\] more than once"),
    ({"task_models": [{"name": "a", "spce": "python:runbuilder:keyword_model"}]},
     r"invalid task_models\[0\]\.spce: Extra inputs are not permitted \(.*manifest\.json\)"),
    ({"reference": {"promt": "x {text}"}},
     r"invalid reference\.promt: Extra inputs are not permitted"),
])
def test_load_run_scorers_errors(tmp_path: Path, changes: dict[str, object],
                                 pattern: str) -> None:
    from synth.core import ConfigError

    run = runbuilder.build_run(tmp_path / "run", verify=False, ngrams=False)
    _set_config(run, **changes)
    with pytest.raises(ConfigError, match=pattern):
        load_run_scorers(run)


