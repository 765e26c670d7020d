"""`synthcheck config`: print the resolved config, or the generated config reference."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthcheck._cli_common import DEFAULT_CONFIG
from synthcheck._config import RunConfig


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("config", help="print the resolved config (or --reference: every field)",
                       description="Print the run config with defaults filled in and -P "
                                   "overrides applied, as YAML (or, with --reference, the "
                                   "Markdown reference of every config field).")
    p.add_argument("--config", "-c", default=DEFAULT_CONFIG, help="run config YAML")
    p.add_argument("-P", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config field")
    p.add_argument("--run", help="a run directory: also print the stage hashes that depend "
                                 "on its corpus (score, rank, mine, focus, report)")
    p.add_argument("--reference", action="store_true",
                   help="print the Markdown reference of every config field instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.reference:
        from synthcheck._config_reference import config_reference

        print(config_reference(), end="")
        return 0
    import yaml

    from synthcheck._config import load_run_config

    cfg = load_run_config(args.config, args.overrides)
    if args.run is not None and not Path(args.run).is_dir():
        from synth.core import RunDirError

        raise RunDirError("not a run directory", where=f"--run {args.run}",
                          fix="give the directory a `synthcheck discover` or `generate` run "
                              "wrote, or leave out --run")
    for line in hash_lines(cfg, args.run):
        print(f"# {line}")
    print(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), end="")
    return 0


def hash_lines(cfg: RunConfig, run_dir: str | None = None) -> list[str]:
    """The hashes a run of ``cfg`` records in its manifest.json, one line per stage of
    :data:`synthcheck.stages.STAGES`, labelled: the generation hash (``config_hash``), then
    each stage hash; those that depend on a run directory's contents (the corpus, the
    review decisions) are computed on ``run_dir`` when given."""
    from synth.core import SynthcheckError
    from synthcheck.stages import STAGES, hash_of

    of = hash_of(cfg, run_dir)
    lines = []
    for stage in STAGES:
        off = stage.off(stage.sections(cfg))
        try:
            value = off if off is not None else of(stage.name)
        except SynthcheckError as exc:  # the config is still worth printing
            value = f"unavailable ({exc.format()})"
        if value is None:
            value = "needs a run's corpus (pass --run DIR)" if run_dir is None else \
                "unavailable (the run has no corpus)"
        where = "manifest.json config_hash" if stage.name == "generate" else \
            f"stage_hashes.{stage.name}"
        label = "generation hash" if stage.name == "generate" else f"{stage.name} stage hash"
        lines.append(f"{label} ({where}): {value}")
    return lines
