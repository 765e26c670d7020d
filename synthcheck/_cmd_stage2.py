"""`synthcheck score`, `rank`, `mine`, `focus` and `slices`: the stage-2 commands, one stage
declaration each (``synthcheck.stages``): the scores, the hard subset, its n-grams, the
focus rounds that test them, and the slices and findings beyond n-grams."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery import EVAL, FOCUS, HARD, NGRAMS, REFERENCE_SCORES
from synthcheck._cli_common import add_config_args, load_args_config, warn_if_shots_off_domain
from synthcheck._executors import EXECUTOR_FLAG, add_executor_arg

if TYPE_CHECKING:
    from synthcheck._config import RunConfig


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("score", help="score the corpus with the task models and the reference",
                       description="Write RUN/scores/task-<name>.jsonl and "
                                   "RUN/scores/reference.jsonl (resumable in chunks).")
    add_config_args(p)
    add_executor_arg(p)
    p.set_defaults(func=run_score_command)

    r = sub.add_parser("rank", help="rank sentences by divergence; write the hard subset",
                       description="Write RUN/hard.jsonl: the most divergent sentences.")
    add_config_args(r)
    r.add_argument("--top-k", type=int, help="hard subset size (overrides ranking.top_k)")
    r.add_argument("--show", type=int, default=10, help="print this many hard sentences")
    r.set_defaults(func=run_rank_command)

    m = sub.add_parser("mine", help="mine n-grams over-represented in the hard subset",
                       description="Write RUN/ngrams.jsonl and RUN/ngrams.csv.")
    add_config_args(m)
    m.add_argument("--show", type=int, default=15, help="print this many n-grams")
    m.set_defaults(func=run_mine_command)

    f = sub.add_parser(
        "focus", help="test the strongest candidates on new sentences (adaptive focus rounds)",
        description="Generate focus.budget new sentences per candidate (focus.candidates of "
                    "them, taken in turn from the occlusion words, word groups and phrases, "
                    "the mined n-grams and the semantic slices that are current, plus "
                    "focus.ngrams) with the run's generator, score them, and each with the "
                    "candidate deleted, with the ranked task model and the reference, and "
                    "test each candidate: its failure rate against the corpus's (Fisher) and "
                    "whether deleting it moves the task model more than the reference "
                    "(paired Wilcoxon), Benjamini-Hochberg q-values. Writes "
                    "RUN/focus.jsonl, confirmed patterns first; resumable, and skipped when "
                    "current. Runs even when focus.enabled is false (that only turns the "
                    "stage off in `discover`).")
    add_config_args(f)
    f.set_defaults(func=run_focus_command)

    s = sub.add_parser(
        "slices", help="semantic slices, metadata slices, word occlusion, labelled data; "
                       "write findings.jsonl",
        description="On a scored run: group the corpus by sentence embeddings "
                    "(RUN/slices.jsonl), test surface properties such as length, '?', digits "
                    "and negation (RUN/metadata.jsonl), delete each word and rescore "
                    "(RUN/words.jsonl), look for the same kinds of slices on the labelled "
                    "data that labelled.data names, judged by its gold labels "
                    "(RUN/labelled.jsonl), then rank every finding of the run (n-grams, focus "
                    "rounds, slices, words, labelled) into RUN/findings.jsonl. Each stage is "
                    "skipped when current; stages turned off with "
                    "slices.<stage>.enabled: false (labelled: no labelled.data) are "
                    "skipped here too.")
    add_config_args(s)
    s.add_argument("--show", type=int, default=10, help="print this many findings")
    s.set_defaults(func=run_slices)


UP_TO_DATE = {"score": "scores are up to date ({sentences} sentences)",
              "rank": "hard subset is up to date", "mine": "n-grams are up to date",
              "focus": "focus rounds are up to date"}
"""What each command prints when its stage is current (the report's fields filled in)."""


def _run(args: argparse.Namespace, cfg: RunConfig, name: str) -> dict[str, Any] | None:
    """Run the stage ``name`` of ``cfg`` on ``args.run`` (its declaration, as `discover`
    does); print that it is up to date and return None when it was current, else return
    its report."""
    from synthcheck import _pipeline

    report: dict[str, Any] = getattr(_pipeline, name)(cfg, args.run, **(
        {"progress": not args.quiet} if name in ("score", "focus") else {}))
    if report["skipped"]:
        print(UP_TO_DATE[name].format(**report))
        return None
    return report


def run_score_command(args: argparse.Namespace) -> int:
    cfg = load_args_config(args, EXECUTOR_FLAG)
    warn_if_shots_off_domain(cfg)
    if (report := _run(args, cfg, "score")) is not None:
        rate = report["sentences"] / max(report["seconds"], 1e-9)
        print(f"scored {report['sentences']} sentences in {report['seconds']:.1f} s "
              f"({rate:.1f} sentences/s): {REFERENCE_SCORES.path(args.run).parent}")
    return 0


def run_rank_command(args: argparse.Namespace) -> int:
    from synthcheck._summary import head

    cfg = load_args_config(args, {"top_k": "ranking.top_k"})
    if (report := _run(args, cfg, "rank")) is not None:
        from discovery import format_abstained

        print(f"hard subset: {report['hard']} of {report['corpus']} sentences "
              f"({report['disagreements']} top-label disagreements in the corpus)")
        print(f"judged: {report['judged']} sentences, "
              f"{format_abstained(report['abstained'])}; {report['failures']} fail, base "
              f"rate {report['base_rate']:.2f}")
        if report["hard"] == 0:
            print("note: the hard subset is empty (it keeps only judged sentences whose top "
                  "labels differ); there is nothing to mine")
    for rec in head(HARD.path(args.run), args.show):
        print(f"  {rec['rank']:>4} {rec['divergence']:.3f} task={rec['task_label']} "
              f"ref={rec['reference_label']}  {rec['text']}")
    return 0


def run_mine_command(args: argparse.Namespace) -> int:
    from synthcheck._summary import head

    cfg = load_args_config(args)
    m = cfg.mining
    if (report := _run(args, cfg, "mine")) is not None:
        print(f"{report['ngrams']} n-grams from {report['hard']} hard sentences: "
              f"{NGRAMS.path(args.run)} (sorted by {m.statistic})")
    if not head(NGRAMS.path(args.run), 1):
        print(f"no n-gram occurs in at least mining.min_support={m.min_support} hard sentences "
              f"(of {(report or {}).get('hard', 'the')} hard sentences); lower it, e.g. "
              f"-P mining.min_support={max(1, m.min_support - 1)}, or grow the hard subset "
              f"(more sentences, or a larger ranking.top_k or ranking.top_fraction)")
        return 0
    print(f"  {'ngram':<28} {'hard':>5} {'corpus':>6} {'z':>6} {'q':>8} {'disagree':>8}")
    for rec in head(NGRAMS.path(args.run), args.show):
        print(f"  {rec['ngram']:<28} {rec['hard_count']:>5} {rec['corpus_count']:>6} "
              f"{rec['z']:>6.2f} {rec['q_value']:>8.2g} {rec.get('disagreement_rate', 0):>8.2f}")
    return 0


def run_focus_command(args: argparse.Namespace) -> int:
    from synthcheck._summary import focus_lines

    report = _run(args, load_args_config(args), "focus")
    if report is not None:
        print(f"{report['candidates']} candidates, {report['sentences']} new sentences from "
              f"{report['prompts']} prompts in {report['seconds']:.1f} s: "
              f"{FOCUS.path(args.run)}")
    print("\n".join(focus_lines(args.run, report or {}, distrust=_stored_distrust(args.run))))
    return 0


def run_slices(args: argparse.Namespace) -> int:
    from discovery import FINDINGS, finding_sources, is_plugin_stage
    from synthcheck._pipeline import run_stage
    from synthcheck._summary import findings_lines
    from synthcheck.stages import stage_named

    cfg = load_args_config(args)
    # the finding sources that are slice stages (not mining, not focus rounds)
    for name in [k for k in finding_sources() if k not in ("mine", "focus")]:
        stage = stage_named(name)
        if stage.off(stage.sections(cfg)) is not None:
            if not is_plugin_stage(name):  # a plug-in source is off until a config names it
                print(f"{name}: off")
            continue
        report = run_stage(cfg, name, args.run, progress=not args.quiet).info[name]
        rows = report.get("rows") if name != "labelled" else report.get("findings")
        print(f"{name}: " + ("up to date" if report["skipped"]
                             else f"{rows} rows in {report['seconds']:.1f} s"))
    report = run_stage(cfg, "findings", args.run).info["findings"]
    state = "up to date" if report["skipped"] else f"{report['rows']} rows"
    print(f"findings: {state}: {FINDINGS.path(args.run)}")
    print("\n".join(findings_lines(args.run, top=args.show,
                                   distrust=_stored_distrust(args.run))))
    return 0


def _stored_distrust(run: Path) -> list[str]:
    """Why the run's reference cannot confirm findings, from its ``eval.json`` when
    `discover` or `synthcheck evaluate --run` wrote one (none yet: nothing to say)."""
    from discovery import reference_distrust
    from formalize import read_summary_json
    from synth.core import DataError

    path = EVAL.path(run)
    if not path.is_file():
        return []
    try:
        return reference_distrust(read_summary_json(
            path, fix="rerun `synthcheck evaluate --run` (or `discover`) to write it again"))
    except DataError as exc:  # what is printed goes on; the report says the same as an error
        print(f"warning: {exc.format()}; the findings are printed without the reference's "
              "held-out check", file=sys.stderr)
        return []
