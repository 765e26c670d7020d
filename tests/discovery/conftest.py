"""Fixtures: tiny models and tokenizers built in memory (no downloads), defined once in
tests/synth/engines/engine_fixtures.py and shared with the engine tests."""

from __future__ import annotations

from tests.synth.engines.engine_fixtures import tiny_llama, tiny_tokenizer  # noqa: E402, F401 - the fixtures
