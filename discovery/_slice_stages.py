"""The slice stages on a run directory: ``semantic``, ``metadata``, ``occlusion`` and
``findings``.

Each reads the scored corpus (the ranked task model's and the calibrated reference's
probabilities), computes its rows before anything is written (bad input leaves the run
directory unchanged), and records in the manifest a hash of its own config section's
``output_dump``, the failure rule, and its upstream stage's hash (``score``; ``findings``:
every stage it unifies). A current stage is skipped; a deleted or edited output is redone.
The semantic stage caches the corpus's embeddings in 512-sentence chunks under
``slices/.parts/`` (a killed run re-embeds only missing chunks); the others recompute in
seconds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from discovery._config import RankingConfig, SlicesConfig, TaskModelConfig
from discovery._stage_state import check_upstream, output_digests, outputs_problem
from synth.core import (
    LabelSpace,
    RunDir,
    atomic_open,
    config_hash,
    iter_jsonl,
    output_dump,
    provenance,
    write_json_atomic,
    write_jsonl,
)

CHUNK = 512
OUTPUTS = {"semantic": "slices.jsonl", "metadata": "metadata.jsonl",
           "occlusion": "words.jsonl", "findings": "findings.jsonl"}


def failure_rule(ranking: RankingConfig) -> dict[str, Any]:
    """The judging rule's fields, as every slice stage hashes them (the abstain threshold is
    in the score stage's hash)."""
    return {"rule": JUDGE_SCHEME, "min_margin": ranking.min_reference_margin}


JUDGE_SCHEME = "judge-v1"
"""The failure rule's version (:func:`discovery.judge`: top labels differ on a judged
sentence); part of every slice stage's hash."""


def slice_stage_hash(stage: str, slices: SlicesConfig, score_hash: str, task_name: str,
                     models: str = "", *, ranking: RankingConfig) -> str:
    """Hash of a slice stage (``semantic``, ``metadata``, ``occlusion``): its own section,
    the judging rule, the ranked task model and the score stage hash (and, for occlusion,
    ``models``: what changes the two models' scores of new text)."""
    section = getattr(slices, stage)
    extra = {"encoder": slices.semantic.encoder} \
        if stage == "occlusion" and slices.occlusion.groups else {}
    return config_hash({stage: output_dump(section), **failure_rule(ranking),
                        "task_model": task_name, "score": score_hash, "models": models,
                        **extra})


def findings_stage_hash(slices: SlicesConfig, upstream: Mapping[str, str | None], *,
                        ranking: RankingConfig) -> str:
    """Hash of the findings stage: ``max_findings``, the judging rule and the hashes of the
    stages it unifies (None for one that did not run)."""
    return config_hash({"max_findings": slices.max_findings, **failure_rule(ranking),
                        "upstream": dict(upstream)})


@dataclass
class _Scored:
    """A slice stage's scored corpus, once its hash says it must run: the run directory,
    the stage hash, the judged sentences (both models' probabilities, failure flags and the
    reference's probability that the task model is wrong; abstained sentences are in no
    count, see :func:`discovery.judge`), what abstained, and when the work started."""

    run: RunDir
    shash: str
    ids: list[str]
    texts: list[str]
    task: np.ndarray
    ref: np.ndarray
    fail: np.ndarray
    p_wrong: np.ndarray
    started: float
    abstained: dict[str, Any]
    rule: str


def _begin(run_dir: str | Path, stage: str, stage_hash: Callable[[str, str], str], *,
           labels: LabelSpace, slices: SlicesConfig, ranking: RankingConfig,
           task_models: Sequence[TaskModelConfig], score_hash: str | None
           ) -> _Scored | dict[str, Any]:
    """Load the scored corpus of ``run_dir`` (checked against ``score_hash``) and hash the
    stage (``stage_hash(score stage hash, ranked task model)``): the skip result when the
    stage is current with that hash, else what its work reads: the judged sentences."""
    from discovery._rank_mine import load_judged
    from discovery._task_models import ranked_task_name

    run = RunDir(run_dir)
    upstream = check_upstream(run, "score", score_hash, what="scores", command="score")
    name = ranked_task_name(ranking, task_models)
    full = load_judged(run.path, labels=labels, task_name=name, ranking=ranking)
    shash = stage_hash(upstream, name)
    if _current(run, stage, shash):
        return {"skipped": True, "stage_hash": shash}
    started = time.perf_counter()
    c = full.judged()
    p_wrong = 1.0 - c.reference[np.arange(len(c.task)), c.judgement.task_top] \
        if len(c.task) else np.zeros(0)
    return _Scored(run, shash, c.ids, c.texts, c.task, c.reference, c.judgement.fails,
                   p_wrong, started, full.judgement.abstained_info(), full.rule.describe())


