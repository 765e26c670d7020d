"""The base of export/import formats and the CSV helpers they share."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synth.core import DataError, read_text

if TYPE_CHECKING:
    from formalize._suite import Suite
    from formalize.types import CompiledTest


@dataclass
class Exported:
    """What an export wrote."""

    message: str
    """One line for the user (``wrote ...``)."""
    skipped: list[str] = field(default_factory=list)
    """The tests left out (their cases have no gold labels, which the format needs)."""
    cases: int | None = None
    """Cases written, where the format counts them."""


class Format:
    """An export and/or import format. A subclass sets ``name`` and ``description`` and
    overrides :meth:`export`, :meth:`import_` or both; register it in
    ``formalize.formats.FORMATS``."""

    #: The ``--format`` name.
    name: ClassVar[str] = ""
    #: One line on what the format holds.
    description: ClassVar[str] = ""
    #: What ``--out`` names on export (a file, or a folder).
    out_help: ClassVar[str] = "output file"
    #: The files :meth:`export` writes into the folder ``--out`` names (empty: ``--out`` is
    #: the one file it writes).
    out_files: ClassVar[tuple[str, ...]] = ()
    #: Whether :meth:`import_` reads ``lexicon_files`` (YAML lexicons the suite refers to).
    takes_lexicon_files: ClassVar[bool] = False

    @classmethod
    def can_export(cls) -> bool:
        """Whether the format writes suites."""
        return cls.export is not Format.export

    @classmethod
    def can_import(cls) -> bool:
        """Whether the format reads files into suite data."""
        return cls.import_ is not Format.import_

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write ``suite`` to ``out``.

        Raises:
            TemplateError: the expansion is over the case limit, or the suite holds something
                the format cannot.
        """
        raise NotImplementedError(f"format {self.name!r} does not export")

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = (), encoding: str = "utf-8") -> dict[str, Any]:
        """Read ``path`` into suite data (what a suite YAML holds).

        Raises:
            DataError: a file is missing or malformed.
        """
        raise NotImplementedError(f"format {self.name!r} does not import")


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]], *,
             newline: str = "\n") -> str:
    """A CSV file's text (``\\n`` line ends unless ``newline`` says otherwise)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def read_csv(path: str | Path, required: Sequence[str], what: str,
             encoding: str = "utf-8") -> list[dict[str, str]]:
    """Read a CSV file's rows, refusing a file that lacks a ``required`` column.

    Raises:
        DataError: the file is missing or lacks a column.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} file not found", where=str(path), fix="check the path")
    # read_text: undecodable bytes name the file and byte offset; a UTF-8 BOM is dropped.
    text = read_text(path, encoding, kind=f"{what} CSV", field="--encoding")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = reader.fieldnames or []
    missing = [c for c in required if c not in fields]
    if missing:
        raise DataError(
            f"{what} CSV has no column {', '.join(repr(m) for m in missing)}", where=str(path),
            fix=f"the columns must include {', '.join(required)} (found: "
                f"{', '.join(f for f in fields if f) or 'none'})")
    rows = []
    for n, row in enumerate(reader, start=1):
        if None in row.values():  # DictReader's filler for a row's missing trailing columns
            have = sum(v is not None for v in row.values())
            raise DataError(f"row {n} has {have} columns, expected {len(fields)}",
                            where=f"{path}, line {reader.line_num}",
                            fix=f"give every row the header's {len(fields)} columns "
                                f"({', '.join(fields)}), empty ones as ,,")
        rows.append(row)
    return rows


def check_imported_labels(data: dict[str, Any], path: str | Path, what: str) -> dict[str, Any]:
    """Refuse imported suite data with no test or fewer than two labels, naming the file
    read (not the suite YAML that was to be written).

    Raises:
        DataError: no tests, or one label.
    """
    if not data["tests"]:
        raise DataError(f"the {what} file has no test rows", where=str(path),
                        fix="check that it is the right file (it needs rows that hold test "
                            "cases)")
    if len(data["labels"]) < 2:
        raise DataError(f"only one label found ({', '.join(map(str, data['labels']))}); a "
                        f"suite needs at least 2", where=str(path),
                        fix="pass --labels a,b naming every label of the task (e.g. "
                            "--labels negative,positive)")
    return data


def gold_tests(suite: Suite) -> tuple[list[CompiledTest], list[str]]:
    """The tests whose cases have gold labels, and the names of the others."""
    kept = [t for t in suite.tests if t.gold]
    skipped = [t.name for t in suite.tests if not t.gold]
    return kept, skipped
