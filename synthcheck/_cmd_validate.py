"""`synthcheck validate`: check a suite without loading any model (fast: no torch)."""

from __future__ import annotations

import argparse

from synthcheck._cli_common import (
    add_allow_outside_files,
    positive_int,
    warn_if_shots_off_domain,
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("validate", help="check a test suite (no model is loaded)",
                       description="Load and expand a suite: report schema, template and "
                                   "lexicon errors with file and line, and print the case "
                                   "count per test. No model is loaded.")
    p.add_argument("--suite", required=True, help="suite YAML")
    p.add_argument("--sample", type=positive_int, default=None,
                   help="count with this many fills drawn per templated test")
    p.add_argument("--max-cases", type=positive_int, default=None,
                   help="case limit (default: the suite's)")
    p.add_argument("--config", "-c", default=None, metavar="C",
                   help="also check that the suite's labels are this run config's task.labels "
                        "(and warn when its reference shots look off-domain for its corpus)")
    add_allow_outside_files(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import load_suite

    suite = load_suite(args.suite, allow_outside_files=args.allow_outside_files)
    if args.config is not None:
        from synthcheck._config import load_run_config

        cfg = load_run_config(args.config)
        suite.check_labels(cfg.task.labels, task_source=f"config {args.config}, task.labels")
        warn_if_shots_off_domain(cfg)
    # One rule with verify: the tests verify would sample (verify.max_cases_per_test, of the
    # --config's verify section or the default) are counted as sampled, and said so.
    from formalize import VerifyConfig
    from synthcheck._verify import check_verify_size

    base = cfg.verify if args.config is not None else VerifyConfig()
    v = base.model_copy(update={k: val for k, val in (("sample", args.sample),
                                                      ("max_cases", args.max_cases))
                                if val is not None})
    total, plan = check_verify_size(suite, v)
    counts = {t.name: plan[t.name].sampled if t.name in plan else t.count(v.sample)
              for t in suite.tests}
    width = max(len(n) for n in counts)
    print(f"suite {suite.name!r}: {len(suite.tests)} tests, labels {', '.join(suite.labels)}")
    for test in suite.tests:
        bound = "<=" if test.count_is_bound else "  "
        print(f"  {test.name:{width}}  {test.type:8} {test.capability:20} "
              f"{bound}{counts[test.name]:>8,}" + ("  (sampled)" if test.name in plan else ""))
    for name, p in plan.items():
        print(p.note(name))
    print(f"total: up to {total:,} cases (limit {v.max_cases or suite.spec.max_cases:,}); ok")
    return 0