def _finish(c: _Scored, stage: str, rows: list[dict[str, Any]],
            config_dump: Mapping[str, Any] | None, **info: Any) -> dict[str, Any]:
    """Write ``rows`` and the stage's meta file, complete the stage in the manifest (with
    ``info``, the run's base failure rate over the judged sentences and what abstained)."""
    run, shash = c.run, c.shash
    info = {**info, "base_rate": float(c.fail.mean()) if len(c.fail) else 0.0,
            "judged": len(c.fail), "abstained": c.abstained}
    out = run.path / OUTPUTS[stage]
    run.open_stage(dict(config_dump) if config_dump is not None else {"stage": stage},
                   stage, shash)
    write_jsonl(out, rows)
    write_json_atomic(out.with_name(out.name + ".meta.json"),
                      {**provenance(shash), "stage": stage, "rows": len(rows), **info})
    seconds = round(time.perf_counter() - c.started, 2)
    run.complete(stage, shash, stage_hash=shash, rows=len(rows), seconds=seconds,
                 digests=output_digests(run, [out]), **info)
    return {"skipped": False, "stage_hash": shash, "rows": len(rows), "seconds": seconds,
            **info}


def _current(run: RunDir, stage: str, shash: str) -> bool:
    return run.is_current(stage, shash) and outputs_problem(
        run, stage, [run.path / OUTPUTS[stage]]) is None


def _embeddings(run: RunDir, texts: Sequence[str], encoder: str, batch_size: int,
                progress: bool) -> np.ndarray:
    """The corpus's embeddings, chunk by chunk, each cached under ``slices/.parts/`` by the
    encoder and the chunk's texts."""
    from discovery._embed import SentenceEmbedder
    from synth.core import progress_bar

    embedder = SentenceEmbedder(encoder, batch_size=batch_size)
    parts = run.path / "slices" / ".parts"
    chunks = []
    bar = progress_bar(len(texts), "semantic: embedding", "sentence", enabled=progress)
    for start in range(0, len(texts), CHUNK):
        chunk = list(texts[start:start + CHUNK])
        h = hashlib.sha256(encoder.encode("utf-8"))
        for t in chunk:
            h.update(t.encode("utf-8") + b"\n")
        path = parts / f"embed-{start // CHUNK:05d}-{h.hexdigest()[:16]}.npy"
        if path.is_file():
            chunks.append(np.load(path, allow_pickle=False))
        else:
            emb = embedder.embed(chunk)
            parts.mkdir(parents=True, exist_ok=True)
            with atomic_open(path, "wb") as handle:
                np.save(handle, emb, allow_pickle=False)
            chunks.append(emb)
        bar.update(len(chunk))
    bar.close()
    return np.concatenate(chunks) if chunks else np.zeros((0, 0), dtype=np.float32)


def semantic_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                 ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                 score_hash: str | None = None, config_dump: Mapping[str, Any] | None = None,
                 progress: bool = True) -> dict[str, Any]:
    """Semantic slices of the scored corpus into ``slices.jsonl`` (see
    :class:`discovery.SemanticSlicer`).

    Raises:
        DataError: the scores are missing or were changed.
        RunDirError: they were made with another config than ``score_hash``'s.
        ModelNotAvailable: the encoder is not installed.
    """
    from discovery._embed import SentenceEmbedder
    from discovery._slices import SemanticSlicer

    c = _begin(run_dir, "semantic",
               lambda score, name: slice_stage_hash("semantic", slices, score, name,
                                                    ranking=ranking),
               labels=labels, slices=slices, ranking=ranking, task_models=task_models,
               score_hash=score_hash)
    if isinstance(c, dict):
        return c
    s = slices.semantic
    emb = _embeddings(c.run, c.texts, s.encoder, s.batch_size, progress)
    words = SentenceEmbedder(s.encoder, batch_size=s.batch_size)
    slicer = SemanticSlicer(s.size, seed=s.seed, max_terms=s.max_terms,
                            max_examples=s.max_examples, alpha=s.alpha).fit(
        c.texts, emb, c.fail, p_wrong=c.p_wrong, ids=c.ids, embed_words=words.embed)
    return _finish(c, "semantic", slicer.slices_, config_dump,
                   significant=sum(r["significant"] for r in slicer.slices_))


def metadata_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                 ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                 score_hash: str | None = None, config_dump: Mapping[str, Any] | None = None
                 ) -> dict[str, Any]:
    """Metadata slices of the scored corpus into ``metadata.jsonl`` (see
    :class:`discovery.MetadataSlicer`); raises as :func:`semantic_run`."""
    from discovery._slices import MetadataSlicer

    c = _begin(run_dir, "metadata",
               lambda score, name: slice_stage_hash("metadata", slices, score, name,
                                                    ranking=ranking),
               labels=labels, slices=slices, ranking=ranking, task_models=task_models,
               score_hash=score_hash)
    if isinstance(c, dict):
        return c
    m = slices.metadata
    slicer = MetadataSlicer(min_size=m.min_size, max_examples=m.max_examples,
                            alpha=m.alpha).fit(c.texts, c.fail, p_wrong=c.p_wrong, ids=c.ids)
    return _finish(c, "metadata", slicer.slices_, config_dump,
                   significant=sum(r["significant"] for r in slicer.slices_))


