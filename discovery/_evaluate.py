"""Held-out evaluation: accuracy and per-class precision/recall/F1 on labeled data."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._config import (
    EvaluationConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._data import PACKAGED_SPLITS, LabeledSet, packaged_split, read_labeled_file
from discovery._kinds import is_few_shot
from synth.core import ConfigError, LabelSpace, derive_seed

if TYPE_CHECKING:
    from discovery._protocols import TaskScorer
    from discovery._reference import FewShotReference
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
                          fix="use packaged:rotten_tomatoes, packaged:tweets3, "
                              "packaged:complaint or a .jsonl/.csv path")
    else:
        labeled = read_labeled_file(source, labels.list, text_field=str(ev.text_field),
                                    label_field=str(ev.label_field),
                                    encoding=str(ev.encoding))
    return labeled.stratified_sample(ev.size, derive_seed(ev.split_seed, SAMPLE_SEED_KEY))


def describe_sample(labeled: LabeledSet, labels: Sequence[str], size: int | None = None) -> str:
    """``100 examples (a stratified sample of 400): negative 50, positive 50``: what
    `evaluate` prints before it scores; with the ``size`` asked for, a set smaller than it
    says so (``6 examples (all of them; evaluation.size asks for 1,000): ...``)."""
    counts = labeled.counts()
    per = ", ".join(f"{lab} {counts.get(lab, 0)}" for lab in labels)
    of = (f" (a stratified sample of {labeled.sampled_from})"
          if labeled.sampled_from is not None else "")
    if size is not None and len(labeled) < size and labeled.sampled_from is None:
        of = f" (all of them; evaluation.size asks for {size:,})"
    return f"{len(labeled)} examples{of}: {per}"


@dataclass(frozen=True)
class HeldOutScores:
    """What :func:`evaluate_held_out` scored: the gold labels and each model's probabilities
    (n x labels, columns in ``labels`` order; the reference's calibrated)."""

    labels: list[str]
    golds: list[str]
    probs: dict[str, np.ndarray]
    abstain: np.ndarray | None = None
    """The reference's abstain answer's probability per example (None without
    ``reference.abstain``): held-out examples are judged by the run's one rule."""


def evaluate(labels: LabelSpace, evaluation: EvaluationConfig, data: str | None = None, *,
             task_models: Sequence[TaskModelConfig] = (),
             reference: ReferenceConfig | None = None,
             scorers: Mapping[str, TaskScorer] | None = None,
             reference_scorer: FewShotReference | None = None,
             progress: bool = True, raw_dir: str | Path | None = None,
             corpus: SeedCorpusConfig | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate each task model and the (calibrated) reference on held-out labeled data:
    :func:`evaluate_held_out`'s reports (same arguments)."""
    return evaluate_held_out(labels, evaluation, data, task_models=task_models,
                             reference=reference, scorers=scorers,
                             reference_scorer=reference_scorer, progress=progress,
                             raw_dir=raw_dir, corpus=corpus)[0]


def evaluate_held_out(labels: LabelSpace, evaluation: EvaluationConfig,
                      data: str | None = None, *,
                      task_models: Sequence[TaskModelConfig] = (),
                      reference: ReferenceConfig | None = None,
                      scorers: Mapping[str, TaskScorer] | None = None,
                      reference_scorer: FewShotReference | None = None,
                      progress: bool = True, raw_dir: str | Path | None = None,
                      corpus: SeedCorpusConfig | None = None
                      ) -> tuple[dict[str, dict[str, Any]], HeldOutScores]:
    """Evaluate each task model and the (calibrated) reference on held-out labeled data.

    Args:
        labels: the task's labels (gold labels and every model's outputs use them).
        evaluation: the evaluation section (data, size, split, include_reference).
        data: a labeled .jsonl/.csv file (default: ``evaluation.data``).
        task_models: the task models to build when ``scorers`` is not given.
        reference: the reference's config: the prompt of ``fewshot:`` task models, and the
            reference evaluated when ``evaluation.include_reference``.
        scorers: task scorers by name (default: built from ``task_models``); looked up only
            when a model's scores are needed, so a lazy mapping builds only those.
        reference_scorer: an already built FewShotReference (default: from ``reference``,
            if ``evaluation.include_reference``).
        progress: print the evaluation set's size per label, and a line per model.
        raw_dir: a run directory. The held-out raw label log-probs of the reference and of
            ``fewshot:`` task models are then stored under its
            ``scores/.parts/heldout-<name>/`` keyed without the calibration settings (the
            content-free inputs' beside the corpus scores' chunks), and reused: a change of
            ``reference.calibration`` only refits the calibration, and these models are
            loaded only when some raw scores are missing.
        corpus: the seed corpus section: when the data is its own file, the fields and
            encoding the evaluation section leaves unset come from it.

    Returns:
        ``({model name: report}, scores)``: each report has n, accuracy, macro_f1,
        per_class, seconds; the scores are the probabilities behind them (what the
        hard subset's precision is measured on, see :mod:`discovery._precision`).

    Raises:
        ValueError: the reference is to be evaluated but neither ``reference`` nor
            ``reference_scorer`` is given.
    """
    from discovery._config import ReferenceConfig as _Ref
    from discovery._task_models import build_task_scorers

    labeled = load_evaluation_set(labels, evaluation, data, corpus=corpus)
    if progress:
        asked = evaluation.size if "size" in evaluation.model_fields_set else None
        print(f"evaluation set: {describe_sample(labeled, labels.list, asked)}", flush=True)
    names = labels.list
    ref_cfg = reference or _Ref()
    by_name = {t.name: t for t in task_models}
    order = list(scorers) if scorers is not None else list(by_name)
    built: dict[str, TaskScorer] = {}

    def get(name: str) -> TaskScorer:
        if name not in built:
            if name == "reference" and (reference_scorer is not None
                                        or evaluation.include_reference):
                from discovery._reference import FewShotReference

                built[name] = reference_scorer if reference_scorer is not None else \
                    FewShotReference.from_config(ref_cfg, names)
            elif scorers is not None:
                built[name] = scorers[name]
            elif raw_dir is not None:  # one model at a time: only what is needed is built
                built.update(build_task_scorers([by_name[name]], labels, reference=ref_cfg,
                                                evaluation=evaluation))
            else:
                built.update(build_task_scorers(task_models, labels, reference=ref_cfg,
                                                evaluation=evaluation))
        return built[name]

    if reference_scorer is None and evaluation.include_reference and reference is None:
        raise ValueError("evaluate() needs the reference config (or a built reference) "
                         "when evaluation.include_reference is set")
    if reference_scorer is not None or evaluation.include_reference:
        order = [n for n in order if n != "reference"] + ["reference"]
    out: dict[str, dict[str, Any]] = {}
    probs: dict[str, np.ndarray] = {}
    abstain: np.ndarray | None = None
    for name in order:
        start = time.perf_counter()
        if progress:
            print(f"evaluating {name} on {len(labeled)} examples ...", flush=True)
        tm = by_name.get(name)
        few = name == "reference" or (tm is not None and is_few_shot(tm.spec))
        if raw_dir is not None and few:
            rows, ab = _predict_from_raw(name, get, tm, labels, ref_cfg, evaluation,
                                         labeled.texts, Path(raw_dir), progress)
        else:
            rows, ab = _predict(name, get(name), labeled.texts, progress)
        if name == "reference":
            abstain = ab
        preds = [max(names, key=row.__getitem__) for row in rows]
        report = classification_report(labeled.labels, preds, names)
        report["seconds"] = round(time.perf_counter() - start, 2)
        out[name] = report
        probs[name] = np.array([[float(row[lab]) for lab in names] for row in rows],
                               dtype=np.float64).reshape(len(rows), len(names))
    return out, HeldOutScores(list(names), list(labeled.labels), probs, abstain)


def _predict_from_raw(name: str, get: Any, tm: TaskModelConfig | None, labels: LabelSpace,
                      reference: ReferenceConfig, evaluation: EvaluationConfig,
                      texts: list[str], run: Path, progress: bool
                      ) -> tuple[list[dict[str, float]], np.ndarray | None]:
    """A few-shot scorer's calibrated probabilities from its held-out raw log-probs, stored
    in the run directory (scored only where missing), calibrated as
    :meth:`~discovery.FewShotReference.predict_proba_set` does."""
    from discovery._chunks import heldout_raw_scores

    probs, abstain = heldout_raw_scores(run, name, lambda t: get(name).raw_logprobs(t), tm,
                                        labels=labels, reference=reference,
                                        evaluation=evaluation, texts=texts, progress=progress)
    return [dict(zip(labels.list, map(float, row), strict=True)) for row in probs], abstain


EVAL_BATCH = 256
"""Texts per call when evaluating a task model (the progress bar moves per call)."""


def _predict(name: str, scorer: TaskScorer, texts: list[str], progress: bool
             ) -> tuple[list[dict[str, float]], np.ndarray | None]:
    """Score the held-out texts under a progress bar: few-shot scorers calibrate on the whole
    set (their raw scores come in chunks), other scorers are called per batch. Returns the
    rows and the abstain answer's probabilities (a reference with one; else None)."""
    from discovery._reference import FewShotReference
    from synth.core import progress_bar

    rows: list[dict[str, float]] = []
    with progress_bar(len(texts), f"evaluate {name}", "sent", enabled=progress) as bar:
        if isinstance(scorer, FewShotReference):
            probs, abstain = scorer.predict_set(texts, on_progress=bar.update)
            return [dict(zip(scorer.labels, map(float, r), strict=True)) for r in probs], \
                abstain
        if hasattr(scorer, "predict_proba_set"):
            return list(scorer.predict_proba_set(texts, on_progress=bar.update)), None
        for s in range(0, len(texts), EVAL_BATCH):
            batch = texts[s:s + EVAL_BATCH]
            rows.extend(scorer.predict_proba(batch))
            bar.update(len(batch))
    return rows, None


def recall_by_model(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{model: {label: recall}}`` from :func:`evaluate`'s reports, the reference left out
    (what verify shows beside each task model's results)."""
    return {name: {lab: c["recall"] for lab, c in rep["per_class"].items()}
            for name, rep in reports.items() if name != "reference"}


def write_eval_json(path: str | Path, reports: Mapping[str, Any], stage_hash: str,
                    **info: Any) -> Path:
    """Write ``eval.json``, the one writer `discover` and `synthcheck evaluate --run` share:
    ``{"reports", **info, **provenance(stage_hash)}`` (keys sorted), plus ``corpus_audit``
    (:func:`discovery.audited_precision`) when the run holds a blind audit."""
    from discovery._audit import audited_precision
    from synth.core import provenance, write_json_atomic

    path = Path(path)
    audit = audited_precision(path.parent)
    extra = {"corpus_audit": audit} if audit is not None else {}
    write_json_atomic(path, {**info, **extra, "reports": dict(reports),
                             **provenance(stage_hash)})
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


def evaluate_reliability(labels: LabelSpace, evaluation: EvaluationConfig,
                         data: str | None = None, *, task_models: Sequence[TaskModelConfig],
                         reference: ReferenceConfig, ranking: RankingConfig,
                         corpus: SeedCorpusConfig | None = None,
                         scorers: Mapping[str, TaskScorer] | None = None, progress: bool = True,
                         corpus_size: int | None = None, raw_dir: str | Path | None = None
                         ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """:func:`evaluate_held_out` (``data`` over ``evaluation.data``), and the hard
    subset's precision measured on the same held-out probabilities
    (:func:`~discovery.held_out_reliability`: ``ranking``'s rule on the ranked task model;
    ``corpus_size`` scales ``ranking.top_k``). Given a run directory ``raw_dir``, the few-shot
    models' held-out raw log-probs are stored and reused there.

    Returns:
        ``(reports, reliability)``: the per-model reports and the ``eval.json`` fields of
        :func:`~discovery.held_out_reliability` (empty without the reference), with ``trust``:
        :func:`discovery.trust_decision` on them.
    """
    from discovery._precision import held_out_reliability
    from discovery._task_models import ranked_task_name
    from discovery._trust import trust_decision

    reports, held = evaluate_held_out(labels, evaluation, data, task_models=task_models,
                                      reference=reference, scorers=scorers, progress=progress,
                                      raw_dir=raw_dir, corpus=corpus)
    abstain = reference.abstain
    reliability = held_out_reliability(
        held, ranking, ranked=ranked_task_name(ranking, task_models), corpus_size=corpus_size,
        abstain_threshold=abstain.threshold if abstain is not None else None)
    if reliability:  # the held-out side of the trust decision (the summary adds an audit)
        reliability["trust"] = trust_decision(reliability)
    return reports, reliability
