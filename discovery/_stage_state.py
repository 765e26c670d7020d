"""What a stage-2 stage leaves in a run directory, checked and undone: the digests of its
outputs (so a deleted or edited output is never "current"), its upstream stage's state,
and putting the manifest and new files back after a failed stage."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from pathlib import Path

from synth.core import (
    DataError,
    RunDir,
    RunDirError,
    atomic_open,
)


def manifest_bytes(run: RunDir) -> bytes | None:
    path = run.manifest_path
    return path.read_bytes() if path.is_file() else None


def restore_manifest(run: RunDir, saved: bytes | None) -> None:
    """Put the manifest back as it was before a failed stage (removing one it created),
    under the run directory's lock (another process may be updating it)."""
    with run.lock():
        if saved is None:
            run.manifest_path.unlink(missing_ok=True)
            return
        with atomic_open(run.manifest_path, "wb") as handle:
            handle.write(saved)


def _digest(path: Path) -> str | None:
    """sha256 (16 hex digits) of a file's bytes, or None if it is not a readable file."""
    h = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()[:16]


def output_digests(run: RunDir, paths: Sequence[Path]) -> dict[str, str]:
    """``{path relative to the run: digest}`` of a stage's outputs, recorded in its manifest
    entry (``digests``) so later stages can tell that the outputs are still the ones made."""
    out = {}
    for p in paths:
        d = _digest(p)
        if d is not None:
            out[str(p.relative_to(run.path))] = d
    return out


def outputs_problem(run: RunDir, stage: str, paths: Sequence[Path] = ()) -> str | None:
    """Why ``stage``'s recorded outputs cannot be trusted, or None if they can: each file the
    stage recorded (``digests`` of its manifest entry, and every path of ``paths``) must
    exist with the bytes it was written with. An entry of an older synthcheck without
    digests is checked for existence only."""
    entry = run.stage_status(stage) or {}
    digests = entry.get("digests")
    recorded = dict(digests) if isinstance(digests, dict) else {}
    names = list(recorded) + [str(p.relative_to(run.path)) for p in paths
                              if str(p.relative_to(run.path)) not in recorded]
    if not isinstance(digests, dict):
        names += [str(x) for x in entry.get("outputs", []) if str(x) not in names]
    for name in names:
        path = run.path / name
        if not path.is_file():
            return f"{name} is missing"
        if name in recorded and _digest(path) != recorded[name]:
            return f"{name} was changed after the {stage} stage wrote it"
    return None


def files_under(folder: Path) -> set[Path]:
    """Every file and folder under ``folder`` (and itself), or nothing if it is missing."""
    if not folder.exists():
        return set()
    return {folder, *folder.rglob("*")}


def remove_new_files(folder: Path, before: set[Path]) -> None:
    """Remove what a failed stage added under ``folder`` (files, then emptied folders)."""
    added = files_under(folder) - before
    for path in sorted(added, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()


def check_upstream(run: RunDir, stage: str, expected: str | None, *, what: str,
                    command: str) -> str:
    """The recorded hash of ``stage`` (the upstream of the stage being run), refused unless
    the stage is complete, its recorded outputs are intact, and (when the caller's config
    gives one) its hash is ``expected``.

    Raises:
        DataError: the stage is missing, incomplete, or its outputs are missing or changed.
        RunDirError: the stage was run with another config than the caller's.
    """
    upstream = run.stage_hash(stage)
    if upstream is None or not run.is_current(stage, upstream):
        raise DataError(f"the run has no complete {what}", where=str(run.path),
                        fix=f"run `synthcheck {command}` first")
    problem = outputs_problem(run, stage)
    if problem is not None:
        raise DataError(f"the run's {what} cannot be used: {problem}", where=str(run.path),
                        fix=f"run `synthcheck {command}` again (with this config)")
    if expected is not None and upstream != expected:
        raise RunDirError(
            f"the run's {what} were made with another config (stage '{stage}' has hash "
            f"{upstream}, this config gives {expected})", where=str(run.path),
            fix=f"run `synthcheck {command}` with this config first, or pass the config "
                f"the run was made with")
    return upstream

