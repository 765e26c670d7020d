"""`synthcheck evaluate` and `synthcheck train-demo`: held-out accuracy and the demo model."""

from __future__ import annotations

import argparse
from pathlib import Path

from discovery import EVAL
from synthcheck._cli_common import add_config_args, load_args_config, positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("evaluate", help="accuracy and per-class P/R/F1 on held-out labeled data",
                       description="Evaluate each task model and the calibrated reference on "
                                   "a labeled set (default: a seeded held-out split of the "
                                   "packaged Rotten Tomatoes sentences).")
    add_config_args(p, run_required=False)
    p.add_argument("--data", help="labeled .jsonl/.csv file (default: evaluation.data)")
    p.add_argument("--text-field", metavar="NAME",
                   help="the file's text column or field (as evaluation.text_field; "
                        "default: text)")
    p.add_argument("--label-field", metavar="NAME",
                   help="the file's gold-label column or field (as evaluation.label_field; "
                        "default: label)")
    p.add_argument("--encoding", metavar="CODEC",
                   help="the file's text encoding, e.g. latin-1 (as evaluation.encoding; "
                        "default: utf-8)")
    p.add_argument("--size", type=positive_int,
                   help="evaluate on a stratified, seeded sample of this many examples "
                        "(as evaluation.size)")
    p.add_argument("--no-reference", action="store_true", help="skip the reference")
    p.set_defaults(func=run_evaluate)

    t = sub.add_parser("train-demo", help="train the demo TF-IDF + logistic regression model",
                       description="Train the demo sentiment task model on the train side of "
                                   "the seeded Rotten Tomatoes split and save it with skops. "
                                   "By default it goes to the cache file of that split, the "
                                   "one `demo:sentiment` loads for a config with the same "
                                   "evaluation.split_seed and evaluation.holdout_fraction.")
    t.add_argument("--out", type=Path,
                   help="output .skops path (default: the split's file in the cache folder)")
    t.add_argument("--split-seed", dest="seed", type=int, default=0, metavar="S",
                   help="split seed (as evaluation.split_seed)")
    t.add_argument("--holdout-fraction", type=float, default=0.2,
                   help="held-out fraction (as evaluation.holdout_fraction)")
    t.add_argument("--limit", type=int,
                   help="train on only the first N training sentences (quick checks)")
    t.set_defaults(func=run_train_demo)


def run_evaluate(args: argparse.Namespace) -> int:
    from discovery import format_reliability, format_reports, write_eval_json
    from synthcheck._pipeline import evaluate_run_config
    from synthcheck.stages.evaluate import run_corpus_size

    cfg = load_args_config(args, {"size": "evaluation.size",
                                  "text_field": "evaluation.text_field",
                                  "label_field": "evaluation.label_field",
                                  "encoding": "evaluation.encoding",
                                  "no_reference": ("evaluation.include_reference", False)})
    size = None
    if args.run is not None:  # a run made with another config is refused, as by `discover`
        from synth.core import RunDir
        from synthcheck._pipeline import check_corpus_config

        check_corpus_config(cfg, RunDir(args.run).path)
        if cfg.ranking.top_k is not None:  # the cut-off scales by the corpus size
            size = run_corpus_size(args.run)
    # With --run, the few-shot models' held-out raw log-probs are kept in the run (a later
    # change of reference.calibration rescores nothing).
    reports, reliability = evaluate_run_config(cfg, args.data, progress=not args.quiet,
                                               corpus_size=size, raw_dir=args.run)
    print(format_reports(reports, cfg.task.labels))
    for line in format_reliability(reliability):
        print(line)
    if reliability.get("hard_subset_precision"):
        from discovery import audited_precision, format_audit

        for line in format_audit(audited_precision(args.run) if args.run else None):
            print(line)
    if args.run is not None:
        # eval.json is what `synthcheck report` reads. Its hash ("evaluate") is never a
        # `discover` stage hash, so a later `discover` redoes its own evaluation.
        path = write_eval_json(EVAL.path(args.run), reports, "evaluate",
                               data=args.data or cfg.evaluation.data,
                               evaluation=cfg.evaluation.resolved(cfg.corpus, args.data)
                               .model_dump(mode="json"),
                               **reliability)
        print(f"written: {path}")
    return 0


def run_train_demo(args: argparse.Namespace) -> int:
    from discovery import check_split, train_demo_model

    check_split(args.seed, args.holdout_fraction, args.limit,
                where=("--split-seed", "--holdout-fraction", "--limit"))
    if args.out is not None:
        from synth.core import check_outputs

        check_outputs([("--out", args.out),
                       ("--out (its .meta.json)", Path(f"{args.out}.meta.json"))],
                      replaceable=lambda p: True)
    path = train_demo_model(args.out, seed=args.seed, holdout_fraction=args.holdout_fraction,
                            limit=args.limit)
    print(f"demo model saved: {path}")
    return 0
