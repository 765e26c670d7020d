"""The end-to-end pipeline: generate -> score -> rank -> mine -> semantic -> metadata ->
occlusion -> focus -> findings -> evaluate -> verify -> report.

Every stage records a hash of what changes its outputs (its config section plus its
upstream stage's hash) in the run manifest, and is skipped when its outputs are complete
and current (for evaluate and verify, the output file's own recorded hash must match too:
`synthcheck evaluate --run` and `verify --run` rewrite those files without the manifest).
A rerun after a crash, or after editing only the suite, redoes only what changed; the
generation stage itself resumes shard by shard. The report's hash covers the other stages'
hashes, the report format version, the review decisions and the verified suites'
summaries.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery import TaskModelConfig
from synth import run_generation
from synth.core import Executor, RunDir, config_hash, output_dump
from synthcheck._config import RunConfig

if TYPE_CHECKING:
    from formalize import Suite, VerifyConfig

STAGES = ("generate", "score", "rank", "mine", "semantic", "metadata", "occlusion", "focus",
          "findings", "evaluate", "verify", "report")


@dataclass
class DiscoverResult:
    """What `discover` did: per-stage status (``ran``/``skipped``), timings and key outputs."""

    run_dir: Path
    stages: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


# --- each stage with the sections it reads (the app is the one place that holds a RunConfig)

def build_scorers(cfg: RunConfig) -> dict[str, Any]:
    """Every task model of ``cfg``, loaded."""
    from discovery import build_task_scorers

    return build_task_scorers(cfg.task_models, cfg.task.label_space, reference=cfg.reference,
                              evaluation=cfg.evaluation)


def check_corpus_config(cfg: RunConfig, run_dir: str | Path) -> None:
    """Refuse a run directory whose corpus was generated with another config, exactly as
    `discover` (``synth.run_generation``) does: the generation hash recorded in the manifest
    must be ``cfg``'s. A corpus without a recorded generation (one written by hand) passes.

    Raises:
        RunDirError: the corpus belongs to another config (nothing is written).
    """
    from synth import generation_config_hash, has_corpus
    from synth.core import RunDirError

    run = RunDir(run_dir)
    old = run.stage_hash("generate")
    chash = generation_config_hash(cfg)
    if old is not None and old != chash and has_corpus(run.path):
        raise RunDirError(
            f"run directory belongs to another config (generation hash {old}, this "
            f"config {chash})", where=str(run.path),
            fix="pass the --config (and -P) the run was made with, or use a new --run "
                "directory")


def score_hash(cfg: RunConfig, run_dir: str | Path) -> str:
    """The score stage hash ``cfg`` gives on ``run_dir``'s corpus."""
    from discovery import expected_score_hash

    return expected_score_hash(run_dir, labels=cfg.task.label_space,
                               task_models=cfg.task_models, reference=cfg.reference,
                               evaluation=cfg.evaluation)


def score(cfg: RunConfig, run_dir: str | Path, *, progress: bool = True,
          task_scorers: Mapping[str, Any] | None = None,
          executor: Executor | None = None) -> dict[str, Any]:
    """discovery's ``score_run`` on ``run_dir`` with ``cfg``'s sections (after
    :func:`check_corpus_config`; the chunks run on ``executor``, default: the one
    ``cfg.executor`` names, for this call)."""
    from discovery import score_run

    check_corpus_config(cfg, run_dir)

    def call(ex: Executor) -> dict[str, Any]:
        return score_run(run_dir, labels=cfg.task.label_space, task_models=cfg.task_models,
                         reference=cfg.reference, evaluation=cfg.evaluation,
                         config_dump=cfg.model_dump(mode="json"), task_scorers=task_scorers,
                         progress=progress, executor=ex)

    if executor is not None:
        return call(executor)
    from synthcheck._executors import make_executor

    with make_executor(cfg.executor) as own:
        return call(own)


