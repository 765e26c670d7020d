"""Record I/O: JSON Lines with atomic writes.

Every file under a final name is complete: writers go to a temporary file in the same
directory, flush, fsync and rename. Readers report the file and line of a bad record.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import jsonlines

from synth.core._errors import ConfigError, DataError


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


_WRITE_ERRORS = {
    errno.ENOSPC: ("the disk is full", "free disk space, or write to another folder"),
    errno.EDQUOT: ("the disk quota is exceeded", "free disk space, or write to another folder"),
    errno.EROFS: ("the file system is read-only", "write to a writable folder"),
    errno.EACCES: ("permission denied", "write to a folder you may write to"),
    errno.EPERM: ("operation not permitted", "write to a folder you may write to"),
    errno.ENOTDIR: ("a parent of the path is a file, not a folder", "choose another path"),
}


def write_error(exc: OSError, path: str | os.PathLike[str]) -> DataError | None:
    """Return a DataError naming ``path`` for a write that failed for a reason the user can
    fix (disk full, read-only, permission denied, a file where a folder should be), else None."""
    known = _WRITE_ERRORS.get(exc.errno or -1)
    if known is None:
        return None
    what, fix = known
    return DataError(f"cannot write: {what}", where=str(exc.filename or path), fix=fix)


@contextlib.contextmanager
def user_writes(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn ENOSPC/EROFS/EACCES/... raised in the block into a DataError naming ``path``."""
    try:
        yield
    except OSError as exc:
        err = write_error(exc, path)
        if err is None:
            raise
        raise err from None


def decode_text(data: bytes, path: str | os.PathLike[str], encoding: str = "utf-8",
                *, kind: str = "file", field: str | None = None) -> str:
    """Decode ``data`` read from ``path`` (a UTF-8 byte order mark is dropped); a byte
    sequence that is not ``encoding`` raises a
    DataError naming the file, the byte offset and the encoding (and ``field``, the config
    field that sets the encoding, when there is one).

    Raises:
        DataError: the bytes are not valid ``encoding``, or the encoding is unknown.
    """
    try:
        text = data.decode(encoding)
    except LookupError:
        raise DataError(f"unknown encoding {encoding!r}", where=field or str(path),
                        fix="use a Python codec name such as utf-8, latin-1 or cp1252") from None
    except UnicodeDecodeError as exc:
        fix = (f"convert it to {encoding}" + (f", or set {field} to its encoding" if field else "")
               + "; a binary file is not a valid input")
        raise DataError(f"{kind} is not valid {encoding} text (byte 0x{data[exc.start]:02x} at "
                        f"byte offset {exc.start})", where=str(path), fix=fix) from None
    if text.startswith("\ufeff") and _is_utf8(encoding):
        text = text[1:]  # a UTF-8 BOM (Excel writes one) is never part of a column name
    return text


def _is_utf8(encoding: str) -> bool:
    import codecs

    return codecs.lookup(encoding).name == "utf-8"


def check_encoding(encoding: str) -> str:
    """Return ``encoding`` if Python knows it (a config field validator's check).

    Raises:
        ValueError: an unknown encoding, with examples of known ones.
    """
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"unknown encoding {encoding!r} (use e.g. utf-8, latin-1, "
                         "cp1252)") from None
    return encoding


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8", *, kind: str = "file",
              field: str | None = None) -> str:
    """Read a text file, reporting undecodable bytes clearly (see :func:`decode_text`)."""
    return decode_text(Path(path).read_bytes(), path, encoding, kind=kind, field=field)


def _writer() -> str:
    import socket

    return f"{os.getpid()}@{socket.gethostname()}"


def temp_writer(name: str) -> str | None:
    """The ``pid@host`` that an :func:`atomic_open` temp file name records, or None (a temp
    file of an older version)."""
    parts = name.split("~")
    return parts[-2] if len(parts) >= 3 and "@" in parts[-2] else None


def _check_file_path(path: Path, where: str) -> Path | None:
    """Refuse a ``path`` that is a directory or lies under a file; return its nearest
    existing folder."""
    if path.is_dir():
        raise DataError("cannot write: the path is a directory, not a file", where=where,
                        fix="give a file path (e.g. a new name inside that directory)")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise DataError("cannot write: a parent of the path is a file, not a folder",
                                where=where, fix=f"choose another path ({parent} is a file)")
            return parent
    return None


