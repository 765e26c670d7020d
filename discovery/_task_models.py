"""Building the configured task models, and which one rank and mine read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from discovery._config import (
    EvaluationConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from synth.core import (
    ConfigError,
    LabelSpace,
)


def build_task_scorers(task_models: Sequence[TaskModelConfig], labels: LabelSpace, *,
                       reference: ReferenceConfig, evaluation: EvaluationConfig
                       ) -> dict[str, Any]:
    """Load every configured task model (names must be unique); ``fewshot:`` models use the
    ``reference`` prompt, ``demo:`` models the ``evaluation`` split."""
    from discovery._kinds import load_task_scorer

    _check_task_names(task_models)
    return {t.name: load_task_scorer(t.spec, labels.list, label_map=t.label_map,
                                     name=t.name, batch_size=t.batch_size,
                                     max_length=t.max_length, trusted_types=t.trusted_types,
                                     allow_unsafe_types=t.allow_unsafe_types,
                                     reference=reference, evaluation=evaluation)
            for t in task_models}


def _check_task_names(task_models: Sequence[TaskModelConfig]) -> None:
    names = [t.name for t in task_models]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"task model names must be unique, got {dupes} more than once",
                          where="task_models", fix="give each task model its own name")


def ranked_task_model(want: str | None, names: Sequence[str]) -> str | None:
    """The one rule for which task model is ranked: ``ranking.task_model`` when set, else the
    first configured task model (None when there is none). Not checked against ``names``:
    :func:`ranked_task_name` does that."""
    return want or (names[0] if names else None)


def ranked_task_name(ranking: RankingConfig, task_models: Sequence[TaskModelConfig]) -> str:
    """The name of the task model that rank and mine read (see :func:`ranked_task_model`).

    Raises:
        ConfigError: ``ranking.task_model`` names no configured task model.
    """
    names = [t.name for t in task_models]
    want = ranked_task_model(ranking.task_model, names)
    if want not in names:
        from synth.core import did_you_mean

        raise ConfigError(f"ranking.task_model {want!r} is not a configured task model",
                          where="ranking.task_model", fix=did_you_mean(str(want), names))
    return str(want)
