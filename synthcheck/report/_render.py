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

from synth.core import (
    DataError,
    check_outputs,
    markdown_text,
    package_version,
    visible,
    write_text_atomic,
)
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
    """Text for summary.md and the PR comment: :func:`synth.core.markdown_text` (visible
    control characters, no raw HTML, links, images or mentions; safe in a table cell)."""
    return markdown_text(value)


def _visible_html(value: Any) -> Any:
    """Jinja's ``finalize`` for every ``{{ }}`` value: control characters and bidi
    overrides shown as escapes (a Markup value, an already rendered block, keeps its line
    breaks and stays Markup: the escapes hold no ``<`` or ``&``)."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return Markup(visible(value, keep="\n\t\r"))
    return visible(value, keep="\n\t\r") if isinstance(value, str) else value


def is_report_summary(path: Path) -> bool:
    """Whether ``path`` is a ``summary.md`` that ``synthcheck report`` wrote (its third line
    names the run directory and report.html), so a later report may replace it."""
    try:
        head = path.read_bytes()[:4096].decode("utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return len(head) >= 3 and head[0].startswith("# ") and head[2].startswith("Run directory `")


def check_report_outputs(run_dir: Path, html: Path) -> None:
    """Refuse, before anything is written, an HTML path that is one of the run's own files
    (other than its report), the HTML and summary.md being one file, or a summary.md beside
    it that ``report`` did not write (see :func:`synth.core.check_outputs`)."""
    check_outputs([("--out", html), ("--out (summary.md beside it)",
                                     html.with_name(SUMMARY_MD.name))],
                  own=[REPORT_HTML.path(run_dir), SUMMARY_MD.path(run_dir)],
                  replaceable=is_report_summary)


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("synthcheck.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            default_for_string=True),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        trim_blocks=True, lstrip_blocks=True, finalize=_visible_html)
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
        check_report_outputs(self.run.path, path)
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
