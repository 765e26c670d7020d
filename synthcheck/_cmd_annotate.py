"""`synthcheck annotate`: hand the hard subset to Label Studio or Argilla, and take the
reviewers' decisions back into the run's review log."""

from __future__ import annotations

import argparse
from pathlib import Path

from formalize import DECISIONS_FILE


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "annotate", help="export the hard subset to Label Studio / Argilla; import decisions",
        description="'annotate export' writes the run's hard subset, focus-round examples and "
                    "findings' examples, with both models' probabilities as pre-annotations, "
                    "for Label Studio (tasks JSON + labeling config XML) or Argilla (settings "
                    "+ records JSON). 'annotate import' reads the tool's JSON export back and "
                    "appends the reviewers' decisions to RUN/review/decisions.jsonl, the log "
                    "the review notebook writes.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="{export,import}")
    ex = verbs.add_parser("export", help="write the sentences to annotate",
                          description="Write the run's sentences for an annotation tool.")
    im = verbs.add_parser("import", help="append the reviewers' decisions to the review log",
                          description="Read a Label Studio or Argilla JSON export and append "
                                      "its decisions to RUN/review/decisions.jsonl.")
    for q in (ex, im):
        q.add_argument("--run", required=True, type=Path, metavar="DIR",
                       help="run directory (required)")
        q.add_argument("--format", required=True, choices=["label-studio", "argilla"],
                       help="the annotation tool (required)")
    ex.add_argument("--out", required=True, type=Path, metavar="FILE",
                    help="JSON file to write (required); Label Studio's labeling config is "
                         "written beside it as FILE with .xml")
    ex.add_argument("--include", default="hard,focus,findings", metavar="SOURCES",
                    help="what to export, comma-separated (default: hard,focus,findings; "
                         "those the run has)")
    im.add_argument("--in", dest="path", required=True, type=Path, metavar="FILE",
                    help="the tool's JSON export (required)")
    im.add_argument("--annotator", default=None,
                    help="annotator name to record (default: the tool's user, e.g. "
                         "label-studio:3 or argilla:<user id>)")
    ex.set_defaults(func=run_export)
    im.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from formalize import annotation_items, export_annotations
    from synth.core import ConfigError, check_output_file

    include = [s.strip() for s in args.include.split(",") if s.strip()]
    if not include:
        raise ConfigError("--include names no source", where=f"--include {args.include!r}",
                          fix="name some of: hard, focus, findings (e.g. --include hard)")
    # Before any work: a bad --out never creates folders (e.g. at the file system's root).
    check_output_file(args.out, flag="--out")
    if args.format == "label-studio":  # its labeling config goes beside it
        check_output_file(Path(args.out).with_suffix(".xml"), flag="--out")
    paths = export_annotations(args.run, args.format, args.out, include)
    n = len(annotation_items(args.run, include))
    print(f"exported {n} sentence(s) from {args.run} for {args.format}")
    for path in paths:
        print(f"wrote {path}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from collections import Counter

    from formalize import import_annotations

    added = import_annotations(args.run, args.format, args.path, annotator=args.annotator)
    counts = Counter(r["tag"] for r in added)
    shown = ", ".join(f"{tag} {n}" for tag, n in counts.items()) or "none"
    print(f"imported {len(added)} decision(s) from {args.path} into "
          f"{DECISIONS_FILE.path(args.run)} ({shown})")
    return 0
