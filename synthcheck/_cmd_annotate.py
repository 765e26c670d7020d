"""`synthcheck annotate`: hand the hard subset to an annotation tool (Label Studio, Argilla, or
any tool in ``formalize.ANNOTATION_TOOLS``), and take the reviewers' decisions back into the
run's review log."""

from __future__ import annotations

import argparse
from pathlib import Path

from formalize import DECISIONS_FILE


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from formalize import ANNOTATION_TOOLS

    tools = ANNOTATION_TOOLS.names()
    p = sub.add_parser(
        "annotate", help="export the hard subset to Label Studio / Argilla; import decisions",
        description="'annotate export' writes the run's hard subset, focus-round examples and "
                    "findings' examples, with both models' probabilities shown and nothing "
                    "pre-filled, for Label Studio (tasks JSON + labeling config XML) or Argilla "
                    "(settings + records JSON); with --audit, a blind sample (texts only). "
                    "'annotate import' reads the tool's export back (Label Studio JSON or "
                    "JSON-MIN, Argilla records) and appends the reviewers' decisions to "
                    "RUN/review/decisions.jsonl, the log the review notebook writes, once: a "
                    "second import of the same export adds nothing.")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="{export,import}")
    ex = verbs.add_parser("export", help="write the sentences to annotate",
                          description="Write the run's sentences for an annotation tool.")
    im = verbs.add_parser("import", help="append the reviewers' decisions to the review log",
                          description="Read a Label Studio or Argilla JSON export and append "
                                      "its decisions to RUN/review/decisions.jsonl.")
    for q in (ex, im):
        q.add_argument("--run", required=True, type=Path, metavar="DIR",
                       help="run directory (required)")
        # Not argparse's choices: an unknown name gets "did you mean" (annotation_tool).
        q.add_argument("--format", required=True, metavar="{" + ",".join(tools) + "}",
                       help="the annotation tool (required): " + "; ".join(
                           ANNOTATION_TOOLS.get(n).description for n in tools))
    ex.add_argument("--out", required=True, type=Path, metavar="FILE",
                    help="JSON file to write (required); Label Studio's labeling config is "
                         "written beside it as FILE with .xml")
    ex.add_argument("--include", default="hard,focus,findings", metavar="SOURCES",
                    help="what to export, comma-separated (default: hard,focus,findings; "
                         "those the run has)")
    ex.add_argument("--audit", action="store_true",
                    help="a blind audit instead: a seeded sample of the hard subset plus a "
                         "random control from the corpus, shuffled, texts only (no scores, no "
                         "model labels); one label per sentence, a task label or 'no label "
                         "applies'. The sample is kept in RUN/review/audit-sample.json")
    ex.add_argument("--audit-hard", type=int, default=60, metavar="N",
                    help="with --audit: the top N of the hard subset (default: 60)")
    ex.add_argument("--audit-control", type=int, default=40, metavar="N",
                    help="with --audit: N random corpus sentences outside it (default: 40)")
    ex.add_argument("--seed", type=int, default=None,
                    help="with --audit: the sample's seed (default: the run's seed)")
    im.add_argument("--audit", action="store_true",
                    help="the file holds audit labels (from 'annotate export --audit'): "
                         "append them to RUN/review/audit.jsonl and print the hard subset's "
                         "precision on this corpus")
    im.add_argument("--in", dest="path", required=True, type=Path, metavar="FILE",
                    help="the tool's JSON export (required)")
    im.add_argument("--annotator", default=None,
                    help="annotator name to record (default: the tool's user, e.g. "
                         "label-studio:3 or argilla:<user id>)")
    ex.set_defaults(func=run_export)
    im.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from formalize import annotation_items, export_annotations
    from synth.core import ConfigError, check_outputs

    include = [s.strip() for s in args.include.split(",") if s.strip()]
    if not include:
        raise ConfigError("--include names no source", where=f"--include {args.include!r}",
                          fix="name some of: hard, focus, findings (e.g. --include hard)")
    # Before any work: a bad --out never creates folders (e.g. at the file system's root).
    # Never one of the run's own files, and the labeling config beside it (Label Studio)
    # never the tasks file itself (--out tasks.xml) nor a file the user wrote.
    from formalize import annotation_tool

    tool = annotation_tool(args.format)
    paths = tool.export_paths(args.out)
    outputs = [("--out", paths[0])]
    outputs += [(f"--out ({tool.beside})", p) for p in paths[1:]]
    check_outputs(outputs, replaceable=tool.is_own_file)
    if args.audit:
        return _export_audit(args)
    paths = export_annotations(args.run, args.format, args.out, include)
    n = len(annotation_items(args.run, include))
    print(f"exported {n} sentence(s) from {args.run} for {args.format}")
    for path in paths:
        print(f"wrote {path}")
    return 0


def _export_audit(args: argparse.Namespace) -> int:
    from discovery import AUDIT_SAMPLE, read_audit_sample
    from formalize import export_audit

    paths = export_audit(args.run, args.format, args.out, n_hard=args.audit_hard,
                         n_control=args.audit_control, seed=args.seed)
    sample = read_audit_sample(args.run) or {"items": []}
    groups = [it["group"] for it in sample["items"]]
    print(f"audit sample: {groups.count('hard')} of the hard subset and "
          f"{groups.count('control')} random others, shuffled (seed {sample.get('seed')}); "
          f"kept in {args.run / AUDIT_SAMPLE}")
    for path in paths:
        print(f"wrote {path}")
    print(f"label every sentence without looking at its scores, then: synthcheck annotate "
          f"import --audit --run {args.run} --format {args.format} --in EXPORT.json")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from collections import Counter

    from formalize import annotation_tool, import_annotations

    annotation_tool(args.format)  # an unknown tool is named before the file is read
    if args.audit:
        return _import_audit(args)
    result = import_annotations(args.run, args.format, args.path, annotator=args.annotator)
    counts = Counter(r["tag"] for r in result.added)
    shown = ", ".join(f"{tag} {n}" for tag, n in counts.items()) or "none"
    print(f"imported {len(result.added)} decision(s) from {args.path} into "
          f"{DECISIONS_FILE.path(args.run)} ({shown})")
    if result.duplicates:
        print(f"skipped {result.duplicates} already imported (the same annotation)")
    for reason in result.dropped:
        print(f"dropped {reason}")
    return 0


def _import_audit(args: argparse.Namespace) -> int:
    from discovery import AUDIT_LABELS, audited_precision, format_audit
    from formalize import import_audit, update_eval_audit

    added, dups = import_audit(args.run, args.format, args.path, annotator=args.annotator)
    print(f"imported {len(added)} audit label(s) from {args.path} into "
          f"{args.run / AUDIT_LABELS}" + (f" (skipped {dups} already imported)" if dups else ""))
    for line in format_audit(audited_precision(args.run)):
        print(line)
    path = update_eval_audit(args.run)
    if path is not None:
        print(f"updated {path} (corpus_audit)")
    return 0
