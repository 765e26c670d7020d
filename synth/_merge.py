"""Merging the run directories of array jobs into one corpus (the same bytes as one run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth._config import (
    Stage1Config,
)
from synth._corpus_files import finalize_corpus
from synth._generate import generation_config_hash, resolved_dtype
from synth._shards import (
    STAGE,
    _done_path,
    check_generation_size,
    check_not_shrinking,
    shard_done,
    shard_path,
    shard_ranges,
)
from synth.core._errors import RunDirError
from synth.core._io import atomic_open
from synth.core._rundir import RunDir


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
                                  f" (generator.dtype auto is {resolved_dtype(cfg.generator)} "
                                  "here: pin the dtype the parts used)"
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
        return finalize_corpus(out, len(ranges), chash, total, dtype=resolved_dtype(cfg.generator))
