"""The one check of the files a command writes where the user says (``--out``, ``--junit``,
``--markdown``...): before any work, each path must be writable, a regular file (never a
symlink or a device, which an atomic rename would replace), not one of a run directory's
own files, and not another output of the same command.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from synth.core._artifacts import ARTIFACTS, MANIFEST, META_SUFFIX
from synth.core._errors import DataError
from synth.core._io import check_output_file, check_regular_target

RUN_MARKER = MANIFEST.file
"""A folder holding this file is a run directory."""

def run_files() -> frozenset[str]:
    """The names a run directory's stages and commands write at its top level: every
    declared top-level artifact (:data:`synth.core.ARTIFACTS`) and its meta file, and the
    lock."""
    top = [a.file for a in ARTIFACTS.values() if "/" not in a.file and "{" not in a.file]
    return frozenset({*top, *(f + META_SUFFIX for f in top), ".lock"})

RUN_FOLDERS = frozenset({"corpus", "scores", "review", "verify", "focus", "slices", ".locks",
                         "raw", "occlusion"})
"""The run directory's own folders: nothing is written into them from outside."""


def run_dir_of(path: Path, run: Path | None = None) -> Path | None:
    """The run directory ``path`` lies in (``run``, the command's own run directory even
    before it holds a manifest, or the nearest folder above it with a ``manifest.json``),
    or None."""
    full = Path(os.path.abspath(path))
    if run is not None and Path(os.path.abspath(run)) in full.parents:
        return Path(os.path.abspath(run))
    for parent in full.parents:
        if (parent / RUN_MARKER).is_file():
            return parent
    return None


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b) or (
        a.exists() and b.exists() and os.path.samefile(a, b))


def _recorded_outputs(run: Path) -> set[str]:
    """The paths (relative to the run) whose digests the manifest's stages record."""
    import json

    try:
        stages = json.loads((run / RUN_MARKER).read_bytes()).get("stages", {})
    except (OSError, ValueError, AttributeError):
        return set()
    out: set[str] = set()
    for entry in stages.values() if isinstance(stages, dict) else ():
        digests = entry.get("digests") if isinstance(entry, dict) else None
        if isinstance(digests, dict):
            out.update(str(k) for k in digests)
    return out


def _run_file(path: Path, run_hint: Path | None) -> tuple[Path, str] | None:
    """``(run directory, name)`` when writing ``path`` would replace (or later be replaced
    by) one of a run's own files: a name its stages and commands write at its top level, a
    hidden file, a ``.meta.json``, anything in one of its folders, or an output whose digest
    the manifest records."""
    run = run_dir_of(path, run_hint)
    if run is None:
        return None
    rel = Path(os.path.abspath(path)).relative_to(run)
    name = rel.as_posix()
    if (rel.parts[0] in RUN_FOLDERS or name in run_files() or name.startswith(".")
            or name.endswith(".meta.json") or name in _recorded_outputs(run)):
        return run, name
    return None


def check_outputs(outputs: Sequence[tuple[str, str | os.PathLike[str]]], *,
                  own: Sequence[str | os.PathLike[str]] = (),
                  run: str | os.PathLike[str] | None = None,
                  replaceable: Callable[[Path], bool] | None = None) -> list[Path]:
    """Check every file one command is about to write, before it does any work.

    Args:
        outputs: ``(flag, path)`` for each file the command writes where the user said;
            a file written beside another (Label Studio's ``.xml``, report's ``summary.md``)
            is named by a flag such as ``"--out (its .xml)"``.
        own: paths the command itself writes by default (``report``'s ``RUN/report.html``):
            these may be replaced even inside a run directory.
        run: the command's own run directory, a run directory even before its manifest exists.
        replaceable: for a file written *beside* the named one (its flag has a space), whether
            an existing file there is one this command wrote before; any other existing file
            there is the user's and is refused.

    Each path is refused when it is a directory, under a file, in a missing folder whose
    parent is missing too, unwritable (see :func:`check_output_file`), a symlink or a
    device (:func:`check_regular_target`), one of a run directory's own files or folders
    (``RUN/hard.jsonl``, ``RUN/manifest.json``, ``RUN/corpus/...``, unless in ``own``), or
    the same file as another output. A file the user named earlier in a run directory
    (``RUN/tasks.json``) may be replaced, as anywhere else.

    Raises:
        DataError: ``error: cannot write ... (FLAG PATH): <fix>``; nothing has been written.
    """
    owned = [Path(p) for p in own]
    checked: list[Path] = []
    for flag, raw in outputs:
        path = Path(raw)
        where = f"{flag} {path}"
        check_regular_target(path, where)
        for (other_flag, _), other in zip(outputs, checked, strict=False):
            if _same(path, other):
                fix = ("give --out a name whose companion file differs from it (e.g. "
                       "tasks.json, which writes tasks.xml beside it)" if " " in flag
                       else f"give {flag} and {other_flag} different paths")
                raise DataError(f"cannot write: {flag} and {other_flag} would be the same file",
                                where=where, fix=fix)
        if not any(_same(path, o) for o in owned):
            hit = _run_file(path, None if run is None else Path(run))
            if hit is not None:
                run_path, name = hit
                raise DataError(f"cannot write: {name} is one of the run directory's own files",
                                where=f"{where}, run {run_path}",
                                fix="write outside the run directory, or to a new name in it "
                                    "(the run's outputs are never replaced by --out)")
            if " " in flag and path.exists() and not (replaceable and replaceable(path)):
                raise DataError(f"cannot write: {path.name} already exists and was not written "
                                "by this command", where=where,
                                fix="move or rename that file, or give --out a path in "
                                    "another folder")
        check_output_file(path, flag=flag)
        checked.append(path)
    return checked
