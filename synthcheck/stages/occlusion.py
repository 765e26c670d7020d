"""Stage 2, occlusion: every content word of every sentence deleted and rescored by the
task model, the strongest words checked by the reference (``discovery.occlusion_run``).

The models are :class:`discovery.ScoringModels`, as focus rounds score with (lazy: loaded
only when the stage is not current; new text is calibrated with the score stage's recorded
bias)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discovery import WORDS, ScoringModels
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._slice_base import SliceSections, forget
from synthcheck.stages._slice_base import sections as slice_sections
from synthcheck.stages.generate import check_corpus


@dataclass(frozen=True)
class OcclusionSections:
    base: SliceSections

    @property
    def scoring(self) -> ScoringModels:
        """The models that score the deletions: the ranked task model and the reference."""
        return self.base.models.scoring(self.base.ranking)


def sections(cfg: RunConfig) -> OcclusionSections:
    """The slice sections (their task models and ranking rule give the scoring models)."""
    return OcclusionSections(slice_sections(cfg))


def stage_hash(s: OcclusionSections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """``slices.occlusion``, the judging rule, the ranked task model, the two models' key
    and the score stage's hash (None without one)."""
    from discovery import slice_stage_hash

    score = upstream.get("score")
    return slice_stage_hash("occlusion", s.base.slices, score, s.base.ranked,
                            s.scoring.key, ranking=s.base.ranking) if score else None


def outputs(s: OcclusionSections, run_dir: Path) -> list[Path]:
    return [WORDS.path(run_dir)]


def run(s: OcclusionSections, ctx: StageContext) -> StageRun:
    from discovery import occlusion_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    m = s.scoring
    out = occlusion_run(ctx.run.path, task_fn=m.task_fn(ctx.run.path, ctx.scorers),
                        reference_fn=m.reference_fn(ctx.run.path), models_key=m.key,
                        **s.base.kwargs(ctx))
    return StageRun(not out.get("skipped"), {"occlusion": out})


def off(s: OcclusionSections) -> str | None:
    return None if s.base.slices.occlusion.enabled else "off (slices.occlusion.enabled: false)"


def when_off(s: OcclusionSections, ctx: StageContext) -> dict[str, Any]:
    return forget("occlusion", ctx)


STAGE = Stage(name="occlusion", sections=sections, upstream=("score",), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off, when_off=when_off)
