"""The generation job: a seeded, sharded, resumable synthetic corpus.

A shard is the unit of work, determinism and resumption. Shard ``s`` holds the prompts
with global indices ``[s * shard_size, (s + 1) * shard_size)``; prompt ``i`` draws its
query from ``derive_rng(seed, "query", i)`` and samples with seed
``derive_seed(seed, "prompt", i)`` (a hash, so neighbouring run seeds share no stream), so a
shard's bytes depend only on (config, seed, shard index): a resumed run, or shards split over
many processes (``--shard i/n``), writes the same bytes as one uninterrupted run. How
processes share a run directory's shards is :mod:`synth._shards`; the corpus files and
reading them back, :mod:`synth._corpus_files`.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth._artifacts import CORPUS_STATS, SHARD_DONE
from synth._config import (
    GeneratorConfig,
    PromptConfig,
    Stage1Config,
    generation_hash_payload,
)
from synth._corpus import load_seed_corpus
from synth._corpus_files import check_corpus_owner, finalize_corpus
from synth._queries import Query, QuerySampler
from synth._segment import SentenceFilter, first_sentence, is_truncated, sentence_done
from synth._shards import (
    STAGE,
    _claim_path,
    _done_path,
    check_generation_size,
    check_not_shrinking,
    claim_shard,
    release_shard,
    shard_done,
    shard_path,
    shard_ranges,
)
from synth.core._config import config_hash
from synth.core._errors import RunDirError
from synth.core._executor import Executor
from synth.core._io import write_json_atomic, write_jsonl
from synth.core._rundir import RunDir, provenance
from synth.core._seeds import derive_rng, derive_seed
from synth.engines._base import Backend


def generation_config_hash(cfg: Stage1Config) -> str:
    """Hash of everything that changes generated shards (not batch size, device or n)."""
    return config_hash(generation_hash_payload(cfg))


@dataclass
class GenerationReport:
    """What a generation call did: shards written and skipped, sentences kept and dropped."""

    shards_written: list[int] = field(default_factory=list)
    shards_skipped: list[int] = field(default_factory=list)
    kept: int = 0
    prompts: int = 0
    tokens: int = 0
    seconds: float = 0.0
    dropped: Counter[str] = field(default_factory=Counter)
    complete: bool = False


def generator_backend(generator: GeneratorConfig) -> Backend:
    """The backend ``generator`` names, loaded as stage 1 generates with it (its dtype
    resolved, the sentence-end check for an engine that takes one): generation (in this
    process or as an executor worker's state) and the focus rounds use it, so their
    sentences come from the same model and settings."""
    from synth.engines._registry import ENGINES, make_backend

    kwargs: dict[str, Any] = {}
    if ENGINES.caps(generator.backend).sentence_done:
        kwargs["sentence_done"] = sentence_done
    return make_backend(generator.model, backend=generator.backend, device=generator.device,
                        dtype=resolved_dtype(generator), batch_size=generator.batch_size,
                        **kwargs)


def resolved_dtype(generator: GeneratorConfig) -> str:
    """The concrete dtype this machine generates in (``generator.dtype`` with ``auto``
    resolved); it is part of the generation hash and recorded in the manifest and stats."""
    from synth.engines._models import generation_dtype_for

    return generation_dtype_for(generator.model, generator.dtype, generator.device)


def draw_condition(prompt: PromptConfig, seed: int, *keys: object) -> str | None:
    """The word that fills ``{label}`` in ``prompt``'s template for the stream ``(seed,
    "label", *keys)``: a uniform draw over ``prompt.labels`` (``None`` without labels)."""
    if not prompt.labels:
        return None
    return prompt.labels[derive_rng(seed, "label", *keys).randrange(len(prompt.labels))]


def prompt_condition(cfg: Stage1Config, index: int) -> str | None:
    """The word that fills ``{label}`` in prompt ``index``'s template (``None`` without
    ``generator.prompt.labels``): a uniform draw from ``derive_rng(seed, "label", index)``,
    so it depends on the prompt's index alone, never on its shard or batch."""
    return draw_condition(cfg.generator.prompt, cfg.generator.seed, index)


