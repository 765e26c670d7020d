"""The tiny Llama and tokenizer the engine tests score with, built in memory (no downloads);
the same builders the discovery tests use (tests/discovery/discovery_fixtures.py).
Import the fixtures into a test module: ``from engine_fixtures import tiny_llama, ...``."""

from __future__ import annotations

import pytest

from tests.discovery.discovery_fixtures import make_llama, make_tokenizer  # noqa: E402


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return make_tokenizer()


@pytest.fixture(scope="session")
def tiny_llama(tiny_tokenizer):
    return make_llama(len(tiny_tokenizer))
