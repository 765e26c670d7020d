"""Task-model kinds: the registry of spec schemes (``<scheme>:<target>``), like the engines'.

Each kind says, once, how its models load, what a cheap check before any work looks at, what
``synthcheck models`` shows about it, whether it is a few-shot LLM (scored as raw label
log-probs with the reference prompt and calibrated like the reference), and what besides
its own config changes its scores (the hash). A new kind is one :class:`TaskModelKind` and
one entry in :data:`TASK_MODEL_KINDS`.

| spec | adapter |
| --- | --- |
| ``hf:<id or path>`` | :class:`~discovery.HFClassifierScorer` (transformers sequence classifier) |
| ``sklearn:<file.skops>`` | :class:`~discovery.SklearnScorer` (a pipeline with ``predict_proba``) |
| ``python:<module>:<name>`` | :class:`~discovery.CallableScorer` (a function, or predict_proba) |
| ``fewshot:<LLM spec>`` | :class:`~discovery.FewShotReference` with the reference prompt config |
| ``demo:sentiment`` | the demo TF-IDF + logistic regression model (see :mod:`discovery._demo`) |
| ``demo:sentiment3`` | its 3-class version, trained on the packaged tweets |
| ``hatesonar:default`` | :class:`~discovery._hatesonar.HateSonarScorer` (hatesonar's ONNX model) |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discovery._model_files as files
from synth.core import ConfigError, ModelNotAvailable, Registry, did_you_mean

if TYPE_CHECKING:
    from discovery._config import EvaluationConfig, ReferenceConfig
    from discovery._protocols import TaskScorer


def _no_rows() -> list[dict[str, Any]]:
    return []


def _no_extra(reference: ReferenceConfig, evaluation: EvaluationConfig) -> dict[str, Any]:
    return {}


def _no_files(target: str) -> str | None:
    return None


def _digest(name: str) -> Callable[[str], str | None]:
    """A ``discovery._model_files`` digest function."""
    fn: Callable[[str], str | None] = getattr(files, name)
    return fn


@dataclass(frozen=True)
class TaskModelKind:
    """One task-model scheme.

    Attributes:
        scheme: the spec's prefix (``sklearn`` in ``sklearn:model.skops``).
        load: ``(target, labels, *, label_map, name, batch_size, max_length, device,
            trusted_types, reference, evaluation) -> TaskScorer``.
        check: ``(target, labels, *, where, label_map, trusted_types, reference)``: what
            loading or the first scoring call would refuse, found without loading anything
            heavy.
        availability: rows for ``synthcheck models`` (``spec``, ``available``, ``detail``).
        few_shot: an LLM with the reference prompt: scored as raw label log-probs and
            calibrated like the reference (its prompt config is part of its hash).
        hash_extra: ``(reference, evaluation) -> dict``: what besides the model's own config
            changes its scores.
        files_digest: ``target -> digest or None``: the digest of the local files the
            model reads (part of its hash, so a retrained model at the same path is
            rescored); None when it reads none.
    """

    scheme: str
    load: Callable[..., TaskScorer]
    check: Callable[..., None]
    availability: Callable[[], list[dict[str, Any]]] = _no_rows
    few_shot: bool = False
    hash_extra: Callable[[ReferenceConfig, EvaluationConfig], dict[str, Any]] = _no_extra
    files_digest: Callable[[str], str | None] = _no_files


TASK_MODEL_KINDS: Registry[TaskModelKind] = Registry("task-model scheme", {
    "hf": "discovery._kinds:HF",
    "sklearn": "discovery._kinds:SKLEARN",
    "python": "discovery._kinds:PYTHON",
    "fewshot": "discovery._kinds:FEWSHOT",
    "demo": "discovery._kinds:DEMO",
    "hatesonar": "discovery._kinds:HATESONAR",
})


def split_task_spec(spec: str, where: str | None = None) -> tuple[TaskModelKind, str]:
    """The kind and the target of a task-model spec.

    Raises:
        ConfigError: a spec without ``SCHEME:TARGET``, or an unknown scheme ("did you mean").
    """
    scheme, sep, rest = str(spec).partition(":")
    if not sep or not rest:
        raise ConfigError(f"bad task model spec {spec!r}", where=where,
                          fix="write SCHEME:TARGET, e.g. sklearn:model.skops or demo:sentiment")
    if scheme not in TASK_MODEL_KINDS:
        raise ConfigError(f"unknown task-model scheme {scheme!r} in {spec!r}", where=where,
                          fix=did_you_mean(scheme, TASK_MODEL_KINDS.names()))
    return TASK_MODEL_KINDS.get(scheme), rest


def task_model_kind(spec: str) -> TaskModelKind:
    """The kind of a task-model spec (see :func:`split_task_spec`)."""
    return split_task_spec(spec)[0]


def is_few_shot(spec: str) -> bool:
    """Whether the task model ``spec`` names is a few-shot LLM (a ``fewshot:`` model); a
    spec of no known kind is not."""
    scheme = str(spec).partition(":")[0]
    return scheme in TASK_MODEL_KINDS and TASK_MODEL_KINDS.get(scheme).few_shot


def check_task_model(spec: str, labels: Sequence[str], *, where: str,
                     label_map: Mapping[str, str] | None = None,
                     trusted_types: Sequence[str] = (),
                     allow_unsafe_types: bool = False,
                     reference: ReferenceConfig | None = None) -> None:
    """Check a task-model spec before any expensive work, loading nothing heavy: the scheme,
    then its kind's check (for ``hf:`` the folder and its ``config.json`` labels against the
    task's; for ``sklearn:`` the file (loaded: it is small) and its classes; for ``python:``
    the import and one call on a probe sentence; for ``demo:`` the task and its labels; for
    ``fewshot:`` the LLM spec and the reference's label words and shots; for ``hatesonar:``
    the package, the model file and its classes against the task's labels).

    Raises:
        ConfigError / ModelNotAvailable / DataError: what loading the model or the first
            scoring call would raise later.
    """
    kind, rest = split_task_spec(spec, where)
    kind.check(rest, labels, where=where, label_map=label_map, trusted_types=trusted_types,
               allow_unsafe_types=allow_unsafe_types, reference=reference)


def task_model_availability() -> list[dict[str, Any]]:
    """Rows for ``synthcheck models`` about the task-model kinds that live here, not in
    ``synth`` (each kind's own rows, e.g. one per ``demo:`` task and one for
    ``fewshot:<LLM spec>``); each row has ``spec``, ``available`` and ``detail`` like
    :func:`synth.model_availability`."""
    return [row for scheme in TASK_MODEL_KINDS.names()
            for row in TASK_MODEL_KINDS.get(scheme).availability()]


def load_task_scorer(
    spec: str,
    labels: Sequence[str],
    *,
    label_map: Mapping[str, str] | None = None,
    name: str | None = None,
    batch_size: int = 64,
    max_length: int = 256,
    device: str = "auto",
    trusted_types: Sequence[str] = (),
    allow_unsafe_types: bool = False,
    reference: ReferenceConfig | None = None,
    evaluation: EvaluationConfig | None = None,
) -> TaskScorer:
    """Load the task model that ``spec`` names as a TaskScorer over ``labels``.

    Args:
        spec: ``hf:…``, ``sklearn:…``, ``python:module:name``, ``fewshot:<LLM spec>`` or
            ``demo:sentiment``.
        labels: the task's label names (every output dict uses these).
        label_map: model label -> task label, when the model's names differ.
        name: the scorer's name in files and reports (default: the scheme).
        batch_size, max_length, device: adapter settings (do not change outputs).
        trusted_types: extra types a ``.skops`` file may contain.
        allow_unsafe_types: accept trusted types that can run code (``posix.system``...).
        reference: the ReferenceConfig whose prompt a ``fewshot:`` task model uses.
        evaluation: the EvaluationConfig whose Rotten Tomatoes split ``demo:sentiment`` is
            trained on (its train side; default: ``EvaluationConfig()``'s split).

    Raises:
        ConfigError: malformed spec, unknown scheme (with "did you mean"), or labels that do
            not match the task's.
        ModelNotAvailable / DataError: the model cannot be loaded.
    """
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(f"bad task model spec {spec!r}",
                          fix="write SCHEME:TARGET, e.g. sklearn:model.skops or demo:sentiment")
    return TASK_MODEL_KINDS.get(scheme).load(rest, labels, label_map=label_map, name=name or scheme,
                  batch_size=batch_size, max_length=max_length, device=device,
                  trusted_types=trusted_types, allow_unsafe_types=allow_unsafe_types,
                  reference=reference, evaluation=evaluation)


# --- the kinds ------------------------------------------------------------------------------

def _load(target: str) -> Callable[..., TaskScorer]:
    """The loader ``"module:function"``, imported when first called."""
    def load(*args: Any, **kwargs: Any) -> TaskScorer:
        from synth.core import import_object

        fn: Any = import_object(target)
        return fn(*args, **kwargs)
    return load


def _check_hf(rest: str, labels: Sequence[str], *, where: str,
              label_map: Mapping[str, str] | None = None, **_: Any) -> None:
    """An ``hf:`` classifier folder's labels (from ``config.json``) against the task's."""
    import json

    from discovery._scorers import LabelMapper
    from synth.engines import resolve_model_path

    try:
        path = resolve_model_path(f"hf:{rest}")
    except (ConfigError, ModelNotAvailable) as exc:
        raise type(exc)(exc.what, where=f"{where}: hf:{rest}", fix=exc.fix) from None
    if not isinstance(path, Path):
        return  # a hub id: the loader reports what it finds
    config = path / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise ModelNotAvailable("the model folder has no readable config.json (not a "
                                "transformers model folder)", where=f"{where}: {path}",
                                fix="give the folder that save_pretrained wrote") from None
    id2label = data.get("id2label") or {}
    n = int(data.get("num_labels") or len(id2label) or 2)
    names = [str(id2label.get(str(i), id2label.get(i, f"LABEL_{i}"))) for i in range(n)]
    if label_map is not None:
        label_map = {names[int(k)] if k.isdigit() and int(k) < n else k: v
                     for k, v in label_map.items()}
    LabelMapper(names, labels, label_map, f"{where}: hf:{rest}")


def _check_sklearn(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                   trusted_types: Sequence[str] = (), allow_unsafe_types: bool = False,
                   **_: Any) -> None:
    from discovery._scorers import SklearnScorer

    SklearnScorer.from_file(rest, labels, trusted_types=trusted_types, label_map=label_map,
                            allow_unsafe_types=allow_unsafe_types)


def _check_python(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                  **_: Any) -> None:
    from discovery._scorers import _load_python

    scorer = _load_python(rest, labels, label_map=label_map, name="probe", batch_size=1)
    scorer.predict_proba(["This is a short probe sentence."])


def _check_demo(rest: str, labels: Sequence[str], *, where: str,
                label_map: Mapping[str, str] | None = None, **_: Any) -> None:
    from discovery._data import PACKAGED_SPLITS
    from discovery._demo import DEMO_DATA, DEMO_TASKS
    from discovery._scorers import LabelMapper

    if rest not in DEMO_TASKS:
        raise ConfigError(f"unknown demo model {rest!r}", where=where,
                          fix=did_you_mean(rest, sorted(DEMO_TASKS)))
    # The demo model's classes are the labels of the packaged set it is trained on.
    LabelMapper(list(PACKAGED_SPLITS[DEMO_DATA[rest]]), labels, label_map, where)


def _check_fewshot(rest: str, labels: Sequence[str], *, where: str,
                   reference: ReferenceConfig | None = None,
                   **_: Any) -> None:
    from discovery._config import ReferenceConfig
    from discovery._model_checks import check_llm_spec
    from discovery._reference import FewShotReference

    FewShotReference.check(reference or ReferenceConfig(), labels)
    check_llm_spec(rest, where)


def _check_hatesonar(rest: str, labels: Sequence[str], *, where: str,
                     label_map: Mapping[str, str] | None = None, **_: Any) -> None:
    from discovery._hatesonar import check_hatesonar

    check_hatesonar(rest, labels, where=where, label_map=label_map)


def _demo_rows() -> list[dict[str, Any]]:
    from discovery._scorers import demo_availability

    return demo_availability()


def _fewshot_rows() -> list[dict[str, Any]]:
    return [{"spec": "fewshot:<LLM spec>", "available": True,
             "detail": "an LLM as a few-shot classifier with the reference prompt (shots, "
                       "label words, calibration), e.g. "
                       "fewshot:packaged:smollm2-135m-instruct (task models)"}]


def _fewshot_extra(reference: ReferenceConfig, evaluation: EvaluationConfig
                   ) -> dict[str, Any]:
    from discovery._config import reference_payload

    return {"reference": reference_payload(reference)}


def _demo_extra(reference: ReferenceConfig, evaluation: EvaluationConfig) -> dict[str, Any]:
    return {"demo_split": [evaluation.split_seed, evaluation.holdout_fraction]}


HF = TaskModelKind("hf", _load("discovery._scorers:_load_hf"), _check_hf,
                   files_digest=_digest("folder_target_digest"))
SKLEARN = TaskModelKind("sklearn", _load("discovery._scorers:_load_sklearn"), _check_sklearn,
                        files_digest=_digest("file_target_digest"))
PYTHON = TaskModelKind("python", _load("discovery._scorers:_load_python"), _check_python,
                       files_digest=_digest("module_target_digest"))
FEWSHOT = TaskModelKind("fewshot", _load("discovery._scorers:_load_fewshot"), _check_fewshot,
                        availability=_fewshot_rows, few_shot=True, hash_extra=_fewshot_extra)
DEMO = TaskModelKind("demo", _load("discovery._scorers:_load_demo"), _check_demo,
                     availability=_demo_rows, hash_extra=_demo_extra)
HATESONAR = TaskModelKind("hatesonar", _load("discovery._hatesonar:_load_hatesonar"),
                          _check_hatesonar)


def model_files_digest(spec: str) -> str | None:
    """sha256 (hex, 16 characters) of the files the task model ``spec`` reads, or None for
    a spec that reads no local file (see the module docstring). A file that does not exist
    gives None too: loading the model reports it. Each kind says which files it reads
    (``TaskModelKind.files_digest``); an unknown scheme reads none."""
    scheme, _, rest = spec.partition(":")
    if scheme not in TASK_MODEL_KINDS:
        return None
    return TASK_MODEL_KINDS.get(scheme).files_digest(rest)