def render_prompt(prompt: PromptConfig, backend: Backend, query: str,
                  condition: str | None = None) -> str:
    """The prompt text for ``query`` (and the ``{label}`` word ``condition``), through the
    backend's chat template in ``chat`` style."""
    text = prompt.template.replace("{query}", query)
    if condition is not None:
        text = text.replace("{label}", condition)
    if prompt.style == "chat":
        return backend.render_chat(text, prompt.system)
    return text


def _prompt_for(cfg: Stage1Config, backend: Backend, query: str,
                condition: str | None = None) -> str:
    return render_prompt(cfg.generator.prompt, backend, query, condition)


_QUOTES = "\"“”«»"


def chat_answer(text: str) -> str:
    """A chat answer without the quotation marks it often wraps its sentence in."""
    text = text.strip()
    if text[:1] in _QUOTES:
        text = text[1:]
        end = max(text.find(q) for q in _QUOTES)
        if end > 0:
            text = text[:end] + text[end + 1:]
    return text


def _generate_queries(
    cfg: Stage1Config, backend: Backend, shard: int, queries: list[Query]
) -> tuple[list[dict[str, Any]], SentenceFilter, int]:
    """Generate the records of shard ``shard`` from its sampled ``queries`` (what a worker
    that holds only a backend runs); return (records, filter with drop counts, tokens)."""
    seed = cfg.generator.seed
    conditions = [prompt_condition(cfg, q.index) for q in queries]
    prompts = [_prompt_for(cfg, backend, q.text, c) for q, c in zip(queries, conditions,
                                                                       strict=True)]
    seeds = [derive_seed(seed, "prompt", q.index) for q in queries]
    gens = backend.generate(prompts, cfg.generator.sampling, seeds)
    keep = SentenceFilter(cfg.generator.segment)
    records = []
    gen = cfg.generator
    prefix_query = gen.prompt.style == "continuation" and gen.segment.include_query
    limit = gen.sampling.max_new_tokens
    chat = gen.prompt.style == "chat"
    for q, c, s, g in zip(queries, conditions, seeds, gens, strict=True):
        source = (q.text + g.text) if prefix_query else g.text
        if chat:
            source = chat_answer(source)
        text = first_sentence(source)
        if keep(text, truncated=is_truncated(source, text, g.num_tokens, limit)):
            record = {"id": f"q{q.index:08d}", "text": text, "query": q.text, "raw": g.text,
                      "shard": shard, "seed": s}
            if c is not None:
                record["condition"] = c
            records.append(record)
    return records, keep, sum(g.num_tokens for g in gens)


@dataclass
class _ShardResult:
    """One generated shard, as a worker hands it back to the process that writes it."""

    records: list[dict[str, Any]]
    dropped: dict[str, int]
    tokens: int
    seconds: float


def _shard_work(cfg: Stage1Config, backend: Backend, item: tuple[int, list[Query]]) -> _ShardResult:
    """Generate shard ``item = (shard, queries)`` with ``backend`` (an executor's ``work``)."""
    t0 = time.perf_counter()
    records, keep, tokens = _generate_queries(cfg, backend, item[0], item[1])
    return _ShardResult(records, dict(sorted(keep.drop_counts.items())), tokens,
                       round(time.perf_counter() - t0, 3))


