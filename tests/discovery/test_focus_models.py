"""The models focus rounds and occlusion score new sentences with (``discovery.ScoringModels``):
the ranked task model and the reference, their key, and nothing loaded before a text is
scored."""

from __future__ import annotations

from typing import Any

import pytest

from discovery import (
    EvaluationConfig,
    RankingConfig,
    ReferenceConfig,
    ScoringModels,
    TaskModelConfig,
)
from synth.core import ConfigError, LabelSpace

LABELS = LabelSpace.of(["negative", "positive"])
MODELS = [TaskModelConfig(name="a", spec="python:toy_models:keyword_sentiment"),
          TaskModelConfig(name="b", spec="python:toy_models:keyword_sentiment",
                          label_map={"neg": "negative"})]


def scoring(ranking: RankingConfig, models: list[TaskModelConfig] = MODELS,
            reference: ReferenceConfig | None = None) -> ScoringModels:
    return ScoringModels.ranked(ranking, models, labels=LABELS,
                                reference=reference or ReferenceConfig(),
                                evaluation=EvaluationConfig())


def test_the_ranked_task_model_and_a_key_that_covers_only_what_scores() -> None:
    first, second = scoring(RankingConfig()), scoring(RankingConfig(task_model="b"))
    assert first.task_model.name == "a" and second.task_model.name == "b"
    assert first.key != second.key
    # another (unranked) task model changes nothing; the reference's prompt does
    assert scoring(RankingConfig(), [MODELS[0]]).key == first.key
    other = ReferenceConfig(shots=[])
    assert scoring(RankingConfig(), reference=other).key != first.key
    with pytest.raises(ConfigError, match=r"ranking.task_model 'c' is not a configured task "
                                          r"model"):
        scoring(RankingConfig(task_model="c"))


def test_nothing_is_loaded_before_a_text_is_scored(tmp_path: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import synth
    from synth import GeneratorConfig

    built: list[Any] = []
    monkeypatch.setattr(synth, "generator_backend", lambda cfg: built.append(cfg))
    s = scoring(RankingConfig())
    models = s.focus_models(tmp_path, GeneratorConfig(model="hf:unused"),
                            task_scorers={})  # an empty mapping: a lookup would fail
    assert models.key == s.key and built == []
    with pytest.raises(KeyError, match="'a'"):  # the first text looks the scorer up
        models.task(["a fine film"])
