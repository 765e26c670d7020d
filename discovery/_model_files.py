"""Digests of the files a task model reads, so that stage hashes change when a model file does.

A task model is named by a spec (``sklearn:mine/model.skops``), and the spec does not change
when the file behind it is retrained in place. The score, focus, evaluate and verify hashes
therefore cover :func:`discovery._kinds.model_files_digest`: a sha256 over the bytes of
every file the spec reads (a ``.skops`` file, every file of a local ``hf:`` folder, the
module file of a ``python:`` model). Digests are cached by (path, size, mtime), in the
process and in the user cache folder, so an unchanged multi-GB folder is not read again by
every command.

Specs that read no user file return None and leave their hashes as they were: ``demo:``
(its model is trained from the config's split, which the hash covers), ``fewshot:`` (a
packaged or hub LLM, covered by its spec), ``hatesonar:`` (a pinned package), and ``hf:``
hub ids (no local folder).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_MEMO: dict[tuple[str, int, int], str] = {}
_CHUNK = 1 << 20


def _disk_cache() -> Path | None:
    """The cache folder of digests, or None when there is no usable cache folder (the
    digest is then computed every time, never an error)."""
    from synth.core import ConfigError, cache_dir

    try:
        return cache_dir() / "file-digests"
    except ConfigError:
        return None


def file_digest(path: str | Path) -> str:
    """sha256 (hex) of the bytes of ``path``, cached by (absolute path, size, mtime)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    if key in _MEMO:
        return _MEMO[key]
    folder = _disk_cache()
    name = hashlib.sha256("\0".join(map(str, key)).encode("utf-8")).hexdigest()
    if folder is not None:
        try:
            stored = (folder / name).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            stored = ""
        if len(stored) == 64 and all(c in "0123456789abcdef" for c in stored):
            _MEMO[key] = stored
            return stored
    h = hashlib.sha256()
    with p.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    digest = h.hexdigest()
    _MEMO[key] = digest
    if folder is not None:
        from synth.core import write_text_atomic

        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(folder / name, digest + "\n")
        except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
            pass
    return digest


def _tree_digest(folder: Path) -> str:
    """Digest of every file under ``folder``: relative paths and their bytes' digests."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for fn in sorted(filenames):
            path = Path(dirpath) / fn
            if not path.is_file():
                continue
            rel = path.relative_to(folder).as_posix()
            h.update(rel.encode("utf-8") + b"\0" + file_digest(path).encode("ascii") + b"\n")
    return h.hexdigest()


def _python_module_file(module: str) -> Path | None:
    """The source file of ``module`` as the ``python:`` loader would import it (on
    ``sys.path``, else in the current folder), found without running it when it is a
    top-level module."""
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError, AttributeError):
        spec = None
    if spec is None and "." not in module:
        spec = importlib.machinery.PathFinder.find_spec(module, [os.getcwd()])
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin and os.path.isfile(origin):
        return Path(origin)
    return None


def file_target_digest(target: str) -> str | None:
    """The digest of a single-file target (``sklearn:<file>``)."""
    path = Path(os.path.expanduser(target))
    return file_digest(path)[:16] if path.is_file() else None


def folder_target_digest(target: str) -> str | None:
    """The digest of a folder target (``hf:<local folder>``; a hub id reads no local
    file)."""
    path = Path(os.path.expanduser(target))
    return _tree_digest(path)[:16] if path.is_dir() else None


def module_target_digest(target: str) -> str | None:
    """The digest of a ``python:<module>:<name>`` target's module file."""
    path = _python_module_file(target.partition(":")[0])
    return file_digest(path)[:16] if path is not None else None
