"""Arguments and helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


def fraction(text: str) -> float:
    """argparse type of a rate flag: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}")
    return value


def add_config_args(p: argparse.ArgumentParser, *, run_required: bool = True) -> None:
    """Add ``--config``, ``-P key=value`` and ``--run`` to a command's parser."""
    p.add_argument("--config", "-c", default=DEFAULT_CONFIG,
                   help=f"run config YAML (default: {DEFAULT_CONFIG})")
    p.add_argument("-P", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config field, e.g. -P generator.sampling.top_p=0.95")
    p.add_argument("--run", required=run_required, type=Path, metavar="DIR",
                   help=("run directory for outputs, e.g. runs/NAME (required)" if run_required
                         else "run directory for outputs, e.g. runs/NAME"))
    p.add_argument("--no-progress", "--quiet", "-q", dest="quiet", action="store_true",
                   help="no progress bars (they are drawn only when stderr is a terminal)")


def add_allow_outside_files(p: argparse.ArgumentParser) -> None:
    """Add ``--allow-outside-files``: let a suite read files outside its own folder."""
    p.add_argument("--allow-outside-files", action="store_true",
                   help="let the suite read lexicon and text files outside its own folder "
                        "(absolute paths or '..'); by default they are refused")


Flag = str | tuple[str, Any]
"""Where a flag goes in the run config: a dotted key (the flag's value is set there), or
``(dotted key, value)`` for a switch (``value`` is set when the switch is on)."""


def flag_overrides(args: argparse.Namespace, flags: Mapping[str, Flag]) -> list[str]:
    """The one way a CLI flag becomes config: ``-P key=value`` overrides for the ``flags``
    (argparse dest -> :data:`Flag`) that were given, in ``flags`` order. Applied after the
    user's own ``-P``, so a flag wins over a ``-P`` of the same key."""
    out: list[str] = []
    for dest, target in flags.items():
        given = getattr(args, dest, None)
        if given is None or given is False:
            continue
        key, value = target if isinstance(target, tuple) else (target, given)
        out.append(f"{key}={json.dumps(value)}")  # JSON is YAML: read back as the same value
    return out


def load_args_config(args: argparse.Namespace,
                     flags: Mapping[str, Flag] | None = None) -> RunConfig:
    """Load the config named by ``--config`` with the ``-P`` overrides and then the
    ``flags`` that were given (see :func:`flag_overrides`) applied."""
    return load_run_config(args.config, [*args.overrides, *flag_overrides(args, flags or {})])


def warn_if_shots_off_domain(cfg: RunConfig) -> None:
    """Print ``warning: the reference shots look off-domain for this corpus (...)`` to stderr
    when the reference's shots (the first ``reference.k``) share far less vocabulary with the
    seed corpus than the corpus shares with itself (:func:`discovery.shot_domain_check`).
    A seed corpus that cannot be read is left to the stage that reads it: no warning here."""
    from discovery import shot_domain_check
    from synth import load_seed_corpus
    from synth.core import SynthcheckError

    try:
        docs = load_seed_corpus(cfg.corpus)
    except SynthcheckError:
        return
    ref = cfg.reference
    shots = ref.shots if ref.k is None else ref.shots[:ref.k]
    check = shot_domain_check([s.text for s in shots], [d.text for d in docs])
    if check is not None and check.off_domain:
        print(check.warning(cfg.corpus.source), file=sys.stderr, flush=True)
