"""Compare two run directories file by file, provenance and timing fields aside.

    python bench/compare_runs.py runs/before runs/after

Prints one line per file: ``same`` (byte-identical), ``same*`` (identical once the fields
that name the code version or the time are removed: git_commit, created, seconds...), or
``DIFFERS``; exits 1 if any data file differs. Used to show that a refactor changes no output.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

# Fields that record when or by which commit a file was made, not what it contains.
VOLATILE = {"git_commit", "created", "seconds", "elapsed", "timings", "wall_s", "updated"}
SKIP_SUFFIXES = {".html", ".png", ".svg"}  # rendered views, checked by the report tests


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _normalised(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".json":
        return json.dumps(_strip(json.loads(data)), sort_keys=True).encode()
    return data


def main(argv: list[str]) -> int:
    """Compare ``argv[0]`` and ``argv[1]``; return 1 if a data file differs."""
    a, b = Path(argv[0]), Path(argv[1])
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    bad = 0
    for name in names:
        pa, pb = a / name, b / name
        if name.suffix in SKIP_SUFFIXES:
            continue
        if not pa.is_file() or not pb.is_file():
            print(f"{'only in ' + str(a if pa.is_file() else b):>12}  {name}")
            bad += 1
            continue
        ha, hb = (hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in (pa, pb))
        if ha == hb:
            status = "same"
        elif _normalised(pa) == _normalised(pb):
            status = "same*"
        else:
            status = "DIFFERS"
            bad += 1
        print(f"{status:>8}  {ha}  {hb}  {name}")
    print(f"{len(names)} files, {bad} differ (same* = equal without {sorted(VOLATILE)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
