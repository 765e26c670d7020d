"""The end-to-end pipeline: every stage of :data:`synthcheck.stages.STAGES`, in order
(generate -> score -> rank -> mine -> focus -> evaluate -> verify -> report).

Every stage records its hash (its declaration's: the sections it reads plus its upstream
stages' hashes) in the run manifest and is skipped when its outputs are complete and
current, so a rerun after a crash, or after editing only the suite, redoes only what
changed; the generation stage itself resumes shard by shard. The single-stage commands
(`score`, `rank`, `mine`, `focus`) run one declaration with the same context.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.core import Executor, RunDir
from synthcheck._config import RunConfig
from synthcheck.stages import (
    STAGES,
    LazyScorers,
    Stage,
    StageContext,
    StageRun,
    StageWork,
    evaluate,
    generate,
    hash_of,
    scorer_sections,
    stage_named,
    verify,
)

if TYPE_CHECKING:
    from discovery import TaskModelConfig
    from formalize import Suite


@dataclass
class DiscoverResult:
    """What `discover` did: per-stage status (``ran``/``skipped``), timings and key outputs."""

    run_dir: Path
    stages: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def stage_context(cfg: RunConfig, run_dir: str | Path, **kw: Any) -> StageContext:
    """The context a stage of ``cfg`` runs in on ``run_dir`` (``kw``: the other fields)."""
    run = RunDir(run_dir)
    return StageContext(run=run, record=cfg.model_dump(mode="json"),
                        hash_of=hash_of(cfg, run.path), **kw)


def run_stage(cfg: RunConfig, name: str, run_dir: str | Path, **kw: Any) -> StageRun:
    """Run the one stage ``name`` of ``cfg`` on ``run_dir`` (``kw``: context fields such as
    ``progress``, ``executor``, ``scorers``)."""
    stage = stage_named(name)
    return stage.run(stage.sections(cfg), stage_context(cfg, run_dir, **kw))


def check_before_work(cfg: RunConfig, *, allow_outside_files: bool = False) -> None:
    """Check every part of ``cfg`` that a later stage of `discover` would refuse, before
    anything is generated or written (in seconds: no LLM or transformers model is loaded):
    the stage-2 sections (task models, reference, ranking, evaluation data; see
    :func:`discovery.check_stage2`), the semantic slices' encoder, the labelled data (its
    file, columns and labels; see :func:`discovery.labelled_rows`), and the suite (schema,
    files, labels, case limit; a suite that reads the corpus this run is to generate is
    checked without it).

    Raises:
        ConfigError / DataError / ModelNotAvailable / TemplateError: the first problem.
    """
    from discovery import check_stage2, is_few_shot

    ev = evaluate.sections(cfg)
    m = ev.models
    check_stage2(m.labels, task_models=m.task_models, reference=m.reference,
                 evaluation=m.evaluation.resolved(ev.corpus), ranking=ev.ranking)
    o = cfg.slices.occlusion
    if cfg.slices.semantic.enabled or (o.enabled and o.groups):
        # the encoder (semantic slices, word groups) is found, not loaded, before any work
        from discovery import encoder_folder

        encoder_folder(cfg.slices.semantic.encoder)
    if cfg.labelled.data is not None:  # the labelled rows are read (no model), columns checked
        from discovery import labelled_rows

        labelled_rows(m.labels, cfg.labelled, m.evaluation, ev.corpus)
    vs = verify.sections(cfg)
    if not vs.suite:
        return
    from formalize import RunCorpusMissing, check_suite_labels, load_suite
    from synth.core import ConfigError

    task_source = "the run config's task.labels"
    check_suite_labels(vs.suite, m.labels.list, task_source=task_source)
    fewshot = [t.name for t in m.task_models if is_few_shot(t.spec)]
    if fewshot and m.reference.calibration == "batch":
        raise ConfigError(
            f"task model(s) {', '.join(fewshot)} use the reference prompt with batch "
            f"calibration, which verify cannot fit: the suite's cases come batch by batch",
            where="reference.calibration",
            fix="use calibration: contextual (or none), or run without a suite")
    try:
        suite = load_suite(vs.suite, allow_outside_files=allow_outside_files)
    except RunCorpusMissing:
        return  # it reads a corpus that is yet to be generated: checked when verify runs
    suite.check_labels(m.labels.list, task_source=task_source)
    from synthcheck._verify import check_verify_size

    check_verify_size(suite, vs.verify)


def discover(cfg: RunConfig, run_dir: str | Path, *, n: int | None = None,
             progress: bool = True, log: Callable[[str], None] = print,
             allow_outside_files: bool = False,
             lock_timeout: float | None = None) -> DiscoverResult:
    """Run every stage of ``cfg`` into ``run_dir``, skipping stages that are current.
    Every config error a stage would hit is reported first, with nothing written
    (:func:`check_before_work`). Generation and scoring run on the executor ``cfg.executor``
    names (one for both).

    Args:
        n: prompts to generate (default: ``generator.n``).
        allow_outside_files: let the suite read files outside its folder.
        lock_timeout: seconds to wait for another process's stage lock (None: no limit).

    Raises:
        RunDirError: ``run_dir`` holds a corpus generated with another config.
    """
    from synthcheck._estimate import estimate_line, record_rate
    from synthcheck._executors import make_executor

    check_before_work(cfg, allow_outside_files=allow_outside_files)  # before any worker starts
    result = DiscoverResult(Path(run_dir))
    run = RunDir(run_dir)
    run.check_locks([stage.name for stage in STAGES])  # a lock that cannot be one: refused now
    with make_executor(cfg.executor) as executor:
        # One context for every stage: the task models are loaded once, on first use, and
        # shared by focus, evaluate and verify; `results` is what earlier stages reported.
        ctx = stage_context(cfg, run_dir, progress=progress, log=log, executor=executor, n=n,
                            scorers=LazyScorers(scorer_sections(cfg), {}),
                            allow_outside_files=allow_outside_files, results=result.info)
        for stage in STAGES:
            s = stage.sections(cfg)
            off = stage.off(s)
            if off is not None:
                result.info.update(stage.when_off(s, ctx))
                result.stages[stage.name] = off
                continue
            log(f"[{stage.name}] ...")
            # An estimate before a long stage: its work x a rate measured here.
            model, work = _work_left(stage, s, RunDir(run_dir), n)
            line = estimate_line(stage.name, model, work)
            if line:
                log(line)
            t0 = time.perf_counter()
            if stage.shares_work:  # e.g. generation: shards are claimed one by one
                done = stage.run(s, ctx)
            else:  # a second `discover` waits for this stage, then finds it current
                def waiting(message: str, name: str = stage.name) -> None:
                    log(f"[{name}] {message}")

                with run.stage_lock(stage.name, on_wait=waiting, timeout=lock_timeout):
                    done = stage.run(s, ctx)
            result.seconds[stage.name] = round(time.perf_counter() - t0, 2)
            result.stages[stage.name] = "ran" if done.ran else "skipped (current)"
            log(f"[{stage.name}] {result.stages[stage.name]} in "
                f"{result.seconds[stage.name]:.1f}s")
            if done.ran:
                record_rate(stage.name, model, work, result.seconds[stage.name])
            result.info.update(done.info)
    return result


def _work_left(stage: Stage[Any], s: Any, run: RunDir, n: int | None) -> tuple[str, int]:
    """The model doing a long stage's work and how much is left (its declaration's
    ``work``; 0: nothing to estimate)."""
    if stage.work is None:
        return "", 0
    status = (run.stage_status(stage.name) or {}).get("status") if run.path.is_dir() else None
    return stage.work(s, StageWork(run, status, n))


# --- one stage at a time (the `score`, `rank`, `mine`, `evaluate` and `verify` commands)

def build_scorers(cfg: RunConfig) -> dict[str, Any]:
    """Every task model of ``cfg``, loaded."""
    return scorer_sections(cfg).build()


def check_corpus_config(cfg: RunConfig, run_dir: str | Path) -> None:
    """Refuse a run directory whose corpus was generated with another config (see
    :func:`synthcheck.stages.generate.check_corpus`)."""
    generate.check_corpus(run_dir, hash_of(cfg, Path(run_dir))("generate"))


def score(cfg: RunConfig, run_dir: str | Path, *, progress: bool = True,
          executor: Executor | None = None) -> dict[str, Any]:
    """The score stage on ``run_dir`` (the chunks run on ``executor``, default: the one
    ``cfg.executor`` names, for this call); returns ``discovery.score_run``'s report."""
    if executor is not None:
        return run_stage(cfg, "score", run_dir, progress=progress,
                         executor=executor).info["score"]
    from synthcheck._executors import make_executor

    with make_executor(cfg.executor) as own:
        return run_stage(cfg, "score", run_dir, progress=progress, executor=own).info["score"]


