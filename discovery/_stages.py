"""The stage-2 jobs on a run directory: score, rank, mine.

Each job takes the run directory, the task's :class:`~synth.core.LabelSpace` and the config
sections it reads (never the whole run config), records its status and stage hash in the
run manifest, and is skipped when already complete with the same hash. A stage hash covers
the config parts that change the stage's outputs (the fields not marked
``runtime_field``, via ``output_dump``) plus the upstream stage's hash, so changing
``ranking.top_k`` redoes rank and mine but not scoring.

Scoring is resumable: texts are scored in chunks, each written atomically under
``scores/.parts/<name>/`` with the hash of its inputs, and the final files are assembled
(atomically) once every chunk exists. Few-shot scorers' chunks (the reference, ``fewshot:``
task models) hold raw label log-probs keyed without the calibration settings
(:func:`raw_reference_hash`), beside their content-free inputs' raw log-probs: changing only
the calibration redoes the stage from these files, without a model.

Bad input never changes what a run directory already holds: every stage reads and checks
its inputs and computes its results before it touches the manifest or a final output.
Scoring, the one long stage, marks itself ``running`` in the manifest while it works (a
killed run shows it); if it fails with an error, the manifest is put back as it was (the
final files are only written once everything is computed, so they are unchanged too).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from discovery._calibration import Calibrator
from discovery._config import (
    EvaluationConfig,
    MiningConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._data import read_corpus, read_score_file
from discovery._mining import NgramMiner
from discovery._protocols import TaskScorer
from discovery._ranking import DivergenceRanker, HardSubset, divergence
from discovery._reference import FewShotReference
from discovery._stage_state import (
    check_upstream,
    files_under,
    manifest_bytes,
    output_digests,
    outputs_problem,
    remove_new_files,
    restore_manifest,
)
from synth.core import (
    ConfigError,
    DataError,
    Executor,
    LabelSpace,
    RunDir,
    SynthcheckError,
    atomic_open,
    config_hash,
    iter_jsonl,
    output_dump,
    provenance,
    section_hash,
    write_json_atomic,
    write_jsonl,
)
from synth.engines import ALIGN_SCHEME

CHUNK = 512  # sentences per resumable scoring chunk

_ChunkItem = tuple[int, list[str]]
_ChunkRunner = Callable[[Iterable[_ChunkItem]], Iterator[tuple[_ChunkItem, np.ndarray]]]
"""Scores the chunks ``(index, texts)`` it is given; yields ``(chunk, values)`` as each
finishes (an executor's ``map``, or this process)."""


def _fingerprint(ids: Sequence[str], texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for i, t in zip(ids, texts, strict=True):
        h.update(i.encode("utf-8") + b"\0" + t.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def task_model_hash(tm: TaskModelConfig, *, labels: LabelSpace, reference: ReferenceConfig,
                    evaluation: EvaluationConfig) -> str:
    """Hash of what changes one task model's scores: its spec, label map and the labels;
    for ``demo:`` models the evaluation split they are trained on, for ``fewshot:`` models
    the reference prompt config they use."""
    payload: dict[str, Any] = {"labels": labels.list, "task_model": output_dump(tm)}
    scheme = str(tm.spec).partition(":")[0]
    if scheme == "demo":
        payload["demo_split"] = [evaluation.split_seed, evaluation.holdout_fraction]
    elif scheme == "fewshot":
        payload["reference"] = reference_payload(reference)
    return config_hash(payload)


def task_model_hashes(task_models: Sequence[TaskModelConfig], *, labels: LabelSpace,
                      reference: ReferenceConfig, evaluation: EvaluationConfig) -> list[str]:
    """:func:`task_model_hash` of each task model, in order (what the score, evaluate and
    verify stage hashes cover)."""
    return [task_model_hash(t, labels=labels, reference=reference, evaluation=evaluation)
            for t in task_models]


def reference_payload(reference: ReferenceConfig) -> dict[str, Any]:
    """The reference config as the hashes see it: without its runtime fields, and with
    ``align_prefix`` resolved for its backend (``auto`` never reaches a hash) and left out
    when it is 0, so configs from before the option keep their hashes."""
    payload: dict[str, Any] = output_dump(reference)
    del payload["align_prefix"]
    if reference.prefix_alignment:
        payload["align_prefix"] = {"multiple": reference.prefix_alignment,
                                   "scheme": ALIGN_SCHEME}
    return payload


def reference_hash(reference: ReferenceConfig, labels: LabelSpace) -> str:
    """Hash of what changes the reference's scores."""
    return config_hash({"labels": labels.list, "reference": reference_payload(reference)})


CALIBRATION_FIELDS = ("calibration", "calibration_average", "content_free")
"""The reference fields that only change how raw label log-probs are calibrated (the content
-free inputs are scored apart from the texts): left out of :func:`raw_reference_hash`."""


def _raw_reference_dump(reference: ReferenceConfig) -> dict[str, Any]:
    return {k: v for k, v in output_dump(reference).items() if k not in CALIBRATION_FIELDS}


def raw_reference_hash(reference: ReferenceConfig, labels: LabelSpace) -> str:
    """Hash of what changes the reference's *raw* label log-probs of a text: the reference
    config without its calibration settings (:data:`CALIBRATION_FIELDS`). The cached raw
    scores (``scores/.parts/``) are keyed by it, so changing only the calibration rescores
    nothing: it is refitted over the stored raw log-probs."""
    return config_hash({"labels": labels.list, "reference": _raw_reference_dump(reference)})


def raw_task_model_hash(tm: TaskModelConfig, *, labels: LabelSpace, reference: ReferenceConfig,
                        evaluation: EvaluationConfig) -> str:
    """:func:`task_model_hash` with a ``fewshot:`` model's reference prompt config taken
    without its calibration settings: the key of the model's cached raw label log-probs.
    Other task models' scores are not calibrated here, so it is their
    :func:`task_model_hash`."""
    if not _is_fewshot(tm):
        return task_model_hash(tm, labels=labels, reference=reference, evaluation=evaluation)
    return config_hash({"labels": labels.list, "task_model": output_dump(tm),
                        "reference": _raw_reference_dump(reference)})


def score_stage_hash(*, labels: LabelSpace, task_models: Sequence[TaskModelConfig],
                     reference: ReferenceConfig, evaluation: EvaluationConfig, corpus_fp: str,
                     upstream: str | None) -> str:
    """Hash of the score stage: every task model, the reference, the corpus, upstream."""
    return config_hash({"task_models": task_model_hashes(task_models, labels=labels,
                                                         reference=reference,
                                                         evaluation=evaluation),
                        "reference": reference_hash(reference, labels), "corpus": corpus_fp,
                        "generate": upstream})


def corpus_fingerprint(run_dir: str | Path) -> str:
    """The fingerprint of a run's corpus (ids and texts) that the score stage hash covers."""
    ids, texts = read_corpus(run_dir)
    return _fingerprint(ids, texts)


def expected_score_hash(run_dir: str | Path, *, labels: LabelSpace,
                        task_models: Sequence[TaskModelConfig], reference: ReferenceConfig,
                        evaluation: EvaluationConfig) -> str:
    """The score stage hash these sections give on ``run_dir``'s corpus (what
    :func:`score_run` would record there)."""
    return score_stage_hash(labels=labels, task_models=task_models, reference=reference,
                            evaluation=evaluation, corpus_fp=corpus_fingerprint(run_dir),
                            upstream=RunDir(run_dir).stage_hash("generate"))


def rank_stage_hash(ranking: RankingConfig, score_hash: str) -> str:
    """Hash of the rank stage: the ranking config plus the score stage hash."""
    return section_hash({"ranking": ranking}, {"score": score_hash})


def mine_stage_hash(mining: MiningConfig, rank_hash: str) -> str:
    """Hash of the mine stage: the mining config plus the rank stage hash."""
    return section_hash({"mining": mining}, {"rank": rank_hash})


def stage_record(labels: LabelSpace, **sections: Any) -> dict[str, Any]:
    """What a stage records as the manifest's ``config`` when its caller gives no resolved
    run config: the task's labels and the sections the stage read."""
    return {"task": {"labels": labels.list},
            **{name: output_dump(value) for name, value in sections.items()}}


def _write_meta(path: Path, stage_hash: str, **info: Any) -> None:
    write_json_atomic(path.with_name(path.name + ".meta.json"),
                      {**provenance(stage_hash), **info})


def _score_chunks(name: str, fn: Callable[[list[str]], np.ndarray], ids: Sequence[str],
                  texts: Sequence[str], parts: Path, key: str, progress: bool,
                  runner: _ChunkRunner | None = None, title: str | None = None
                  ) -> np.ndarray:
    """Score texts in chunks; reuse chunks already written with the same inputs and key.
    The missing chunks are scored by ``runner`` (default: ``fn`` in this process) and each
    is written as soon as it is back. ``title`` names the progress bar (default:
    ``score <name>``)."""
    from synth.core import progress_bar

    parts.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, len(texts), CHUNK))
    results: dict[int, np.ndarray] = {}
    todo: list[_ChunkItem] = []
    paths: dict[int, tuple[Path, list[str]]] = {}
    bar = progress_bar(len(texts), title or f"score {name}", "sent", enabled=progress)
    for c, s in enumerate(starts):
        cid, ctx = list(ids[s:s + CHUNK]), list(texts[s:s + CHUNK])
        chash = config_hash({"key": key, "inputs": _fingerprint(cid, ctx)})
        path = parts / f"chunk-{c:05d}-{chash}.jsonl"
        if path.is_file():
            results[c] = np.array([r["v"] for r in iter_jsonl(path)], dtype=np.float64)
            bar.update(len(ctx))
        else:
            paths[c] = (path, cid)
            todo.append((c, ctx))
    if runner is None:
        def runner(items: Iterable[_ChunkItem]) -> Iterator[tuple[_ChunkItem, np.ndarray]]:
            return ((item, fn(item[1])) for item in items)
    for (c, ctx), out in runner(todo):
        values = np.asarray(out, dtype=np.float64)
        path, cid = paths[c]
        write_jsonl(path, ({"id": i, "v": [float(x) for x in row]}
                           for i, row in zip(cid, values, strict=True)))
        results[c] = values
        bar.update(len(ctx))
    bar.close()
    return np.vstack([results[c] for c in range(len(starts))]) if starts else np.zeros((0, 0))


def _apply_chunk(fn: Callable[[list[str]], np.ndarray], item: _ChunkItem) -> np.ndarray:
    """One chunk on a worker whose state is a scoring function (an executor's ``work``)."""
    return np.asarray(fn(item[1]), dtype=np.float64)


def _task_chunk_fn(tm: TaskModelConfig, labels: LabelSpace, reference: ReferenceConfig,
                   evaluation: EvaluationConfig) -> Callable[[list[str]], np.ndarray]:
    """Load task model ``tm`` and return what scores a chunk with it: its probabilities in
    ``labels`` order, or for ``fewshot:`` models the raw label log-probs (an executor's
    ``setup``)."""
    scorer = build_task_scorers([tm], labels, reference=reference,
                                evaluation=evaluation)[tm.name]
    if _is_fewshot(tm):
        return lambda texts: np.asarray(scorer.raw_logprobs(texts))
    return _task_fn(scorer, labels.list)


def _reference_chunk_fn(reference: ReferenceConfig, labels: LabelSpace
                        ) -> Callable[[list[str]], np.ndarray]:
    """Load the few-shot reference and return its raw label log-probs function (an
    executor's ``setup``)."""
    from discovery._reference import FewShotReference

    return FewShotReference.from_config(reference, labels.list).raw_logprobs


def _remote(executor: Executor, key: str, setup: Callable[[], Any]
            ) -> tuple[_ChunkRunner, Callable[[list[str]], np.ndarray]]:
    """A chunk runner on ``executor``'s workers for ``key``, and a plain function that
    scores one list of texts there (the content-free inputs of calibration)."""
    runner: _ChunkRunner = functools.partial(executor.map, key, setup, _apply_chunk)

    def one(texts: list[str]) -> np.ndarray:
        return list(runner([(0, list(texts))]))[0][1]
    return runner, one


def _task_fn(scorer: TaskScorer, labels: Sequence[str]) -> Callable[[list[str]], np.ndarray]:
    def fn(texts: list[str]) -> np.ndarray:
        rows = scorer.predict_proba(texts)
        return np.array([[row[lab] for lab in labels] for row in rows])
    return fn


def build_task_scorers(task_models: Sequence[TaskModelConfig], labels: LabelSpace, *,
                       reference: ReferenceConfig, evaluation: EvaluationConfig
                       ) -> dict[str, Any]:
    """Load every configured task model (names must be unique); ``fewshot:`` models use the
    ``reference`` prompt, ``demo:`` models the ``evaluation`` split."""
    from discovery._scorers import load_task_scorer

    _check_task_names(task_models)
    return {t.name: load_task_scorer(t.spec, labels.list, label_map=t.label_map,
                                     name=t.name, batch_size=t.batch_size,
                                     max_length=t.max_length, trusted_types=t.trusted_types,
                                     reference=reference, evaluation=evaluation)
            for t in task_models}


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
    from discovery._model_checks import check_llm_spec, check_task_model
    from discovery._reference import FewShotReference

    if not task_models:
        raise ConfigError("no task models to score", where="task_models",
                          fix="add at least one task model (e.g. spec: demo:sentiment)")
    _check_task_names(task_models)
    names = labels.list
    FewShotReference(None, reference, names)  # label words and shots
    if not reference_built:
        from synth.engines import ENGINES

        if reference.backend not in ENGINES:
            from synth.core import did_you_mean

            raise ConfigError(f"unknown engine {reference.backend!r}", where="reference.backend",
                              fix=did_you_mean(reference.backend, ENGINES.names()))
        check_llm_spec(reference.model, "reference.model")
    for i, t in enumerate(task_models):
        if t.name in built:
            continue
        check_task_model(t.spec, names, where=f"task_models[{i}] ({t.name})",
                         label_map=t.label_map, trusted_types=t.trusted_types,
                         reference=reference)
    if ranking is not None:
        ranked_task_name(ranking, task_models)
    if evaluation is not None:
        from discovery._evaluate import load_evaluation_set

        load_evaluation_set(labels, evaluation)


def _check_task_names(task_models: Sequence[TaskModelConfig]) -> None:
    names = [t.name for t in task_models]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"task model names must be unique, got {dupes} more than once",
                          where="task_models", fix="give each task model its own name")


