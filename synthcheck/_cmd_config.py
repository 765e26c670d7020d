"""`synthcheck config`: print the resolved config, or the generated config reference."""

from __future__ import annotations

import argparse

from synthcheck._cli_common import DEFAULT_CONFIG


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("config", help="print the resolved config (or --reference: every field)")
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

    from synth import config_hash
    from synthcheck._config import load_run_config

    cfg = load_run_config(args.config, args.overrides)
    data = cfg.model_dump(mode="json")
    print(f"# config hash {config_hash(data)}")
    print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0
