"""Every stage-2 input checked before any work is done (no LLM or transformers model loaded)."""

from __future__ import annotations

from collections.abc import Sequence

from discovery._config import (
    EvaluationConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._evaluate import load_evaluation_set
from discovery._task_models import _check_task_names, ranked_task_name
from synth.core import (
    ConfigError,
    LabelSpace,
)


def check_stage2(labels: LabelSpace, *, task_models: Sequence[TaskModelConfig],
                 reference: ReferenceConfig, evaluation: EvaluationConfig | None = None,
                 ranking: RankingConfig | None = None,
                 built: Sequence[str] = (), reference_built: bool = False) -> None:
    """Check every stage-2 input a later step would refuse, before any work is done and
    without loading an LLM or a transformers model: at least one task model, unique names,
    each task-model spec (resolvable, its labels the task's; see
    :func:`~discovery._scorers.check_task_model`), the reference's label words and shots
    against the task's labels, its engine and model spec, ``ranking.task_model``, and (given
    ``evaluation``) the evaluation data (readable, its columns and labels).

    Args:
        built: names of task models already built by the caller (their specs are not
            checked again).
        reference_built: the caller gives an already built reference.

    Raises:
        ConfigError / DataError / ModelNotAvailable: the first problem found.
    """
    from discovery._kinds import check_task_model
    from discovery._model_checks import check_llm_spec
    from discovery._reference import FewShotReference

    if not task_models:
        raise ConfigError("no task models to score", where="task_models",
                          fix="add at least one task model (e.g. spec: demo:sentiment)")
    _check_task_names(task_models)
    names = labels.list
    FewShotReference.check(reference, names)  # label words and shots
    if not reference_built:
        from synth.engines import ENGINES

        ENGINES.check(reference.backend, where="reference.backend")
        check_llm_spec(reference.model, "reference.model")
    for i, t in enumerate(task_models):
        if t.name in built:
            continue
        check_task_model(t.spec, names, where=f"task_models[{i}] ({t.name})",
                         label_map=t.label_map, trusted_types=t.trusted_types,
                         allow_unsafe_types=t.allow_unsafe_types, reference=reference)
    if ranking is not None:
        ranked_task_name(ranking, task_models)
    if evaluation is not None:
        load_evaluation_set(labels, evaluation)
