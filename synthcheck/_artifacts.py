"""The run-directory files the app writes, each declared once (see :class:`synth.core.Artifact`)."""

from __future__ import annotations

from synth.core import artifact

REPORT_HTML = artifact("report_html", "report.html", "report",
                       doc="the whole-run report, one self-contained page")
SUMMARY_MD = artifact("summary_md", "summary.md", "report", doc="the report's Markdown summary")
