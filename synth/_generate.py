"""The generation job: a seeded, sharded, resumable synthetic corpus.

A shard is the unit of work, determinism and resumption. Shard ``s`` holds the prompts
with global indices ``[s * shard_size, (s + 1) * shard_size)``; prompt ``i`` draws its
query from ``derive_rng(seed, "query", i)`` and samples with seed
``derive_seed(seed, "prompt", i)`` (a hash, so neighbouring run seeds share no stream), so a
shard's bytes depend only on (config, seed, shard index): a resumed run, or shards split over
many processes (``--shard i/n``), writes the same bytes as one uninterrupted run.

Processes sharing one run directory (array jobs, or several plain ``generate`` runs) claim
each shard before writing it (``corpus/.claims/shard-NNNNN.claim``, taken under the run
directory's lock and removed when the shard is done), so no shard is generated twice; a claim
of a process of this host that is gone is taken over. A finished corpus is never shrunk: a
smaller ``n`` is refused, and only the shards of ``n`` prompts are read.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth._config import (
    GeneratorConfig,
    Stage1Config,
    generation_hash_payload,
    generation_size_problem,
)
from synth._corpus import load_seed_corpus
from synth._queries import Query, QuerySampler
from synth._segment import SentenceFilter, first_sentence, is_truncated, sentence_done
from synth.core._config import config_hash
from synth.core._errors import ConfigError, DataError, RunDirError
from synth.core._executor import Executor
from synth.core._io import atomic_open, iter_jsonl_numbered, write_json_atomic, write_jsonl
from synth.core._rundir import RunDir, provenance, writer_alive, writer_id
from synth.core._seeds import derive_seed
from synth.engines._base import Backend

STAGE = "generate"


def generation_config_hash(cfg: Stage1Config) -> str:
    """Hash of everything that changes generated shards (not batch size, device or n)."""
    return config_hash(generation_hash_payload(cfg))


def check_corpus_owner(run: RunDir, chash: str, *, fix: str, note: str = "",
                       shards_done: bool = False) -> bool:
    """Refuse a run directory whose corpus was generated with another config: the
    generation hash recorded in its manifest must be ``chash`` (the one check `generate`,
    `discover` and every later stage's command make). A corpus without a recorded
    generation (one written by hand) passes.

    Returns:
        True when the manifest records another hash but the run holds no corpus and no
        finished shard (a start that failed on bad input): the new config may take it.

    Raises:
        RunDirError: the corpus (or a finished shard, ``shards_done``) belongs to another
            config; ``note`` is appended to the message, ``fix`` says what to do.
    """
    old = run.stage_hash(STAGE)
    if old is None or old == chash:
        return False
    if shards_done or has_corpus(run.path):
        raise RunDirError(f"run directory belongs to another config (generation hash {old}, "
                          f"this config {chash}){note}", where=str(run.path), fix=fix)
    return True


def parse_shard_arg(text: str) -> tuple[int, int]:
    """Parse ``i/n`` (this process's index and the number of processes)."""
    try:
        i_txt, n_txt = text.split("/")
        i, n = int(i_txt), int(n_txt)
    except ValueError:
        raise ConfigError(f"bad --shard {text!r}", where="--shard",
                          fix="write it as i/n, e.g. --shard 0/4") from None
    if n < 1 or not 0 <= i < n:
        raise ConfigError(f"bad --shard {text!r}: need 0 <= i < n", where="--shard",
                          fix="e.g. --shard 0/4 ... --shard 3/4")
    return i, n


def shard_ranges(n: int, shard_size: int) -> list[range]:
    """Split prompt indices ``0..n-1`` into consecutive shards of ``shard_size``."""
    return [range(s, min(s + shard_size, n)) for s in range(0, n, shard_size)]


def corpus_dir(run: RunDir) -> Path:
    return run.path / "corpus"


def shard_path(run: RunDir, shard: int) -> Path:
    return corpus_dir(run) / f"shard-{shard:05d}.jsonl"


def _done_path(run: RunDir, shard: int) -> Path:
    return corpus_dir(run) / f"shard-{shard:05d}.done.json"


def _claim_path(run: RunDir, shard: int) -> Path:
    return corpus_dir(run) / ".claims" / f"shard-{shard:05d}.claim"


def _claim_owner(run: RunDir, shard: int) -> str | None:
    try:
        return _claim_path(run, shard).read_text(encoding="utf-8").strip() or None
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def claim_shard(run: RunDir, shard: int, prompts: int, chash: str) -> str | None:
    """Claim ``shard`` for this process under the run directory's lock. Return None if it
    is ours now, ``"done"`` if it is already finished, or the ``pid@host`` of the live
    process writing it. A claim of a process of this host that is gone is taken over."""
    with run.lock():
        if shard_done(run, shard, prompts, chash):
            return "done"
        owner = _claim_owner(run, shard)
        if owner is not None and owner != writer_id() and writer_alive(owner):
            return owner
        path = _claim_path(run, shard)
        with atomic_open(path) as handle:
            handle.write(writer_id() + "\n")
        return None


def release_shard(run: RunDir, shard: int) -> None:
    """Remove this process's claim of ``shard`` (after it is written, or on failure)."""
    with run.lock():
        if _claim_owner(run, shard) == writer_id():
            _claim_path(run, shard).unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # only once no claim is left
                _claim_path(run, shard).parent.rmdir()


def recorded_prompts(run: RunDir, chash: str, shard_size: int) -> int:
    """How many prompts the finished shards of ``chash`` cover (the end of the last one)."""
    end = 0
    if not corpus_dir(run).is_dir():
        return 0
    for marker in corpus_dir(run).glob("shard-*.done.json"):
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
            if info.get("config_hash") == chash:
                end = max(end, int(info["shard"]) * shard_size + int(info["prompts"]))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            continue
    return end


def check_not_shrinking(run: RunDir, chash: str, shard_size: int, total: int,
                        where: str) -> None:
    """Refuse ``total`` prompts when the run directory's finished shards cover more: that
    would regenerate the last shard with fewer prompts and leave later shards behind.

    Raises:
        RunDirError: the corpus would shrink.
    """
    have = recorded_prompts(run, chash, shard_size)
    if total < have:
        raise RunDirError(
            f"the run directory holds a corpus of {have} prompts; {where} = {total} would "
            "shrink it", where=str(run.path),
            fix=f"pass --n {have} or more (or -P generator.n={have}), or use a new --run "
                "directory for a smaller corpus")


def check_generation_size(total: int, shard_size: int, where: str) -> None:
    """Refuse a prompt count below 1 or too large to start (with an estimate).

    Raises:
        ConfigError: ``total`` < 1 or beyond the limits of :func:`generation_size_problem`.
    """
    if total < 1:
        raise ConfigError(f"{where} must be at least 1; got {total}", where=where,
                          fix="give a positive number of prompts")
    problem = generation_size_problem(total, shard_size)
    if problem:
        raise ConfigError(problem, where=where, fix="lower it, or split the work over runs")


def shard_done(run: RunDir, shard: int, prompts: int, chash: str) -> bool:
    """True if ``shard`` is complete for this config hash and prompt count."""
    path = _done_path(run, shard)
    if not path.is_file() or not shard_path(run, shard).is_file():
        return False
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    return bool(info.get("config_hash") == chash and info.get("prompts") == prompts)


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


def _build_backend(gen: GeneratorConfig) -> Backend:
    from synth.engines._models import generation_dtype
    from synth.engines._registry import make_backend

    kwargs: dict[str, Any] = {}
    if gen.backend == "hf":
        kwargs["sentence_done"] = sentence_done
    return make_backend(gen.model, backend=gen.backend, device=gen.device,
                        dtype=generation_dtype(gen.dtype, gen.device),
                        batch_size=gen.batch_size, **kwargs)


def generator_backend(generator: GeneratorConfig) -> Backend:
    """The backend ``generator`` names, loaded as stage 1 generates with it (its dtype
    resolved, the sentence-end check for ``hf``); later stages that generate (focus rounds)
    use it so their sentences come from the same model and settings."""
    return _build_backend(generator)


def resolved_dtype(cfg: Stage1Config) -> str:
    """The concrete dtype this machine generates in (``generator.dtype`` with ``auto``
    resolved); it is part of the generation hash and recorded in the manifest and stats."""
    from synth.engines._models import generation_dtype

    return generation_dtype(cfg.generator.dtype, cfg.generator.device)


def _worker_backend(cfg: Stage1Config) -> Backend:
    """An executor worker's state: the generator's backend (``_build_backend`` looked up
    where the worker runs)."""
    return _build_backend(cfg.generator)


def _prompt_for(cfg: Stage1Config, backend: Backend, query: str) -> str:
    prompt = cfg.generator.prompt
    text = prompt.template.replace("{query}", query)
    if prompt.style == "chat":
        return backend.render_chat(text, prompt.system)
    return text


def generate_shard(
    cfg: Stage1Config, backend: Backend, sampler: QuerySampler, shard: int, indices: range
) -> tuple[list[dict[str, Any]], SentenceFilter, int]:
    """Generate one shard's records; return (records, filter with drop counts, tokens)."""
    return _generate_queries(cfg, backend, shard, sampler.queries(indices))


def _generate_queries(
    cfg: Stage1Config, backend: Backend, shard: int, queries: list[Query]
) -> tuple[list[dict[str, Any]], SentenceFilter, int]:
    """Generate the records of shard ``shard`` from its sampled ``queries`` (what a worker
    that holds only a backend runs); return (records, filter with drop counts, tokens)."""
    seed = cfg.generator.sampling.seed
    prompts = [_prompt_for(cfg, backend, q.text) for q in queries]
    seeds = [derive_seed(seed, "prompt", q.index) for q in queries]
    gens = backend.generate(prompts, cfg.generator.sampling, seeds)
    keep = SentenceFilter(cfg.generator.segment)
    records = []
    gen = cfg.generator
    prefix_query = gen.prompt.style == "continuation" and gen.segment.include_query
    limit = gen.sampling.max_new_tokens
    for q, s, g in zip(queries, seeds, gens, strict=True):
        source = (q.text + g.text) if prefix_query else g.text
        text = first_sentence(source)
        if keep(text, truncated=is_truncated(source, text, g.num_tokens, limit)):
            records.append({"id": f"q{q.index:08d}", "text": text, "query": q.text, "raw": g.text,
                            "shard": shard, "seed": s})
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
    existing = sorted(corpus_dir(run).glob("shard-*.done.json")) if corpus_dir(run).exists() else []
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
                               cfg.generator.sampling.seed)
        if executor is None:
            backend = backend or _build_backend(cfg.generator)
        else:  # the workers load the model now, so a bad spec is refused before any write
            executor.start(f"generate:{chash}", functools.partial(_worker_backend, cfg))
    # Checks only (and removes temp files of dead writers): the config is recorded with the
    # first manifest write below, so a run with nothing to do leaves the manifest as it was.
    run.open(config_dump or cfg.model_dump(mode="json"), chash, stage=STAGE, replace=replace)
    if todo:
        assert sampler is not None
        run.set_stage(STAGE, "running", prompts=total, dtype=resolved_dtype(cfg))
        _generate_shards(run, _shard_runner(cfg, chash, backend, executor), sampler, ranges,
                         todo, chash, report, progress, backend=backend)
    with run.lock():  # one process finalizes; the others then find stats.json current
        report.complete = all(shard_done(run, s, len(r), chash) for s, r in enumerate(ranges))
        if report.complete:
            # When stats.json and the manifest already describe this complete corpus, a rerun
            # that wrote no shard leaves every corpus file (and its mtime) untouched.
            stats = run.current_output(STAGE, chash, corpus_dir(run) / "stats.json",
                                       prompts=total)
            if stats is None or stats.get("shards") != len(ranges):
                finalize_corpus(run, len(ranges), chash, total, dtype=resolved_dtype(cfg))
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
                                 functools.partial(_worker_backend, cfg),
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


def finalize_corpus(run: RunDir, num_shards: int, chash: str, total: int, *,
                    dtype: str | None = None) -> dict[str, Any]:
    """Count kept and dropped sentences over all shards (cross-shard duplicates included),
    write ``corpus/stats.json`` and mark the generate stage complete (``dtype``: the
    resolved generation dtype, recorded in both)."""
    dropped: Counter[str] = Counter()
    prompts = 0
    for s in range(num_shards):
        info = json.loads(_done_path(run, s).read_text(encoding="utf-8"))
        dropped.update(info.get("dropped", {}))
        prompts += int(info["prompts"])
    kept = 0
    for _ in iter_corpus(run.path, dropped=dropped, num_shards=num_shards):
        kept += 1
    stats = {"prompts": prompts, "kept": kept, "dropped": dict(sorted(dropped.items())),
             "shards": num_shards, **({"dtype": dtype} if dtype else {}), **provenance(chash)}
    write_json_atomic(corpus_dir(run) / "stats.json", stats)
    run.complete(STAGE, chash, prompts=total, kept=kept, shards=num_shards,
                 **({"dtype": dtype} if dtype else {}))
    return stats


def _stats_shards(run_dir: Path) -> int | None:
    try:
        stats = json.loads((run_dir / "corpus" / "stats.json").read_text(encoding="utf-8"))
        return int(stats["shards"])
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def _check_corpus_record(record: dict[str, Any], path: Path, lineno: int) -> None:
    """Refuse a corpus record whose ``text`` is missing or not a string (null, a number, a
    list are not stringified), or without an ``id``."""
    text = record.get("text")
    if not isinstance(text, str):
        kind = ("missing" if "text" not in record else "null" if text is None
                else "a boolean" if isinstance(text, bool)
                else "a number" if isinstance(text, int | float)
                else "a list" if isinstance(text, list) else "an object")
        raise DataError(f"corpus record field 'text' is {kind}, not a string",
                        where=f"{path}, line {lineno}",
                        fix="every corpus record needs a string 'text'; regenerate the corpus "
                            "or fix that line")
    if "id" not in record or isinstance(record["id"], dict | list) or record["id"] is None:
        raise DataError("corpus record has no usable 'id' (a string or number)",
                        where=f"{path}, line {lineno}",
                        fix="give every corpus record an 'id'; regenerate the corpus or fix "
                            "that line")


def iter_corpus(run_dir: str | Path, *, dropped: Counter[str] | None = None,
                num_shards: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the corpus records of a run in shard order, skipping texts already seen in an
    earlier shard (counted in ``dropped["duplicate"]`` if given). Streams: one shard in memory.

    Only shards ``0 .. num_shards-1`` are read (default: the count ``corpus/stats.json``
    records, else every shard file), so a shard beyond the corpus's ``n`` is never read."""
    run_dir = Path(run_dir)
    limit = num_shards if num_shards is not None else _stats_shards(run_dir)
    paths = sorted((run_dir / "corpus").glob("shard-*.jsonl"))
    if limit is not None:
        paths = [p for p in paths if int(p.stem.partition("-")[2]) < limit]
    seen: set[str] = set()
    for path in paths:
        for lineno, record in iter_jsonl_numbered(path):
            _check_corpus_record(record, path, lineno)
            if record["text"] in seen:
                if dropped is not None:
                    dropped["duplicate"] += 1
                continue
            seen.add(record["text"])
            yield record


def _copy_atomic(src: Path, dst: Path) -> None:
    with atomic_open(dst, "wb") as handle:
        handle.write(src.read_bytes())


def merge_runs(cfg: Stage1Config, out_dir: str | Path, parts: list[str | Path], *,
               n: int | None = None) -> dict[str, Any]:
    """Join the shards that ``--shard i/n`` processes wrote into separate run directories.

    Every part must have been made with the same generation config hash; a shard found in
    two parts must be byte-identical. Each file is copied atomically (shard, then its done
    marker), under the output directory's lock. The result is marked complete once every
    shard is present.

    Raises:
        RunDirError: a part has another config, two parts disagree, shards are missing, or
            the output holds a larger finished corpus than ``n``.
    """
    chash = generation_config_hash(cfg)
    total = n if n is not None else cfg.generator.n
    check_generation_size(total, cfg.generator.shard_size, "--n" if n is not None else
                          "generator.n")
    ranges = shard_ranges(total, cfg.generator.shard_size)
    for part in parts:  # check every part before the output directory is touched
        prun = RunDir(part)
        prun.read_manifest()  # a part without a (readable) manifest is refused
        phash = prun.stage_hash(STAGE)
        if phash != chash:
            raise RunDirError(f"part was made with another config (hash {phash}, expected {chash})",
                              where=str(prun.path),
                              fix="merge only parts of one config" + (
                                  f" (generator.dtype auto is {resolved_dtype(cfg)} here: "
                                  "pin the dtype the parts used)"
                                  if cfg.generator.dtype == "auto" else ""))
    out = RunDir(out_dir)
    check_not_shrinking(out, chash, cfg.generator.shard_size, total,
                        "--n" if n is not None else "generator.n")
    out.open(cfg.model_dump(mode="json"), chash, stage=STAGE)
    with out.lock():
        for part in parts:
            prun = RunDir(part)
            if prun.path.resolve() == out.path.resolve():
                continue
            for s, r in enumerate(ranges):
                if not shard_done(prun, s, len(r), chash):
                    continue
                src, dst = shard_path(prun, s), shard_path(out, s)
                if dst.is_file() and dst.read_bytes() != src.read_bytes():
                    raise RunDirError(f"shard {s} differs between parts", where=str(src),
                                      fix="the parts were not made with the same code and config")
                if not dst.is_file():
                    _copy_atomic(src, dst)
                if not shard_done(out, s, len(r), chash):  # also after a kill between the two
                    _copy_atomic(_done_path(prun, s), _done_path(out, s))
        missing = [s for s, r in enumerate(ranges) if not shard_done(out, s, len(r), chash)]
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            raise RunDirError(f"{len(missing)} shard(s) missing after merge: {shown}",
                              where=str(out.path),
                              fix="run the missing --shard i/n processes first")
        return finalize_corpus(out, len(ranges), chash, total, dtype=resolved_dtype(cfg))


def has_corpus(run_dir: str | Path) -> bool:
    """True if the run directory holds generated corpus shards (``corpus/shard-*.jsonl``)."""
    return any((Path(run_dir) / "corpus").glob("shard-*.jsonl"))
