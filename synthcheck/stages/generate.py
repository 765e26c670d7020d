"""Stage 1, generate: a seeded, sharded synthetic corpus (``synth.run_generation``)."""

from __future__ import annotations

import json
from pathlib import Path

from synth import CORPUS_STATS, SHARD_DONE, Stage1Config
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun, StageWork

CHECK_FIX = "pass the --config (and -P) the run was made with, or use a new --run directory"


def sections(cfg: RunConfig) -> Stage1Config:
    """The task, the seed corpus, the queries and the generator."""
    return Stage1Config(task=cfg.task, corpus=cfg.corpus, queries=cfg.queries,
                        generator=cfg.generator)


def stage_hash(s: Stage1Config, upstream: Hashes, run_dir: Path | None) -> str:
    """The generation hash (the manifest's ``config_hash``; no upstream stage)."""
    from synth import generation_config_hash

    return generation_config_hash(s)


def outputs(s: Stage1Config, run_dir: Path) -> list[Path]:
    return [CORPUS_STATS.path(run_dir)]


def run(s: Stage1Config, ctx: StageContext) -> StageRun:
    """Generate the missing shards (the run seed is ``s.generator.seed``: each
    prompt's query and sampling seed are derived from it and the prompt index)."""
    from synth import run_generation

    report = run_generation(s, ctx.run.path, n=ctx.n, resume=True, progress=ctx.progress,
                            config_dump=ctx.record, executor=ctx.executor)
    corpus = json.loads(CORPUS_STATS.path(ctx.run.path).read_text())
    return StageRun(bool(report.shards_written), {"corpus": corpus, "generate": report})


def check_corpus(run_dir: str | Path, generation_hash: str | None) -> None:
    """Refuse a run directory whose corpus was generated with another config (what every
    stage after generation checks first; see ``synth.check_corpus_owner``).

    Raises:
        RunDirError: the corpus belongs to another config (nothing is written).
    """
    from synth import check_corpus_owner
    from synth.core import RunDir

    if generation_hash is not None:
        check_corpus_owner(RunDir(run_dir), generation_hash, fix=CHECK_FIX)


def work(s: Stage1Config, w: StageWork) -> tuple[str, int]:
    """The generator and the prompts in shards not yet done (``discover --n`` or
    ``generator.n`` in all)."""
    total = w.n if w.n is not None else s.generator.n
    done = 0
    for marker in SHARD_DONE.glob(w.run.path):
        try:
            done += int(json.loads(marker.read_text(encoding="utf-8")).get("prompts", 0))
        except (OSError, ValueError):
            continue
    return s.generator.model, max(0, total - done)


STAGE = Stage(name="generate", sections=sections, upstream=(), stage_hash=stage_hash,
              outputs=outputs, run=run, shares_work=True, work=work)
