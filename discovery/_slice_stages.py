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
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._artifacts import FINDINGS, SLICE_PARTS
from discovery._config import RankingConfig, SlicesConfig, TaskModelConfig
from discovery._finding_sources import finding_sources
from discovery._runner import JobRows, run_job
from discovery._stage_state import check_upstream, outputs_problem
from synth.core import (
    Artifact,
    LabelSpace,
    RunDir,
    atomic_open,
    config_hash,
    iter_jsonl,
    output_dump,
)

if TYPE_CHECKING:
    from discovery._rank_mine import JudgedCorpus

CHUNK = 512


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
    ``models``: what changes the two models' scores of new text; for metadata, the text
    properties it reads, :func:`discovery._slices.metadata_key`)."""
    from discovery._slices import metadata_key

    section = getattr(slices, stage)
    extra: dict[str, Any] = {"encoder": slices.semantic.encoder} \
        if stage == "occlusion" and slices.occlusion.groups else {}
    if stage == "metadata":  # a run made before a property was added reads it
        extra = {"properties": metadata_key()}
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
    count, see :func:`discovery.judge`), what abstained and the rule in words."""

    run: RunDir
    shash: str
    ids: list[str]
    texts: list[str]
    task: np.ndarray
    ref: np.ndarray
    fail: np.ndarray
    p_wrong: np.ndarray
    abstained: dict[str, Any]
    rule: str
    every: JudgedCorpus | None = None
    """Every sentence, abstained ones included, with the judgement (for occlusion, whose
    deletions of abstained sentences are evidence without entering any count)."""


def _slice_run(run_dir: str | Path, stage: str, stage_hash: Callable[[str, str], str], *,
               labels: LabelSpace, slices: SlicesConfig, ranking: RankingConfig,
               task_models: Sequence[TaskModelConfig], score_hash: str | None,
               work: Callable[[_Scored], tuple[list[dict[str, Any]], dict[str, Any]]],
               config_dump: Mapping[str, Any] | None) -> dict[str, Any]:
    """A slice stage through :func:`discovery.run_job`: the scored corpus of ``run_dir``
    (checked against ``score_hash``) is judged, the stage hashed with ``stage_hash(score
    stage hash, ranked task model)`` and skipped when current; else ``work`` gets the judged
    sentences and returns the rows and the fields its meta file and manifest entry record
    (with the base failure rate over the judged sentences and what abstained)."""
    from discovery._rank_mine import load_judged
    from discovery._task_models import ranked_task_name

    run = RunDir(run_dir)
    upstream = check_upstream(run, "score", score_hash, what="scores", command="score")
    name = ranked_task_name(ranking, task_models)
    full = load_judged(run.path, labels=labels, task_name=name, ranking=ranking)
    shash = stage_hash(upstream, name)

    def compute() -> JobRows:
        c = full.judged()
        scored = _Scored(run, shash, c.ids, c.texts, c.task, c.reference, c.judgement.fails,
                         _p_wrong(c), full.judgement.abstained_info(), full.rule.describe(),
                         full)
        rows, info = work(scored)
        info = {**info, "base_rate": float(scored.fail.mean()) if len(scored.fail) else 0.0,
                "judged": len(scored.fail), "abstained": scored.abstained}
        return JobRows(rows, meta={"stage": stage, "rows": len(rows), **info},
                       record={"rows": len(rows), **info})

    return run_job(run.path, stage=stage, stage_hash=shash, outputs=[stage_output(stage)],
                   compute=compute, timed=True,
                   record=lambda: dict(config_dump) if config_dump is not None
                   else {"stage": stage})


def _p_wrong(c: JudgedCorpus) -> np.ndarray:
    """The reference's probability that the task model's top label is wrong, per sentence."""
    return 1.0 - c.reference[np.arange(len(c.task)), c.judgement.task_top] if len(c.task) \
        else np.zeros(0)


def stage_output(stage: str) -> Artifact:
    """The file a slice stage writes: findings', or its finding source's."""
    return FINDINGS if stage == "findings" else finding_sources()[stage].artifact


