"""`synthcheck verify`: run a suite against one or more task models."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("verify", help="run a test suite against task models, side by side")
    p.add_argument("--suite", required=True, help="suite YAML (e.g. configs/suites/sentiment.yaml)")
    p.add_argument("--model", action="append", required=True, metavar="SPEC",
                   help="task model spec (repeat for several): demo:sentiment, sklearn:PATH, "
                        "python:MOD:FN, hf:PATH, fewshot:packaged:smollm2-135m-instruct")
    p.add_argument("--run", required=True, help="run directory; writes verify/<suite>/")
    p.add_argument("--sample", type=int, default=None, help="fills drawn per templated test")
    p.add_argument("--seed", type=int, default=None, help="seed (default: the suite's)")
    p.add_argument("--max-cases", type=int, default=None, help="case limit (default: the suite's)")
    p.add_argument("--batch-size", type=int, default=64, help="texts per model call")
    p.add_argument("--recall", default=None, metavar="JSON",
                   help="held-out recall per model and class: {model spec: {label: recall}}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import TemplateRunner, load_suite
    from synth import ConfigError, DataError, config_hash

    if args.sample is not None and args.sample < 1:
        raise ConfigError(f"--sample must be a positive integer, got {args.sample}",
                          where="--sample", fix="pass N >= 1, or leave it out for all fills")
    suite = load_suite(args.suite)
    # Refuse an oversized expansion before loading any model.
    total = suite.check_limit(args.sample, args.max_cases)
    recall = None
    if args.recall:
        path = Path(args.recall)
        try:
            recall = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(f"cannot read held-out recall: {exc}", where=str(path),
                            fix="give a JSON file {model: {label: recall}}") from None
    load_task_scorer = _loader()
    # Labels come from the suite; each model is named by its spec in every output.
    scorers = {spec: load_task_scorer(spec, suite.labels, name=spec) for spec in args.model}
    runner = TemplateRunner(sample=args.sample, seed=args.seed, batch_size=args.batch_size,
                            max_cases=args.max_cases, keep_cases=False, heldout_recall=recall)
    out = Path(args.run) / "verify" / suite.name
    print(f"verify: suite {suite.name!r}, up to {total:,} cases, {len(scorers)} model(s)")
    result = runner.run(suite, scorers, cases_path=out / "cases.jsonl")
    chash = config_hash({"suite": suite.to_dict(), "models": args.model, "sample": args.sample,
                         "seed": result.meta["seed"]})
    paths = result.write(out, chash)
    print(result.format_table())
    print()
    print(f"wrote {out / 'cases.jsonl'}")
    for path in paths:
        print(f"wrote {path}")
    return 0


def _loader():  # type: ignore[no-untyped-def]
    from synth import ModelNotAvailable

    try:
        from discovery import load_task_scorer  # type: ignore[attr-defined]
    except ImportError:
        try:
            from discovery._scorers import load_task_scorer
        except ImportError:
            raise ModelNotAvailable(
                "discovery's task-model loader is not available in this checkout",
                fix="update synthcheck (discovery.load_task_scorer)") from None
    return load_task_scorer
