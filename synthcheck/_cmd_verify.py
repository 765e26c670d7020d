"""`synthcheck verify`: run a suite against one or more task models."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery import EVAL
from formalize import VERIFY, VERIFY_CASES
from synthcheck._cli_common import add_allow_outside_files, flag_overrides, fraction, positive_int
from synthcheck._config import RunConfig

if TYPE_CHECKING:
    from discovery import TaskModelConfig

# The flags that override the config's verify: section (the one way flags become config).
VERIFY_FLAGS = {"sample": "verify.sample", "seed": "verify.seed",
                "max_cases": "verify.max_cases", "batch_size": "verify.batch_size"}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "verify", help="run a test suite against task models, side by side",
        description="Expand a suite, score it with every task model and write verify/<suite>/ "
                    "under the run directory. The suite, its labels against the config's task, the "
                    "case limit and a --recall file are checked before any model is loaded; "
                    "nothing is written until every case is scored. Exit status 1 when a "
                    "test's fail rate is above its gate (--max-fail-rate, or the test's "
                    "max_fail_rate in the suite).")
    p.add_argument("--suite", default=None,
                   help="suite YAML (e.g. configs/suites/sentiment.yaml; default: the "
                        "config's suite)")
    p.add_argument("--model", action="append", default=None, metavar="SPEC",
                   help="task model spec (repeat for several): demo:sentiment, sklearn:PATH, "
                        "python:MOD:FN, hf:PATH, fewshot:packaged:smollm2-135m-instruct "
                        "(default: the config's task_models)")
    p.add_argument("--label-map", default=None, metavar="MODEL=TASK,...",
                   help="rename the --model outputs' labels to the suite's, e.g. "
                        "LABEL_0=negative,LABEL_1=positive (or 0=negative,1=positive)")
    p.add_argument("--trusted-types", default=None, metavar="TYPE,...",
                   help="extra types a --model sklearn: .skops file may hold, comma-separated "
                        "(only for a file you trust; scikit-learn's own types, "
                        "CalibratedClassifierCV's included, are trusted already); a type "
                        "that can run code (posix.system, builtins.eval, functools.partial...) "
                        "also needs --allow-unsafe-types")
    p.add_argument("--allow-unsafe-types", action="store_true",
                   help="UNSAFE: accept --trusted-types that can run code on this machine "
                        "(only for a .skops file you made yourself; a safe model file never "
                        "needs them)")
    p.add_argument("--config", "-c", default=None, metavar="C",
                   help="run config: the suite's labels must be its task.labels; supplies "
                        "the task models, the suite and the held-out data when not given")
    p.add_argument("-P", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one field of --config, e.g. -P evaluation.size=200")
    p.add_argument("--run", required=True, metavar="DIR",
                   help="run directory; writes verify/<suite>/ (required)")
    # Each of these overrides the config's verify: section (default: that section's value).
    p.add_argument("--sample", type=positive_int, default=None,
                   help="fills drawn per templated test (default: verify.sample, else all)")
    p.add_argument("--seed", type=int, default=None,
                   help="suite seed of the fills drawn (default: verify.seed, else the "
                        "suite's seed)")
    p.add_argument("--max-cases", type=positive_int, default=None,
                   help="case limit (default: verify.max_cases, else the suite's)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="texts per model call (default: verify.batch_size, 64)")
    held = p.add_mutually_exclusive_group()
    held.add_argument("--heldout", nargs="?", const="", default=None, metavar="DATA",
                      help="measure each model's held-out per-class recall and show it beside "
                           "its results: on DATA (a labeled .jsonl/.csv with text,label), or "
                           "without DATA on the config's evaluation.data (default: the "
                           "packaged Rotten Tomatoes held-out split, 500 sentences)")
    held.add_argument("--recall", default=None, metavar="JSON",
                      help="held-out recall already measured: the eval.json that "
                           "'synthcheck evaluate --run DIR' and 'discover' write, a run "
                           "directory holding one, or {model: {label: recall}}")
    add_allow_outside_files(p)
    p.add_argument("--no-progress", "--quiet", "-q", dest="quiet", action="store_true",
                   help="no progress bars (they are drawn only when stderr is a terminal)")
    gates = p.add_argument_group("CI gates")
    gates.add_argument("--max-fail-rate", type=fraction, default=None, metavar="R",
                       help="exit 1 when a model's fail rate on a test is above R (0-1); a "
                            "test's own max_fail_rate in the suite wins")
    gates.add_argument("--junit", type=Path, default=None, metavar="PATH",
                       help="write JUnit XML: one testcase per suite test and model, failures "
                            "with the worst examples")
    gates.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                       help="write a Markdown summary for a pull request")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import load_suite
    from synth.core import ConfigError, RunDir, check_outputs
    from synthcheck._pipeline import check_corpus_config, verify_stage_hash
    from synthcheck._verify import check_verify_size, run_verify

    _check_trust_flags(args)
    # Before any scoring: a bad path never costs the verify's work.
    check_outputs([(flag, path) for flag, path in (("--junit", args.junit),
                                                     ("--markdown", args.markdown))
                   if path is not None], run=args.run)
    cfg = _config(args)
    suite_path = args.suite or (cfg.suite if cfg is not None else None)
    if suite_path is None:
        raise ConfigError("no suite to verify", where="--suite",
                          fix="pass --suite S, or a --config whose 'suite:' names one")
    run_dir = RunDir(args.run)  # refuses a file
    if cfg is not None:  # a run made with another config is refused, as by `discover`
        check_corpus_config(cfg, run_dir.path)
    suite = load_suite(suite_path, allow_outside_files=args.allow_outside_files)
    # Without --config the defaults, with the suite's labels, stand in for the sections
    # verify reads.
    base = cfg if cfg is not None else _defaults(
        [*flag_overrides(args, VERIFY_FLAGS), f"task.labels={json.dumps(list(suite.labels))}"])
    v = base.verify
    if cfg is not None:
        suite.check_labels(cfg.task.labels, task_source=f"config {args.config}, task.labels")
    # Sample tests over the per-test cap, refuse an oversized expansion: before any model.
    total, plan = check_verify_size(suite, v)
    for name, p in plan.items():
        print(p.note(name), file=sys.stderr)
    specs = _model_specs(args, cfg)
    recall = read_recall(args.recall, list(specs), suite.labels, cfg) if args.recall else None
    label_map = parse_label_map(args.label_map) if args.label_map else None
    if label_map is not None and not args.model:
        raise ConfigError("--label-map renames the labels of --model specs", where="--label-map",
                          fix="pass --model SPEC, or set label_map on the config's task model")
    scorers = _load_scorers(args, cfg, specs, suite.labels, label_map)
    if args.heldout is not None:
        recall = heldout_recall(cfg, scorers, suite.labels, args.heldout or None,
                                progress=not args.quiet)
    out = VERIFY.path(run_dir.path, suite=suite.name)
    if run_dir.path.is_dir() and any(out.rglob(".*.tmp")):
        run_dir.clean_stale_temp()  # temp files a killed verify left (of writers now gone)
    print(f"verify: suite {suite.name!r}, up to {total:,} cases, {len(scorers)} model(s)")
    chash = verify_stage_hash(base, suite, task_models=_task_models(args, cfg, specs))
    result, paths = run_verify(suite, scorers, v, out, chash, recall, progress=not args.quiet)
    print(result.format_table())
    print()
    print(f"wrote {out / VERIFY_CASES.name}")
    for path in paths:
        print(f"wrote {path}")
    return _gate(args, suite, result)


def _gate(args: argparse.Namespace, suite: Any, result: Any) -> int:
    """Apply the CI gates, write --junit/--markdown; 1 when a gate is exceeded."""
    from synthcheck._gates import apply_gates

    failed = apply_gates(suite, result, args.max_fail_rate, junit=args.junit,
                         markdown=args.markdown)
    for path in (args.junit, args.markdown):
        if path is not None:
            print(f"wrote {path}")
    for r in failed:
        print(f"gate exceeded: {r.test} [{r.model}] fail rate {r.fail_rate:.3f} > {r.gate:g}",
              file=sys.stderr)
    return 1 if failed else 0


def _defaults(overrides: Sequence[str]) -> RunConfig:
    """The default run config with ``overrides`` (from flags) applied."""
    from pydantic import ValidationError

    from synth.core import apply_overrides, validation_to_config_error

    try:
        return RunConfig.model_validate(apply_overrides({}, overrides))
    except ValidationError as exc:
        raise validation_to_config_error(exc, "the command line") from None


def _config(args: argparse.Namespace) -> RunConfig | None:
    """The ``--config`` run config with ``-P`` and then the verify flags applied (None
    without ``--config``)."""
    from synth.core import ConfigError

    if args.config is None:
        if args.overrides:
            raise ConfigError("-P overrides need a --config", where="-P",
                              fix="pass --config C, or leave out -P")
        return None
    from synthcheck._config import load_run_config

    return load_run_config(args.config, [*args.overrides, *flag_overrides(args, VERIFY_FLAGS)])


def _task_models(args: argparse.Namespace, cfg: RunConfig | None, specs: Mapping[str, str]
                 ) -> list[TaskModelConfig]:
    """The task models being verified: the config's, or one per ``--model`` spec, named by
    the spec itself (as in every output; a spec is not a file-safe name, so it is not
    validated as one)."""
    from discovery import TaskModelConfig

    if cfg is not None and not args.model:
        return list(cfg.task_models)
    return [TaskModelConfig.model_construct(name=name, spec=spec) for name, spec in specs.items()]


def _model_specs(args: argparse.Namespace, cfg: RunConfig | None) -> dict[str, str]:
    """Model name -> spec: ``--model`` specs are named by themselves, the config's task
    models by their names."""
    from synth.core import ConfigError

    if args.model:
        return {spec: spec for spec in args.model}
    if cfg is None:
        raise ConfigError("no task model to verify", where="--model",
                          fix="pass --model SPEC (repeat for several), or --config C to use "
                              "its task_models")
    return {t.name: t.spec for t in cfg.task_models}


def parse_label_map(text: str) -> dict[str, str]:
    """``A=neg,B=pos`` -> ``{"A": "neg", "B": "pos"}``.

    Raises:
        ConfigError: an entry without ``=``, an empty side or a repeated model label.
    """
    from synth.core import ConfigError

    out: dict[str, str] = {}
    for part in text.split(","):
        model, sep, task = (s.strip() for s in part.partition("="))
        if not sep or not model or not task or model in out:
            raise ConfigError(f"bad --label-map entry {part.strip()!r}", where="--label-map",
                              fix="write MODEL_LABEL=TASK_LABEL pairs separated by commas, "
                                  "each model label once, e.g. LABEL_0=negative,LABEL_1=positive")
        out[model] = task
    return out


def _check_trust_flags(args: argparse.Namespace) -> None:
    """Refuse the trust flags where they do nothing, and an unsafe type without
    ``--allow-unsafe-types``, before anything is loaded."""
    from discovery import check_trusted_types
    from synth.core import ConfigError

    trusted = [t.strip() for t in (args.trusted_types or "").split(",") if t.strip()]
    if args.trusted_types is not None and not any(m.startswith("sklearn:")
                                                  for m in args.model or ()):
        raise ConfigError("--trusted-types does nothing here: it applies to a --model "
                          "sklearn:FILE.skops", where=f"--trusted-types {args.trusted_types}",
                          fix="pass --model sklearn:FILE.skops, or set trusted_types on the "
                              "config's task model (task_models[i].trusted_types)")
    if args.allow_unsafe_types and not trusted:
        raise ConfigError("--allow-unsafe-types does nothing without --trusted-types",
                          where="--allow-unsafe-types", fix="remove it")
    check_trusted_types(trusted, args.allow_unsafe_types, f"--trusted-types {args.trusted_types}")


def _load_scorers(args: argparse.Namespace, cfg: RunConfig | None, specs: Mapping[str, str],
                  labels: list[str], label_map: Mapping[str, str] | None = None
                  ) -> dict[str, Any]:
    if cfg is not None and not args.model:
        from synthcheck._pipeline import build_scorers

        return build_scorers(cfg)
    from discovery import SklearnScorer, load_task_scorer

    # With a config, a --model spec gets what its task models get: the reference prompt
    # (fewshot:) and the evaluation split (demo: trains on its train side, so --heldout on
    # the config's held-out side does not overlap it).
    reference = cfg.reference if cfg is not None else None
    evaluation = cfg.evaluation if cfg is not None else None
    from synth.core import ConfigError

    trusted = [t.strip() for t in (args.trusted_types or "").split(",") if t.strip()]
    # Labels come from the suite; each model is named by its spec in every output.
    scorers = {}
    for name, spec in specs.items():
        try:
            scorers[name] = load_task_scorer(spec, labels, name=name, reference=reference,
                                             evaluation=evaluation, label_map=label_map,
                                             trusted_types=trusted,
                                             allow_unsafe_types=args.allow_unsafe_types)
        except ConfigError as exc:
            if not exc.fix or not exc.fix.startswith("add label_map to the task model's config"):
                raise
            # On the command line the fix is the flag, not a config field.
            pairs = exc.fix.split("label_map: {", 1)[1].rstrip("}").split(", ")
            raise ConfigError(exc.what, where=exc.where,
                              fix="pass --label-map "
                                  + ",".join(p.replace(": ", "=") for p in pairs)
                                  + " (model label=suite label, for each model label)") from None
    for name, scorer in scorers.items():
        if isinstance(scorer, SklearnScorer) and scorer.uncalibrated:
            print(f"note: {name} has no predict_proba; its probabilities are the "
                  f"{scorer.probability}", file=sys.stderr)
    return scorers


def heldout_recall(cfg: RunConfig | None, scorers: Mapping[str, Any], labels: Sequence[str],
                   data: str | None, *, progress: bool = True) -> dict[str, dict[str, float]]:
    """Each model's per-class recall on held-out labeled data, measured with discovery's
    ``evaluate`` (the reference is not evaluated): ``data`` or the config's evaluation set;
    the task's labels are the config's, else the suite's ``labels``."""
    from discovery import EvaluationConfig, evaluate, format_reports, recall_by_model
    from synth.core import LabelSpace

    ev = cfg.evaluation if cfg is not None else EvaluationConfig.model_validate({})
    space = cfg.task.label_space if cfg is not None else LabelSpace.of(labels)
    size = f", a stratified sample of at most {ev.size} examples" if ev.size else ""
    print(f"held-out evaluation on {data or ev.data}{size}")
    reports = evaluate(space, ev.model_copy(update={"include_reference": False}), data,
                       scorers=scorers, progress=progress,
                       corpus=cfg.corpus if cfg is not None else None)
    print(format_reports(reports, space.list))
    return recall_by_model(reports)