def occlusion_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                  ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                  task_fn: Callable[[list[str]], np.ndarray],
                  reference_fn: Callable[[list[str]], np.ndarray] | None, models_key: str,
                  score_hash: str | None = None,
                  config_dump: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Per-word occlusion evidence into ``words.jsonl`` (see
    :class:`discovery.OcclusionScorer`). ``task_fn``/``reference_fn`` score new text like
    the score stage did (the reference calibrated with its recorded bias); they are called
    only when the stage is not current. ``models_key`` is part of the hash."""
    from discovery._embed import SentenceEmbedder
    from discovery._occlusion import OcclusionScorer

    c = _begin(run_dir, "occlusion",
               lambda score, name: slice_stage_hash("occlusion", slices, score, name,
                                                    models_key, ranking=ranking),
               labels=labels, slices=slices, ranking=ranking, task_models=task_models,
               score_hash=score_hash)
    if isinstance(c, dict):
        return c
    o = slices.occlusion
    k = len(labels)
    ref_fn = None if reference_fn is None else (  # the abstain column, if any, is not a label
        lambda texts: np.asarray(reference_fn(texts), dtype=np.float64)[:, :k])
    scorer = OcclusionScorer(reference_words=o.reference_words,
                             reference_sentences=o.reference_sentences,
                             min_count=o.min_count, max_examples=o.max_examples,
                             alpha=o.alpha, centre=o.centre,
                             group_similarity=o.group_similarity,
                             group_min_words=o.group_min_words).fit(
        c.texts, c.task, c.ref, c.fail, task_fn=task_fn,
        reference_fn=ref_fn if o.reference_words else None, ids=c.ids,
        embed_fn=SentenceEmbedder(slices.semantic.encoder,
                                  batch_size=slices.semantic.batch_size).embed
        if o.groups else None)
    return _finish(c, "occlusion", scorer.words_, config_dump,
                   deletions=scorer.deletions_,
                   groups=sum(r["kind"] == "group" for r in scorer.words_),
                   reference_sentences=scorer.reference_calls_,
                   significant=sum(r["significant"] for r in scorer.words_))


def _rows_if_current(run: RunDir, stage: str, file: str, expected: str | None
                     ) -> list[dict[str, Any]]:
    """``file``'s rows when ``stage`` is complete with hash ``expected`` and its output
    intact; else none (a stage that is off, or not run with this config)."""
    path = run.path / file
    if expected is None or not run.is_current(stage, expected) or not path.is_file() \
            or outputs_problem(run, stage, [path]) is not None:
        return []
    return list(iter_jsonl(path))


def findings_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                 ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                 upstream: Mapping[str, str | None], focus_rule: str = "",
                 score_hash: str | None = None,
                 config_dump: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Unify the rows of the discovery stages that are current under ``upstream`` (stage
    name -> the hash the caller's config gives it, None when off: ``mine``
    (``ngrams.jsonl``), ``semantic`` (``slices.jsonl``), ``metadata``, ``occlusion``
    (``words.jsonl``), ``focus``, ``labelled``) into the ranked ``findings.jsonl`` (see
    :func:`discovery.build_findings`); a stage that is off or not current adds nothing."""
    from discovery._findings import build_findings

    files = {"mine": "ngrams.jsonl", "semantic": "slices.jsonl",
             "metadata": "metadata.jsonl", "occlusion": "words.jsonl", "focus": "focus.jsonl",
             "labelled": "labelled.jsonl"}
    c = _begin(run_dir, "findings",
               lambda score, name: findings_stage_hash(
                   slices, {"score": score, "task_model": name, "focus_rule": focus_rule,
                            **{k: upstream.get(k) for k in files}}, ranking=ranking),
               labels=labels, slices=slices, ranking=ranking, task_models=task_models,
               score_hash=score_hash)
    if isinstance(c, dict):
        return c
    got = {stage: _rows_if_current(c.run, stage, file, upstream.get(stage))
           for stage, file in files.items()}

    def significant(stage: str) -> list[dict[str, Any]]:
        return [r for r in got[stage] if r.get("significant")]

    rows = build_findings(texts=c.texts, ids=c.ids, fail=c.fail, p_wrong=c.p_wrong,
                          rule=c.rule, ngrams=got["mine"],
                          semantic=significant("semantic"), metadata=significant("metadata"),
                          words=significant("occlusion"), focus=got["focus"],
                          labelled=significant("labelled"),
                          focus_rule=focus_rule, max_per_kind=slices.max_findings)
    return _finish(c, "findings", rows, config_dump,
                   confirmed=sum(r["confirmed"] for r in rows), rule=c.rule)


def focus_rule_text(ranking: RankingConfig, abstain_threshold: float | None = None) -> str:
    """The run's one failure rule in words (focus rounds, slices and findings share it)."""
    from discovery._judge import JudgeRule

    return JudgeRule(ranking.min_reference_margin, abstain_threshold).describe()
