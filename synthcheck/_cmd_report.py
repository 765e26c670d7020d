"""`synthcheck report`: a self-contained HTML report and a Markdown summary of a run."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthcheck._artifacts import REPORT_HTML, SUMMARY_MD


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("report", help="write report.html and summary.md for a run",
                       description="Write RUN/report.html (one self-contained file: figures, "
                                   "sortable and filterable tables, a search box) and "
                                   "RUN/summary.md, for any run directory, also one made by "
                                   "`verify` alone. Sections whose inputs are missing are "
                                   "skipped with a note; a run with nothing to report is an "
                                   "error (exit status 2) that leaves existing files alone.")
    p.add_argument("--run", required=True, type=Path, metavar="DIR",
                   help="run directory (required)")
    p.add_argument("--out", type=Path, default=None,
                   help="where to write the HTML (default: RUN/report.html; summary.md beside it)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from synthcheck.report import build_report, check_report_outputs

    # Checked before the report is built: --out never replaces one of the run's own files
    # (RUN/hard.jsonl), the summary.md beside it never replaces the HTML (--out
    # DIR/summary.md) nor a summary.md that `report` did not write.
    if args.run.is_dir():  # else build_report says what the run path is
        check_report_outputs(args.run,
                             args.out if args.out is not None else REPORT_HTML.path(args.run))
    report = build_report(args.run)
    path = report.write(args.out)
    for s in report.sections:
        if s.skipped:
            print(f"skipped {s.title}: {s.skipped}")
    shown = sum(1 for s in report.sections if not s.skipped)
    print(f"wrote {path} ({shown} sections, {sum(len(s.figures) for s in report.sections)} "
          f"figures)")
    print(f"wrote {path.with_name(SUMMARY_MD.name)}")
    return 0