def read_recall(path_arg: str, models: Sequence[str], labels: Sequence[str],
                cfg: RunConfig | None = None) -> dict[str, dict[str, float]]:
    """Read held-out recall for the models being verified.

    Accepts ``{model: {label: recall}}``, or the ``eval.json`` that ``synthcheck evaluate
    --run DIR`` and ``discover`` write (``{"reports": {model: {"per_class": {label:
    {"recall": r}}}}}``), or a run directory holding one.
    Reports are named by the config's task-model names; with ``cfg`` they are also matched
    to ``--model`` specs through its ``task_models``. Models that are not being verified
    (the reference) are left out.

    Raises:
        DataError: unreadable file, wrong shape, an unknown label, or no model in common.
    """
    from synth.core import DataError, read_text

    path = Path(path_arg)
    if path.is_dir():
        if not EVAL.exists(path):
            raise DataError("no eval.json in the run directory",
                            where=str(path), fix="run synthcheck evaluate --run DIR (or "
                                                 "discover), or use --heldout")
        path = EVAL.path(path)
    shape = "a JSON file {model: {label: recall}}, or the eval.json a run wrote"
    try:
        data = json.loads(read_text(path, kind="the held-out recall file"))
    except DataError as exc:  # not UTF-8: names the byte offset
        raise DataError(exc.what, where=exc.where, fix=f"give {shape}") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise DataError(f"cannot read held-out recall: {exc}", where=str(path),
                        fix=f"give {shape}") from None
    if isinstance(data, dict) and isinstance(data.get("reports"), dict):
        try:
            data = {name: {lab: c["recall"] for lab, c in rep["per_class"].items()}
                    for name, rep in data["reports"].items()}
        except (KeyError, TypeError, AttributeError):
            raise DataError("an evaluation report has no per_class recall", where=str(path),
                            fix=f"give {shape}") from None
    if not isinstance(data, dict) or not all(
            isinstance(per, dict) and all(isinstance(r, int | float) for r in per.values())
            for per in data.values()):
        raise DataError("held-out recall has the wrong shape", where=str(path), fix=f"give {shape}")
    if cfg is not None:  # config names -> the specs that --model passed
        for t in cfg.task_models:
            if t.name in data and t.spec in models and t.spec not in data:
                data[t.spec] = data[t.name]
    recall = {m: {lab: float(r) for lab, r in data[m].items()} for m in models if m in data}
    if not recall:
        named = ", ".join(sorted(data)) or "none"
        raise DataError(f"held-out recall names no model being verified (it has: {named}; "
                        f"verifying: {', '.join(models)})", where=str(path),
                        fix="key it by the --model specs, or pass the --config that named the "
                            "models (its task_models' names)")
    for m, per in recall.items():
        unknown = [lab for lab in per if lab not in labels]
        if unknown:
            raise DataError(f"held-out recall of {m!r} has label {unknown[0]!r}, not one of "
                            f"the suite's ({', '.join(labels)})", where=str(path),
                            fix="measure recall on the suite's task")
    return recall
