"""`synthcheck import`: turn another tool's test files into a suite YAML."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("import", help="import HateCheck or capability-CSV tests as a suite YAML")
    p.add_argument("--format", required=True, choices=["hatecheck", "capability-csv"])
    p.add_argument("--in", dest="inp", required=True,
                   help="hatecheck: test_suite_cases.csv or its folder; capability-csv: the CSV")
    p.add_argument("--placeholders", default=None,
                   help="hatecheck: template_placeholders.csv (default: next to the cases file)")
    p.add_argument("--labels", default=None,
                   help="comma-separated label names (capability-csv: names for 0, 1, ...)")
    p.add_argument("--name", default=None, help="suite name (default: the output file's stem)")
    p.add_argument("--out", required=True, help="suite YAML to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import Suite, dump_suite_yaml, import_capability_csv, import_hatecheck
    from synth import write_text_atomic

    out = Path(args.out)
    name = args.name or out.stem
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    inp = Path(args.inp)
    if args.format == "hatecheck":
        cases = inp / "test_suite_cases.csv" if inp.is_dir() else inp
        ph = Path(args.placeholders) if args.placeholders else cases.parent / \
            "template_placeholders.csv"
        data = import_hatecheck(cases, ph if ph.is_file() else None, name=name, labels=labels)
    else:
        data = import_capability_csv(inp, name=name, labels=labels)
    # Check the result before writing, so a bad import never replaces a good file.
    suite = Suite.from_dict(data, source=str(out), base_dir=out.parent)
    write_text_atomic(out, dump_suite_yaml(data))
    total = sum(suite.counts().values())
    print(f"wrote {out}: {len(suite.tests)} tests, {total:,} cases")
    return 0
