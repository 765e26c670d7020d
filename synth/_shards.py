"""The shard protocol of a generated corpus.

A shard is the unit of work, determinism and resumption. Shard ``s`` holds the prompts with
global indices ``[s * shard_size, (s + 1) * shard_size)``. Processes sharing one run
directory (array jobs, or several plain ``generate`` runs) claim each shard before writing it
(``corpus/.claims/shard-NNNNN.claim``, taken under the run directory's lock and removed when
the shard is done), so no shard is generated twice; a claim of a process of this host that
is gone is taken over. A finished corpus is never shrunk: a smaller ``n`` is refused.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from synth._artifacts import CORPUS, SHARD, SHARD_CLAIM, SHARD_DONE
from synth._config import (
    generation_size_problem,
)
from synth.core._errors import ConfigError, RunDirError
from synth.core._io import atomic_open
from synth.core._rundir import RunDir, writer_alive, writer_id

STAGE = "generate"


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
    return CORPUS.path(run.path)


def shard_path(run: RunDir, shard: int) -> Path:
    return SHARD.path(run.path, shard=shard)


def _done_path(run: RunDir, shard: int) -> Path:
    return SHARD_DONE.path(run.path, shard=shard)


def _claim_path(run: RunDir, shard: int) -> Path:
    return SHARD_CLAIM.path(run.path, shard=shard)


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
    for marker in SHARD_DONE.glob(run.path):
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
