"""Hugging Face ``datasets``: every case in one Parquet file with a declared schema.

Native cases JSON Lines hold ``null`` where a case has no original, base or perturbation;
``datasets.load_dataset("json")`` infers each column's type from the first block it reads, so a
suite whose first tens of thousands of cases have ``null`` there and later ones a string fails
("Couldn't cast array of type string to null"). This format declares every column's type, so
``load_dataset("parquet", data_files=...)`` (and ``pandas.read_parquet``) read any suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from formalize._suite import Suite
from formalize.formats._base import Exported, Format

#: The string columns, in order (``None`` where a case has none).
STRING_COLUMNS = ("test", "capability", "type", "case_id", "text", "label", "orig_text", "group",
                  "base_id", "template", "perturbation")


def hf_schema() -> Any:
    """The Arrow schema: the string columns, ``fills`` as a list of {slot, lexicon, value},
    and ``meta``/``pair`` as JSON text (``null`` where a case has none)."""
    import pyarrow as pa

    fill = pa.struct([("slot", pa.string()), ("lexicon", pa.string()), ("value", pa.string())])
    return pa.schema([*((c, pa.string()) for c in STRING_COLUMNS[:6]),
                      ("fills", pa.list_(fill)),
                      *((c, pa.string()) for c in STRING_COLUMNS[6:]),
                      ("meta", pa.string()), ("pair", pa.string())])


def _row(record: dict[str, Any]) -> dict[str, Any]:
    row = {c: record.get(c) for c in STRING_COLUMNS}
    row["fills"] = record.get("fills") or []
    for key in ("meta", "pair"):
        row[key] = (json.dumps(record[key], ensure_ascii=False, sort_keys=True)
                    if record.get(key) is not None else None)
    return row


def export_hf(suite: Suite, path: str | Path, *, sample: int | None = None,
              seed: int | None = None, max_cases: int | None = None,
              batch: int = 20_000) -> int:
    """Write every case to a Parquet file (atomically) with :func:`hf_schema`; returns the
    number of cases. Streams in batches, so memory stays flat for large suites.

    Raises:
        ModelNotAvailable: pyarrow is not installed (it comes with ``datasets`` and pandas).
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        from synth.core import ModelNotAvailable

        raise ModelNotAvailable("the hf format needs pyarrow", where="--format hf",
                                fix="pip install pyarrow (or datasets, which brings it)"
                                ) from None
    from synth.core import atomic_open

    schema = hf_schema()
    n = 0
    with atomic_open(path, "wb") as handle, pq.ParquetWriter(handle, schema) as writer:
        rows: list[dict[str, Any]] = []
        for case in suite.cases(sample, seed, max_cases):
            rows.append(_row(case.to_record()))
            if len(rows) >= batch:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                n += len(rows)
                rows = []
        if rows or n == 0:
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            n += len(rows)
    return n


class HuggingFace(Format):
    """Every case as a Parquet file that ``datasets.load_dataset("parquet")`` reads."""

    name = "hf"
    description = ("every case as a Parquet file with a declared schema, for Hugging Face "
                   "datasets (load_dataset('parquet', data_files=...))")

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the cases (see :func:`export_hf`)."""
        n = export_hf(suite, out, sample=sample, seed=seed, max_cases=max_cases)
        return Exported(f"wrote {n:,} cases to {out}", cases=n)
