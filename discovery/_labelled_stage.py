"""The ``labelled`` stage on a run directory: the labelled finders (:mod:`discovery._labelled`)
on the rows of the user's labelled data that the evaluation sample does not take, written
to ``labelled.jsonl``.

Which rows: ``labelled.data`` names a source (``evaluation`` for the evaluation section's
own data, ``packaged:<name>`` for a packaged set's held-out side, or a file). When it is the
evaluation data, the rows the evaluation sample takes (the stratified ``evaluation.size``
sample, seed ``derive_seed(evaluation.split_seed, "evaluation-sample")``) are removed first:
they measure the reference and the hard subset's precision, and discovery never reads them.
A packaged set is read on its held-out side only, so a demo model never has its training
rows read. ``labelled.size`` then takes a stratified sample of what is left (seed
``derive_seed(labelled.seed, "labelled-sample")``). The sizes are recorded in the stage's
meta file and the manifest (``pool``, ``evaluation_rows``, ``rows``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._artifacts import LABELLED
from discovery._config import EvaluationConfig, LabelledConfig
from discovery._data import PACKAGED_SPLITS, LabeledSet, packaged_split, read_labeled_file
from synth.core import (
    ConfigError,
    DataError,
    LabelSpace,
    RunDir,
    config_hash,
    derive_seed,
    output_dump,
)

if TYPE_CHECKING:
    from synth import SeedCorpusConfig

OUTPUT = LABELLED.file
SAMPLE_KEY = "labelled-sample"
EXAMPLE_CHARS = 400
"""Example texts in ``labelled.jsonl`` are cut to this many characters (reviews are long)."""


@dataclass(frozen=True)
class LabelledRows:
    """The labelled rows discovery reads: the examples, their ids (``L<row>``: the row's
    index in the source's pool, from 0) and how they were chosen (``info``)."""

    data: LabeledSet
    ids: list[str]
    info: dict[str, Any]


def _source(labelled: LabelledConfig, evaluation: EvaluationConfig,
            corpus: SeedCorpusConfig | None) -> tuple[EvaluationConfig, bool]:
    """The labelled source as an evaluation section (data and fields resolved) and whether
    it is the evaluation data itself."""
    if labelled.data is None:
        raise ConfigError("no labelled data is named", where="labelled.data",
                          fix="set labelled.data to evaluation, packaged:<name> or a file")
    ev = evaluation.resolved(corpus)
    data = ev.data if labelled.data == "evaluation" else labelled.data
    same = data == ev.data or (not data.startswith("packaged:")
                               and not ev.data.startswith("packaged:")
                               and Path(data).resolve() == Path(ev.data).resolve())
    own = evaluation.resolved(corpus, data) if not same else ev
    return own.model_copy(update={
        "text_field": labelled.text_field or own.text_field,
        "label_field": labelled.label_field or own.label_field,
        "encoding": labelled.encoding or own.encoding}), same


def labelled_rows(labels: LabelSpace, labelled: LabelledConfig, evaluation: EvaluationConfig,
                  corpus: SeedCorpusConfig | None = None) -> LabelledRows:
    """The rows the labelled finders read (see the module docstring).

    Raises:
        ConfigError: no data named, an unknown packaged set, or one labelled otherwise than
            the task.
        DataError: the file cannot be read, lacks a named column, or no row is left once the
            evaluation sample's are removed.
    """
    from discovery._evaluate import SAMPLE_SEED_KEY

    src, same = _source(labelled, evaluation, corpus)
    data = src.data
    name = data.partition(":")[2]
    if data.startswith("packaged:"):
        if name not in PACKAGED_SPLITS:
            raise ConfigError(f"unknown packaged labelled set {data!r}", where="labelled.data",
                              fix=f"use evaluation, one of "
                                  f"{', '.join('packaged:' + k for k in PACKAGED_SPLITS)}, "
                                  f"or a .csv/.tsv/.jsonl file")
        if LabelSpace.of(PACKAGED_SPLITS[name]) != labels:
            raise ConfigError(f"the packaged {data} set is labelled "
                              f"{'/'.join(PACKAGED_SPLITS[name])}, but the task's labels are "
                              f"{labels.list}", where="labelled.data",
                              fix="name your own labelled file")
        _, pool = packaged_split(name, seed=src.split_seed,
                                 holdout_fraction=src.holdout_fraction)
        missing = [c for c in labelled.metadata_fields if c not in pool.metadata]
        if missing:
            raise DataError(f"the packaged {data} set has no column {missing[0]!r} (its "
                            f"columns: {', '.join(pool.metadata) or 'none'})",
                            where="labelled.metadata_fields",
                            fix="name only columns the data has")
        pool = LabeledSet(pool.texts, pool.labels, metadata={
            c: pool.metadata[c] for c in labelled.metadata_fields})
    else:
        pool = read_labeled_file(data, labels.list, text_field=str(src.text_field),
                                 label_field=str(src.label_field),
                                 encoding=str(src.encoding), section="labelled",
                                 metadata_fields=labelled.metadata_fields)
    held: list[int] = []
    if same:
        held = pool.stratified_indices(evaluation.size,
                                       derive_seed(evaluation.split_seed, SAMPLE_SEED_KEY))
        if len(held) == len(pool):
            raise DataError(f"the evaluation sample takes all {len(pool)} rows of {data}, so "
                            f"none is left for discovery", where="labelled.data",
                            fix="lower evaluation.size, or name other labelled data")
    taken = set(held)
    left = [i for i in range(len(pool)) if i not in taken]
    rest = pool.take(left)
    chosen = rest.stratified_indices(labelled.size, derive_seed(labelled.seed, SAMPLE_KEY))
    rows = [left[i] for i in chosen]
    info = {"source": data, "pool": len(pool), "evaluation_rows": len(held),
            "rows": len(rows), "same_as_evaluation": same,
            "sample_seed": derive_seed(labelled.seed, SAMPLE_KEY) if len(rows) < len(left)
            else None}
    return LabelledRows(pool.take(rows), [f"L{i}" for i in rows], info)


def data_digest(labelled: LabelledConfig, evaluation: EvaluationConfig,
                corpus: SeedCorpusConfig | None = None) -> str:
    """sha256 of the labelled file's bytes ("" for packaged data or a missing file): an
    edited file redoes the stage."""
    src, _ = _source(labelled, evaluation, corpus)
    path = Path(src.data)
    if src.data.startswith("packaged:") or not path.is_file():
        return ""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def labelled_stage_hash(labelled: LabelledConfig, evaluation: EvaluationConfig, *,
                        labels: LabelSpace, models_key: str, encoder: str,
                        corpus: SeedCorpusConfig | None = None) -> str:
    """The labelled section, the evaluation sample that is kept apart (data, fields, size,
    seeds), the labels, the ranked task model's key, the encoder (semantic slices, word
    groups), the text properties its metadata slices read
    (:func:`discovery._slices.metadata_key`) and the file's bytes."""
    from discovery._slices import metadata_key

    return config_hash({"labelled": output_dump(labelled),
                        "evaluation": output_dump(evaluation.resolved(corpus)),
                        "labels": labels.list, "task": models_key,
                        "encoder": encoder if labelled.semantic or labelled.occlusion else "",
                        "data": data_digest(labelled, evaluation, corpus),
                        "properties": metadata_key()})


def find_on_labelled(rows: LabelledRows, labels: LabelSpace, task: np.ndarray,
                     labelled: LabelledConfig, *,
                     task_fn: Callable[[list[str]], np.ndarray] | None = None,
                     embed_fn: Callable[[list[str]], np.ndarray] | None = None,
                     embeddings: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Every labelled finder's rows (``kind`` ``ngram``, ``metadata``, ``semantic``,
    ``word``, ``group``), each with ``data: "labelled"``, ``examples`` (up to 3 failing rows:
    id, text cut to :data:`EXAMPLE_CHARS`, gold and predicted label), in finder order, each
    finder's significant rows first. ``task`` is the task model's probabilities of the rows;
    ``task_fn`` scores new text (occlusion; None: no occlusion); ``embed_fn`` embeds texts
    and words (semantic slices and word groups; None: neither); ``embeddings`` are the
    rows' own, when already computed (else ``embed_fn`` embeds them)."""
    from discovery._labelled import (
        ErrorEnrichment,
        GoldOcclusion,
        column_slices,
        gold_failures,
        text_slices,
    )
    from discovery._slices import SemanticSlicer

    c = labelled
    data, ids = rows.data, rows.ids
    fail = gold_failures(task, data.labels, labels.list)
    out: list[dict[str, Any]] = []
    out += ErrorEnrichment(ngram_max=c.ngram_max, min_support=c.min_support, alpha=c.alpha,
                           max_examples=c.max_examples).fit(data.texts, fail, ids=ids).rows_
    out += column_slices(data.metadata, fail, ids=ids, min_size=c.min_size, alpha=c.alpha,
                         max_examples=c.max_examples)
    out += text_slices(data.texts, fail, ids=ids, min_size=c.min_size, alpha=c.alpha,
                       max_examples=c.max_examples)
    if c.semantic and embed_fn is not None and len(data) > 2:
        slicer = SemanticSlicer(c.semantic_size, alpha=c.alpha,
                                max_examples=c.max_examples).fit(
            data.texts, embed_fn(data.texts) if embeddings is None else embeddings, fail,
            ids=ids, embed_words=embed_fn)
        out += [{"kind": "semantic", "name": " | ".join(r["terms"][:4]) or r["slice"],
                 **{k: v for k, v in r.items() if k != "slice"}, "cluster": r["slice"]}
                for r in slicer.slices_]
    if c.occlusion and task_fn is not None:
        n = min(len(data), c.occlusion_rows)
        occ = GoldOcclusion(alpha=c.alpha, max_examples=c.max_examples,
                            group_neighbours=c.group_neighbours).fit(
            data.texts[:n], data.labels[:n], labels.list, task[:n], task_fn=task_fn,
            ids=ids[:n], embed_fn=embed_fn)
        out += occ.rows_
    index = {rid: i for i, rid in enumerate(ids)}
    top = np.asarray(task).argmax(axis=1)
    base = float(fail.mean()) if len(fail) else 0.0
    for r in out:
        r["data"] = "labelled"
        r["data_base_rate"] = base  # the labelled rows' one base rate (base_rate: the rest's)
        r["examples"] = [{"id": e, "text": data.texts[index[e]][:EXAMPLE_CHARS],
                          "gold": data.labels[index[e]],
                          "predicted": labels.list[int(top[index[e]])]}
                         for e in r["example_ids"][:3]]
    return out


def labelled_run(run_dir: str | Path, *, labels: LabelSpace, labelled: LabelledConfig,
                 evaluation: EvaluationConfig, task_fn: Callable[[list[str]], np.ndarray],
                 models_key: str, encoder: str, batch_size: int = 64,
                 corpus: SeedCorpusConfig | None = None,
                 config_dump: Mapping[str, Any] | None = None, progress: bool = True
                 ) -> dict[str, Any]:
    """The labelled finders on the labelled rows (:func:`labelled_rows`) into
    ``labelled.jsonl``, with the task model's error rate, the row counts and the seeds in
    ``labelled.jsonl.meta.json`` and the manifest. Skipped when current.

    Args:
        task_fn: the ranked task model, texts -> n x labels probabilities (called only when
            the stage is not current).
        models_key: what changes the task model's scores (part of the hash).
        encoder: the sentence encoder spec (``slices.semantic.encoder``); the rows'
            embeddings are cached under ``slices/.parts/`` as the corpus's are.

    Raises:
        ConfigError, DataError: see :func:`labelled_rows`.
        ModelNotAvailable: the encoder is not installed.
    """
    from discovery._embed import SentenceEmbedder
    from discovery._labelled import gold_failures
    from discovery._runner import JobRows, run_job
    from discovery._slice_stages import _embeddings

    run = RunDir(run_dir)
    shash = labelled_stage_hash(labelled, evaluation, labels=labels, models_key=models_key,
                                encoder=encoder, corpus=corpus)

    def compute() -> JobRows:
        rows = labelled_rows(labels, labelled, evaluation, corpus)
        task = np.asarray(task_fn(rows.data.texts), dtype=np.float64)
        embed_fn, emb = None, None
        if labelled.semantic or labelled.occlusion:
            embed_fn = SentenceEmbedder(encoder, batch_size=batch_size).embed
        if labelled.semantic:
            emb = _embeddings(run, rows.data.texts, encoder, batch_size, progress)
        found = find_on_labelled(rows, labels, task, labelled, task_fn=task_fn,
                                 embed_fn=embed_fn, embeddings=emb)
        fail = gold_failures(task, rows.data.labels, labels.list)
        info = {**rows.info, "base_rate": float(fail.mean()), "errors": int(fail.sum()),
                "significant": sum(bool(r["significant"]) for r in found)}
        return JobRows(found, meta=dict(stage="labelled", findings=len(found), **info),
                       record=dict(findings=len(found), **info))

    return run_job(run.path, stage="labelled", stage_hash=shash, outputs=[LABELLED],
                   compute=compute, timed=True,
                   record=lambda: dict(config_dump) if config_dump is not None
                   else {"stage": "labelled"})
