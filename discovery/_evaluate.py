"""Held-out evaluation: accuracy and per-class precision/recall/F1 on labeled data."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._config import EvaluationConfig, ReferenceConfig, TaskModelConfig
from discovery._data import PACKAGED_SPLITS, LabeledSet, packaged_split, read_labeled_file
from synth.core import ConfigError, LabelSpace, derive_seed

if TYPE_CHECKING:
    from synth import SeedCorpusConfig


def classification_report(golds: Sequence[str], preds: Sequence[str],
                          labels: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1 and per-class precision/recall/F1/support."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    p, r, f, s = precision_recall_fscore_support(golds, preds, labels=list(labels),
                                                 zero_division=0)
    return {
        "n": len(golds),
        "accuracy": float(accuracy_score(golds, preds)),
        "macro_f1": float(np.mean(f)),
        "per_class": {lab: {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]),
                            "support": int(s[i])} for i, lab in enumerate(labels)},
    }


SAMPLE_SEED_KEY = "evaluation-sample"
"""The key :func:`synth.core.derive_seed` mixes into ``evaluation.split_seed`` for the
stratified ``evaluation.size`` sample."""


def load_evaluation_set(labels: LabelSpace, evaluation: EvaluationConfig,
                        data: str | None = None, *,
                        corpus: SeedCorpusConfig | None = None) -> LabeledSet:
    """The labeled set ``evaluation.data`` (or ``data``) names, as a stratified seeded sample
    of ``evaluation.size`` examples (:meth:`LabeledSet.stratified_sample`, seed
    ``derive_seed(evaluation.split_seed, "evaluation-sample")``).

    A file is read with ``evaluation.text_field``, ``label_field`` and ``encoding``; those
    left at None come from ``corpus`` when the file is the seed corpus's own, else are
    ``text``, ``label`` and ``utf-8`` (see :meth:`EvaluationConfig.resolved`).

    Raises:
        ConfigError: the packaged set's labels are not the task's, or an unknown packaged set.
        DataError: the labeled file cannot be read (see :func:`read_labeled_file`).
    """
    ev = evaluation.resolved(corpus, data)
    source = ev.data
    name = source.partition(":")[2]
    if source.startswith("packaged:") and name in PACKAGED_SPLITS:
        packaged = LabelSpace.of(PACKAGED_SPLITS[name])
        if labels != packaged:
            raise ConfigError(f"the packaged {source} set is labeled "
                              f"{'/'.join(packaged)}, but the task's labels are {labels.list}",
                              where="evaluation.data", fix="pass --data with your labeled file")
        _, held = packaged_split(name, seed=ev.split_seed, holdout_fraction=ev.holdout_fraction)
        labeled = held
    elif source.startswith("packaged:"):
        raise ConfigError(f"unknown packaged evaluation set {source!r}", where="evaluation.data",
                          fix="use packaged:rotten_tomatoes, packaged:tweets3 or a .jsonl/.csv "
                              "path")
    else:
        labeled = read_labeled_file(source, labels.list, text_field=str(ev.text_field),
                                    label_field=str(ev.label_field),
                                    encoding=str(ev.encoding))
    return labeled.stratified_sample(ev.size, derive_seed(ev.split_seed, SAMPLE_SEED_KEY))


def describe_sample(labeled: LabeledSet, labels: Sequence[str]) -> str:
    """``100 examples (a stratified sample of 400): negative 50, positive 50``: what
    `evaluate` prints before it scores."""
    counts = labeled.counts()
    per = ", ".join(f"{lab} {counts.get(lab, 0)}" for lab in labels)
    of = (f" (a stratified sample of {labeled.sampled_from})"
          if labeled.sampled_from is not None else "")
    return f"{len(labeled)} examples{of}: {per}"


def evaluate(labels: LabelSpace, evaluation: EvaluationConfig, data: str | None = None, *,
             task_models: Sequence[TaskModelConfig] = (),
             reference: ReferenceConfig | None = None,
             scorers: Mapping[str, Any] | None = None, reference_scorer: Any = None,
             progress: bool = True,
             corpus: SeedCorpusConfig | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate each task model and the (calibrated) reference on held-out labeled data.

    Args:
        labels: the task's labels (gold labels and every model's outputs use them).
        evaluation: the evaluation section (data, size, split, include_reference).
        data: a labeled .jsonl/.csv file (default: ``evaluation.data``).
        task_models: the task models to build when ``scorers`` is not given.
        reference: the reference's config: the prompt of ``fewshot:`` task models, and the
            reference evaluated when ``evaluation.include_reference``.
        scorers: already built task scorers by name (default: from ``task_models``).
        reference_scorer: an already built FewShotReference (default: from ``reference``,
            if ``evaluation.include_reference``).
        progress: print the evaluation set's size per label, and a line per model.
        corpus: the seed corpus section: when the data is its own file, the fields and
            encoding the evaluation section leaves unset come from it.

    Returns:
        ``{model name: report}``; each report has n, accuracy, macro_f1, per_class, seconds.

    Raises:
        ValueError: the reference is to be evaluated but neither ``reference`` nor
            ``reference_scorer`` is given.
    """
    from discovery._config import ReferenceConfig as _Ref
    from discovery._stages import build_task_scorers

    labeled = load_evaluation_set(labels, evaluation, data, corpus=corpus)
    if progress:
        print(f"evaluation set: {describe_sample(labeled, labels.list)}", flush=True)
    names = labels.list
    models: dict[str, Any] = (dict(scorers) if scorers is not None else build_task_scorers(
        task_models, labels, reference=reference or _Ref(), evaluation=evaluation))
    if reference_scorer is None and evaluation.include_reference:
        if reference is None:
            raise ValueError("evaluate() needs the reference config (or a built reference) "
                             "when evaluation.include_reference is set")
        from discovery._reference import FewShotReference

        reference_scorer = FewShotReference.from_config(reference, names)
    if reference_scorer is not None:
        models["reference"] = reference_scorer
    out: dict[str, dict[str, Any]] = {}
    for name, scorer in models.items():
        start = time.perf_counter()
        if progress:
            print(f"evaluating {name} on {len(labeled)} examples ...", flush=True)
        rows = _predict(name, scorer, labeled.texts, progress)
        preds = [max(names, key=row.__getitem__) for row in rows]
        report = classification_report(labeled.labels, preds, names)
        report["seconds"] = round(time.perf_counter() - start, 2)
        out[name] = report
    return out


