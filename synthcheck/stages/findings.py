"""Stage 2, findings: every finding source's rows (``discovery.FINDING_SOURCES``: n-grams,
semantic and metadata slices, occlusion words, the labelled data's findings, focus rounds,
...) in one ranked ``findings.jsonl`` (``discovery.findings_run``)."""

from __future__ import annotations

from pathlib import Path

from discovery import FINDINGS, finding_sources
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._slice_base import SliceSections, sections
from synthcheck.stages.generate import check_corpus

UNIFIED = tuple(finding_sources())
"""The stages whose rows findings unifies: every finding source's, in pipeline order."""


def stage_hash(s: SliceSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``slices.max_findings``, the failure rules and the hashes of the score stage and of
    every stage it unifies (None for one that is off; None without a score hash)."""
    from discovery import findings_stage_hash, findings_upstream

    score = upstream.get("score")
    if not score:
        return None
    return findings_stage_hash(s.slices, {"score": score, "task_model": s.ranked,
                                          "focus_rule": s.focus_rule,
                                          **findings_upstream(upstream)},
                               ranking=s.ranking)


def outputs(s: SliceSections, run_dir: Path) -> list[Path]:
    return [FINDINGS.path(run_dir)]


def run(s: SliceSections, ctx: StageContext) -> StageRun:
    from discovery import findings_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    out = findings_run(ctx.run.path, focus_rule=s.focus_rule, focus_alpha=s.focus_alpha,
                       upstream={u: ctx.hash_of(u) for u in UNIFIED}, **s.kwargs(ctx))
    return StageRun(not out.get("skipped"), {"findings": out})


STAGE = Stage(name="findings", sections=sections, upstream=("score", *UNIFIED),
              stage_hash=stage_hash, outputs=outputs, run=run)
