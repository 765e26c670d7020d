"""Stage 2, occlusion: every content word of every sentence deleted and rescored by the
task model, the strongest words checked by the reference (``discovery.occlusion_run``).

The models are the focus stage's (lazy: loaded only when the stage is not current; new text
is calibrated with the score stage's recorded bias)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from discovery import WORDS
from synthcheck._config import RunConfig
from synthcheck.stages import focus
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._slice_base import SliceSections, forget
from synthcheck.stages._slice_base import sections as slice_sections
from synthcheck.stages.generate import check_corpus


def sections(cfg: RunConfig) -> tuple[SliceSections, focus.FocusSections]:
    """The slice sections, and the focus stage's (its models score the deletions)."""
    return slice_sections(cfg), focus.sections(cfg)


def stage_hash(s: tuple[SliceSections, focus.FocusSections], upstream: Hashes,
               run_dir: Path | None) -> str | None:
    """``slices.occlusion``, the judging rule, the ranked task model, the two models' key
    and the score stage's hash (None without one)."""
    from discovery import slice_stage_hash

    score = upstream.get("score")
    return slice_stage_hash("occlusion", s[0].slices, score, s[0].ranked,
                            focus.models_key(s[1]), ranking=s[0].ranking) if score else None


def outputs(s: tuple[SliceSections, focus.FocusSections], run_dir: Path) -> list[Path]:
    return [WORDS.path(run_dir)]


def run(s: tuple[SliceSections, focus.FocusSections], ctx: StageContext) -> StageRun:
    from discovery import occlusion_run

    check_corpus(ctx.run.path, ctx.hash_of("generate"))
    models = focus.focus_models(s[1], ctx.run.path, ctx.scorers)
    out = occlusion_run(ctx.run.path, task_fn=models.task, reference_fn=models.reference,
                        models_key=models.key, **s[0].kwargs(ctx))
    return StageRun(not out.get("skipped"), {"occlusion": out})


def off(s: tuple[SliceSections, focus.FocusSections]) -> str | None:
    return None if s[0].slices.occlusion.enabled else "off (slices.occlusion.enabled: false)"


def when_off(s: tuple[SliceSections, focus.FocusSections], ctx: StageContext
             ) -> dict[str, Any]:
    return forget("occlusion", ctx)


STAGE = Stage(name="occlusion", sections=sections, upstream=("score",), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off, when_off=when_off)
