"""The task models as the stages that load or hash them see them: their sections, loaded
lazily and shared by every stage of one `discover`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.core import MANIFEST

if TYPE_CHECKING:
    from discovery import (
        EvaluationConfig,
        RankingConfig,
        ReferenceConfig,
        ScoringModels,
        TaskModelConfig,
    )
    from synth.core import LabelSpace
    from synthcheck._config import RunConfig


@dataclass(frozen=True)
class TaskModelSections:
    """The task models and what loading or hashing one needs: the labels, the reference
    prompt (``fewshot:`` models) and the evaluation split (``demo:`` models)."""

    labels: LabelSpace
    task_models: tuple[TaskModelConfig, ...]
    reference: ReferenceConfig
    evaluation: EvaluationConfig

    def model_hashes(self, task_models: Sequence[TaskModelConfig] | None = None) -> list[str]:
        """Each task model's hash (``task_models`` default: all of them)."""
        from discovery import task_model_hashes

        return task_model_hashes(self.task_models if task_models is None else task_models,
                                 labels=self.labels, reference=self.reference,
                                 evaluation=self.evaluation)

    def scoring(self, ranking: RankingConfig) -> ScoringModels:
        """The task model ``ranking`` ranks and the reference, as the stages after the score
        stage score new sentences with them (:class:`discovery.ScoringModels`)."""
        from discovery import ScoringModels

        return ScoringModels.ranked(ranking, self.task_models, labels=self.labels,
                                    reference=self.reference, evaluation=self.evaluation)

    def build(self, task_models: Sequence[TaskModelConfig] | None = None) -> dict[str, Any]:
        """Load the task models (default: all of them) by name."""
        from discovery import build_task_scorers

        return build_task_scorers(self.task_models if task_models is None else task_models,
                                  self.labels, reference=self.reference,
                                  evaluation=self.evaluation)


def scorer_sections(cfg: RunConfig) -> TaskModelSections:
    """The sections every stage that loads or hashes task models reads."""
    return TaskModelSections(labels=cfg.task.label_space, task_models=tuple(cfg.task_models),
                             reference=cfg.reference, evaluation=cfg.evaluation)


class LazyScorers(Mapping[str, Any]):
    """The task models by name, each loaded on first lookup into ``built`` (a dict shared
    with later stages), so a stage that needs only some loads only those."""

    def __init__(self, models: TaskModelSections, built: dict[str, Any]) -> None:
        self.models = models
        self.built = built
        self.names = [t.name for t in models.task_models]

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            tm = next(t for t in self.models.task_models if t.name == name)
            self.built.update(self.models.build([tm]))
        return self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def model_path_bases(run_dir: Path) -> list[Path]:
    """Where a run config's relative model paths may be relative to, in order: the working
    directory, its parent (a notebook's kernel starts in ``notebooks/``, the run was made
    from the repository root) and the folders above the run directory (``runs/NAME`` made
    from ``ROOT`` is ``ROOT/runs/NAME``)."""
    cwd = Path.cwd()
    return list(dict.fromkeys([cwd, cwd.parent, *Path(run_dir).resolve().parents]))


def resolve_model_path(spec: str, bases: Sequence[Path]) -> str:
    """``spec`` with a relative ``sklearn:``/``hf:`` path made absolute against the first of
    ``bases`` where it exists (unchanged when it is absolute, found nowhere or not a path:
    the loader's own error then names it)."""
    scheme, sep, rest = spec.partition(":")
    if scheme not in ("sklearn", "hf") or not sep or not rest:
        return spec
    path = Path(rest).expanduser()
    if path.is_absolute():
        return spec
    for base in bases:
        if (base / path).exists():
            return f"{scheme}:{base / path}"
    return spec


def load_run_scorers(run_dir: str | Path) -> dict[str, Any]:
    """Load the task models a run's config names (``task_models``), by name, the way
    ``discover`` loads them: the run config recorded in its manifest, mapped onto the task
    models' sections as the stages map it (each entry's label map, batch size, ...; a
    ``fewshot:`` task model uses the config's ``reference`` prompt, shots, label words and
    calibration).

    Raises:
        RunDirError: no manifest; ConfigError: the run config names no task models, two with
            one name, or does not validate.
    """
    from pydantic import ValidationError

    from formalize import RunOutputs
    from synth.core import ConfigError, format_loc
    from synthcheck._config import RunConfig

    run = RunOutputs(Path(run_dir))
    where = str(MANIFEST.path(run.path))
    entries = run.config.get("task_models")
    if not isinstance(entries, list) or not entries:
        raise ConfigError("the run's config names no task models", where=where,
                          fix="pass scorers yourself, or add task_models to the run config")
    try:
        cfg = RunConfig.model_validate(run.config)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"the run's config has an invalid {format_loc(first['loc'])}: "
                          f"{first['msg']}", where=where,
                          fix="fix the run config and rerun, or pass scorers yourself") from None
    # Relative model paths as the run was made (from the repository root) also from a
    # notebook's kernel in notebooks/.
    bases = model_path_bases(run.path)
    cfg = cfg.model_copy(update={"task_models": [
        t.model_copy(update={"spec": resolve_model_path(t.spec, bases)})
        for t in cfg.task_models]})
    try:
        return scorer_sections(cfg).build()
    except ConfigError as exc:
        if exc.where == "task_models":  # a check of the config as a whole (unique names)
            raise ConfigError(exc.what, where=where, fix=exc.fix) from None
        raise
