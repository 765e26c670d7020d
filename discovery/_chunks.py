"""The resumable chunk cache of scoring: texts are scored in chunks, each written atomically
under ``scores/.parts/<name>/`` with the hash of its inputs, on this process or an executor's
workers (each holding one loaded model). Few-shot scorers' chunks (the reference,
``fewshot:`` task models) hold raw label log-probs keyed without the calibration settings
(:func:`~discovery.raw_reference_hash`), beside their content-free inputs' raw log-probs, and
are calibrated here over the whole set.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from discovery._artifacts import HELDOUT_PARTS, SCORE_PARTS
from discovery._calibration import Calibrator
from discovery._config import (
    EvaluationConfig,
    ReferenceConfig,
    TaskModelConfig,
)
from discovery._kinds import is_few_shot
from discovery._protocols import TaskScorer
from discovery._stage_hashes import (
    _fingerprint,
    raw_reference_hash,
    raw_task_model_hash,
)
from discovery._task_models import build_task_scorers
from synth.core import (
    Executor,
    LabelSpace,
    config_hash,
    iter_jsonl,
    write_json_atomic,
    write_jsonl,
)

CHUNK = 512  # sentences per resumable scoring chunk


_ChunkItem = tuple[int, list[str]]


_ChunkRunner = Callable[[Iterable[_ChunkItem]], Iterator[tuple[_ChunkItem, np.ndarray]]]
"""Scores the chunks ``(index, texts)`` it is given; yields ``(chunk, values)`` as each
finishes (an executor's ``map``, or this process)."""


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
    if is_few_shot(tm.spec):
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


def heldout_raw_scores(run_dir: Path, name: str, raw_fn: Callable[[list[str]], np.ndarray],
                       tm: TaskModelConfig | None, *, labels: LabelSpace,
                       reference: ReferenceConfig, evaluation: EvaluationConfig,
                       texts: Sequence[str], progress: bool = True
                       ) -> tuple[np.ndarray, np.ndarray | None]:
    """Calibrated probabilities of a few-shot scorer (the reference when ``tm`` is None, else
    the ``fewshot:`` task model ``tm``) on held-out ``texts``, from raw label log-probs
    stored in ``run_dir/scores/.parts/heldout-<name>/`` (chunks keyed without the
    calibration settings, scored with ``raw_fn`` only where missing). The content-free
    inputs' raw log-probs are the corpus scoring's (same file). ``batch`` calibration is
    fitted on all of ``texts``, as :meth:`~discovery.FewShotReference.predict_proba_set`
    does, so the result is the same as scoring them with the model. Returns (probabilities,
    the abstain answer's probability per text: None for a task model or a reference
    without ``reference.abstain``)."""
    if not texts:
        return np.zeros((0, len(labels))), None
    if tm is None:
        key, own = raw_reference_hash(reference, labels), "reference"
    else:
        key = config_hash({"task_model": raw_task_model_hash(
            tm, labels=labels, reference=reference, evaluation=evaluation),
            "values": "raw_logprobs"})
        own = f"task-{tm.name}"
    parts = SCORE_PARTS.path(run_dir)
    ids = [f"h{i:06d}" for i in range(len(texts))]
    raw = _score_chunks(name, raw_fn, ids, list(texts), HELDOUT_PARTS.path(run_dir, name=name), key,
                        progress, title=f"evaluate {name}")
    k = len(labels)
    cal = _stage_calibration(reference, k, raw_fn, raw, parts / own, key)
    abstain = None
    if tm is None and reference.abstain is not None:
        from discovery._calibration import abstain_probability

        acal = _stage_abstain_calibration(reference, k, raw_fn, raw, parts / own, key)
        assert acal is not None
        abstain = abstain_probability(acal, raw)
    return np.asarray(cal.predict_proba(raw[:, :k])), abstain


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
    # Raw columns past the labels (the reference's abstain answer) are not the labels'.
    return fit_calibration(reference.calibration, reference.calibration_average,
                           n_labels, corpus=raw[:, :n_labels] if raw.ndim == 2 else raw,
                           content_free=None if cf is None else (lambda: cf[:, :n_labels]))


def _stage_abstain_calibration(reference: ReferenceConfig, n_labels: int,
                               raw_fn: Callable[[list[str]], np.ndarray], raw: np.ndarray,
                               parts: Path, key: str) -> Calibrator | None:
    """The reference's abstain calibrator (see :func:`discovery.fit_abstain_calibration`)
    over the raw columns of the labels and the abstain word, the content-free inputs' raw
    log-probs read from the same cache as :func:`_stage_calibration`'s."""
    from discovery._calibration import fit_abstain_calibration

    if reference.abstain is None:
        return None
    cf = content_free_logprobs(reference, raw_fn, parts, key)
    return fit_abstain_calibration(reference, n_labels, corpus=raw,
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