def score_run(run_dir: str | Path, *, labels: LabelSpace,
              task_models: Sequence[TaskModelConfig], reference: ReferenceConfig,
              evaluation: EvaluationConfig, config_dump: Mapping[str, Any] | None = None,
              task_scorers: Mapping[str, TaskScorer] | None = None,
              reference_scorer: FewShotReference | None = None,
              progress: bool = True, executor: Executor | None = None) -> dict[str, Any]:
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
    """
    if not task_models:
        raise ConfigError("no task models to score", where="task_models",
                          fix="add at least one task model (e.g. spec: demo:sentiment)")
    _check_task_names(task_models)
    run = RunDir(run_dir)
    ids, texts = read_corpus(run.path)
    fp = _fingerprint(ids, texts)
    shash = score_stage_hash(labels=labels, task_models=task_models, reference=reference,
                             evaluation=evaluation, corpus_fp=fp,
                             upstream=run.stage_hash("generate"))
    out_dir = run.path / "scores"
    outputs = [out_dir / f"task-{t.name}.jsonl" for t in task_models] + [
        out_dir / "reference.jsonl"]
    if run.is_current("score", shash) and outputs_problem(run, "score", outputs) is None:
        return {"skipped": True, "stage_hash": shash, "sentences": len(ids)}
    names = labels.list
    # Every spec, the prompt, shots and label words are checked before anything is written.
    check_stage2(labels, task_models=task_models, reference=reference,
                 built=list(task_scorers or {}), reference_built=reference_scorer is not None)
    saved = manifest_bytes(run)
    parts_before = files_under(out_dir)
    record = dict(config_dump) if config_dump is not None else stage_record(
        labels, reference=reference, task_models=list(task_models), evaluation=evaluation)
    run.open_stage(record, "score", shash)
    run.set_stage("score", "running", stage_hash=shash)
    started = time.perf_counter()
    try:
        task_probs, raw, calib, task_calib = _score_all(
            ids, texts, out_dir, labels=labels, task_models=task_models, reference=reference,
            evaluation=evaluation, task_scorers=task_scorers, reference_scorer=reference_scorer,
            progress=progress, executor=executor)
    except SynthcheckError:
        # Bad input (a model's bad output, a model that cannot load): every byte back.
        restore_manifest(run, saved)
        remove_new_files(out_dir, parts_before)
        raise
    except Exception:
        # Anything else (out of memory, a bug): the chunks scored so far are kept for a
        # rerun, the manifest is put back.
        restore_manifest(run, saved)
        raise
    for tm, probs in zip(task_models, task_probs, strict=True):
        path = out_dir / f"task-{tm.name}.jsonl"
        write_jsonl(path, ({"id": i, "probs": dict(zip(names, map(float, row), strict=True))}
                           for i, row in zip(ids, probs, strict=True)))
        extra = {"calibration": _calib_info(task_calib[tm.name], names)} \
            if tm.name in task_calib else {}
        _write_meta(path, task_model_hash(tm, labels=labels, reference=reference,
                                          evaluation=evaluation),
                    task_model=tm.model_dump(mode="json"),
                    labels=names, sentences=len(ids), stage="score", **extra)
    probs = calib.predict_proba(raw) if len(raw) else raw
    path = out_dir / "reference.jsonl"
    write_jsonl(path, ({"id": i, "probs": dict(zip(names, map(float, p), strict=True)),
                        "logprobs": dict(zip(names, map(float, lp), strict=True))}
                       for i, p, lp in zip(ids, probs, raw, strict=True)))
    _write_meta(path, reference_hash(reference, labels),
                reference=reference.model_dump(mode="json"), labels=names,
                calibration=_calib_info(calib, names),
                sentences=len(ids), stage="score")
    seconds = time.perf_counter() - started
    run.complete("score", shash, stage_hash=shash, sentences=len(ids),
                 seconds=round(seconds, 2),
                 outputs=[str(p.relative_to(run.path)) for p in outputs],
                 digests=output_digests(run, outputs))
    return {"skipped": False, "stage_hash": shash, "sentences": len(ids), "seconds": seconds}


def _calib_info(calib: Any, labels: Sequence[str]) -> dict[str, Any]:
    return {"method": calib.method, "average": calib.average,
            "bias": dict(zip(labels, map(float, calib.bias_), strict=True))}


def _score_all(ids: list[str], texts: list[str], out_dir: Path, *, labels: LabelSpace,
               task_models: Sequence[TaskModelConfig], reference: ReferenceConfig,
               evaluation: EvaluationConfig, task_scorers: Mapping[str, TaskScorer] | None,
               reference_scorer: FewShotReference | None, progress: bool,
               executor: Executor | None = None
               ) -> tuple[list[np.ndarray], np.ndarray, Calibrator, dict[str, Calibrator]]:
    """Every task model's probabilities, the reference's raw label log-probs, its fitted
    calibrator and the ``fewshot:`` task models' calibrators; chunks already on disk are
    reused, models are built only when needed."""
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
        parts = out_dir / ".parts" / f"task-{tm.name}"
        raw_fn: Callable[[list[str]], np.ndarray] = functools.partial(raw_of, tm.name)
        runner: _ChunkRunner | None = None
        if executor is not None and tm.name not in scorers:  # on the executor's workers
            runner, raw_fn = _remote(executor, f"task:{tm.name}:{key}", functools.partial(
                _task_chunk_fn, tm, labels, reference, evaluation))
        if _is_fewshot(tm):
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
    parts = out_dir / ".parts" / "reference"
    ref_fn: Callable[[list[str]], np.ndarray] = lambda t: get_reference().raw_logprobs(t)  # noqa: E731
    ref_runner: _ChunkRunner | None = None
    if executor is not None and reference_scorer is None:
        ref_runner, ref_fn = _remote(executor, f"reference:{rkey}",
                                     functools.partial(_reference_chunk_fn, reference, labels))
    raw = _score_chunks("reference", ref_fn, ids, texts, parts, rkey, progress, ref_runner)
    calib = _stage_calibration(reference, len(labels), ref_fn, raw, parts, rkey)
    return task_probs, raw, calib, task_calib


def heldout_raw_scores(run_dir: Path, name: str, raw_fn: Callable[[list[str]], np.ndarray],
                       tm: TaskModelConfig | None, *, labels: LabelSpace,
                       reference: ReferenceConfig, evaluation: EvaluationConfig,
                       texts: Sequence[str], progress: bool = True) -> np.ndarray:
    """Calibrated probabilities of a few-shot scorer (the reference when ``tm`` is None, else
    the ``fewshot:`` task model ``tm``) on held-out ``texts``, from raw label log-probs
    stored in ``run_dir/scores/.parts/heldout-<name>/`` (chunks keyed without the
    calibration settings, scored with ``raw_fn`` only where missing). The content-free
    inputs' raw log-probs are the corpus scoring's (same file). ``batch`` calibration is
    fitted on all of ``texts``, as :meth:`~discovery.FewShotReference.predict_proba_set`
    does, so the result is the same as scoring them with the model."""
    if not texts:
        return np.zeros((0, len(labels)))
    if tm is None:
        key, own = raw_reference_hash(reference, labels), "reference"
    else:
        key = config_hash({"task_model": raw_task_model_hash(
            tm, labels=labels, reference=reference, evaluation=evaluation),
            "values": "raw_logprobs"})
        own = f"task-{tm.name}"
    parts = Path(run_dir) / "scores" / ".parts"
    ids = [f"h{i:06d}" for i in range(len(texts))]
    raw = _score_chunks(name, raw_fn, ids, list(texts), parts / f"heldout-{name}", key,
                        progress, title=f"evaluate {name}")
    cal = _stage_calibration(reference, len(labels), raw_fn, raw, parts / own, key)
    return np.asarray(cal.predict_proba(raw))


def _is_fewshot(tm: TaskModelConfig) -> bool:
    return str(tm.spec).partition(":")[0] == "fewshot"


def _stage_calibration(reference: ReferenceConfig, n_labels: int,
                       raw_fn: Callable[[list[str]], np.ndarray], raw: np.ndarray,
                       parts: Path, key: str) -> Calibrator:
    """Fit a few-shot scorer's calibrator (reference or ``fewshot:`` task model) over raw
    label log-probs.

    ``batch`` calibration is fitted on the raw log-probs of the whole set at once, so it
    does not depend on chunking, batch size or what a resumed run had already scored. The
    content-free inputs' raw log-probs are scored whatever the method and cached beside the
    chunks (see :func:`content_free_logprobs`), so a later change of method needs no model.
    """
    from discovery._calibration import fit_calibration

    cf = content_free_logprobs(reference, raw_fn, parts, key)
    return fit_calibration(reference.calibration, reference.calibration_average,
                           n_labels, corpus=raw,
                           content_free=None if cf is None else (lambda: cf))


def content_free_logprobs(reference: ReferenceConfig,
                          raw_fn: Callable[[list[str]], np.ndarray], parts: Path,
                          key: str) -> np.ndarray | None:
    """The raw label log-probs of ``reference.content_free`` (None when there are none),
    read from ``parts/content-free-<hash>.json`` or scored with ``raw_fn`` and written
    there; the hash covers the raw-scores ``key`` and the inputs, not the calibration."""
    if not reference.content_free:
        return None
    inputs = list(reference.content_free)
    path = parts / f"content-free-{config_hash({'key': key, 'inputs': inputs})}.json"
    if path.is_file():
        return np.array(json.loads(path.read_text(encoding="utf-8")), dtype=np.float64)
    cf = np.asarray(raw_fn(inputs), dtype=np.float64)
    parts.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, cf.tolist())
    return cf


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


def load_scores(run_dir: str | Path, *, labels: LabelSpace, task_name: str
                ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Read the corpus and the task model ``task_name``'s and the reference's probabilities,
    aligned (columns in ``labels`` order).

    Raises:
        DataError: a scores file is missing, names unknown ids, or misses corpus ids.
    """
    run = RunDir(run_dir)
    ids, texts = read_corpus(run.path)
    task = read_score_file(run.path / "scores" / f"task-{task_name}.jsonl", ids, labels)
    ref = read_score_file(run.path / "scores" / "reference.jsonl", ids, labels)
    return ids, texts, task, ref


