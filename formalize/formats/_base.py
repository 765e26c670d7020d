"""The base of export/import formats and the CSV helpers they share."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from synth.core import DataError, iter_records

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
                lexicon_files: Sequence[str] = ()) -> dict[str, Any]:
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


def read_csv(path: str | Path, required: Sequence[str], what: str, *,
             encoding: str = "utf-8") -> list[dict[str, str]]:
    """Read a CSV file's rows (through :func:`synth.core.iter_records`, decoded as
    ``encoding``), refusing a file that lacks a ``required`` column.

    Raises:
        DataError: the file is missing, is not ``encoding`` text (names the byte offset), or
            lacks a column.
    """
    records = iter_records(path, encoding=encoding, kind=f"{what} file")
    fields = records.columns or []
    missing = [c for c in required if c not in fields]
    if missing:
        raise DataError(
            f"{what} CSV has no column {', '.join(repr(m) for m in missing)}", where=str(path),
            fix=f"the columns must include {', '.join(required)} (found: "
                f"{', '.join(f for f in fields if f) or 'none'})")
    return [row for _, row in records]


def gold_tests(suite: Suite) -> tuple[list[CompiledTest], list[str]]:
    """The tests whose cases have gold labels, and the names of the others."""
    kept = [t for t in suite.tests if t.gold]
    skipped = [t.name for t in suite.tests if not t.gold]
    return kept, skipped
