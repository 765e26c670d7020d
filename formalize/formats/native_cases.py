"""Native cases JSON Lines: every case of a suite, flattened."""

from __future__ import annotations

from pathlib import Path

from formalize._suite import Suite
from formalize.formats._base import Exported, Format
from synth.core import write_jsonl


def export_native_cases(suite: Suite, path: str | Path, *, sample: int | None = None,
                        seed: int | None = None, max_cases: int | None = None) -> int:
    """Write every case as flattened JSON Lines (test, capability, type, case_id, text, label,
    fills, ...); loadable by ``pandas.read_json(lines=True)`` and ``datasets``.

    Returns the number of cases written."""
    return write_jsonl(path, (c.to_record() for c in suite.cases(sample, seed, max_cases)))


class NativeCases(Format):
    """Every case as one JSON object per line (all test types)."""

    name = "native-cases"
    description = "every case as JSON Lines"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the cases (see :func:`export_native_cases`)."""
        n = export_native_cases(suite, out, sample=sample, seed=seed, max_cases=max_cases)
        return Exported(f"wrote {n:,} cases to {out}", cases=n)
