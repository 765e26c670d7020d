"""Run-directory files, each declared once: its path, its row model and the stage writing it.

Every reader and writer of a run directory goes through an :class:`Artifact` (``HARD.path(run)``,
``HARD.rows(run)``, ``HARD.write(run, rows)``), never a file-name literal; each floor declares
the files it writes (``synth._artifacts``, ``discovery._artifacts``, ``formalize._artifacts``,
``synthcheck._artifacts``) and :data:`ARTIFACTS` holds them all, by key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.core._errors import ConfigError
from synth.core._io import iter_jsonl, write_json_atomic, write_jsonl

META_SUFFIX = ".meta.json"
"""A JSON Lines output's sidecar: ``<file>.meta.json`` (provenance and counts)."""


@dataclass(frozen=True)
class Artifact:
    """One run-directory file (or a family of them, with ``{field}`` placeholders).

    Attributes:
        key: its name in :data:`ARTIFACTS`.
        file: the path relative to the run directory (``scores/task-{name}.jsonl``).
        stage: the stage that writes it.
        row: the model of one row (a pydantic model; None for a file that is not rows).
        doc: what the file holds, in one line.
    """

    key: str
    file: str
    stage: str
    row: type | None = None
    doc: str = ""

    def relpath(self, **fields: Any) -> str:
        """The path relative to the run directory, placeholders filled from ``fields``."""
        return self.file.format(**fields) if fields else self.file

    def path(self, run_dir: str | os.PathLike[str], **fields: Any) -> Path:
        """The file in ``run_dir``."""
        return Path(run_dir) / self.relpath(**fields)

    def meta(self, run_dir: str | os.PathLike[str], **fields: Any) -> Path:
        """Its ``.meta.json`` sidecar in ``run_dir``."""
        path = self.path(run_dir, **fields)
        return path.with_name(path.name + META_SUFFIX)

    @property
    def name(self) -> str:
        """The file's own name (its last path part)."""
        return Path(self.file).name

    def exists(self, run_dir: str | os.PathLike[str], **fields: Any) -> bool:
        """Whether the file is in ``run_dir``."""
        return self.path(run_dir, **fields).is_file()

    def glob(self, run_dir: str | os.PathLike[str]) -> list[Path]:
        """Every file of the family in ``run_dir`` (each ``{field}`` matching anything),
        sorted."""
        return sorted(Path(run_dir).glob(re.sub(r"\{[^}]*\}", "*", self.file)))

    def field(self, path: str | os.PathLike[str]) -> str:
        """The text a file of the family holds in place of its (one) ``{field}`` (the
        ``name`` of ``scores/task-{name}.jsonl`` from ``.../scores/task-demo.jsonl``)."""
        head, _, rest = self.name.partition("{")
        tail = rest.partition("}")[2]
        name = Path(path).name
        return name[len(head):len(name) - len(tail) if tail else None]

    def iter_rows(self, run_dir: str | os.PathLike[str], **fields: Any
                  ) -> Iterator[dict[str, Any]]:
        """Its rows, read lazily (see :func:`synth.core.iter_jsonl`)."""
        return iter_jsonl(self.path(run_dir, **fields))

    def rows(self, run_dir: str | os.PathLike[str], **fields: Any) -> list[dict[str, Any]]:
        """Its rows; none when the file is missing."""
        path = self.path(run_dir, **fields)
        return list(iter_jsonl(path)) if path.is_file() else []

    def write(self, run_dir: str | os.PathLike[str], rows: Iterable[dict[str, Any]],
              **fields: Any) -> int:
        """Write ``rows`` atomically (see :func:`synth.core.write_jsonl`)."""
        return write_jsonl(self.path(run_dir, **fields), rows)

    def read_json(self, run_dir: str | os.PathLike[str], **fields: Any) -> Any:
        """The parsed JSON file (for a ``.json`` artifact); None when it is missing."""
        path = self.path(run_dir, **fields)
        if not path.is_file():
            return None
        return json.loads(path.read_text(encoding="utf-8"))

    def write_json(self, run_dir: str | os.PathLike[str], obj: Any, **fields: Any) -> None:
        """Write ``obj`` as JSON atomically."""
        write_json_atomic(self.path(run_dir, **fields), obj)

    def validate(self, row: dict[str, Any]) -> Any:
        """``row`` checked against :attr:`row` (pydantic ``model_validate``)."""
        if self.row is None:
            raise ConfigError(f"artifact {self.key!r} has no row model", where=self.file,
                              fix="declare one with row=...")
        return self.row.model_validate(row)  # type: ignore[attr-defined]


ARTIFACTS: dict[str, Artifact] = {}
"""Every declared run-directory file, by key (filled as each floor's ``_artifacts`` module is
imported)."""


def artifact(key: str, file: str, stage: str, row: type | None = None, doc: str = ""
             ) -> Artifact:
    """Declare a run-directory file once and register it in :data:`ARTIFACTS`."""
    if key in ARTIFACTS and ARTIFACTS[key].file != file:
        raise ConfigError(f"artifact {key!r} is declared twice", where=file,
                          fix="give the file one declaration")
    out = Artifact(key, file, stage, row, doc)
    ARTIFACTS[key] = out
    return out


MANIFEST = artifact("manifest", "manifest.json", "", doc="every stage's hash, status and "
                    "provenance, under a file lock")
