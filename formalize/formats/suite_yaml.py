"""The native suite YAML: a suite as plain data (defaults left out)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from formalize._schema import read_suite_yaml, validate_suite
from formalize._suite import Suite, dump_suite_yaml
from formalize.formats._base import Exported, Format
from synth.core import write_text_atomic


class SuiteYaml(Format):
    """The suite YAML itself (normalised: shorthands expanded, defaults left out)."""

    name = "suite-yaml"
    description = "the native suite YAML"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the suite's data as YAML (sampling options do not apply)."""
        write_text_atomic(out, dump_suite_yaml(suite.to_dict()))
        return Exported(f"wrote {out}")

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = (), encoding: str = "utf-8") -> dict[str, Any]:
        """Read a suite YAML (checked against the schema) as data; ``name`` and ``labels``
        replace the file's own where given."""
        data, node = read_suite_yaml(Path(path))
        validate_suite(data, str(path), node)
        out = dict(data)
        out["name"] = name or out["name"]
        if labels:
            out["labels"] = list(labels)
        return out
