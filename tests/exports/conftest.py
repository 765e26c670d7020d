"""Exports checked with the real tools (`make test-exports`): Label Studio, the Argilla SDK,
CheckList, AdaTest and Hugging Face `datasets`, each in its own venv because they pin old
dependencies. The tests run in the project's venv and drive each tool through its own
interpreter (``SYNTHCHECK_EXPORTS_PYTHON``, default ``.venv-exports/bin/python``; Label Studio:
``SYNTHCHECK_LABEL_STUDIO``, default ``.venv-ls/bin/label-studio``).

Every test here is marked ``exports``. Where a tool's venv is missing (a plain `make test`),
its tests skip at collection; under ``SYNTHCHECK_EXPORTS_REQUIRED=1`` (set by `make
test-exports`) a missing venv is a failure instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPORTS_PYTHON = Path(os.environ.get("SYNTHCHECK_EXPORTS_PYTHON",
                                     ROOT / ".venv-exports" / "bin" / "python"))
LABEL_STUDIO = Path(os.environ.get("SYNTHCHECK_LABEL_STUDIO",
                                   ROOT / ".venv-ls" / "bin" / "label-studio"))


def need(path: Path, what: str) -> None:
    """Skip (or, under `make test-exports`, fail) when a tool's venv is missing."""
    if path.exists():
        return
    msg = f"{what} is not installed ({path}); run `make test-exports`"
    if os.environ.get("SYNTHCHECK_EXPORTS_REQUIRED") == "1":
        pytest.fail(msg)
    pytest.skip(msg)


def run_tool(code: str, *args: Any, timeout: float = 300) -> Any:
    """Run ``code`` in the tools' interpreter with ``args`` as sys.argv[1:]; it prints one
    JSON document last, which is returned."""
    need(EXPORTS_PYTHON, "the exports venv")
    env = {**os.environ, "ARGILLA_API_URL": "http://127.0.0.1:9", "ARGILLA_API_KEY": "offline",
           "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)  # the tool's own packages, never this project's
    proc = subprocess.run([str(EXPORTS_PYTHON), "-c", code, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        raise AssertionError(f"the tool's script failed ({proc.returncode}):\n"
                             f"{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


__all__ = ["EXPORTS_PYTHON", "LABEL_STUDIO", "ROOT", "need", "run_tool"]
