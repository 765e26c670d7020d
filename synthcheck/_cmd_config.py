"""`synthcheck config`: print the resolved config, or the generated config reference."""

from __future__ import annotations

import argparse

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
    for line in hash_lines(cfg):
        print(f"# {line}")
    print(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), end="")
    return 0


def hash_lines(cfg: RunConfig) -> list[str]:
    """The hashes a run of ``cfg`` records in its manifest.json, labelled: the generation
    hash (``config_hash``) and the stage hashes that need no run directory."""
    from synth import generation_config_hash
    from synthcheck._pipeline import evaluate_stage_hash, verify_stage_hash

    lines = [f"generation hash (manifest.json config_hash): {generation_config_hash(cfg)}",
             f"evaluate stage hash (stage_hashes.evaluate): {evaluate_stage_hash(cfg)}"]
    if cfg.suite:
        from formalize import load_suite
        from synth.core import SynthcheckError

        try:
            vhash = verify_stage_hash(cfg, load_suite(cfg.suite))
        except SynthcheckError as exc:  # the config is still worth printing
            vhash = f"unavailable: the suite does not load ({exc.format()})"
        lines.append(f"verify stage hash (stage_hashes.verify): {vhash}")
    lines.append("score, rank and mine stage hashes depend on the generated corpus "
                 "(see a run's manifest.json)")
    return lines