def _cached_embeddings(path: Path, rows: int, dim: int | None) -> np.ndarray | None:
    """A chunk's cached embeddings, or None when there are none or the file is damaged
    (truncated, not an array, the wrong shape or not finite): then a warning names the
    file, and the chunk is embedded again (and the file rewritten)."""
    if not path.exists():
        return None
    why = None
    try:
        emb = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        why = f"it cannot be read ({type(exc).__name__}: {str(exc)[:80]})"
    else:
        if not isinstance(emb, np.ndarray) or emb.ndim != 2 or emb.shape[0] != rows or (
                dim is not None and emb.shape[1] != dim):
            shape = getattr(emb, "shape", "?")
            why = f"it holds an array of shape {shape}, not {rows} rows" + (
                f" of {dim}" if dim is not None else "")
        elif not np.issubdtype(emb.dtype, np.floating) or not np.isfinite(emb).all():
            why = "it holds values that are not finite numbers"
    if why is None:
        return emb
    print(f"warning: ignoring a damaged embeddings cache file: {why} ({path}): its "
          f"{rows} sentences are embedded again", file=sys.stderr, flush=True)
    return None


def _embeddings(run: RunDir, texts: Sequence[str], encoder: str, batch_size: int,
                progress: bool) -> np.ndarray:
    """The corpus's embeddings, chunk by chunk, each cached under ``slices/.parts/`` by the
    encoder and the chunk's texts."""
    from discovery._embed import SentenceEmbedder
    from synth.core import progress_bar

    embedder = SentenceEmbedder(encoder, batch_size=batch_size)
    parts = SLICE_PARTS.path(run.path)
    chunks: list[np.ndarray] = []
    bar = progress_bar(len(texts), "semantic: embedding", "sentence", enabled=progress)
    for start in range(0, len(texts), CHUNK):
        chunk = list(texts[start:start + CHUNK])
        h = hashlib.sha256(encoder.encode("utf-8"))
        for t in chunk:
            h.update(t.encode("utf-8") + b"\n")
        path = parts / f"embed-{start // CHUNK:05d}-{h.hexdigest()[:16]}.npy"
        cached = _cached_embeddings(path, len(chunk), chunks[0].shape[1] if chunks else None)
        if cached is not None:
            chunks.append(cached)
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

    def work(c: _Scored) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        s = slices.semantic
        emb = _embeddings(c.run, c.texts, s.encoder, s.batch_size, progress)
        words = SentenceEmbedder(s.encoder, batch_size=s.batch_size)
        slicer = SemanticSlicer(s.size, seed=s.seed, max_terms=s.max_terms,
                                max_examples=s.max_examples, alpha=s.alpha).fit(
            c.texts, emb, c.fail, p_wrong=c.p_wrong, ids=c.ids, embed_words=words.embed)
        return slicer.slices_, dict(significant=sum(r["significant"] for r in slicer.slices_))

    return _slice_run(run_dir, "semantic",
                      lambda score, name: slice_stage_hash("semantic", slices, score, name,
                                                           ranking=ranking),
                      labels=labels, slices=slices, ranking=ranking, task_models=task_models,
                      score_hash=score_hash, work=work, config_dump=config_dump)


def metadata_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                 ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                 score_hash: str | None = None, config_dump: Mapping[str, Any] | None = None
                 ) -> dict[str, Any]:
    """Metadata slices of the scored corpus into ``metadata.jsonl`` (see
    :class:`discovery.MetadataSlicer`); raises as :func:`semantic_run`."""
    from discovery._slices import MetadataSlicer

    def work(c: _Scored) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        m = slices.metadata
        slicer = MetadataSlicer(min_size=m.min_size, max_examples=m.max_examples,
                                alpha=m.alpha).fit(c.texts, c.fail, p_wrong=c.p_wrong, ids=c.ids)
        return slicer.slices_, dict(significant=sum(r["significant"] for r in slicer.slices_))

    return _slice_run(run_dir, "metadata",
                      lambda score, name: slice_stage_hash("metadata", slices, score, name,
                                                           ranking=ranking),
                      labels=labels, slices=slices, ranking=ranking, task_models=task_models,
                      score_hash=score_hash, work=work, config_dump=config_dump)


