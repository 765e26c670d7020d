"""LLM backends behind one protocol: transformers (``hf``) and vLLM (``vllm``)."""

from __future__ import annotations

from typing import Any

from synth._backends._base import Backend


def make_backend(
    spec: str, *, backend: str = "hf", device: str = "auto", dtype: str = "auto",
    batch_size: int = 32, **kwargs: Any,
) -> Backend:
    """Build a Backend for a model spec: ``hf`` (transformers) or ``vllm``."""
    if backend == "vllm":
        from synth._backends._vllm import VLLMBackend

        return VLLMBackend.from_spec(spec, dtype=dtype)
    if backend == "hf":
        from synth._backends._hf import HFBackend
        from synth._models import load_hf_causal_lm

        model, tokenizer = load_hf_causal_lm(spec, device=device, dtype=dtype)
        return HFBackend(model, tokenizer, batch_size=batch_size, **kwargs)
    from synth._errors import ConfigError
    from synth._registry import did_you_mean

    raise ConfigError(f"unknown backend {backend!r}", fix=did_you_mean(backend, ["hf", "vllm"]))
