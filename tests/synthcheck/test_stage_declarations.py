"""The stage declarations: their order, and the pipeline's contract with them (a stage is
one declaration: `discover` runs it, skips it when current, and reports it when off)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import synthcheck._pipeline as pipeline
from synth.core import RunDir, section_hash
from synthcheck import RunConfig
from synthcheck.stages import STAGE_NAMES, STAGES, Stage, StageContext, StageRun, hash_of


def test_the_stages_and_their_order() -> None:
    assert STAGE_NAMES == ("generate", "score", "rank", "mine", "semantic", "metadata",
                           "occlusion", "labelled", "enriched", "perturbation", "focus",
                           "findings", "evaluate", "verify", "report")
    for i, stage in enumerate(STAGES):  # every upstream stage runs before its downstream
        assert all(STAGE_NAMES.index(u) < i for u in stage.upstream), stage.name


def test_hashes_without_a_run_directory() -> None:
    of = hash_of(RunConfig(), None)
    assert [of(s) is None for s in STAGE_NAMES] == [
        False, True, True, True, True, True, True, True, True, True, True, True, False,
        True, True]  # no corpus, no labelled data, no suite


def _echo_stage(name: str, upstream: tuple[str, ...] = ()) -> Stage[str]:
    """A toy stage: writes ``<name>.json`` with the run's name; current by its hash."""
    def stage_hash(s: str, up: dict[str, str | None], run_dir: Path | None) -> str:
        return section_hash({"name": s}, dict(up))

    def run(s: str, ctx: StageContext) -> StageRun:
        h = stage_hash(s, {u: ctx.hash_of(u) for u in upstream}, ctx.run.path)
        out = ctx.run.path / f"{name}.json"
        if ctx.run.is_current(name, h) and out.is_file():
            return StageRun(False)
        ctx.run.open_stage(ctx.record, name, h)
        ctx.run.path.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"name": s, "upstream": [ctx.hash_of(u) for u in upstream]}))
        ctx.run.complete(name, h)
        return StageRun(True, {name: s})

    return Stage(name=name, sections=lambda cfg: cfg.name, upstream=upstream,
                 stage_hash=stage_hash, outputs=lambda s, d: [d / f"{name}.json"], run=run,
                 off=lambda s: "off (name is 'off')" if s == "off" else None)


def test_discover_runs_skips_and_reports_each_declared_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _echo_stage("first"), _echo_stage("second", ("first",))
    import synthcheck.stages

    for where in (pipeline, synthcheck.stages):  # the list discover iterates, and hash_of's
        monkeypatch.setattr(where, "STAGES", (first, second))
    monkeypatch.setattr(synthcheck.stages, "STAGE_NAMES", ("first", "second"))
    monkeypatch.setattr(pipeline, "check_before_work", lambda cfg, **kw: None)
    run = tmp_path / "r"
    got = pipeline.discover(RunConfig(name="a"), run, progress=False, log=lambda s: None)
    assert got.stages == {"first": "ran", "second": "ran"}
    assert got.info == {"first": "a", "second": "a"}
    upstream = json.loads((run / "second.json").read_text())["upstream"]
    assert upstream == [RunDir(run).stage_hash("first")] == [section_hash({"name": "a"}, {})]
    again = pipeline.discover(RunConfig(name="a"), run, progress=False, log=lambda s: None)
    assert again.stages == {"first": "skipped (current)", "second": "skipped (current)"}
    other = pipeline.discover(RunConfig(name="b"), run, progress=False, log=lambda s: None)
    assert other.stages == {"first": "ran", "second": "ran"}
    off = pipeline.discover(RunConfig(name="off"), run, progress=False, log=lambda s: None)
    assert off.stages == {"first": "off (name is 'off')", "second": "off (name is 'off')"}
