"""The stage-2 hashes: what changes a task model's, the reference's, and the score, rank
and mine stages' outputs (each section's ``output_dump`` plus the upstream stage's hash, so
changing ``ranking.top_k`` redoes rank and mine but not scoring). The raw-score hashes leave
out the calibration settings, so a calibration change rescores nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discovery._config import (
    EvaluationConfig,
    MiningConfig,
    RankingConfig,
    ReferenceConfig,
    TaskModelConfig,
    reference_payload,
)
from discovery._data import read_corpus
from discovery._kinds import TASK_MODEL_KINDS, is_few_shot, model_files_digest
from synth.core import (
    LabelSpace,
    RunDir,
    config_hash,
    output_dump,
    section_hash,
)


def _fingerprint(ids: Sequence[str], texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for i, t in zip(ids, texts, strict=True):
        h.update(i.encode("utf-8") + b"\0" + t.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def task_model_hash(tm: TaskModelConfig, *, labels: LabelSpace, reference: ReferenceConfig,
                    evaluation: EvaluationConfig) -> str:
    """Hash of what changes one task model's scores: its spec, label map and the labels;
    for ``demo:`` models the evaluation split they are trained on, for ``fewshot:`` models
    the reference prompt config they use; for models read from files (``sklearn:``, local
    ``hf:`` folders, ``python:`` modules) a digest of the files' bytes
    (:func:`~discovery._kinds.model_files_digest`)."""
    payload: dict[str, Any] = {"labels": labels.list, "task_model": output_dump(tm)}
    scheme = str(tm.spec).partition(":")[0]
    if scheme in TASK_MODEL_KINDS:  # (an unknown scheme is refused before any hash is used)
        payload.update(TASK_MODEL_KINDS.get(scheme).hash_extra(reference, evaluation))
    files = model_files_digest(str(tm.spec))
    if files is not None:  # a model file retrained in place is never "current"
        payload["files"] = files
    return config_hash(payload)


def task_model_hashes(task_models: Sequence[TaskModelConfig], *, labels: LabelSpace,
                      reference: ReferenceConfig, evaluation: EvaluationConfig) -> list[str]:
    """:func:`task_model_hash` of each task model, in order (what the score, evaluate and
    verify stage hashes cover)."""
    return [task_model_hash(t, labels=labels, reference=reference, evaluation=evaluation)
            for t in task_models]


def reference_hash(reference: ReferenceConfig, labels: LabelSpace) -> str:
    """Hash of what changes the reference's scores."""
    return config_hash({"labels": labels.list, "reference": reference_payload(reference)})


CALIBRATION_FIELDS = ("calibration", "calibration_average", "content_free")
"""The reference fields that only change how raw label log-probs are calibrated (the content
-free inputs are scored apart from the texts): left out of :func:`raw_reference_hash`."""


def _raw_reference_dump(reference: ReferenceConfig) -> dict[str, Any]:
    dump = {k: v for k, v in output_dump(reference).items() if k not in CALIBRATION_FIELDS}
    abstain = dump.pop("abstain", None)
    if abstain is not None:  # only its word changes the raw scores (an extra column)
        dump["abstain"] = {"word": abstain["word"]}
    return dump


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
    if not is_few_shot(tm.spec):
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
