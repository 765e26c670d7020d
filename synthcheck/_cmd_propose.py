"""`synthcheck propose`: draft templates from reviewed sentences; append one to a suite."""

from __future__ import annotations

import argparse
from pathlib import Path

from formalize import DECISIONS_FILE
from synthcheck._cli_common import positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("propose", help="draft templates from review decisions",
                       description="Read RUN/review/decisions.jsonl, draft templates from the "
                                   "tagged sentences (lexicon words become placeholders) and "
                                   "print them ranked by how many sentences each covers. With "
                                   "--append-to SUITE --accept K, append draft K to SUITE.")
    p.add_argument("--run", required=True, type=Path, metavar="DIR",
                   help="run directory (required)")
    p.add_argument("--tag", default="task-model error",
                   help="use sentences with this tag (default: 'task-model error')")
    p.add_argument("--hypothesis", default=None,
                   help="only sentences whose decision carries this hypothesis text")
    p.add_argument("--top", type=positive_int, default=10, help="drafts to show (default 10)")
    p.add_argument("--max-slots", type=positive_int, default=3,
                   help="placeholders per draft (default 3)")
    p.add_argument("--append-to", type=Path, default=None, metavar="SUITE",
                   help="suite YAML to append the accepted draft to (created if missing); "
                        "when it exists, drafts use its own lexicons (its domain)")
    p.add_argument("--accept", type=int, default=None, metavar="K",
                   help="number of the draft to append (as listed, from 1)")
    p.add_argument("--label", default=None,
                   help="gold label of the appended test (default: the reference's label "
                        "of most covered sentences)")
    p.add_argument("--test-name", "--name", dest="name", default=None, metavar="TEST",
                   help="name of the appended TEST in the suite (not the suite's name)")
    p.add_argument("--capability", default="Discovered", help="capability of the appended test")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import (
        RunOutputs,
        append_tests,
        format_drafts,
        propose_templates,
        tagged_sentences,
    )
    from synth.core import ConfigError, DataError

    if args.accept is not None and args.append_to is None:
        raise ConfigError("--accept needs --append-to", where="--append-to/--accept",
                          fix="give both (e.g. --append-to suite.yaml --accept 1), or neither")
    run_data = RunOutputs(args.run)  # RunDirError without a manifest
    sentences = tagged_sentences(args.run, tag=args.tag, hypothesis=args.hypothesis)
    if not sentences:
        raise DataError(f"no sentences tagged {args.tag!r}"
                        + (f" with hypothesis {args.hypothesis!r}" if args.hypothesis else ""),
                        where=str(DECISIONS_FILE.path(args.run)),
                        fix="tag sentences in notebooks/review.ipynb (or ReviewLog.tag) first")
    lexicons = None
    from formalize import load_suite
    from formalize.review._propose import skipped, suite_lexicons

    # Drafts in the domain of the suite they go to (--append-to), else of the run's own
    # suite (verify.suite): its lexicons (AIRLINE, THING), not the built-in movie ones.
    run_suite = run_data.section("verify").get("suite")
    for source in (args.append_to, Path(run_suite) if run_suite else None):
        if source is not None and source.is_file():
            lexicons = suite_lexicons(load_suite(source))
            if lexicons is not None:
                print(f"lexicons of {source}: {', '.join(lexicons)}")
                break
    for sid, why in skipped(sentences):
        print(f"  skipped {sid}: too garbled to draft from ({why})")
    every = propose_templates(sentences, lexicons, max_drafts=10**6, max_slots=args.max_slots)
    drafts = every[:args.top]
    print(f"{len(sentences)} sentence(s) tagged {args.tag!r}; {len(drafts)} draft(s), "
          f"most coverage first:")
    print(format_drafts(drafts) if drafts else
          "  (no lexicon word found in the tagged sentences: no drafts)")
    from formalize.review._propose import uncovered

    for sid in uncovered(sentences, every):
        print(f"  no draft from {sid}: none of its words is in a lexicon where every value "
              "fits" + (f" (lexicons: {', '.join(lexicons)})" if lexicons else ""))
    if args.accept is None:
        return 0
    if not 1 <= args.accept <= len(drafts):
        raise ConfigError(f"--accept {args.accept} is not a listed draft",
                          where="--accept", fix=f"pick a number from 1 to {len(drafts)}"
                          if drafts else "there are no drafts to accept")
    draft = drafts[args.accept - 1]
    # The reviewers' hypotheses about the covered sentences become the test's description.
    hyps = list(dict.fromkeys(s["hypothesis"] for s in sentences
                              if s["id"] in draft.ids and s.get("hypothesis")))
    test = draft.to_test(args.name, label=args.label, capability=args.capability,
                         description="; ".join(hyps) + f" (drafted from {draft.coverage} "
                         f"reviewed sentence(s))" if hyps else None)
    suite = append_tests(args.append_to, [test], labels=run_data.labels)
    print(f"appended test {test['name']!r} (label {test['label']}) to {args.append_to}; the "
          f"suite now has {len(suite.tests)} test(s)")
    return 0
