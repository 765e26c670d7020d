"""Arguments and helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthcheck._config import RunConfig, load_run_config

DEFAULT_CONFIG = "configs/sentiment.yaml"


def positive_int(text: str) -> int:
    """argparse type of a count flag: an integer >= 1 (argparse names the flag in its error,
    ``argument --sample: must be a positive integer, got '0'``, and exits with status 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def add_config_args(p: argparse.ArgumentParser, *, run_required: bool = True) -> None:
    """Add ``--config``, ``-P key=value`` and ``--run`` to a command's parser."""
    p.add_argument("--config", "-c", default=DEFAULT_CONFIG,
                   help=f"run config YAML (default: {DEFAULT_CONFIG})")
    p.add_argument("-P", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config field, e.g. -P generator.sampling.top_p=0.95")
    p.add_argument("--run", required=run_required, type=Path, metavar="DIR",
                   help="run directory for outputs (runs/<name>)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def load_args_config(args: argparse.Namespace) -> RunConfig:
    """Load the config named by ``--config`` with the ``-P`` overrides applied."""
    return load_run_config(args.config, args.overrides)