def rank(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """The rank stage on ``run_dir``; the corpus and the scores must have been made with
    ``cfg``. Returns ``discovery.rank_run``'s report."""
    return run_stage(cfg, "rank", run_dir).info["rank"]


def mine(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """The mine stage on ``run_dir``; the corpus, the scores and the hard subset must have
    been made with ``cfg``. Returns ``discovery.mine_run``'s report."""
    return run_stage(cfg, "mine", run_dir).info["mine"]


def focus(cfg: RunConfig, run_dir: str | Path, *, progress: bool = True) -> dict[str, Any]:
    """The focus stage on ``run_dir``, run even when ``focus.enabled`` is false (that only
    turns it off in `discover`); returns ``discovery.focus_run``'s report."""
    return run_stage(cfg, "focus", run_dir, progress=progress).info["focus"]


def evaluate_run_config(cfg: RunConfig, data: str | None = None, *,
                        scorers: Mapping[str, Any] | None = None, progress: bool = True,
                        corpus_size: int | None = None, raw_dir: str | Path | None = None
                        ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """:func:`synthcheck.stages.evaluate.evaluate_sections` on ``cfg``'s sections."""
    return evaluate.evaluate_sections(evaluate.sections(cfg), data, scorers=scorers,
                                      progress=progress, corpus_size=corpus_size,
                                      raw_dir=raw_dir)


def evaluate_stage_hash(cfg: RunConfig) -> str:
    """The evaluate stage's hash under ``cfg`` (it needs no run directory)."""
    return evaluate.stage_hash(evaluate.sections(cfg))


def verify_stage_hash(cfg: RunConfig, suite: Suite, *,
                      task_models: list[TaskModelConfig] | None = None) -> str:
    """The verify stage's hash of the loaded ``suite`` under ``cfg`` (``task_models``
    default: ``cfg``'s; see :func:`synthcheck.stages.verify.verify_hash`)."""
    return verify.verify_hash(verify.sections(cfg), suite, task_models=task_models)
