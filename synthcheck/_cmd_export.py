"""`synthcheck export`: write a suite in another tool's format."""

from __future__ import annotations

import argparse

from synthcheck._cli_common import add_allow_outside_files, positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from formalize import FORMATS, export_formats

    names = export_formats()
    p = sub.add_parser("export", help=f"export a suite: {', '.join(names)}",
                       description="Expand a suite and write its cases in another tool's "
                                   "format (no model is loaded); tests a format cannot hold "
                                   "are listed as left out.")
    p.add_argument("--suite", required=True, help="suite YAML")
    p.add_argument("--format", required=True, choices=names,
                   help="; ".join(f"{n}: {FORMATS.get(n).description}" for n in names))
    p.add_argument("--out", required=True,
                   help="output file (" + "; ".join(
                       f"{n}: {FORMATS.get(n).out_help}" for n in names
                       if FORMATS.get(n).out_help != "output file") + ")")
    p.add_argument("--sample", type=positive_int, default=None,
                   help="fills drawn per templated test")
    p.add_argument("--seed", type=int, default=None,
                   help="suite seed of the fills drawn (default: the suite's seed)")
    p.add_argument("--max-cases", type=positive_int, default=None,
                   help="case limit (default: the suite's)")
    add_allow_outside_files(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from formalize import FORMATS, load_suite
    from synth.core import check_outputs

    fmt = FORMATS.get(args.format)
    if not fmt.out_files:
        check_outputs([("--out", args.out)])
    else:  # a folder of files (hatecheck): each file in it is checked
        check_outputs([(f"--out (its {n})", Path(args.out) / n) for n in fmt.out_files],
                      replaceable=lambda p: True)
    suite = load_suite(args.suite, allow_outside_files=args.allow_outside_files)
    done = FORMATS.get(args.format)().export(suite, args.out, sample=args.sample,
                                             seed=args.seed, max_cases=args.max_cases)
    print(done.message)
    if done.skipped:
        # Formats that leave tests out hold cases with gold labels: MFT and contrast tests.
        kinds = {t.name: t.type for t in suite.tests}
        print("left out (INV, DIR and group tests have no gold labels, which this format "
              f"needs): {', '.join(f'{n} ({kinds[n]})' for n in done.skipped)}")
    return 0
