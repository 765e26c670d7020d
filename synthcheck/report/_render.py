"""`synthcheck report`: one self-contained ``report.html`` (figures as base64 PNG, inline CSS
and JavaScript for sortable, filterable tables and a search box) and a ``summary.md``, both
rendered from jinja2 templates.

Any run directory works: sections whose inputs are absent are skipped with a note, and the
page says which inputs the run lacks. Only a directory with nothing to report is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from synth.core import DataError, package_version, write_text_atomic
from synthcheck._artifacts import REPORT_HTML, SUMMARY_MD
from synthcheck.report import _sections
from synthcheck.report._blocks import ReportSection
from synthcheck.report._data import RunData
from synthcheck.report._findings import findings as focus_findings
from synthcheck.report._findings import warnings as run_warnings
from synthcheck.report._suite_sections import suite_sections

# Bump when the report's content or layout changes: `discover` then rewrites a current report.
REPORT_FORMAT = 5


def md_text(value: Any) -> str:
    """Text for summary.md: no raw HTML and safe in a table cell, yet readable as plain text.

    Only a ``<`` that could open a tag (before a letter, ``/``, ``!`` or ``?``) and an
    ``&`` that could start an entity (before a letter or ``#``) become entities: Markdown
    renders a lone ``q < 0.05`` or ``A & B`` as written, so they stay as written."""
    import re

    text = re.sub(r"&(?=[A-Za-z#])", "&amp;", str(value))
    text = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("synthcheck.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            default_for_string=True),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        trim_blocks=True, lstrip_blocks=True)
    env.filters["md"] = md_text
    return env


@dataclass
class Report:
    """A built report; :meth:`write` puts ``report.html`` and ``summary.md`` on disk."""

    run: RunData
    sections: list[ReportSection]
    generated: str

    def _context(self) -> dict[str, Any]:
        return {"title": f"synthcheck report: {self.run.name}", "run": self.run,
                "path": str(self.run.path), "generated": self.generated,
                "version": package_version(), "sections": self.sections,
                "missing": self.run.missing_inputs()}

    def to_html(self) -> str:
        """The whole self-contained page."""
        return str(_environment().get_template("report.html.j2").render(self._context()))

    def to_markdown(self) -> str:
        """A plain-text summary: provenance, key numbers and tables (no figures)."""
        return str(_environment().get_template("summary.md.j2").render(self._context()))

    def write(self, out: str | Path | None = None) -> Path:
        """Write ``report.html`` (default: in the run directory) and ``summary.md`` beside
        it, atomically; return the HTML's path."""
        html, md = self.to_html(), self.to_markdown()  # both built before either is written
        path = Path(out) if out is not None else REPORT_HTML.path(self.run.path)
        write_text_atomic(path, html)
        write_text_atomic(path.with_name(SUMMARY_MD.name), md)
        return path


def build_report(run_dir: str | Path, *, top_ngrams: int = 20, top_fills: int = 12,
                 top_hard: int = 15) -> Report:
    """Read a run directory (with or without a manifest) and build every report section,
    findings first: the warnings (if any), the overview, the confirmed failure patterns
    (focus rounds; else the top mined n-grams), how far to trust the hard subset, each
    verified suite, the n-grams and hard subset, then the figures of the discovery run, the
    review decisions and the provenance.

    Raises:
        RunDirError: the directory does not exist, or its manifest.json is unreadable.
        DataError: an input file is malformed (names the file and line), or the run holds
            nothing to report (no corpus, scores, hard subset, n-grams, evaluation, review
            or verify outputs).
    """
    run = RunData(Path(run_dir))
    verify = run.verify_outputs()
    warned = run_warnings(run)  # first, and only when there is something to say
    findings = [*([] if warned.skipped else [warned]), _sections.overview(run),
                focus_findings(run), _sections.trust(run)]
    for v in verify:
        findings += suite_sections(v, top_fills)
    if not verify:
        findings.append(ReportSection("verify", "Verification", skipped=(
            "no verify/<suite>/summary.json (run `synthcheck verify --suite SUITE --model SPEC "
            f"--run {run.path}`)")))
    findings += [_sections.ngrams(run, top_ngrams), _sections.hard_subset(run, top_hard),
                 _sections.divergence(run), _sections.scatter(run), _sections.review(run)]
    if all(s.skipped for s in findings):
        raise DataError(
            "nothing to report: the run has no corpus, scores, hard.jsonl, ngrams.jsonl, "
            "eval.json, review decisions or verify outputs", where=str(run.path),
            fix="run `synthcheck discover` (or its stages, or `synthcheck verify`) with this "
                "--run first")
    sections = [*findings, _sections.provenance(run)]
    return Report(run, sections, datetime.now(UTC).isoformat(timespec="seconds"))


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``report.html`` and ``summary.md`` for a run; return the HTML's path.

    Raises:
        RunDirError: the directory does not exist.
        DataError: malformed input, or nothing to report.
    """
    return build_report(run_dir).write(out)