def run_generation(
    cfg: Stage1Config,
    run_dir: str | Path,
    *,
    n: int | None = None,
    shard: tuple[int, int] | None = None,
    resume: bool = False,
    backend: Backend | None = None,
    progress: bool = True,
    config_dump: dict[str, Any] | None = None,
    executor: Executor | None = None,
) -> GenerationReport:
    """Generate the corpus of ``cfg`` into ``run_dir/corpus`` (see the module docstring).

    Args:
        n: prompts in total (default ``cfg.generator.n``); never fewer than a finished corpus.
        shard: ``(i, k)`` to do only shards ``s`` with ``s % k == i`` (array jobs).
        resume: skip finished shards; without it, a run directory with shards is refused.
        backend: an already built backend (default: built from ``cfg.generator``).
        config_dump: the full resolved config to record in the manifest (default: ``cfg``).
        executor: runs the shards on its workers, each holding one backend built from
            ``cfg.generator`` (default, or when ``backend`` is given: this process). This
            process still claims every shard and writes every file: the same bytes.

    Raises:
        RunDirError: the directory holds another config's run, has shards and no --resume,
            or holds a larger finished corpus than ``n``.
        ConfigError: ``n`` is below 1 or unreasonably large.
    """
    run = RunDir(run_dir)
    chash = generation_config_hash(cfg)
    if backend is not None:
        executor = None  # a backend built by the caller runs here
    total = n if n is not None else cfg.generator.n
    where = "--n" if n is not None else "generator.n"
    check_generation_size(total, cfg.generator.shard_size, where)
    ranges = shard_ranges(total, cfg.generator.shard_size)
    existing = SHARD_DONE.glob(run.path)
    replace = check_corpus_owner(
        run, chash, shards_done=bool(existing), note="; --resume refused" if resume else "",
        fix="use a new --run directory, or restore the config it was made with")
    if existing and not resume:
        raise RunDirError(f"run directory already holds {len(existing)} finished shard(s)",
                          where=str(run.path),
                          fix="pass --resume to continue it (processes sharing a directory "
                              "split the shards), or choose a new --run directory")
    check_not_shrinking(run, chash, cfg.generator.shard_size, total, where)
    mine = [s for s in range(len(ranges)) if shard is None or s % shard[1] == shard[0]]
    todo = [s for s in mine if not shard_done(run, s, len(ranges[s]), chash)]
    report = GenerationReport(shards_skipped=[s for s in mine if s not in todo])
    sampler = None
    if todo:
        # Read the seed corpus and resolve the model before anything is written, so bad
        # input (a missing file, k too large, an unknown model) leaves the directory as it was.
        sampler = QuerySampler(load_seed_corpus(cfg.corpus), cfg.queries,
                               cfg.generator.seed)
        if executor is None:
            backend = backend or generator_backend(cfg.generator)
        else:  # the workers load the model now, so a bad spec is refused before any write
            executor.start(f"generate:{chash}", functools.partial(generator_backend, cfg.generator))
    # Checks only (and removes temp files of dead writers): the config is recorded with the
    # first manifest write below, so a run with nothing to do leaves the manifest as it was.
    run.open(config_dump or cfg.model_dump(mode="json"), chash, stage=STAGE, replace=replace)
    if todo:
        assert sampler is not None
        run.set_stage(STAGE, "running", prompts=total, dtype=resolved_dtype(cfg.generator))
        _generate_shards(run, _shard_runner(cfg, chash, backend, executor), sampler, ranges,
                         todo, chash, report, progress, backend=backend)
    with run.lock():  # one process finalizes; the others then find stats.json current
        report.complete = all(shard_done(run, s, len(r), chash) for s, r in enumerate(ranges))
        if report.complete:
            # When stats.json and the manifest already describe this complete corpus, a rerun
            # that wrote no shard leaves every corpus file (and its mtime) untouched.
            stats = run.current_output(STAGE, chash, CORPUS_STATS.path(run.path),
                                       prompts=total)
            if stats is None or stats.get("shards") != len(ranges):
                finalize_corpus(run, len(ranges), chash, total, dtype=resolved_dtype(cfg.generator))
    return report


_WAIT_SECONDS = 0.5


_ShardRunner = Callable[[Iterable[tuple[int, list[Query]]]],
                        Generator[tuple[tuple[int, list[Query]], _ShardResult], None, None]]
"""Generates the shards it pulls from its argument (lazily: a shard is claimed as it is
pulled) and yields each ``((shard, queries), result)`` as it finishes."""