def _ranker(ranking: RankingConfig) -> DivergenceRanker:
    r = ranking
    return DivergenceRanker(r.metric, top_k=r.top_k, top_fraction=r.top_fraction,
                            require_disagreement=r.require_disagreement)


def rank_run(run_dir: str | Path, *, labels: LabelSpace, ranking: RankingConfig,
             task_models: Sequence[TaskModelConfig],
             config_dump: Mapping[str, Any] | None = None,
             score_hash: str | None = None) -> dict[str, Any]:
    """Rank the scored corpus by divergence and write ``hard.jsonl`` (the hard subset).

    Scores are read and checked and the hard subset is computed before the manifest or
    ``hard.jsonl`` is touched, so bad input leaves the run directory unchanged.

    Args:
        run_dir: a run directory with complete scores.
        labels: the task's labels.
        ranking: the ranking section (metric, hard-subset size, which task model).
        task_models: the configured task models (``ranking.task_model`` is one of them).
        config_dump: the resolved run config to record in the manifest.
        score_hash: the score stage hash the caller's config gives (see
            :func:`score_stage_hash`); scores made with another one are refused.

    Raises:
        DataError: the scores are missing, incomplete, or were changed after scoring.
        RunDirError: the scores were made with another config than ``score_hash``'s.
    """
    run = RunDir(run_dir)
    upstream = check_upstream(run, "score", score_hash, what="scores", command="score")
    rhash = rank_stage_hash(ranking, upstream)
    out = run.path / "hard.jsonl"
    if run.is_current("rank", rhash) and outputs_problem(run, "rank", [out]) is None:
        return {"skipped": True, "stage_hash": rhash}
    name = ranked_task_name(ranking, task_models)
    ids, texts, task, ref = load_scores(run.path, labels=labels, task_name=name)
    ranker = _ranker(ranking).fit(task, ref)
    hard = HardSubset.from_ranker(ranker, ids, texts, labels.list, task, ref)
    run.open_stage(dict(config_dump) if config_dump is not None else
                   stage_record(labels, task_models=list(task_models), ranking=ranking),
                   "rank", rhash)
    write_jsonl(out, hard.records)
    _write_meta(out, rhash, ranking=ranking.model_dump(mode="json"),
                task_model=name, corpus=len(ids), hard=len(hard), stage="rank")
    run.complete("rank", rhash, stage_hash=rhash, hard=len(hard), corpus=len(ids),
                 disagreements=int(ranker.disagree_.sum()),
                 digests=output_digests(run, [out]))
    return {"skipped": False, "stage_hash": rhash, "hard": len(hard), "corpus": len(ids),
            "disagreements": int(ranker.disagree_.sum())}


