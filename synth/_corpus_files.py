"""A generated corpus on disk: its ``stats.json`` (written once every shard is done), reading
its records back (only the shards of ``n`` prompts), and the check that a run directory's
corpus belongs to the config at hand.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synth._artifacts import CORPUS_STATS, SHARD
from synth._shards import STAGE, _done_path
from synth.core._errors import DataError, RunDirError
from synth.core._io import iter_jsonl_numbered
from synth.core._rundir import RunDir, provenance


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
    CORPUS_STATS.write_json(run.path, stats)
    run.complete(STAGE, chash, prompts=total, kept=kept, shards=num_shards,
                 **({"dtype": dtype} if dtype else {}))
    return stats


def _stats_shards(run_dir: Path) -> int | None:
    try:
        stats = json.loads(CORPUS_STATS.path(run_dir).read_text(encoding="utf-8"))
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
    paths = SHARD.glob(run_dir)
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


def has_corpus(run_dir: str | Path) -> bool:
    """True if the run directory holds generated corpus shards (``corpus/shard-*.jsonl``)."""
    return bool(SHARD.glob(run_dir))
