"""`synthcheck diff`: compare two verify results (two models, or two runs of one model)."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthcheck._cli_common import fraction


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "diff", help="compare two verify results: per-test fail-rate changes, regressions first",
        description="Compare the fail rate of every test between verify result A and B with "
                    "Fisher's exact test (Benjamini-Hochberg adjusted over all tests): two "
                    "models (one result holding both, or one model in each), or two runs of "
                    "the same model(s). Regressions (B fails more, q < --alpha) come first.")
    p.add_argument("a", type=Path, metavar="A",
                   help="verify result: a run directory, its verify/<suite>/ folder or "
                        "summary.json")
    p.add_argument("b", type=Path, metavar="B", nargs="?", default=None,
                   help="the result to compare with (default: A itself, comparing its two "
                        "models)")
    p.add_argument("--suite", default=None, help="suite name, when a run holds several")
    p.add_argument("--model-a", default=None, metavar="NAME", help="the model under A")
    p.add_argument("--model-b", default=None, metavar="NAME", help="the model under B")
    p.add_argument("--alpha", type=fraction, default=0.05,
                   help="significance level of the adjusted q-value (default: 0.05)")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when a test regresses significantly")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from synthcheck._diff import compare, format_changes, pair_models, read_verify

    path_a, a = read_verify(args.a, args.suite)
    path_b, b = read_verify(args.b, args.suite) if args.b is not None else (path_a, a)
    same = path_a.resolve() == path_b.resolve()
    pairs = pair_models(a, b, args.model_a, args.model_b, same=same)
    changes = compare(a, b, pairs)
    if not changes:  # "0 regressions" would pass a CI gate that compared nothing
        from formalize import summary_tests
        from synth.core import DataError

        def names(data: dict) -> str:  # type: ignore[type-arg]
            tests = sorted(summary_tests(data))
            return ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5
                                           else "") or "none"

        raise DataError(f"the two results share no scored test (A: {names(a)}; B: "
                        f"{names(b)})", where=f"{path_a} {path_b}",
                        fix="compare results of the same suite (pick one with --suite NAME)")
    print(f"A: {path_a}\nB: {path_b}")
    print(format_changes(changes, args.alpha))
    regressions = [c for c in changes if c.status(args.alpha) == "regression"]
    print(f"\n{len(regressions)} significant regression(s) at q < {args.alpha:g}")
    return 1 if regressions and args.fail_on_regression else 0