def mine_run(run_dir: str | Path, *, labels: LabelSpace, ranking: RankingConfig,
             mining: MiningConfig, task_models: Sequence[TaskModelConfig],
             config_dump: Mapping[str, Any] | None = None,
             rank_hash: str | None = None) -> dict[str, Any]:
    """Mine n-grams of the hard subset against the corpus; write ``ngrams.jsonl`` and
    ``ngrams.csv`` sorted by ``mining.statistic``.

    The n-grams are computed before the manifest or an output is touched, so bad input
    (an empty hard subset, unknown ids) leaves the run directory unchanged.

    Args:
        run_dir: a run directory with a current hard subset.
        labels: the task's labels.
        ranking: the ranking section (the divergence metric, which task model).
        mining: the mining section.
        task_models: the configured task models.
        config_dump: the resolved run config to record in the manifest.
        rank_hash: the rank stage hash the caller's config gives (see
            :func:`rank_stage_hash`); a hard subset ranked with another one is refused.

    Raises:
        DataError: the hard subset or the scores are missing or were changed.
        RunDirError: the hard subset was ranked with another config than ``rank_hash``'s.
    """
    run = RunDir(run_dir)
    upstream = check_upstream(run, "rank", rank_hash, what="hard subset", command="rank")
    check_upstream(run, "score", None, what="scores", command="score")
    mhash = mine_stage_hash(mining, upstream)
    out_jsonl, out_csv = run.path / "ngrams.jsonl", run.path / "ngrams.csv"
    if run.is_current("mine", mhash) and outputs_problem(run, "mine",
                                                         [out_jsonl, out_csv]) is None:
        return {"skipped": True, "stage_hash": mhash}
    hard_path = run.path / "hard.jsonl"
    hard_ids = [str(r["id"]) for r in iter_jsonl(hard_path)]
    if not hard_ids:
        raise DataError("cannot mine an empty hard subset", where=str(hard_path),
                        fix="no sentence was kept by `synthcheck rank`; rank again with a "
                            "larger ranking.top_k / top_fraction, or without "
                            "ranking.require_disagreement")
    ids, texts, task, ref = load_scores(run.path, labels=labels,
                                        task_name=ranked_task_name(ranking, task_models))
    # Full-corpus divergences and disagreements (the hard subset itself is hard.jsonl).
    div = divergence(task, ref, ranking.metric)
    disagree = task.argmax(axis=1) != ref.argmax(axis=1)
    index = {cid: i for i, cid in enumerate(ids)}
    unknown = [h for h in hard_ids if h not in index]
    if unknown:
        raise DataError(f"{len(unknown)} hard-subset ids are missing from the corpus "
                        f"({', '.join(unknown[:3])})", where=str(hard_path),
                        fix="rerun `synthcheck rank` on this run")
    m = mining
    miner = NgramMiner((m.ngram_min, m.ngram_max), min_support=m.min_support,
                       statistic=m.statistic, test=m.test, prior_strength=m.prior_strength,
                       stopwords=m.stopwords, drop_subsumed=m.drop_subsumed,
                       max_examples=m.max_examples)
    miner.fit(texts, [index[h] for h in hard_ids], ids=ids, divergence=div,
              disagree=disagree)
    records = miner.to_records()
    run.open_stage(dict(config_dump) if config_dump is not None else
                   stage_record(labels, task_models=list(task_models), ranking=ranking,
                                mining=mining), "mine", mhash)
    write_jsonl(out_jsonl, records)
    _write_csv(out_csv, records)
    _write_meta(out_jsonl, mhash, mining=m.model_dump(mode="json"), hard=len(hard_ids),
                corpus=len(ids), ngrams=len(records), stage="mine")
    run.complete("mine", mhash, stage_hash=mhash, ngrams=len(records),
                 digests=output_digests(run, [out_jsonl, out_csv]))
    return {"skipped": False, "stage_hash": mhash, "ngrams": len(records),
            "hard": len(hard_ids), "top": [r["ngram"] for r in records[:10]]}


def _write_csv(path: Path, records: list[dict[str, Any]]) -> None:
    if not records:
        with atomic_open(path) as handle:
            handle.write("ngram\n")
        return
    fields = list(records[0])
    with atomic_open(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for rec in records:
            row = dict(rec)
            row["examples"] = " ".join(rec.get("examples", []))
            writer.writerow(row)
