"""Check published suite files against the import -> export round trip.

``python bench/published_suites.py PATH...`` takes HateCheck's ``test_suite_cases.csv`` (its
``template_placeholders.csv`` is read from beside it, under its published name) and ADE-style
capability CSVs (``index, capability, label, template``: ``templates_base.csv``,
``templates_all.csv``). For each file it imports the file as a user would, writes the suite
YAML, loads it back, exports it again in the same format into a temporary folder and prints:
rows, suite cases, templates recovered (HateCheck: ``case_templ`` groups with placeholders that
came back as templates; capability CSV: template rows kept as templates), whether the exported
file has the same columns and rows cell for cell, whether it is byte-identical, and the counts
per functionality/capability and label. The published files are not part of the repository:
pass their paths (the project keeps copies under /work/shared/published/). ``--small`` (the
test suite's small mode) checks the excerpts in the same formats that the tests keep
(``tests/formalize/data/``).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formalize import (  # noqa: E402
    Suite,
    dump_suite_yaml,
    export_capability_csv,
    export_hatecheck,
    import_capability_csv,
    import_hatecheck,
)
from formalize.formats.hatecheck import PLACEHOLDERS_NAME  # noqa: E402

ADE_LABELS = ["no_ade", "ade"]


def _table(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _load(data: dict, tmp: Path) -> Suite:
    """The user's route: the imported data written as suite YAML and loaded back."""
    yaml_path = tmp / "suite.yaml"
    yaml_path.write_text(dump_suite_yaml(data), encoding="utf-8")
    return Suite.from_yaml(yaml_path)


def check_hatecheck(path: Path, tmp: Path) -> dict[str, object]:
    """Round-trip HateCheck's two files; counts per functionality and label."""
    ph = path.parent / PLACEHOLDERS_NAME
    suite = _load(import_hatecheck(path, ph if ph.is_file() else None), tmp)
    out = tmp / "out"
    export_hatecheck(suite, out)
    src, back = _table(path), _table(out / path.name)
    header = src[0]
    col = {c: header.index(c) for c in ("functionality", "label_gold", "case_templ")}
    groups = {(r[col["functionality"]], r[col["case_templ"]]) for r in src[1:]}
    with_slots = sum(1 for _, t in groups if "[" in t)
    recovered = sum(len(t.spec.templates or []) for t in suite.tests)
    same_ph = (not ph.is_file()) or (out / PLACEHOLDERS_NAME).read_bytes() == ph.read_bytes()
    return {
        "rows": len(src) - 1,
        "cases": sum(len(m) for t in suite.tests for m in (t.spec.case_meta or {}).values()),
        "suite_cases": sum(1 for _ in suite.cases()),
        "templates": f"{recovered}/{with_slots} (of {len(groups)} templ groups)",
        "columns_equal": back == src,
        "bytes_equal": (out / path.name).read_bytes() == path.read_bytes() and same_ph,
        "counts": Counter((r[col["functionality"]], r[col["label_gold"]]) for r in src[1:]),
    }


def check_capability_csv(path: Path, tmp: Path) -> dict[str, object]:
    """Round-trip an ADE capability CSV; counts per capability and label."""
    suite = _load(import_capability_csv(path, labels=ADE_LABELS), tmp)
    out = tmp / path.name
    export_capability_csv(suite, out)
    src, back = _table(path), _table(out)
    recovered = sum(len(t.spec.templates or []) for t in suite.tests)
    return {
        "rows": len(src) - 1, "cases": "-",
        "suite_cases": sum(suite.counts().values()),
        "templates": f"{recovered}/{len(src) - 1}",
        "columns_equal": back == src,
        "bytes_equal": out.read_bytes() == path.read_bytes(),
        "counts": Counter((r[1], ADE_LABELS[int(r[2])]) for r in src[1:]),
    }


def check(path: Path) -> dict[str, object]:
    """Dispatch on the file's header: HateCheck cases or a capability CSV."""
    header = _table(path)[0]
    with tempfile.TemporaryDirectory() as tmp:
        if "case_templ" in header:
            return check_hatecheck(path, Path(tmp))
        if header[1:4] == ["capability", "label", "template"]:
            return check_capability_csv(path, Path(tmp))
    raise SystemExit(f"{path}: neither HateCheck cases nor a capability CSV (header {header})")


def main(argv: list[str] | None = None) -> None:
    """Print one summary row per file, then its per-capability counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--small", action="store_true",
                        help="check the tests' excerpts of both formats (tests/formalize/data)")
    args = parser.parse_args(argv)
    if args.small:
        data = Path(__file__).resolve().parents[1] / "tests" / "formalize" / "data"
        args.paths = [data / "hatecheck" / "test_suite_cases.csv", data / "ade_capabilities.csv"]
    if not args.paths:
        parser.error("give the published files' paths (or --small)")
    results = [(p, check(p)) for p in args.paths]
    fmt = "{:<24} {:>6} {:>6} {:>11} {:<30} {:>8} {:>6}"
    print(fmt.format("file", "rows", "cases", "suite cases", "templates recovered",
                     "columns", "bytes"))
    for p, r in results:
        print(fmt.format(p.name, r["rows"], r["cases"], f"{r['suite_cases']:,}",
                         str(r["templates"]), "equal" if r["columns_equal"] else "DIFFER",
                         "equal" if r["bytes_equal"] else "DIFFER"))
    for p, r in results:
        counts: Counter = r["counts"]  # type: ignore[assignment]
        print(f"\n{p.name}: rows per capability/functionality and label")
        for (cap, label), n in sorted(counts.items()):
            print(f"  {cap:<22} {label:<12} {n:>5}")


if __name__ == "__main__":
    main()