def _shard_runner(cfg: Stage1Config, chash: str, backend: Backend | None,
                  executor: Executor | None) -> _ShardRunner:
    if executor is not None:
        return functools.partial(executor.map, f"generate:{chash}",
                                 functools.partial(generator_backend, cfg.generator),
                                 functools.partial(_shard_work, cfg))
    assert backend is not None

    def local(items: Iterable[tuple[int, list[Query]]]
              ) -> Generator[tuple[tuple[int, list[Query]], _ShardResult], None, None]:
        return ((item, _shard_work(cfg, backend, item)) for item in items)
    return local


def _generate_shards(
    run: RunDir, runner: _ShardRunner, sampler: QuerySampler, ranges: list[range],
    todo: list[int], chash: str, report: GenerationReport, progress: bool,
    backend: Backend | None = None,
) -> None:
    """Claim and write each shard of ``todo`` (generated by ``runner``; ``backend``: the local
    backend, whose finished prompts move the progress bar); wait for the shards
    another live process is writing (taking over a claim whose process is gone)."""
    from synth.core import progress_bar

    bar = progress_bar(sum(len(ranges[s]) for s in todo), "generate", "prompt", enabled=progress)
    # A local backend that reports finished prompts (HFBackend.on_batch) moves the bar as
    # they finish; the rest of a shard (all of it, on an executor) is counted when written.
    moved = [0]

    def on_batch(n: int) -> None:
        moved[0] += n
        bar.update(n)

    if backend is not None and hasattr(backend, "on_batch"):
        backend.on_batch = on_batch
    start = time.perf_counter()
    pending = list(todo)
    told: set[int] = set()
    claimed: set[int] = set()

    def claim_free() -> Iterator[tuple[int, list[Query]]]:
        """The pending shards this process could claim (each claimed as it is pulled)."""
        for s in list(pending):
            owner = claim_shard(run, s, len(ranges[s]), chash)
            if owner == "done":  # another process wrote it meanwhile
                pending.remove(s)
                bar.update(len(ranges[s]))
                continue
            if owner is not None:
                if s not in told:
                    told.add(s)
                    print(f"shard {s} is being written by process {owner}; waiting for it "
                          f"(if that process is gone, delete {_claim_path(run, s)})",
                          file=sys.stderr)
                continue
            claimed.add(s)
            yield s, sampler.queries(ranges[s])

    try:
        while pending:
            with contextlib.closing(runner(claim_free())) as results:
                for (s, _), result in results:
                    try:
                        _write_shard(run, s, len(ranges[s]), result, chash, report)
                    finally:
                        release_shard(run, s)
                        claimed.discard(s)
                    pending.remove(s)
                    elapsed = time.perf_counter() - start
                    bar.update(max(0, len(ranges[s]) - moved[0]))
                    moved[0] = 0
                    bar.set_postfix(kept=report.kept, sent_s=f"{report.kept / elapsed:.1f}",
                                    tok_s=f"{report.tokens / elapsed:.0f}")
            if pending:
                time.sleep(_WAIT_SECONDS)
    finally:
        for s in sorted(claimed):  # claimed but not written (an error): free them
            release_shard(run, s)
        if backend is not None and hasattr(backend, "on_batch"):
            backend.on_batch = None
        bar.close()
        report.shards_written.sort()
        report.seconds = time.perf_counter() - start


def _write_shard(run: RunDir, s: int, prompts: int, result: _ShardResult, chash: str,
                 report: GenerationReport) -> None:
    write_jsonl(shard_path(run, s), result.records)
    # The marker is written after the shard: a shard without one is redone.
    write_json_atomic(_done_path(run, s), {
        "shard": s, "prompts": prompts, "kept": len(result.records),
        "dropped": result.dropped, "tokens": result.tokens, "seconds": result.seconds,
        **provenance(chash),
    })
    report.shards_written.append(s)
    report.kept += len(result.records)
    report.prompts += prompts
    report.tokens += result.tokens
    report.dropped.update(result.dropped)