def rank(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """discovery's ``rank_run`` on ``run_dir`` with ``cfg``'s sections; the corpus and the
    scores must have been made with ``cfg``."""
    from discovery import rank_run

    check_corpus_config(cfg, run_dir)
    return rank_run(run_dir, labels=cfg.task.label_space, ranking=cfg.ranking,
                    task_models=cfg.task_models, config_dump=cfg.model_dump(mode="json"),
                    score_hash=_score_hash_if_corpus(cfg, run_dir))


def mine(cfg: RunConfig, run_dir: str | Path) -> dict[str, Any]:
    """discovery's ``mine_run`` on ``run_dir`` with ``cfg``'s sections; the corpus, the
    scores and the hard subset must have been made with ``cfg``."""
    from discovery import mine_run, rank_stage_hash

    check_corpus_config(cfg, run_dir)
    shash = _score_hash_if_corpus(cfg, run_dir)
    return mine_run(run_dir, labels=cfg.task.label_space, ranking=cfg.ranking,
                    mining=cfg.mining, task_models=cfg.task_models,
                    config_dump=cfg.model_dump(mode="json"),
                    rank_hash=rank_stage_hash(cfg.ranking, shash) if shash else None)


def _score_hash_if_corpus(cfg: RunConfig, run_dir: str | Path) -> str | None:
    """:func:`score_hash`, or None when the run has no corpus (the stage reports that)."""
    from synth import has_corpus

    return score_hash(cfg, run_dir) if has_corpus(run_dir) else None


def evaluate_run_config(cfg: RunConfig, data: str | None = None, *,
                        scorers: Mapping[str, Any] | None = None, progress: bool = True,
                        corpus_size: int | None = None, raw_dir: str | Path | None = None
                        ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """discovery's ``evaluate_held_out`` with ``cfg``'s sections (``data`` over
    ``evaluation.data``), and the hard subset's precision measured on the same held-out
    probabilities (``ranking``'s rule; ``corpus_size`` scales ``ranking.top_k``). Given a
    run directory ``raw_dir``, the few-shot models' held-out raw log-probs are stored and
    reused there (a calibration change rescores nothing). A file that is the seed corpus's
    own is read with the corpus's fields and encoding where the evaluation section leaves
    them unset.

    Returns:
        ``(reports, reliability)``: the per-model reports and the ``eval.json`` fields of
        :func:`discovery.held_out_reliability` (empty without the reference).
    """
    from discovery import evaluate_held_out, held_out_reliability, ranked_task_name

    reports, held = evaluate_held_out(cfg.task.label_space, cfg.evaluation, data,
                                      task_models=cfg.task_models, reference=cfg.reference,
                                      scorers=scorers, progress=progress,
                                      raw_dir=raw_dir, corpus=cfg.corpus)
    ranked = ranked_task_name(cfg.ranking, cfg.task_models)
    return reports, held_out_reliability(held, cfg.ranking, ranked=ranked,
                                         corpus_size=corpus_size)


def run_corpus_size(run_dir: str | Path) -> int | None:
    """The run's corpus size (``corpus/stats.json``'s ``kept``), or None without a readable
    one."""
    try:
        stats = json.loads((Path(run_dir) / "corpus" / "stats.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    kept = stats.get("kept") if isinstance(stats, dict) else None
    return kept if isinstance(kept, int) else None


class LazyScorers(Mapping[str, Any]):
    """The task models of a config by name, each loaded on first lookup into ``built`` (a
    dict shared with later stages), so a stage that needs only some loads only those."""

    def __init__(self, cfg: RunConfig, built: dict[str, Any]) -> None:
        self.cfg = cfg
        self.built = built
        self.names = [t.name for t in cfg.task_models]

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            from discovery import build_task_scorers

            tm = next(t for t in self.cfg.task_models if t.name == name)
            self.built.update(build_task_scorers([tm], self.cfg.task.label_space,
                                                 reference=self.cfg.reference,
                                                 evaluation=self.cfg.evaluation))
        return self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def _task_model_hashes(cfg: RunConfig, task_models: Sequence[TaskModelConfig] | None = None
                       ) -> list[str]:
    from discovery import task_model_hashes

    return task_model_hashes(cfg.task_models if task_models is None else task_models,
                             labels=cfg.task.label_space, reference=cfg.reference,
                             evaluation=cfg.evaluation)


def evaluate_stage_hash(cfg: RunConfig) -> str:
    """The evaluate stage's hash: the evaluation settings, the task models, the reference
    and the ranking rule whose precision it measures (it needs no run directory; with
    ``ranking.top_k`` the stage also records the corpus size it scaled the cut-off by)."""
    from discovery import reference_hash

    evaluation = cfg.evaluation.resolved(cfg.corpus)  # the fields and encoding actually read
    return config_hash({"evaluation": evaluation.model_dump(mode="json"),
                        "task_models": _task_model_hashes(cfg),
                        "reference": reference_hash(cfg.reference, cfg.task.label_space),
                        "ranking": cfg.ranking.model_dump(mode="json")})


def verify_stage_hash(cfg: RunConfig, suite: Suite, *, verify: VerifyConfig | None = None,
                      task_models: Sequence[TaskModelConfig] | None = None) -> str:
    """The verify stage's hash (the one rule, for `discover` and `synthcheck verify`): the
    loaded ``suite``'s fingerprint, the task models' hashes (default: ``cfg``'s) and the
    ``verify:`` settings that change results (default: ``cfg.verify``)."""
    from formalize import sampling_plan

    v = cfg.verify if verify is None else verify
    settings = output_dump(v)
    if not sampling_plan(suite, v.sample, v.max_cases_per_test, v.max_cases):
        # The per-test cap changes nothing here: runs made before it existed stay current.
        settings.pop("max_cases_per_test", None)
    return config_hash({"suite": suite.fingerprint(),
                        "task_models": _task_model_hashes(cfg, task_models),
                        "verify": settings})


def evaluate_stage(cfg: RunConfig, run: RunDir, scorers: Mapping[str, Any],
                   progress: bool) -> tuple[bool, dict[str, Any]]:
    """Held-out evaluation of the task models and the reference, and the hard subset's
    precision on it, cached in eval.json; the few-shot models' held-out raw log-probs are
    kept in the run (see :func:`evaluate_run_config`). ``scorers`` is looked up per model
    (a :class:`LazyScorers` loads only those needed). Returns (ran, eval.json's content)."""
    from discovery import write_eval_json

    ehash = evaluate_stage_hash(cfg)
    path = run.path / "eval.json"
    scaled = cfg.ranking.top_k is not None and cfg.evaluation.include_reference
    size = {"corpus": run_corpus_size(run.path)} if scaled else {}  # top_k scales by it
    stored = run.current_output("evaluate", ehash, path, **size)
    if stored is not None and isinstance(stored.get("reports"), dict):
        return False, stored
    reports, reliability = evaluate_run_config(cfg, scorers=scorers, progress=progress,
                                               corpus_size=size.get("corpus"),
                                               raw_dir=run.path)
    write_eval_json(path, reports, ehash, **reliability)
    run.complete("evaluate", ehash, models=sorted(reports), **size)
    return True, {"reports": reports, **reliability}


def verify_stage(cfg: RunConfig, run: RunDir, scorers: Callable[[], dict[str, Any]],
                 recall: dict[str, dict[str, float]], progress: bool = True, *,
                 allow_outside_files: bool = False,
                 log: Callable[[str], None] = print) -> tuple[bool, Any]:
    """Run the config's suite against every task model; skipped if suite and models are
    unchanged (a test over ``verify.max_cases_per_test`` is sampled, with a ``log`` note).
    Returns (ran, VerifyResult or the summary JSON when skipped)."""
    from formalize import load_suite
    from synthcheck._verify import check_verify_size, run_verify

    assert cfg.suite is not None  # checked by the caller
    suite = load_suite(cfg.suite, allow_outside_files=allow_outside_files)
    suite.check_labels(cfg.task.labels, task_source="the run config's task.labels")
    v = cfg.verify
    vhash = verify_stage_hash(cfg, suite)
    out = run.path / "verify" / suite.name
    stored = run.current_output("verify", vhash, out / "summary.json")
    if stored is not None:
        return False, stored
    _, plan = check_verify_size(suite, v)  # refuse an oversized suite before scoring
    for name, p in plan.items():
        log(p.note(name))
    result, _ = run_verify(suite, scorers(), v, out, vhash, recall, progress=progress)
    run.complete("verify", vhash, suite=suite.name, path=str(out.relative_to(run.path)))
    return True, result


def check_before_work(cfg: RunConfig, *, allow_outside_files: bool = False) -> None:
    """Check every part of ``cfg`` that a later stage of `discover` would refuse, before
    anything is generated or written (in seconds: no LLM or transformers model is loaded):
    the stage-2 sections (task models, reference, ranking, evaluation data; see
    :func:`discovery.check_stage2`) and the suite (schema, files, labels, case limit; a
    suite that reads the corpus this run is to generate is checked without it).

    Raises:
        ConfigError / DataError / ModelNotAvailable / TemplateError: the first problem.
    """
    from discovery import check_stage2

    check_stage2(cfg.task.label_space, task_models=cfg.task_models, reference=cfg.reference,
                 evaluation=cfg.evaluation.resolved(cfg.corpus), ranking=cfg.ranking)
    if not cfg.suite:
        return
    from formalize import RunCorpusMissing, check_suite_labels, load_suite
    from synth.core import ConfigError

    task_source = "the run config's task.labels"
    check_suite_labels(cfg.suite, cfg.task.labels, task_source=task_source)
    fewshot = [t.name for t in cfg.task_models if t.spec.startswith("fewshot:")]
    if fewshot and cfg.reference.calibration == "batch":
        raise ConfigError(
            f"task model(s) {', '.join(fewshot)} use the reference prompt with batch "
            f"calibration, which verify cannot fit: the suite's cases come batch by batch",
            where="reference.calibration",
            fix="use calibration: contextual (or none), or run without a suite")
    try:
        suite = load_suite(cfg.suite, allow_outside_files=allow_outside_files)
    except RunCorpusMissing:
        return  # it reads a corpus that is yet to be generated: checked when verify runs
    suite.check_labels(cfg.task.labels, task_source=task_source)
    from synthcheck._verify import check_verify_size

    check_verify_size(suite, cfg.verify)


def discover(cfg: RunConfig, run_dir: str | Path, *, n: int | None = None,
             progress: bool = True, log: Callable[[str], None] = print,
             allow_outside_files: bool = False) -> DiscoverResult:
    """Run every stage of ``cfg`` into ``run_dir``, skipping stages that are current.
    Every config error a stage would hit is reported first, with nothing written
    (:func:`check_before_work`). Generation and scoring run on the executor ``cfg.executor``
    names (one for both).

    Args:
        allow_outside_files: let the suite read files outside its folder.

    Raises:
        RunDirError: ``run_dir`` holds a corpus generated with another config.
    """
    from synthcheck._executors import make_executor

    check_before_work(cfg, allow_outside_files=allow_outside_files)  # before any worker starts
    with make_executor(cfg.executor) as executor:
        return _discover(cfg, run_dir, n=n, progress=progress, log=log, executor=executor,
                         allow_outside_files=allow_outside_files)


def _discover(cfg: RunConfig, run_dir: str | Path, *, n: int | None, progress: bool,
              log: Callable[[str], None], executor: Executor,
              allow_outside_files: bool) -> DiscoverResult:
    result = DiscoverResult(Path(run_dir))
    run = RunDir(run_dir)
    built: dict[str, Any] = {}

    lazy = LazyScorers(cfg, built)

    def scorers() -> dict[str, Any]:
        return {t.name: lazy[t.name] for t in cfg.task_models}

    def timed(stage: str, fn: Callable[[], tuple[bool, Any]]) -> Any:
        log(f"[{stage}] ...")
        t0 = time.perf_counter()
        ran, value = fn()
        result.seconds[stage] = round(time.perf_counter() - t0, 2)
        result.stages[stage] = "ran" if ran else "skipped (current)"
        log(f"[{stage}] {result.stages[stage]} in {result.seconds[stage]:.1f}s")
        return value

    def generate() -> tuple[bool, Any]:
        report = run_generation(cfg, run.path, n=n, resume=True, progress=progress,
                                config_dump=cfg.model_dump(mode="json"), executor=executor)
        return bool(report.shards_written), report

    gen = timed("generate", generate)
    result.info["corpus"] = json.loads((run.path / "corpus" / "stats.json").read_text())
    result.info["generate"] = gen

    def stage(fn: Callable[..., dict[str, Any]], **kw: Any) -> Callable[[], Any]:
        def call() -> tuple[bool, Any]:
            out = fn(cfg, run.path, **kw)
            return not out.get("skipped"), out
        return call

    # score_run loads the models itself, and only if some chunk still needs scoring.
    timed("score", stage(score, progress=progress, executor=executor))
    result.info["rank"] = timed("rank", stage(rank))
    result.info["mine"] = timed("mine", stage(mine))
    from synthcheck import _slices

    for name, fn, kw in [("semantic", _slices.semantic, {"progress": progress}),
                         ("metadata", _slices.metadata, {}),
                         ("occlusion", _slices.occlusion, {"task_scorers": scorers})]:
        if getattr(cfg.slices, name).enabled:
            result.info[name] = timed(name, stage(fn, **kw))
        else:  # forgotten in the manifest, so findings and the report ignore an old file
            result.info[name] = fn(cfg, run.path)
            result.stages[name] = f"off (slices.{name}.enabled: false)"
    from synthcheck._focus import focus

    if cfg.focus.enabled:
        result.info["focus"] = timed("focus", stage(focus, progress=progress,
                                                    task_scorers=scorers))
    else:  # forgotten in the manifest, so the report ignores an old focus.jsonl
        result.info["focus"] = focus(cfg, run.path)
        result.stages["focus"] = "off (focus.enabled: false)"
    result.info["findings"] = timed("findings", stage(_slices.findings))
    evaluation = timed("evaluate", lambda: evaluate_stage(cfg, run, lazy, progress))
    reports = result.info["evaluate"] = evaluation["reports"]
    result.info["evaluation"] = evaluation  # with the hard subset's precision
    if cfg.suite:
        from discovery import recall_by_model

        recall = recall_by_model(reports)
        result.info["verify"] = timed("verify", lambda: verify_stage(
            cfg, run, scorers, recall, progress, allow_outside_files=allow_outside_files,
            log=log))
    else:
        result.stages["verify"] = "no suite in the config"

    result.info["report"] = timed("report", lambda: report_stage(run))
    return result


def report_stage_hash(run: RunDir) -> str:
    """Hash of what the report shows: the upstream stages' hashes, the report code's format
    version, and the files that other commands add to a run (review decisions, the summaries
    of every verified suite)."""
    import hashlib

    from synthcheck.report import REPORT_FORMAT

    def digest(path: Path) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None

    return config_hash({
        "format": REPORT_FORMAT,
        "stages": {s: run.stage_hash(s) for s in STAGES if s != "report"},
        "decisions": digest(run.path / "review" / "decisions.jsonl"),
        "verify": {p.parent.name: digest(p)
                   for p in sorted((run.path / "verify").glob("*/summary.json"))},
    })


def report_stage(run: RunDir) -> tuple[bool, Path]:
    """Write report.html and summary.md unless both exist and are current."""
    from synthcheck.report import write_report

    rhash = report_stage_hash(run)
    html = run.path / "report.html"
    if (run.is_current("report", rhash) and html.is_file()
            and (run.path / "summary.md").is_file()):
        return False, html
    path = write_report(run.path)
    run.complete("report", rhash, path=str(path.relative_to(run.path)))
    return True, path
