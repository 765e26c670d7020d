"""The score stage on a run directory: every corpus sentence scored by each task model and
the few-shot reference.

Scoring is resumable (see :mod:`discovery._chunks`): the final files are assembled
(atomically) once every chunk exists. Bad input never changes what a run directory already
holds: scoring marks itself ``running`` in the manifest while it works (a killed run shows
it); if it fails with an error, the manifest is put back as it was (the final files are only
written once everything is computed, so they are unchanged too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from discovery._artifacts import REFERENCE_PARTS, REFERENCE_SCORES, TASK_PARTS, TASK_SCORES
from discovery._calibration import Calibrator, abstain_probability
from discovery._chunks import (
    _ChunkRunner,
    _reference_chunk_fn,
    _remote,
    _score_chunks,
    _stage_abstain_calibration,
    _stage_calibration,
    _task_chunk_fn,
    _task_fn,
)
from discovery._config import (
    EvaluationConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._data import read_corpus
from discovery._kinds import is_few_shot
from discovery._protocols import TaskScorer
from discovery._reference import FewShotReference
from discovery._runner import StageJob
from discovery._stage_checks import check_stage2
from discovery._stage_hashes import (
    _fingerprint,
    raw_reference_hash,
    raw_task_model_hash,
    reference_hash,
    score_stage_hash,
    stage_record,
    task_model_hash,
)
from discovery._task_models import _check_task_names, build_task_scorers
from synth.core import (
    ConfigError,
    Executor,
    LabelSpace,
    RunDir,
    config_hash,
    write_jsonl,
)

ABSTAIN_COLUMN = "<abstain>"
"""The abstain answer's name in the recorded abstain calibration's bias."""


def score_run(run_dir: str | Path, *, labels: LabelSpace,
              task_models: Sequence[TaskModelConfig], reference: ReferenceConfig,
              evaluation: EvaluationConfig, config_dump: Mapping[str, Any] | None = None,
              task_scorers: Mapping[str, TaskScorer] | None = None,
              reference_scorer: FewShotReference | None = None,
              progress: bool = True, executor: Executor | None = None,
              stage_hash: str | None = None) -> dict[str, Any]:
    """Score every corpus sentence with each task model and the reference.

    Writes ``scores/task-<name>.jsonl`` ``{"id", "probs"}`` and ``scores/reference.jsonl``
    ``{"id", "probs", "logprobs"}`` (probs calibrated, logprobs the raw label log-probs),
    each with a ``.meta.json`` sidecar. Models are loaded only if some chunk needs them. The
    reference's (and ``fewshot:`` task models') chunks are raw label log-probs, keyed
    without the calibration settings, and the content-free inputs' raw log-probs are stored
    whatever the method, so a rerun after changing only the calibration loads no model.
    The final files are written only once every model has scored every chunk; an error
    before that leaves the run directory's files (manifest included) as they were.

    Args:
        run_dir: the run directory (its corpus must exist).
        labels: the task's labels.
        task_models: the task models to score with (names must be unique).
        reference: the few-shot reference's config (also the prompt of ``fewshot:`` models).
        evaluation: the evaluation section (the split ``demo:`` models are trained on).
        config_dump: the resolved run config to record in the manifest (default: the
            sections above, see :func:`stage_record`).
        task_scorers: already built task scorers by name (default: from ``task_models``).
        reference_scorer: an already built FewShotReference (default: from ``reference``).
        progress: show progress bars.
        executor: scores the chunks on its workers, each holding one loaded model (default:
            this process). Models given in ``task_scorers``/``reference_scorer`` stay here.
            Chunks are written by this process, so the files are the same bytes.
        stage_hash: the stage hash the caller's stage declaration computed (default:
            :func:`score_stage_hash` on the corpus read here).
    """
    if not task_models:
        raise ConfigError("no task models to score", where="task_models",
                          fix="add at least one task model (e.g. spec: demo:sentiment)")
    _check_task_names(task_models)
    run = RunDir(run_dir)
    ids, texts = read_corpus(run.path)
    if stage_hash is None:
        stage_hash = score_stage_hash(labels=labels, task_models=task_models,
                                      reference=reference, evaluation=evaluation,
                                      corpus_fp=_fingerprint(ids, texts),
                                      upstream=run.stage_hash("generate"))
    out_dir = REFERENCE_SCORES.path(run.path).parent
    outputs = [TASK_SCORES.path(run.path, name=t.name) for t in task_models] + [
        REFERENCE_SCORES.path(run.path)]
    job = StageJob(run, stage="score", stage_hash=stage_hash, outputs=outputs)
    if job.current():
        return job.skipped(sentences=len(ids))
    names = labels.list
    # Every spec, the prompt, shots and label words are checked before anything is written.
    check_stage2(labels, task_models=task_models, reference=reference,
                 built=list(task_scorers or {}), reference_built=reference_scorer is not None)
    record = dict(config_dump) if config_dump is not None else stage_record(
        labels, reference=reference, task_models=list(task_models), evaluation=evaluation)
    # Bad input (a model's bad output, a model that cannot load) puts every byte back;
    # anything else (out of memory, a bug) keeps the chunks scored so far for a rerun.
    with job.open(record, running=True, undo_under=out_dir):
        task_probs, raw, calib, task_calib, abstain_calib = _score_all(
            ids, texts, run.path, labels=labels, task_models=task_models, reference=reference,
            evaluation=evaluation, task_scorers=task_scorers, reference_scorer=reference_scorer,
            progress=progress, executor=executor)
    for tm, probs in zip(task_models, task_probs, strict=True):
        path = TASK_SCORES.path(run.path, name=tm.name)
        write_jsonl(path, ({"id": i, "probs": dict(zip(names, map(float, row), strict=True))}
                           for i, row in zip(ids, probs, strict=True)))
        extra = {"calibration": _calib_info(task_calib[tm.name], names)} \
            if tm.name in task_calib else {}
        job.write_meta(path, task_model_hash(tm, labels=labels, reference=reference,
                                              evaluation=evaluation),
                       task_model=tm.model_dump(mode="json"),
                       labels=names, sentences=len(ids), stage="score", **extra)
    k = len(names)
    probs = calib.predict_proba(raw[:, :k]) if len(raw) else np.zeros((0, k))
    path = REFERENCE_SCORES.path(run.path)
    abstain = abstain_probability(abstain_calib, raw) if abstain_calib is not None else None
    write_jsonl(path, (
        {"id": i, "probs": dict(zip(names, map(float, p), strict=True)),
         "logprobs": dict(zip(names, map(float, lp[:k]), strict=True)),
         **({} if abstain is None else {"abstain": float(abstain[j]),
                                        "abstain_logprob": float(lp[k])})}
        for j, (i, p, lp) in enumerate(zip(ids, probs, raw, strict=True))))
    ab_info: dict[str, Any] = {}
    if abstain_calib is not None and reference.abstain is not None:
        ab_info["abstain"] = {**reference.abstain.model_dump(mode="json"),
                              **_calib_info(abstain_calib, [*names, ABSTAIN_COLUMN])}
    job.write_meta(path, reference_hash(reference, labels),
                   reference=reference.model_dump(mode="json"), labels=names,
                   calibration=_calib_info(calib, names),
                   sentences=len(ids), stage="score", **ab_info)
    seconds = job.seconds()
    job.complete(sentences=len(ids), seconds=round(seconds, 2),
                 outputs=[str(p.relative_to(run.path)) for p in outputs])
    return {"skipped": False, "stage_hash": stage_hash, "sentences": len(ids),
            "seconds": seconds}


def _calib_info(calib: Any, labels: Sequence[str]) -> dict[str, Any]:
    return {"method": calib.method, "average": calib.average,
            "bias": dict(zip(labels, map(float, calib.bias_), strict=True))}


def _score_all(ids: list[str], texts: list[str], run_dir: Path, *, labels: LabelSpace,
               task_models: Sequence[TaskModelConfig], reference: ReferenceConfig,
               evaluation: EvaluationConfig, task_scorers: Mapping[str, TaskScorer] | None,
               reference_scorer: FewShotReference | None, progress: bool,
               executor: Executor | None = None
               ) -> tuple[list[np.ndarray], np.ndarray, Calibrator, dict[str, Calibrator],
                          Calibrator | None]:
    """Every task model's probabilities, the reference's raw label log-probs (and its abstain
    answer's, as a last column), its fitted calibrator, the ``fewshot:`` task models'
    calibrators and the abstain answer's calibrator (None without one); chunks already on
    disk are reused, models are built only when needed."""
    names = labels.list
    scorers: dict[str, TaskScorer] = dict(task_scorers or {})
    built: dict[str, TaskScorer] = {}

    def get_scorer(name: str) -> TaskScorer:
        if name not in scorers:
            if not built:
                built.update(build_task_scorers(task_models, labels, reference=reference,
                                                evaluation=evaluation))
            scorers[name] = built[name]
        return scorers[name]

    def lazy_task_fn(name: str) -> Callable[[list[str]], np.ndarray]:
        # The scorer is built only when a chunk is not cached.
        return lambda texts: _task_fn(get_scorer(name), names)(texts)

    def raw_of(name: str, texts: list[str]) -> np.ndarray:
        scorer = get_scorer(name)  # a fewshot: task model
        assert isinstance(scorer, FewShotReference), name
        return np.asarray(scorer.raw_logprobs(texts))

    task_probs = []
    task_calib: dict[str, Calibrator] = {}
    for tm in task_models:
        key = task_model_hash(tm, labels=labels, reference=reference, evaluation=evaluation)
        parts = TASK_PARTS.path(run_dir, name=tm.name)
        raw_fn: Callable[[list[str]], np.ndarray] = functools.partial(raw_of, tm.name)
        runner: _ChunkRunner | None = None
        if executor is not None and tm.name not in scorers:  # on the executor's workers
            runner, raw_fn = _remote(executor, f"task:{tm.name}:{key}", functools.partial(
                _task_chunk_fn, tm, labels, reference, evaluation))
        if is_few_shot(tm.spec):
            # Like the reference: raw log-probs per chunk, calibrated once on all of them.
            rkey = config_hash({"task_model": raw_task_model_hash(
                tm, labels=labels, reference=reference, evaluation=evaluation),
                "values": "raw_logprobs"})
            raw_t = _score_chunks(tm.name, raw_fn, ids, texts, parts, rkey, progress, runner)
            cal = _stage_calibration(reference, len(labels), raw_fn, raw_t, parts, rkey)
            task_calib[tm.name] = cal
            task_probs.append(cal.predict_proba(raw_t) if len(raw_t) else raw_t)
            continue
        task_probs.append(_score_chunks(
            tm.name, lazy_task_fn(tm.name), ids, texts, parts, key, progress, runner))

    ref_holder: list[FewShotReference | None] = [reference_scorer]

    def get_reference() -> FewShotReference:
        ref = ref_holder[0]
        if ref is None:
            ref = ref_holder[0] = FewShotReference.from_config(reference, names)
        return ref

    rkey = raw_reference_hash(reference, labels)
    parts = REFERENCE_PARTS.path(run_dir)
    ref_fn: Callable[[list[str]], np.ndarray] = lambda t: get_reference().raw_logprobs(t)  # noqa: E731
    ref_runner: _ChunkRunner | None = None
    if executor is not None and reference_scorer is None:
        ref_runner, ref_fn = _remote(executor, f"reference:{rkey}",
                                     functools.partial(_reference_chunk_fn, reference, labels))
    raw = _score_chunks("reference", ref_fn, ids, texts, parts, rkey, progress, ref_runner)
    calib = _stage_calibration(reference, len(labels), ref_fn, raw, parts, rkey)
    abstain_calib = _stage_abstain_calibration(reference, len(labels), ref_fn, raw, parts, rkey)
    return task_probs, raw, calib, task_calib, abstain_calib
