"""The whole-run report: ``report.html`` (self-contained: figures, CSS and JavaScript inline)
and ``summary.md``, from jinja2 templates, for any run directory."""

from synthcheck.report._blocks import Figure, Heading, Para, ReportSection, Table, WarningBox
from synthcheck.report._data import RunData, ScoreTable, VerifyOutputs
from synthcheck.report._render import (
    REPORT_FORMAT,
    Report,
    build_report,
    check_report_outputs,
    is_report_summary,
    write_report,
)

__all__ = [
    "check_report_outputs",
    "is_report_summary",
    "REPORT_FORMAT",
    "Figure",
    "Heading",
    "Para",
    "Report",
    "ReportSection",
    "RunData",
    "ScoreTable",
    "Table",
    "VerifyOutputs",
    "WarningBox",
    "build_report",
    "write_report",
]