def _kept_chunks(fn: Callable[[list[str]], np.ndarray], folder: Path, key: str
                 ) -> Callable[[list[str]], np.ndarray]:
    """``fn`` scoring in resumable chunks written under ``folder`` (the score stage's chunk
    cache, :func:`discovery._chunks._score_chunks`): chunks already written with the same
    texts and ``key`` are read back (a float written as JSON reads back the same float, so
    a resumed run's outputs are byte-identical)."""
    from discovery._chunks import _score_chunks

    def scored(texts: list[str]) -> np.ndarray:
        ids = [str(i) for i in range(len(texts))]
        return _score_chunks(folder.name, fn, ids, texts, folder, key, progress=False)

    return scored


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

    def work(c: _Scored) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        o = slices.occlusion
        # Every deletion is scored in chunks kept under slices/.parts/ (keyed by the stage
        # hash and each chunk's texts): a killed occlusion redoes only the chunk it was in.
        parts = SLICE_PARTS.path(c.run.path)
        chunked_task = _kept_chunks(task_fn, parts / f"occlusion-task-{c.shash[:16]}",
                                    c.shash)
        k = len(labels)
        ref_fn = None if reference_fn is None else _kept_chunks(  # the abstain column, if
            lambda texts: np.asarray(reference_fn(texts), dtype=np.float64)[:, :k],  # any,
            parts / f"occlusion-ref-{c.shash[:16]}", c.shash)  # is no label
        # with slices.occlusion.abstained, the abstained sentences' deletions join (no count)
        e = c.every if o.abstained and c.every is not None else None
        texts, task, ref, fail, ids = (c.texts, c.task, c.ref, c.fail, c.ids) if e is None else (
            e.texts, e.task, e.reference, e.judgement.fails, e.ids)
        scorer = OcclusionScorer(reference_words=o.reference_words,
                                 reference_sentences=o.reference_sentences,
                                 min_count=o.min_count, max_examples=o.max_examples,
                                 alpha=o.alpha, centre=o.centre,
                                 group_similarity=o.group_similarity,
                                 group_neighbours=o.group_neighbours,
                                 group_min_words=o.group_min_words,
                                 reference_groups=o.reference_groups if o.groups else 0).fit(
            texts, task, ref, fail, task_fn=chunked_task,
            reference_fn=ref_fn if o.reference_words else None, ids=ids,
            judged=None if e is None else e.judgement.judged,
            embed_fn=SentenceEmbedder(slices.semantic.encoder,
                                      batch_size=slices.semantic.batch_size).embed
            if o.groups else None)
        return scorer.words_, dict(deletions=scorer.deletions_,
                   groups=sum(r["kind"] == "group" for r in scorer.words_),
                   reference_sentences=scorer.reference_calls_,
                   significant=sum(r["significant"] for r in scorer.words_))

    return _slice_run(run_dir, "occlusion",
                      lambda score, name: slice_stage_hash("occlusion", slices, score, name,
                                                           models_key, ranking=ranking),
                      labels=labels, slices=slices, ranking=ranking, task_models=task_models,
                      score_hash=score_hash, work=work, config_dump=config_dump)


def source_stage_hash(stage: str, slices: SlicesConfig, score_hash: str, task_name: str, *,
                      ranking: RankingConfig) -> str:
    """Hash of a corpus-only finding source's stage (``slices.sources``): its name, the
    judging rule, the ranked task model and the score stage's hash."""
    return config_hash({"source": stage, **failure_rule(ranking), "task_model": task_name,
                        "score": score_hash})


