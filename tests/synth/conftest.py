"""Stage-1 fixtures: a tiny Llama saved as a transformers folder, small corpora, a fake backend
(the builders live in tests/synth/synth_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.synth.fakes import FakeBackend
from tests.synth.synth_fixtures import DOCS


@pytest.fixture(scope="session")
def tiny_llama_dir(tiny_dir: Path) -> Path:
    """The session's tiny Llama folder (tests/conftest.py), under the stage-1 tests' name."""
    return tiny_dir


@pytest.fixture(scope="session")
def tiny_backend(tiny_llama_dir: Path):
    from synth import sentence_done
    from synth.engines import HFBackend, load_hf_causal_lm

    model, tokenizer = load_hf_causal_lm(f"hf:{tiny_llama_dir}", device="cpu")
    return HFBackend(model, tokenizer, batch_size=4, sentence_done=sentence_done)


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in DOCS), encoding="utf-8")
    return path


@pytest.fixture
def fake_backend() -> FakeBackend:
    return FakeBackend()
