"""Held-out evaluation: accuracy and per-class precision/recall/F1 on labeled data."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from discovery._data import PACKAGED_SPLITS, LabeledSet, packaged_split, read_labeled_file
from synth.core import ConfigError


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


def load_evaluation_set(cfg: Any, data: str | None = None) -> LabeledSet:
    """The labeled set ``evaluation.data`` (or ``data``) names, cut to ``evaluation.size``."""
    ev = cfg.evaluation
    source = data or ev.data
    name = source.partition(":")[2]
    if source.startswith("packaged:") and name in PACKAGED_SPLITS:
        if list(cfg.task.labels) != list(PACKAGED_SPLITS[name]):
            raise ConfigError(f"the packaged {source} set is labeled "
                              f"{'/'.join(PACKAGED_SPLITS[name])}, "
                              f"but the task's labels are {list(cfg.task.labels)}",
                              where="evaluation.data", fix="pass --data with your labeled file")
        _, held = packaged_split(name, seed=ev.split_seed, holdout_fraction=ev.holdout_fraction)
        labeled = held
    elif source.startswith("packaged:"):
        raise ConfigError(f"unknown packaged evaluation set {source!r}", where="evaluation.data",
                          fix="use packaged:rotten_tomatoes, packaged:tweets3 or a .jsonl/.csv "
                              "path")
    else:
        labeled = read_labeled_file(source, cfg.task.labels)
    return labeled.head(ev.size)


def evaluate(cfg: Any, data: str | None = None, *, scorers: Mapping[str, Any] | None = None,
             reference: Any = None, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Evaluate each task model and the (calibrated) reference on held-out labeled data.

    Args:
        cfg: the run config (task, task_models, reference, evaluation).
        data: a labeled .jsonl/.csv file (default: ``evaluation.data``).
        scorers: already built task scorers by name (default: from the config).
        reference: an already built FewShotReference (default: from the config, if
            ``evaluation.include_reference``).
        progress: print a line per model.

    Returns:
        ``{model name: report}``; each report has n, accuracy, macro_f1, per_class, seconds.
    """
    from discovery._stages import build_task_scorers

    labeled = load_evaluation_set(cfg, data)
    labels = list(cfg.task.labels)
    models: dict[str, Any] = dict(scorers) if scorers is not None else build_task_scorers(cfg)
    if reference is None and cfg.evaluation.include_reference:
        from discovery._reference import FewShotReference

        reference = FewShotReference.from_config(cfg.reference, labels)
    if reference is not None:
        models["reference"] = reference
    out: dict[str, dict[str, Any]] = {}
    for name, scorer in models.items():
        start = time.perf_counter()
        if progress:
            print(f"evaluating {name} on {len(labeled)} examples ...", flush=True)
        # Few-shot scorers calibrate on the whole held-out set at once (batch calibration).
        predict = getattr(scorer, "predict_proba_set", scorer.predict_proba)
        rows = predict(labeled.texts)
        preds = [max(labels, key=row.__getitem__) for row in rows]
        report = classification_report(labeled.labels, preds, labels)
        report["seconds"] = round(time.perf_counter() - start, 2)
        out[name] = report
    return out


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
