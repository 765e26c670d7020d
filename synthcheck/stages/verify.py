"""Stage 3, verify: the config's suite run against every task model
(``verify/<suite>/cases.jsonl``, ``summary.csv``, ``summary.json``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from discovery import TaskModelConfig
from formalize import VERIFY, VERIFY_SUMMARY, VerifyConfig
from synth.core import output_dump, section_hash
from synthcheck._config import RunConfig
from synthcheck.stages._base import Hashes, Stage, StageContext, StageRun
from synthcheck.stages._models import TaskModelSections, scorer_sections

if TYPE_CHECKING:
    from formalize import Suite

OFF = "no suite in the config"


@dataclass(frozen=True)
class VerifySections:
    suite: str | None
    verify: VerifyConfig
    models: TaskModelSections


def sections(cfg: RunConfig) -> VerifySections:
    """The suite path, the ``verify:`` settings and the task models."""
    return VerifySections(cfg.suite, cfg.verify, scorer_sections(cfg))


def verify_hash(s: VerifySections, suite: Suite, *,
                task_models: Sequence[TaskModelConfig] | None = None) -> str:
    """The verify stage's hash (the one rule, for `discover` and `synthcheck verify`): the
    loaded ``suite``'s fingerprint, the task models' hashes (default: all of ``s``'s) and the
    ``verify:`` settings that change results."""
    from formalize import sampling_plan

    v = s.verify
    settings = output_dump(v)
    if not sampling_plan(suite, v.sample, v.max_cases_per_test, v.max_cases):
        # The per-test cap changes nothing here: runs made before it existed stay current.
        settings.pop("max_cases_per_test", None)
    return section_hash({"suite": suite.fingerprint(),
                         "task_models": s.models.model_hashes(task_models),
                         "verify": settings}, {})


def stage_hash(s: VerifySections, upstream: Hashes, run_dir: Path | None) -> str | None:
    """:func:`verify_hash` of the config's suite (None without a suite)."""
    from formalize import load_suite

    return verify_hash(s, load_suite(s.suite)) if s.suite else None


def outputs(s: VerifySections, run_dir: Path) -> list[Path]:
    from formalize import load_suite

    if not s.suite:
        return []
    return [VERIFY_SUMMARY.path(run_dir, suite=load_suite(s.suite).name)]


def run(s: VerifySections, ctx: StageContext) -> StageRun:
    """Run the suite against every task model unless suite and models are unchanged (a
    test over ``verify.max_cases_per_test`` is sampled, with a ``ctx.log`` note). The
    held-out recall shown beside each model is the evaluate stage's."""
    from discovery import StageJob, recall_by_model
    from formalize import VerifyResult, load_suite
    from synthcheck._verify import check_verify_size, run_verify

    assert s.suite is not None  # the stage is off without one
    suite = load_suite(s.suite, allow_outside_files=ctx.allow_outside_files)
    suite.check_labels(s.models.labels.list, task_source="the run config's task.labels")
    vhash = verify_hash(s, suite)  # from the suite loaded here (outside files allowed or not)
    out = VERIFY.path(ctx.run.path, suite=suite.name)
    summary = VERIFY_SUMMARY.path(ctx.run.path, suite=suite.name)
    job = StageJob(ctx.run, stage="verify", stage_hash=vhash, outputs=[summary])
    stored = ctx.run.current_output("verify", vhash, summary) if job.current() else None
    if stored is not None:
        return StageRun(False, {"verify": VerifyResult.from_summary_json(stored)})
    _, plan = check_verify_size(suite, s.verify)  # refuse an oversized suite before scoring
    for name, p in plan.items():
        ctx.log(p.note(name))
    scorers = ctx.scorers or s.models.build()
    recall = recall_by_model(ctx.results.get("evaluate") or {})
    result, _ = run_verify(suite, {t.name: scorers[t.name] for t in s.models.task_models},
                           s.verify, out, vhash, recall, progress=ctx.progress)
    job.complete(suite=suite.name, path=str(out.relative_to(ctx.run.path)))
    return StageRun(True, {"verify": result})


def off(s: VerifySections) -> str | None:
    return None if s.suite else OFF


STAGE = Stage(name="verify", sections=sections, upstream=(), stage_hash=stage_hash,
              outputs=outputs, run=run, off=off)
