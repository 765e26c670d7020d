"""`synthcheck validate`: check a suite without loading any model (fast: no torch)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("validate", help="check a test suite (no model is loaded)")
    p.add_argument("--suite", required=True, help="suite YAML")
    p.add_argument("--sample", type=int, default=None, help="count with this sample per test")
    p.add_argument("--max-cases", type=int, default=None, help="case limit (default: the suite's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import load_suite

    suite = load_suite(args.suite)
    counts = suite.counts(args.sample)
    width = max(len(n) for n in counts)
    print(f"suite {suite.name!r}: {len(suite.tests)} tests, labels {', '.join(suite.labels)}")
    for test in suite.tests:
        bound = "<=" if test.type in ("inv", "dir", "group") else "  "
        print(f"  {test.name:{width}}  {test.type:8} {test.capability:20} "
              f"{bound}{counts[test.name]:>8,}")
    total = suite.check_limit(args.sample, args.max_cases)
    print(f"total: up to {total:,} cases (limit {args.max_cases or suite.spec.max_cases:,}); ok")
    return 0