def source_run(run_dir: str | Path, stage: str, *, labels: LabelSpace, slices: SlicesConfig,
               ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
               score_hash: str | None = None,
               task_fn: Callable[[list[str]], np.ndarray] | None = None,
               config_dump: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The stage of a corpus-only finding source (one with ``compute``, see
    :func:`discovery.corpus_sources`): its rows from the judged corpus into its artifact
    (a source that ``edits`` sentences reads every sentence and gets ``task_fn``, which
    scores new text with the ranked task model; it is called only when the stage is not
    current); raises as :func:`semantic_run`."""
    from discovery._finding_sources import ScoredCorpus, corpus_sources

    source = corpus_sources()[stage]
    compute = source.compute
    assert compute is not None
    if source.edits and task_fn is None:
        raise ValueError(f"the finding source {stage!r} edits sentences: pass task_fn")

    def work(c: _Scored) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        if source.edits and c.every is not None:
            e = c.every
            corpus = ScoredCorpus(ids=e.ids, texts=e.texts, fail=e.judgement.fails,
                                  p_wrong=_p_wrong(e), task=e.task, reference=e.reference,
                                  task_fn=task_fn)
        else:
            corpus = ScoredCorpus(ids=c.ids, texts=c.texts, fail=c.fail, p_wrong=c.p_wrong,
                                  task=c.task, reference=c.ref)
        rows = compute(corpus, slices)
        return rows, dict(significant=sum(bool(r.get("significant")) for r in rows))

    return _slice_run(run_dir, stage,
                      lambda score, name: source_stage_hash(stage, slices, score, name,
                                                            ranking=ranking),
                      labels=labels, slices=slices, ranking=ranking, task_models=task_models,
                      score_hash=score_hash, work=work, config_dump=config_dump)


def _rows_if_current(run: RunDir, stage: str, file: Artifact, expected: str | None
                     ) -> list[dict[str, Any]]:
    """``file``'s rows when ``stage`` is complete with hash ``expected`` and its output
    intact; else none (a stage that is off, or not run with this config)."""
    path = file.path(run.path)
    if expected is None or not run.is_current(stage, expected) or not path.is_file() \
            or outputs_problem(run, stage, [path]) is not None:
        return []
    return list(iter_jsonl(path))


def findings_run(run_dir: str | Path, *, labels: LabelSpace, slices: SlicesConfig,
                 ranking: RankingConfig, task_models: Sequence[TaskModelConfig],
                 upstream: Mapping[str, str | None], focus_rule: str = "",
                 focus_alpha: float = 0.05,
                 score_hash: str | None = None,
                 config_dump: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Unify the rows of the finding sources (:data:`discovery.FINDING_SOURCES`: ``mine``,
    ``semantic``, ``metadata``, ``occlusion``, ``labelled``, ``focus``, ...) that are current
    under ``upstream`` (stage name -> the hash the caller's config gives it, None when off)
    into the ranked ``findings.jsonl`` (see :func:`discovery.build_findings`); a stage that
    is off or not current adds nothing."""
    from discovery._findings import build_findings

    sources = finding_sources()

    def work(c: _Scored) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        got = {stage: src.entered(_rows_if_current(c.run, stage, src.artifact,
                                                   upstream.get(stage)))
               for stage, src in sources.items()}
        rows = build_findings(texts=c.texts, ids=c.ids, fail=c.fail, p_wrong=c.p_wrong,
                              rule=c.rule, rows=got, focus_rule=focus_rule,
                              focus_alpha=focus_alpha,
                              max_per_kind=slices.max_findings)
        return rows, dict(confirmed=sum(r["confirmed"] for r in rows), rule=c.rule)

    return _slice_run(run_dir, "findings",
                      lambda score, name: findings_stage_hash(
                          slices, {"score": score, "task_model": name,
                                   "focus_rule": focus_rule, **findings_upstream(upstream)},
                          ranking=ranking),
                      labels=labels, slices=slices, ranking=ranking, task_models=task_models,
                      score_hash=score_hash, work=work, config_dump=config_dump)


def findings_upstream(upstream: Mapping[str, str | None]) -> dict[str, str | None]:
    """The finding sources' hashes the findings stage hash covers (see
    :func:`discovery.source_hashes`)."""
    from discovery._finding_sources import source_hashes

    return source_hashes(upstream, list(finding_sources()))


def focus_rule_text(ranking: RankingConfig, abstain_threshold: float | None = None) -> str:
    """The run's one failure rule in words (focus rounds, slices and findings share it)."""
    from discovery._judge import JudgeRule

    return JudgeRule(ranking.min_reference_margin, abstain_threshold).describe()