EVAL_BATCH = 256
"""Texts per call when evaluating a task model (the progress bar moves per call)."""


def _predict(name: str, scorer: Any, texts: list[str], progress: bool) -> list[dict[str, float]]:
    """Score the held-out texts under a progress bar: few-shot scorers calibrate on the whole
    set (their raw scores come in chunks), other scorers are called per batch."""
    from synth.core import progress_bar

    rows: list[dict[str, float]] = []
    with progress_bar(len(texts), f"evaluate {name}", "sent", enabled=progress) as bar:
        if hasattr(scorer, "predict_proba_set"):
            return list(scorer.predict_proba_set(texts, on_progress=bar.update))
        for s in range(0, len(texts), EVAL_BATCH):
            batch = texts[s:s + EVAL_BATCH]
            rows.extend(scorer.predict_proba(batch))
            bar.update(len(batch))
    return rows


def recall_by_model(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{model: {label: recall}}`` from :func:`evaluate`'s reports, the reference left out
    (what verify shows beside each task model's results)."""
    return {name: {lab: c["recall"] for lab, c in rep["per_class"].items()}
            for name, rep in reports.items() if name != "reference"}


def write_eval_json(path: str | Path, reports: Mapping[str, Any], stage_hash: str,
                    **info: Any) -> Path:
    """Write ``eval.json``, the one writer `discover` and `synthcheck evaluate --run` share:
    ``{"reports", **info, **provenance(stage_hash)}`` (keys sorted)."""
    from synth.core import provenance, write_json_atomic

    path = Path(path)
    write_json_atomic(path, {**info, "reports": dict(reports), **provenance(stage_hash)})
    return path


def format_reports(reports: Mapping[str, Mapping[str, Any]], labels: Sequence[str]) -> str:
    """A plain-text table: one line per model and class."""
    lines = [f"{'model':<14} {'n':>5} {'accuracy':>8} {'macroF1':>8}   "
             + "  ".join(f"{lab[:10]:>10} P/R/F1" for lab in labels)]
    for name, rep in reports.items():
        cells = "  ".join(
            f"{rep['per_class'][lab]['precision']:.2f}/{rep['per_class'][lab]['recall']:.2f}/"
            f"{rep['per_class'][lab]['f1']:.2f}".rjust(17) for lab in labels)
        lines.append(f"{name:<14} {rep['n']:>5} {rep['accuracy']:>8.3f} {rep['macro_f1']:>8.3f}"
                     f"   {cells}")
    return "\n".join(lines)
