"""`synthcheck export`: write a suite in another tool's format."""

from __future__ import annotations

import argparse

from synthcheck._cli_common import positive_int

FORMATS = ["native-cases", "hatecheck", "capability-csv", "adatest"]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("export", help="export a suite: native-cases, hatecheck, capability-csv, "
                                      "adatest")
    p.add_argument("--suite", required=True, help="suite YAML")
    p.add_argument("--format", required=True, choices=FORMATS)
    p.add_argument("--out", required=True,
                   help="output file (a folder for hatecheck: test_suite_cases.csv and "
                        "template_placeholders.csv)")
    p.add_argument("--sample", type=positive_int, default=None,
                   help="fills drawn per templated test")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--max-cases", type=positive_int, default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import (
        export_adatest,
        export_capability_csv,
        export_hatecheck,
        export_native_cases,
        load_suite,
    )

    suite = load_suite(args.suite)
    opts = dict(sample=args.sample, seed=args.seed, max_cases=args.max_cases)
    skipped: list[str] = []
    if args.format == "native-cases":
        n = export_native_cases(suite, args.out, **opts)
        print(f"wrote {n:,} cases to {args.out}")
    elif args.format == "hatecheck":
        skipped = export_hatecheck(suite, args.out, **opts)
        print(f"wrote {args.out}/test_suite_cases.csv and template_placeholders.csv")
    elif args.format == "capability-csv":
        skipped = export_capability_csv(suite, args.out)
        print(f"wrote {args.out}")
    else:
        skipped = export_adatest(suite, args.out, **opts)
        print(f"wrote {args.out}")
    if skipped:
        # Every format but native-cases holds cases with gold labels: MFT and contrast tests.
        kinds = {t.name: t.type for t in suite.tests}
        print("left out (INV, DIR and group tests have no gold labels, which this format "
              f"needs): {', '.join(f'{n} ({kinds[n]})' for n in skipped)}")
    return 0
