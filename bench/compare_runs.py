"""Compare two run directories file by file, provenance and timing fields aside.

    python bench/compare_runs.py runs/before runs/after
    python bench/compare_runs.py --small     # the test suite's small mode: two tiny made-up runs

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


def small_runs(root: Path) -> tuple[Path, Path]:
    """Two tiny runs under ``root`` that differ in a provenance field only (``same*``), with
    a shared data file (``same``) and a rendered view that is skipped."""
    a, b = root / "a", root / "b"
    for run, when in ((a, "2026-11-24T10:00:00"), (b, "2026-11-24T11:00:00")):
        (run / "scores").mkdir(parents=True)
        (run / "manifest.json").write_text(json.dumps({"config_hash": "7720e97af9d9a548",
                                                       "created": when}), encoding="utf-8")
        (run / "scores" / "task-demo.jsonl").write_text(
            '{"id": "q00000000", "probs": {"negative": 0.25, "positive": 0.75}}\n',
            encoding="utf-8")
        (run / "report.html").write_text(f"<p>{when}</p>", encoding="utf-8")
    return a, b


def main(argv: list[str]) -> int:
    """Compare ``argv[0]`` and ``argv[1]`` (``--small``: two made-up runs); return 1 if a
    data file differs."""
    if argv == ["--small"]:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            return main([str(p) for p in small_runs(Path(tmp))])
    if len(argv) != 2 or any(a.startswith("-") for a in argv):
        print("usage: python bench/compare_runs.py RUN_A RUN_B  (or --small)", file=sys.stderr)
        return 2
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
