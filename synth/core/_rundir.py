"""Run directories and their manifest (provenance of every output)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from synth.core._artifacts import MANIFEST
from synth.core._errors import DataError, RunDirError
from synth.core._io import read_text, temp_writer, user_writes, write_json_atomic

LOCK = ".lock"


def package_version() -> str:
    """Return the installed synthcheck version (or ``0+unknown``)."""
    try:
        return metadata.version("synthcheck")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def git_commit() -> str:
    """Return the git commit of the synthcheck source tree (``unknown`` outside a checkout)."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = out.stdout.strip()
    if out.returncode != 0 or not commit:
        return "unknown"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True,
        text=True, timeout=5, check=False,
    ).stdout.strip()
    return commit + ("-dirty" if dirty else "")


def provenance(config_hash: str) -> dict[str, str]:
    """Return the fields every output records: config hash, package version, git commit."""
    return {"config_hash": config_hash, "version": package_version(), "git_commit": git_commit()}


_LOCKS: dict[str, Any] = {}  # one FileLock per run directory and process: re-entrant
_LOCK_TIMEOUT = 600.0
_TEMP_MAX_AGE = 3600.0  # a temp file without a writer id is stale after this many seconds


def writer_id() -> str:
    """This process's ``pid@host``: who holds a shard claim or writes a temp file."""
    return f"{os.getpid()}@{socket.gethostname()}"