def _special_file(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file to write (a symlink, a device...)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(mode):
        return f"a symbolic link (to {os.readlink(path)})"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def check_regular_target(path: str | os.PathLike[str], where: str) -> None:
    """Refuse writing ``path`` when it is a symlink, a device, a FIFO or a socket: an atomic
    write renames a new file onto it and would replace the link or the device node.

    Raises:
        DataError: ``cannot write: the path is a symbolic link (to X), not a regular file``.
    """
    what = _special_file(Path(path))
    if what is not None:
        raise DataError(f"cannot write: the path is {what}, not a regular file", where=where,
                        fix="give the path of a regular file (synthcheck replaces the file "
                            "it writes, so it never writes through a link or to a device)")


def check_output_file(path: str | os.PathLike[str], *, flag: str) -> Path:
    """Check, before any work, that an output file named on the command line (``flag``,
    e.g. ``--junit``) can be written: not a directory, not under a file, in a writable
    folder; a missing folder is created at write time only when its own parent exists
    (a typo never creates a folder tree, e.g. at the file system's root).

    Raises:
        DataError: ``error: <what> (<flag> PATH): <fix>``.
    """
    path = Path(path)
    where = f"{flag} {path}"
    existing = _check_file_path(path, where)
    folder = path.parent
    if not folder.exists() and not folder.parent.is_dir():
        raise DataError(f"cannot write: the folder {folder} does not exist, nor its parent "
                        f"{folder.parent}", where=where,
                        fix=f"create the folder first (mkdir -p {folder}), or write into an "
                            f"existing folder")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise DataError("cannot write: permission denied", where=where,
                        fix=f"write to a folder you may write to ({existing} is not writable)")
    return path


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it onto ``path``.

    The temporary file is ``.NAME.~PID@HOST~RANDOM.tmp``: a later run removes it once that
    writer is gone (:meth:`synth.core.RunDir.clean_stale_temp`).

    The file gets the permissions a plain ``open()`` would give a new file (``0o666``
    less the umask), not ``mkstemp``'s private ``0o600``. If the block raises, the
    temporary file is removed and ``path`` is left untouched. A write that fails for a
    reason the user can fix (disk full, read-only, permission) raises a DataError naming
    ``path`` (see :func:`write_error`).
    """
    path = Path(path)
    check_regular_target(path, str(path))
    _check_file_path(path, str(path))
    with user_writes(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.~{_writer()}~", suffix=".tmp",
                                   dir=path.parent)
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
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and (err := write_error(exc, path)) is not None:
            raise err from None
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


def iter_jsonl_lines(lines: Iterable[tuple[int, str]], where: str
                     ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for numbered text lines of JSON Lines (blank lines
    skipped). The one JSON Lines parser (the ``jsonlines`` package), wrapped so that every
    error names ``where`` and the line.

    Raises:
        DataError: a line is not valid JSON or not a JSON object (names the line).
    """
    lineno = 0

    def texts() -> Iterator[str]:
        nonlocal lineno
        for lineno, line in lines:  # noqa: B007 - read by the caller below
            yield line

    reader = jsonlines.Reader(texts())
    while True:
        try:
            record = reader.read(allow_none=True, skip_empty=True)
        except EOFError:
            return
        except jsonlines.InvalidLineError as exc:
            cause = exc.__cause__
            what = (f"line is not valid JSON: {cause.msg}"
                    if isinstance(cause, json.JSONDecodeError) else "line is not valid JSON")
            raise DataError(what, where=f"{where}, line {lineno}",
                            fix="fix or remove that line") from None
        if not isinstance(record, dict):
            raise DataError("line is not a JSON object", where=f"{where}, line {lineno}",
                            fix="each line must be one {...} record")
        yield lineno, record


def iter_jsonl_numbered(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for each non-blank line of a UTF-8 JSON Lines file.

    Raises:
        DataError: the file is missing, a line is not UTF-8 (names the byte offset), or a line
            is not a JSON object (names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("file not found", where=str(path), fix="check the path")

    def decoded(handle: IO[bytes]) -> Iterator[tuple[int, str]]:
        offset = 0
        for lineno, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"file is not valid utf-8 text (byte 0x{raw[exc.start]:02x} at byte offset "
                    f"{offset + exc.start})", where=f"{path}, line {lineno}",
                    fix="records are UTF-8 JSON lines; restore or regenerate the file") from None
            offset += len(raw)
            yield lineno, line

    with path.open("rb") as handle:
        yield from iter_jsonl_lines(decoded(handle), str(path))


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
    with user_writes(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8", newline="\n") as handle:
            _jsonl_writer(handle).write(record)
            handle.flush()
            os.fsync(handle.fileno())


RECORD_SUFFIXES: dict[str, Literal["jsonl", "csv", "tsv", "txt"]] = {
    ".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv", ".txt": "txt",
    ".text": "txt"}
"""The suffixes :func:`iter_records` reads (lower case) and the format each one names."""


class Records(Iterator[tuple[int, dict[str, Any]]]):
    """The ``(number, record)`` pairs of one records file (see :func:`iter_records`).

    ``columns`` is the header of a .csv/.tsv file (known before the first row is read), and
    None for the other formats.
    """

    def __init__(self, pairs: Iterator[tuple[int, dict[str, Any]]],
                 columns: list[str] | None) -> None:
        self._pairs = pairs
        self.columns = columns

    def __next__(self) -> tuple[int, dict[str, Any]]:
        return next(self._pairs)


def iter_records(path: str | os.PathLike[str], *, encoding: str = "utf-8",
                 kind: str = "records file", text_field: str = "text",
                 field: str | None = None) -> Records:
    """Read a .jsonl/.json, .csv/.tsv or .txt/.text file as ``(number, record)`` pairs.

    The one reader for "texts or records from a file": .jsonl/.json give one JSON object per
    non-blank line (numbered by line, via :func:`iter_jsonl_lines`); .csv/.tsv give one
    ``csv.DictReader`` row per record (numbered from 1, the header not counted; the header is
    :attr:`Records.columns`); .txt/.text give ``{text_field: line}`` for every non-blank line
    (numbered by line, the line ending removed, nothing else). The whole file is decoded with
    :func:`read_text` when this is called, so a file that is missing, of an unknown kind or
    not valid ``encoding`` raises here, before any record is yielded. ``kind`` names the file
    in those messages; ``field`` is the config field that sets ``encoding``, if any.

    Raises:
        DataError: the file is missing, its suffix is not one of :data:`RECORD_SUFFIXES`,
            its bytes are not ``encoding`` (names the byte offset), or a JSON line is not
            a JSON object (names the line).
    """
    path = Path(path)
    fmt = RECORD_SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"unknown {kind} type {path.suffix!r}", where=str(path),
                        fix=f"use one of: {', '.join(RECORD_SUFFIXES)}")
    if not path.is_file():
        raise DataError(f"{kind} not found", where=str(path), fix="check the path")
    text = read_text(path, encoding, kind=kind, field=field)
    if fmt == "jsonl":
        lines = enumerate(io.StringIO(text, newline=None), start=1)
        return Records(iter_jsonl_lines(lines, str(path)), None)
    if fmt == "txt":
        return Records(((n, {text_field: line.rstrip("\r\n")})
                        for n, line in enumerate(io.StringIO(text, newline=None), start=1)
                        if line.strip()), None)
    reader = csv.DictReader(io.StringIO(text, newline=""),
                            delimiter="\t" if fmt == "tsv" else ",")
    columns = list(reader.fieldnames or [])
    return Records(((n, dict(row)) for n, row in enumerate(reader, start=1)), columns)


def cache_dir() -> Path:
    """Return the user cache folder (``$SYNTHCHECK_CACHE`` or ``~/.cache/synthcheck``),
    created if missing.

    Raises:
        ConfigError: ``$SYNTHCHECK_CACHE`` is a file or not writable, or it is unset and the
            home folder does not exist (it is never created).
    """
    env = os.environ.get("SYNTHCHECK_CACHE")
    fix = "set SYNTHCHECK_CACHE to a writable folder"
    if env:
        path, where = Path(env), f"$SYNTHCHECK_CACHE={env}"
    else:
        home = Path(os.path.expanduser("~"))
        if not home.is_dir():
            raise ConfigError("the home folder does not exist", where=f"$HOME={home}",
                              fix=f"{fix}, or HOME to an existing folder")
        path, where = home / ".cache" / "synthcheck", str(home / ".cache" / "synthcheck")
    if path.exists() and not path.is_dir():
        raise ConfigError("the cache folder is a file, not a folder", where=where, fix=fix)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the cache folder: {exc.strerror}", where=where,
                          fix=fix) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError("the cache folder is not writable", where=where, fix=fix)
    return path
