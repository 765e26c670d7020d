"""Record I/O: JSON Lines with atomic writes.

Every file under a final name is complete: writers go to a temporary file in the same
directory, flush, fsync and rename. Readers report the file and line of a bad record.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import jsonlines

from synth.core._errors import DataError


def dumps_record(record: dict[str, Any]) -> str:
    """Serialise one record as a single canonical JSON line (no newline).

    Keys keep their insertion order and non-ASCII text is written as UTF-8, so the same
    record always gives the same bytes.
    """
    return json.dumps(record, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def current_umask() -> int:
    """Return the process umask without changing it where the OS can tell us.

    Linux reports it in ``/proc/self/status`` (``Umask:``); elsewhere it is read with the
    standard ``os.umask`` set-and-restore (briefly racy if another thread creates files).
    """
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it onto ``path``.

    The file gets the permissions a plain ``open()`` would give a new file (``0o666``
    less the umask), not ``mkstemp``'s private ``0o600``. If the block raises, the
    temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        encoding = None if "b" in mode else "utf-8"
        newline = None if "b" in mode else "\n"
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as handle:
            mode_bits = 0o666 & ~current_umask()
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode_bits)
            else:  # pragma: no cover - Windows
                os.chmod(tmp, mode_bits)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path) as handle:
        handle.write(text)


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented, key-sorted JSON to ``path`` atomically."""
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _jsonl_writer(handle: IO[str]) -> jsonlines.Writer:
    """The one JSON Lines writer: canonical records (see :func:`dumps_record`), one per line."""
    return jsonlines.Writer(handle, dumps=dumps_record, flush=False)


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    """Write ``records`` as JSON Lines to ``path`` atomically; return how many were written."""
    count = 0
    with atomic_open(path) as handle:
        writer = _jsonl_writer(handle)
        for record in records:
            writer.write(record)
            count += 1
    return count


def iter_jsonl_numbered(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for each non-blank line of a JSON Lines file.

    The one JSON Lines reader (the ``jsonlines`` package), wrapped so that every error names
    the file and the line.

    Raises:
        DataError: the file is missing, or a line is not a JSON object (names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("file not found", where=str(path), fix="check the path")
    lineno = 0

    def lines(handle: IO[str]) -> Iterator[str]:
        nonlocal lineno
        for lineno, line in enumerate(handle, start=1):  # noqa: B007 - read by the caller
            yield line

    with path.open(encoding="utf-8") as handle:
        reader = jsonlines.Reader(lines(handle))
        while True:
            try:
                record = reader.read(allow_none=True, skip_empty=True)
            except EOFError:
                return
            except jsonlines.InvalidLineError as exc:
                cause = exc.__cause__
                what = (f"line is not valid JSON: {cause.msg}"
                        if isinstance(cause, json.JSONDecodeError) else "line is not valid JSON")
                raise DataError(what, where=f"{path}, line {exc.lineno}",
                                fix="fix or remove that line") from None
            if not isinstance(record, dict):
                raise DataError(
                    "line is not a JSON object",
                    where=f"{path}, line {lineno}",
                    fix="each line must be one {...} record",
                )
            yield lineno, record


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON Lines file, one dict per non-blank line (see
    :func:`iter_jsonl_numbered`)."""
    for _, record in iter_jsonl_numbered(path):
        yield record


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a whole JSON Lines file into a list (see :func:`iter_jsonl`)."""
    return list(iter_jsonl(path))


def append_jsonl(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Append one record to a JSON Lines file and fsync it (for append-only logs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="\n") as handle:
        _jsonl_writer(handle).write(record)
        handle.flush()
        os.fsync(handle.fileno())


def cache_dir() -> Path:
    """Return the user cache folder (``$SYNTHCHECK_CACHE`` or ``~/.cache/synthcheck``)."""
    root = os.environ.get("SYNTHCHECK_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "synthcheck"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
