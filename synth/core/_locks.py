"""Stage locks that say who holds them.

A stage of a run directory runs under ``RUN/.locks/<stage>.lock``: an OS lock (``flock``: a
killed holder releases it) on a file that also records its holder, ``{"pid", "host",
"started"}``. A process that has to wait says who it waits for, again every heartbeat
interval, and gives up after ``timeout`` seconds with an error naming the holder (and, when
the holder is stopped with Ctrl-Z or SIGSTOP, how to resume it). The record of a holder that
is gone is taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from synth.core._errors import RunDirError
from synth.core._io import user_writes


def check_lock_path(path: Path) -> None:
    """Refuse a lock path that cannot be a lock file: its folder is a file, or the lock is a
    directory or a symbolic link (never followed: it could point anywhere).

    Raises:
        RunDirError: ``error: cannot lock: ... (PATH): remove it``.
    """
    folder = path.parent
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        kind = "a symbolic link" if folder.is_symlink() else "a file"
        raise RunDirError(f"cannot lock: {folder.name} is {kind}, not a folder",
                          where=str(folder),
                          fix=f"remove it (synthcheck keeps its stage locks in {folder.name}/; "
                              "it is made again)")
    if path.is_symlink():
        raise RunDirError("cannot lock: the lock file is a symbolic link", where=str(path),
                          fix="remove it (synthcheck makes it again; a lock never follows a link)")
    if path.exists() and not path.is_file():
        raise RunDirError("cannot lock: the lock file is a directory, not a file",
                          where=str(path), fix="remove it (synthcheck makes it again)")


def _state(pid: int) -> str:
    """``running``, ``stopped`` or ``gone`` for a process of this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        return "running"
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "running"
    fields = stat.rsplit(")", 1)[-1].split()
    return "stopped" if fields and fields[0] in ("T", "t") else "running"


def read_holder(path: Path) -> dict[str, Any] | None:
    """The holder a lock file records (``pid``, ``host``, ``started``), or None."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    return data


def describe_holder(holder: dict[str, Any] | None) -> str:
    """``pid 123 on host h since 2026-11-27T06:50:00+00:00`` (and ``, stopped (Ctrl-Z or
    SIGSTOP): resume it with kill -CONT 123, or end it`` when it is)."""
    if holder is None:
        return "another process"
    pid, host = holder["pid"], str(holder.get("host", "?"))
    text = f"pid {pid} on host {host} since {holder.get('started', '?')}"
    if host == socket.gethostname():
        state = _state(pid)
        if state == "stopped":
            text += (f", stopped (Ctrl-Z or SIGSTOP): resume it with `kill -CONT {pid}` "
                     f"(or `fg` in its terminal), or end it")
        elif state == "gone":
            text += ", gone"
    return text


def _open(path: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with user_writes(path):
        return os.open(path, flags, 0o644)


def _try_lock(fd: int) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def hold_lock(path: Path, *, what: str, on_wait: Callable[[str], None] | None = None,
              timeout: float | None = None, interval: float = 30.0,
              flag: str = "--lock-timeout") -> Iterator[None]:
    """Hold the lock at ``path`` for the block, recording this process as its holder.

    While another process holds it, ``on_wait`` is told ``waiting for <what>, held by pid N
    on host H since T (PATH)`` at once and then every ``interval`` seconds; after
    ``timeout`` seconds (None: no limit) a RunDirError names the holder.

    Raises:
        RunDirError: the lock path is unusable (see :func:`check_lock_path`), or the wait
            passed ``timeout``.
    """
    check_lock_path(path)
    with user_writes(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
    check_lock_path(path)
    fd = _open(path)
    try:
        start = time.monotonic()
        told = -interval
        while not _try_lock(fd):
            waited = time.monotonic() - start
            holder = read_holder(path)
            if timeout is not None and waited >= timeout:
                raise RunDirError(
                    f"gave up waiting for {what}: it is held by {describe_holder(holder)}; "
                    f"waited {waited:.0f} s ({flag} {timeout:g})", where=str(path),
                    fix="wait for that process to finish (a larger " + flag + "), or end it; "
                        "a lock of a process that is gone is taken over")
            if on_wait is not None and waited - told >= max(interval, 1.0):
                told = waited
                on_wait(f"waiting for {what}, held by {describe_holder(holder)} ({path})")
            left = None if timeout is None else timeout - waited
            time.sleep(max(0.02, min(0.2, left if left is not None else 0.2)))
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started": datetime.now(UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing releases the lock
