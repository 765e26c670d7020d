"""Fixtures: tiny models and tokenizers built in memory (no downloads)."""

from __future__ import annotations

import pytest
from discovery_fixtures import make_llama, make_tokenizer


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return make_tokenizer()


@pytest.fixture(scope="session")
def tiny_llama(tiny_tokenizer):
    return make_llama(len(tiny_tokenizer))
