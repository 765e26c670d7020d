"""Real vLLM (the CPU or CUDA build) on the packaged SmolLM2: run with `make test-vllm`.

Every test here is marked ``vllm``; where vLLM is not importable (the normal `make test`
venv) the modules skip at collection, so they never count as failures.
"""

from __future__ import annotations

import os

import pytest

MODEL = "packaged:smollm2-135m-instruct"

# A small KV cache: the tests hold one engine and start a few short-lived ones.
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


@pytest.fixture(scope="session")
def vllm_backend():
    """One real engine for the session (float32 on CPU, see ``engine_arguments``)."""
    from synth.engines import VLLMBackend

    return VLLMBackend.from_spec(MODEL)
