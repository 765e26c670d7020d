"""`synthcheck generate` and `synthcheck merge`: stage 1, the synthetic corpus."""

from __future__ import annotations

import argparse

from synth import CORPUS
from synthcheck._cli_common import add_config_args, load_args_config
from synthcheck._config import RunConfig
from synthcheck._executors import EXECUTOR_FLAG, add_executor_arg


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("generate", help="write the synthetic corpus (stage 1)",
                       description="Generate a seeded, sharded synthetic corpus into RUN/corpus.")
    add_config_args(p)
    p.add_argument("--n", type=int, help="prompts in total (default: generator.n)")
    p.add_argument("--shard-size", type=int, help="prompts per shard (part of the config hash)")
    p.add_argument("--shard", metavar="I/N",
                   help="do only shards s with s %% N == I (one process of an array job)")
    p.add_argument("--resume", action="store_true",
                   help="skip finished shards (refused if the config changed)")
    p.add_argument("--show", type=int, default=5, metavar="N",
                   help="print this many sentences at the end (0: none)")
    add_executor_arg(p)
    p.set_defaults(func=run_generate)

    m = sub.add_parser("merge", help="join the shards of --shard i/n processes",
                       description="Copy the shards of PART run directories into --run and "
                                   "mark the corpus complete once every shard is present.")
    add_config_args(m)
    m.add_argument("parts", nargs="*", help="run directories written by --shard i/n processes")
    m.add_argument("--n", type=int, help="prompts in total (as given to generate)")
    m.add_argument("--shard-size", type=int, help="prompts per shard (as given to generate)")
    m.set_defaults(func=run_merge)


def _config(args: argparse.Namespace) -> RunConfig:
    return load_args_config(args, {"shard_size": "generator.shard_size", **EXECUTOR_FLAG})


def run_generate(args: argparse.Namespace) -> int:
    from synth import iter_corpus, parse_shard_arg, run_generation
    from synthcheck._executors import make_executor

    cfg = _config(args)
    shard = parse_shard_arg(args.shard) if args.shard else None
    with make_executor(cfg.executor) as executor:
        report = run_generation(cfg, args.run, n=args.n, shard=shard, resume=args.resume,
                                progress=not args.quiet, config_dump=cfg.model_dump(mode="json"),
                                executor=executor)
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(report.dropped.items())) or "none"
    print(f"shards written {len(report.shards_written)}, skipped (already done) "
          f"{len(report.shards_skipped)}; kept {report.kept} of {report.prompts} prompts "
          f"(dropped: {dropped})")
    if report.seconds > 0 and report.kept:
        print(f"{report.kept / report.seconds:.2f} sentences/s, "
              f"{report.tokens / report.seconds:.0f} tokens/s")
    if report.complete:
        print(f"corpus complete: {CORPUS.path(args.run)}")
    elif shard:
        print("other shards are still missing: run the other --shard processes, then "
              "`synthcheck merge`")
    for i, record in enumerate(iter_corpus(args.run)):
        if i >= args.show:
            break
        print(f"  [{record['id']}] {record['text']}")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from synth import merge_runs

    cfg = _config(args)
    stats = merge_runs(cfg, args.run, list(args.parts) or [args.run], n=args.n)
    print(f"merged {stats['shards']} shards: {stats['kept']} sentences from {stats['prompts']} "
          f"prompts into {CORPUS.path(args.run)}")
    return 0