def writer_alive(writer: str) -> bool:
    """False only if ``writer`` (``pid@host``) is a process of this host that is gone; a
    process of another host is assumed alive (its pid cannot be checked from here)."""
    pid_txt, _, host = writer.partition("@")
    if host != socket.gethostname() or not pid_txt.isdigit():
        return True
    try:
        os.kill(int(pid_txt), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


class RunDir:
    """One run's output directory: ``manifest.json`` plus each stage's files.

    The manifest holds the resolved config, its hash, the package version, the git commit
    and a status per stage. A run directory belongs to one config: opening it with another
    config hash is refused (unless ``allow_new`` and the directory is empty of results).

    Shared state is guarded by ``RUN/.lock`` (a ``filelock`` lock, re-entrant within a
    process): every manifest update is a locked read-modify-write, so processes sharing a
    directory (array jobs) never lose each other's entries. :meth:`open` only checks and
    remembers the config: it is recorded with the first stage write that used it, so a
    command rejected before doing any work leaves the manifest as it was.

    Raises:
        RunDirError: ``path`` exists and is not a directory.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError("the run path is a file, not a directory", where=str(self.path),
                              fix="give a directory for --run (it is created if missing)")
        self._pending: tuple[dict[str, Any], str | None, str, str, bool] | None = None

    @property
    def manifest_path(self) -> Path:
        """``RUN/manifest.json``."""
        return MANIFEST.path(self.path)

    def exists(self) -> bool:
        """True if the directory holds a manifest."""
        return self.manifest_path.is_file()

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run directory's lock (``RUN/.lock``, created with the directory) for the
        block; re-entrant within this process.

        Raises:
            RunDirError: another process held the lock for more than 10 minutes.
        """
        from filelock import FileLock, Timeout

        from synth.core._locks import check_lock_path

        check_lock_path(self.path / LOCK)
        key = str(self.path.resolve())
        lock = _LOCKS.get(key)
        if lock is None:
            with user_writes(self.path):
                self.path.mkdir(parents=True, exist_ok=True)
            lock = _LOCKS.setdefault(key, FileLock(str(self.path / LOCK), timeout=_LOCK_TIMEOUT))
        try:
            with user_writes(self.path / LOCK):
                lock.acquire()
        except Timeout:
            raise RunDirError(f"the run directory stayed locked by another process for "
                              f"{_LOCK_TIMEOUT:.0f} s", where=str(self.path / LOCK),
                              fix="wait for the other synthcheck process to finish") from None
        try:
            yield
        finally:
            lock.release()

    def check_locks(self, stages: Sequence[str]) -> None:
        """Before any work: refuse lock paths that cannot be locks (``RUN/.lock`` or a
        stage's ``RUN/.locks/<stage>.lock`` a directory or a symlink, ``RUN/.locks`` a file).

        Raises:
            RunDirError: names the path and says to remove it.
        """
        from synth.core._locks import check_lock_path

        check_lock_path(self.path / LOCK)
        for stage in stages:
            check_lock_path(self.path / ".locks" / f"{stage}.lock")

    @contextlib.contextmanager
    def stage_lock(self, stage: str, on_wait: Callable[[str], None] | None = None,
                   timeout: float | None = None) -> Iterator[None]:
        """Hold ``stage``'s lock (``RUN/.locks/<stage>.lock``) for the block, so that two
        processes running one stage on one run directory take turns: the second waits for
        the first to finish, then finds the stage current instead of redoing it. An OS lock
        (a killed holder releases it) whose file records its holder (pid, host, start
        time); ``on_wait`` is told who holds it at once and then every heartbeat interval
        (``$SYNTHCHECK_HEARTBEAT``), so a holder stopped with Ctrl-Z never makes a silent
        wait (see :func:`synth.core._locks.hold_lock`).

        Raises:
            RunDirError: ``RUN/.locks`` is a file, the lock is a directory or a symlink, or
                the wait passed ``timeout`` seconds (``--lock-timeout``).
        """
        from synth.core._locks import hold_lock
        from synth.core._progress import heartbeat_interval

        with hold_lock(self.path / ".locks" / f"{stage}.lock",
                       what=f"another process's {stage} stage on this run directory",
                       on_wait=on_wait, timeout=timeout, interval=heartbeat_interval()):
            yield

    def read_manifest(self) -> dict[str, Any]:
        """Return the manifest, or raise RunDirError if it is missing or unreadable."""
        if not self.manifest_path.is_file():
            raise RunDirError("no manifest.json in the run directory", where=str(self.path),
                              fix="run `synthcheck generate` (or `discover`) with --run first")
        try:
            data = json.loads(read_text(self.manifest_path, kind=MANIFEST.name))
        except DataError as exc:
            raise RunDirError(exc.what, where=exc.where,
                              fix="restore it or start a new run directory") from None
        except json.JSONDecodeError as exc:
            raise RunDirError(f"manifest.json is not valid JSON: {exc.msg}",
                              where=str(self.manifest_path),
                              fix="restore it or start a new run directory") from None
        if not isinstance(data, dict):
            raise RunDirError("manifest.json is not a JSON object", where=str(self.manifest_path),
                              fix="restore it or start a new run directory")
        return data

    def open(self, config: dict[str, Any], config_hash: str, *, stage: str,
             stage_hash: str | None = None, replace: bool = False) -> dict[str, Any]:
        """Check the manifest against ``config`` and its hash; return the manifest as it will
        be once ``stage`` does work (nothing is written here: the config is recorded with the
        first :meth:`set_stage`/:meth:`complete`, see :meth:`commit`). Stale temp files of dead
        writers are removed.

        ``stage_hash`` covers what changes ``stage``'s outputs (defaults to ``config_hash``);
        ``replace`` lets another recorded hash of ``stage`` be replaced instead of refused.

        Raises:
            RunDirError: the directory already holds ``stage`` outputs of another stage hash.
        """
        return self._open(config, config_hash, stage, stage_hash or config_hash, replace)

    def open_stage(self, config: dict[str, Any], stage: str, stage_hash: str) -> dict[str, Any]:
        """Like :meth:`open`, for a stage that is redone when its config changes: another
        recorded hash of ``stage`` is replaced (and the stage's status forgotten) instead of
        refused. The manifest keeps the config hash it has (a new one takes ``stage_hash``)."""
        return self._open(config, None, stage, stage_hash, True)

    def _open(self, config: dict[str, Any], config_hash: str | None, stage: str,
              stage_hash: str, replace: bool) -> dict[str, Any]:
        manifest = self._manifest_or_empty()
        old = manifest.get("stage_hashes", {}).get(stage)
        if old is not None and old != stage_hash and not replace:
            raise RunDirError(
                f"run directory belongs to another config (stage '{stage}' was run "
                f"with config hash {old}, this config has {stage_hash})",
                where=str(self.path),
                fix="use a new --run directory, or undo the config change",
            )
        self._pending = (config, config_hash, stage, stage_hash, replace)
        if self.path.is_dir():
            self.clean_stale_temp()
        return self._apply_pending(manifest)

    def _apply_pending(self, manifest: dict[str, Any]) -> dict[str, Any]:
        if self._pending is None:
            return manifest
        config, config_hash, stage, stage_hash, replace = self._pending
        if not manifest:
            manifest = {"created": datetime.now(UTC).isoformat(timespec="seconds"),
                        "stages": {}, "stage_hashes": {}}
        old = manifest.get("stage_hashes", {}).get(stage)
        if old is not None and old != stage_hash:
            if not replace:  # another process took the stage with another config meanwhile
                raise RunDirError(
                    f"run directory belongs to another config (stage '{stage}' was run "
                    f"with config hash {old}, this config has {stage_hash})",
                    where=str(self.path), fix="use a new --run directory")
            manifest["stage_hashes"].pop(stage)
            manifest.get("stages", {}).pop(stage, None)
        manifest.setdefault("stage_hashes", {})[stage] = stage_hash
        manifest["config"] = config
        manifest.update(provenance(config_hash or manifest.get("config_hash") or stage_hash))
        return manifest

    def update_manifest(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Apply ``change`` to the manifest in one locked read-modify-write (with the config
        of a pending :meth:`open`); the file is written only if this changes it."""
        with self.lock():
            current = self._manifest_or_empty()
            before = json.dumps(current, sort_keys=True)
            manifest = self._apply_pending(json.loads(before))
            change(manifest)
            if json.dumps(manifest, sort_keys=True) != before:
                write_json_atomic(self.manifest_path, manifest)
            self._pending = None
            return manifest

    def commit(self) -> dict[str, Any]:
        """Record the config of the pending :meth:`open` now (no-op without one)."""
        return self.update_manifest(lambda manifest: None)

    def reset_stage(self, stage: str) -> None:
        """Forget ``stage``'s hash and status (before redoing it with a new config)."""
        def change(manifest: dict[str, Any]) -> None:
            manifest.get("stage_hashes", {}).pop(stage, None)
            manifest.get("stages", {}).pop(stage, None)
        self.read_manifest()
        self.update_manifest(change)

    def set_stage(self, stage: str, status: str, **info: Any) -> None:
        """Record ``stage``'s status (``running``/``complete``) and extra info in the manifest."""
        if self._pending is None:
            self.read_manifest()  # without an open(), a manifest must exist
        self.update_manifest(
            lambda manifest: manifest.setdefault("stages", {}).__setitem__(
                stage, {"status": status, **info}))

    def stage_status(self, stage: str) -> dict[str, Any] | None:
        """Return the manifest entry of ``stage`` or None."""
        if not self.exists():
            return None
        stages: dict[str, dict[str, Any]] = self.read_manifest().get("stages", {})
        return stages.get(stage)

    def stage_hash(self, stage: str) -> str | None:
        """Return the hash ``stage`` was last opened with, or None (also without a manifest)."""
        hashes: dict[str, str] = self._manifest_or_empty().get("stage_hashes", {})
        return hashes.get(stage)

    def is_current(self, stage: str, stage_hash: str, **info: Any) -> bool:
        """True if the manifest records ``stage`` complete with ``stage_hash`` (and each
        ``info`` value in the stage's entry); False without a manifest. Reads only."""
        manifest = self._manifest_or_empty()
        entry = manifest.get("stages", {}).get(stage) or {}
        return bool(manifest.get("stage_hashes", {}).get(stage) == stage_hash
                    and entry.get("status") == "complete"
                    and all(entry.get(k) == v for k, v in info.items()))

    def current_output(self, stage: str, stage_hash: str, path: str | Path,
                       **info: Any) -> dict[str, Any] | None:
        """Return the JSON object file ``path`` of ``stage`` if the stage is current
        (:meth:`is_current`) *and* the file's own provenance records ``stage_hash``; else None.

        Some commands rewrite a stage's file without touching the manifest; the hash the
        file records then differs, so the stage is not current.
        """
        path = Path(path)
        if not (self.is_current(stage, stage_hash, **info) and path.is_file()):
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) and data.get("config_hash") == stage_hash else None

    def complete(self, stage: str, stage_hash: str, /, **info: Any) -> None:
        """Record ``stage`` complete with ``stage_hash`` and ``info`` (its manifest entry).
        The manifest is written only if this changes it."""
        if self._pending is None:
            self.read_manifest()  # without an open(), a manifest must exist

        def change(manifest: dict[str, Any]) -> None:
            manifest.setdefault("stage_hashes", {})[stage] = stage_hash
            manifest.setdefault("stages", {})[stage] = {"status": "complete", **info}
        self.update_manifest(change)

    def clean_stale_temp(self) -> list[Path]:
        """Remove the ``.*.tmp`` files that writers which are gone left anywhere in the run
        directory (under the lock); return them. A temp file names its writer (``pid@host``,
        see :func:`synth.core.atomic_open`); one without a name is stale after an hour."""
        stale = []
        with self.lock():
            now = time.time()
            for tmp in self.path.rglob(".*.tmp"):
                writer = temp_writer(tmp.name)
                try:
                    old = now - tmp.stat().st_mtime > _TEMP_MAX_AGE
                except FileNotFoundError:
                    continue
                if (not writer_alive(writer)) if writer else old:
                    with contextlib.suppress(FileNotFoundError):
                        tmp.unlink()
                    stale.append(tmp)
        return stale

    def _manifest_or_empty(self) -> dict[str, Any]:
        return self.read_manifest() if self.exists() else {}
