"""The report: ``report.html`` and ``summary.md`` from whatever the run directory holds."""

from __future__ import annotations

from pathlib import Path

from formalize import DECISIONS_FILE, VERIFY_SUMMARY
from synth.core import RunDir, config_hash
from synthcheck._artifacts import REPORT_HTML, SUMMARY_MD
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun


def sections(cfg: RunConfig) -> None:
    """None: the report reads the run directory, not the config."""
    return None


def report_hash(run: RunDir) -> str:
    """Hash of what the report shows: the other stages' recorded hashes, the report code's
    format version, and the files that other commands add to a run (review decisions, the
    summaries of every verified suite)."""
    import hashlib

    from discovery import is_plugin_stage
    from synthcheck.report import REPORT_FORMAT
    from synthcheck.stages import STAGE_NAMES

    def digest(path: Path) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None

    return config_hash({
        "format": REPORT_FORMAT,
        # a plug-in finding source's stage counts once it ran (runs without it keep
        # their hash)
        "stages": {s: run.stage_hash(s) for s in STAGE_NAMES if s != "report"
                   and not (is_plugin_stage(s) and run.stage_hash(s) is None)},
        "decisions": digest(DECISIONS_FILE.path(run.path)),
        "verify": {p.parent.name: digest(p) for p in VERIFY_SUMMARY.glob(run.path)},
    })


def stage_hash(s: None, upstream: Hashes, run_dir: Path | None) -> str | None:
    """:func:`report_hash` of the run directory (None without one)."""
    return report_hash(RunDir(run_dir)) if run_dir is not None else None


def outputs(s: None, run_dir: Path) -> list[Path]:
    return [REPORT_HTML.path(run_dir), SUMMARY_MD.path(run_dir)]


def run(s: None, ctx: StageContext) -> StageRun:
    """Write report.html and summary.md unless both are current (through
    :class:`discovery.StageJob`: the recorded hash and the files' digests)."""
    from discovery import StageJob
    from synthcheck.report import write_report

    run_dir = ctx.run
    job = StageJob(run_dir, stage="report", stage_hash=report_hash(run_dir),
                   outputs=outputs(s, run_dir.path))
    if job.current():
        return StageRun(False, {"report": REPORT_HTML.path(run_dir.path)})
    path = write_report(run_dir.path)
    job.complete(path=str(path.relative_to(run_dir.path)))
    return StageRun(True, {"report": path})


STAGE = Stage(name="report", sections=sections, upstream=("generate", "score", "rank", "mine",
                                                         "semantic", "metadata", "occlusion",
                                                         "focus", "findings", "evaluate",
                                                         "verify"),
              stage_hash=stage_hash, outputs=outputs, run=run)
