"""Fixtures: tiny models and tokenizers built in memory (no downloads), defined once in
tests/synth/engines/engine_fixtures.py and shared with the engine tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "synth" / "engines"))

from engine_fixtures import tiny_llama, tiny_tokenizer  # noqa: E402, F401 - the fixtures
