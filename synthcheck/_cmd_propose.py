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
    p.add_argument("--suggest", type=int, default=8, metavar="N",
                   help="suggest up to N fills per slot from the run's corpus, shown, not "
                        "added (default 8; 0: none)")
    p.add_argument("--add-suggested", action="store_true",
                   help="with --accept: add the suggested fills to the accepted draft's own "
                        "FILL lexicon (a merged draft's slot); suite lexicons are never changed")
    p.add_argument("--suggest-seed", type=int, default=0,
                   help="seed of the corpus sample suggestions come from (default 0)")
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
    if args.suggest < 0:
        raise ConfigError(f"--suggest {args.suggest} is negative", where="--suggest",
                          fix="give a count of suggested fills (0 for none)")
    if args.add_suggested and (args.accept is None or not args.suggest):
        raise ConfigError("--add-suggested needs --accept and suggestions", where="--add-suggested",
                          fix="give --accept K (and leave --suggest above 0)")
    every = propose_templates(sentences, lexicons, max_drafts=10**6, max_slots=args.max_slots)
    drafts = every[:args.top]
    from formalize._lexicons import builtin_lexicons
    from formalize.review._propose import suggest_fills

    suggestions = (suggest_fills(drafts, list(run_data.corpus_texts().values()),
                                 lexicons if lexicons is not None else builtin_lexicons(),
                                 k=args.suggest, seed=args.suggest_seed)
                   if args.suggest and drafts else None)
    merged = sum(d.coverage > 1 for d in drafts)
    print(f"{len(sentences)} sentence(s) tagged {args.tag!r}; {len(drafts)} draft(s) "
          f"({merged} merging several sentences), most coverage first:")
    print(format_drafts(drafts, suggestions) if drafts else
          "  (no lexicon word found in the tagged sentences: no drafts)")
    from formalize.review._propose import uncovered

    for sid in uncovered(sentences, every):
        print(f"  no draft from {sid}: none of its words is in a lexicon where every value "
              "fits, and it shares no frame with another sentence of its label"
              + (f" (lexicons: {', '.join(lexicons)})" if lexicons else ""))
    if args.accept is None:
        return 0
    if not 1 <= args.accept <= len(drafts):
        raise ConfigError(f"--accept {args.accept} is not a listed draft",
                          where="--accept", fix=f"pick a number from 1 to {len(drafts)}"
                          if drafts else "there are no drafts to accept")
    draft = drafts[args.accept - 1]
    if args.append_to.is_file() and draft.new_lexicons:
        draft = draft.renamed(load_suite(args.append_to).lexicons.names())
    own = {name: list(values) for name, values in draft.new_lexicons}
    if args.add_suggested and suggestions is not None:
        for name in own:  # the slot was renamed alike: its suggestions sit under the old name
            old = drafts[args.accept - 1].new_lexicons[list(own).index(name)][0]
            extra = suggestions[args.accept - 1].get(old, ())
            own[name] += [w for w in extra if w not in own[name]]
    # The reviewers' hypotheses about the covered sentences become the test's description.
    hyps = list(dict.fromkeys(s["hypothesis"] for s in sentences
                              if s["id"] in draft.ids and s.get("hypothesis")))
    test = draft.to_test(args.name, label=args.label, capability=args.capability,
                         description="; ".join(hyps) + f" (drafted from {draft.coverage} "
                         f"reviewed sentence(s))" if hyps else None)
    suite = append_tests(args.append_to, [test], labels=run_data.labels, lexicons=own or None)
    print(f"appended test {test['name']!r} (label {test['label']}) to {args.append_to}; the "
          f"suite now has {len(suite.tests)} test(s)")
    for name, values in own.items():
        print(f"  added lexicon {name} ({len(values)} values: {', '.join(values)})")
    return 0
