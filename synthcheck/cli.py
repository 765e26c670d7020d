"""The ``synthcheck`` command line.

Each command lives in its own ``synthcheck._cmd_*`` module exposing ``add_parser(sub)``
(which sets ``func``); heavy imports stay inside the command functions so that
``synthcheck --help`` and ``synthcheck validate`` are fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from synth.core import SynthcheckError

# Order is the order of `synthcheck --help`.
COMMAND_MODULES = [
    "synthcheck._cmd_discover",
    "synthcheck._cmd_generate",
    "synthcheck._cmd_models",
    "synthcheck._cmd_config",
    "synthcheck._cmd_stage2",
    "synthcheck._cmd_evaluate",
    "synthcheck._cmd_validate",
    "synthcheck._cmd_verify",
    "synthcheck._cmd_diff",
    "synthcheck._cmd_export",
    "synthcheck._cmd_import",
    "synthcheck._cmd_report",
    "synthcheck._cmd_propose",
    "synthcheck._cmd_annotate",
]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every command registered."""
    parser = argparse.ArgumentParser(
        prog="synthcheck",
        description="Find where text classifiers fail, and turn the findings into tests.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


@contextlib.contextmanager
def _library_bars(quiet: bool) -> Iterator[None]:
    """Hide transformers' and huggingface_hub's own bars ("Loading weights") for one
    command when it is quiet (``-q``) or draws no bars (stderr is not a terminal), and
    restore them after: the libraries read ``HF_HUB_DISABLE_PROGRESS_BARS`` when imported,
    and an imported transformers is switched off and on again."""
    from synth.core import progress_enabled

    if not quiet and progress_enabled():
        yield
        return
    env = os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    tf_logging: Any = sys.modules.get("transformers.utils.logging")
    if not hasattr(tf_logging, "is_progress_bar_enabled"):
        tf_logging = None
    was_on = bool(tf_logging is not None and tf_logging.is_progress_bar_enabled())
    if was_on:
        tf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if env is None:
            os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
        else:
            os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = env
        if was_on:
            tf_logging.enable_progress_bar()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (2 for user errors, printed without a traceback)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from synth.core import package_version

        print(f"synthcheck {package_version()}")
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with _visible_output(), _config_warnings():
        return _run(args)


@contextlib.contextmanager
def _config_warnings() -> Iterator[None]:
    """A moved config field (:class:`synth.core.ConfigDeprecation`) prints as
    ``warning: <field> is deprecated (<where>): <fix>``, each time a config is loaded; other
    warnings show as Python shows them."""
    import warnings

    from synth.core import ConfigDeprecation

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        if isinstance(message, ConfigDeprecation):
            print(f"warning: {message}", file=sys.stderr, flush=True)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always", ConfigDeprecation)
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _visible_output() -> Iterator[None]:
    """Everything a command prints goes through one sanitiser (:func:`synth.core.visible`):
    a corpus sentence or an n-gram holding ESC, BEL, backspace or a bidi override shows
    them as escapes and never acts on the terminal. stdout keeps line breaks and tabs;
    stderr also a progress bar's carriage return and cursor-up (``ESC [A``)."""
    from synth.core import VisibleStream

    out, err = sys.stdout, sys.stderr
    sys.stdout = VisibleStream(out)  # type: ignore[assignment]
    sys.stderr = VisibleStream(err, keep="\n\t\r", allowed=("\x1b[A",))  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _run(args: argparse.Namespace) -> int:
    try:
        with _library_bars(getattr(args, "quiet", False)):
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # `synthcheck config | head`: the reader has gone; later writes (and the flush at
        # exit) go to /dev/null instead of raising again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141  # 128 + SIGPIPE, as a process killed by SIGPIPE reports
    except SynthcheckError as exc:
        print(f"error: {exc.format()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted; finished shards are kept (rerun with --resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
