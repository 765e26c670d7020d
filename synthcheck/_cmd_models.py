"""`synthcheck models`: list model specs and whether each resolves here."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("models", help="list the model specs and whether each resolves here",
                       description="List the model spec schemes (generator, reference and "
                                   "task models) and the packaged models, and say whether each "
                                   "can be loaded on this machine (nothing is downloaded).")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from discovery import task_model_availability
    from synth.engines import model_availability

    rows = model_availability()
    # synth cannot import discovery: its task-model schemes go before the backend rows.
    at = next((i for i, r in enumerate(rows) if r["spec"].startswith("backend:")), len(rows))
    rows[at:at] = task_model_availability()
    width = max(len(r["spec"]) for r in rows)
    for row in rows:
        mark = "yes" if row["available"] else "no "
        print(f"{row['spec']:<{width}}  {mark}  {row['detail']}")
    return 0
