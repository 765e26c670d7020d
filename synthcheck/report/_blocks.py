"""The report's building blocks: sections made of paragraphs, headings, tables and figures.

Sections hold data, not markup: the jinja2 templates turn them into HTML (autoescaped) and
Markdown (through the ``md`` filter), so text from the corpus or a suite is escaped in both.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthcheck.report._figures import Png


@dataclass(frozen=True)
class Para:
    """A paragraph of plain text (``note``: shown as a remark, e.g. a skipped input)."""

    text: str
    note: bool = False
    kind: str = field(default="para", init=False)


@dataclass(frozen=True)
class WarningBox:
    """A warning the reader must see: a boxed, highlighted paragraph."""

    text: str
    kind: str = field(default="warning", init=False)


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a section."""

    text: str
    kind: str = field(default="heading", init=False)


@dataclass(frozen=True)
class Cell:
    """One table cell: its shown text, a sort value for numbers and an optional shade."""

    text: str
    sort: float | None = None
    shade: str | None = None  # a CSS background colour


@dataclass(frozen=True)
class Table:
    """A sortable, filterable table (columns in ``shade`` hold accuracies, shaded red to
    green)."""

    header: list[str]
    rows: list[list[Cell]]
    kind: str = field(default="table", init=False)

    @classmethod
    def of(cls, header: Sequence[str], rows: Iterable[Sequence[Any]],
           shade: Iterable[int] = ()) -> Table:
        """A table of raw values, formatted with :func:`fmt`."""
        shaded = set(shade)
        return cls([str(h) for h in header],
                   [[cell(v, j in shaded) for j, v in enumerate(row)] for row in rows])


def cut_note(total: int, top: int, what: str) -> list[Para]:
    """``[Para("15 of 41 findings shown ...")]`` when a table shows only its first ``top`` of
    ``total`` rows, else ``[]``: a cut table says so."""
    if total <= top:
        return []
    return [Para(f"{top} of {total:,} {what} shown; every row is in the run's files.",
                 note=True)]


@dataclass(frozen=True)
class Figure:
    """An embedded PNG figure with its caption."""

    id: str
    png: Png
    alt: str
    caption: str
    kind: str = field(default="figure", init=False)

    @property
    def data_uri(self) -> str:
        """The PNG as a ``data:`` URI (the page stays one self-contained file)."""
        return "data:image/png;base64," + base64.b64encode(self.png.data).decode("ascii")


Block = Para | WarningBox | Heading | Table | Figure


@dataclass
class ReportSection:
    """One part of the report: its blocks, or the note why it was skipped."""

    key: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    skipped: str | None = None

    @property
    def figures(self) -> list[str]:
        """Ids of the section's figures."""
        return [b.id for b in self.blocks if isinstance(b, Figure)]


class FailRate(float):
    """A fail rate: shown as the terminal and summary tables show it (``12.5%``), sorted by
    value, shaded green (0%) to red (100%)."""


def fmt(x: Any, digits: int = 3) -> str:
    """A value as the report shows it (floats to ``digits`` places, None and NaN as ``-``;
    a :class:`FailRate` as a percentage with one decimal, as ``verify`` prints it)."""
    if isinstance(x, FailRate):
        return "-" if math.isnan(x) else f"{100 * x:.1f}%"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        return f"{x:.2g}" if 0 < abs(x) < 10 ** -digits else f"{x:.{digits}f}"
    return "-" if x is None else str(x)


def cell(v: Any, shade: bool = False) -> Cell:
    """A formatted cell; numbers sort by value, shaded accuracies go red (0) to green (1),
    shaded fail rates green (0) to red (1)."""
    number = isinstance(v, int | float) and not isinstance(v, bool)
    sort = float(v) if number and not math.isnan(float(v)) else None
    colour = None
    if shade and sort is not None:
        good = 1.0 - sort if isinstance(v, FailRate) else sort
        colour = f"hsl({int(120 * max(0.0, min(1.0, good)))},70%,85%)"
    return Cell(fmt(v), sort, colour)


def slug(text: str) -> str:
    """An HTML id fragment for ``text``."""
    out = "".join(c.lower() if c.isalnum() else "-" for c in text)
    return "-".join(p for p in out.split("-") if p) or "x"


def num(v: Any) -> float:
    """``v`` as a float, NaN when it is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan
