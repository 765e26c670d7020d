"""The ground floor stays clean under ``mypy --strict`` (pyproject.toml checks it strictly
too), so a loose type slipped into synth.core or synth.engines fails here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is in the dev extra (pip install -e '.[dev]')")
def test_synth_core_and_engines_pass_mypy_strict() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "synth/core",
         "synth/engines"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, "")
