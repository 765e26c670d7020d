"""LLM engines behind one ``Backend`` protocol, the model specs they load, and a registry.

``make_backend(spec, backend="hf")`` builds an engine by its registered name; model specs
(``packaged:NAME``, ``hf:ID_OR_PATH``) are resolved by ``resolve_model_path`` with the
GGUF conversion cached once per machine.
"""

from synth.engines._base import Backend, Generation
from synth.engines._hf import HFBackend
from synth.engines._models import (
    PACKAGED_MODELS,
    clear_model_cache,
    load_hf_causal_lm,
    load_hf_model,
    looks_like_path,
    model_availability,
    packaged_gguf_path,
    resolve_device,
    resolve_model_path,
    split_spec,
)
from synth.engines._planner import ALIGN_SCHEME, PrefixAlignment
from synth.engines._registry import ENGINES, make_backend
from synth.engines._sampling import SamplingConfig
from synth.engines._vllm import VLLMBackend

__all__ = [
    "ALIGN_SCHEME",
    "ENGINES",
    "PACKAGED_MODELS",
    "PrefixAlignment",
    "Backend",
    "Generation",
    "HFBackend",
    "SamplingConfig",
    "VLLMBackend",
    "clear_model_cache",
    "load_hf_causal_lm",
    "load_hf_model",
    "looks_like_path",
    "make_backend",
    "model_availability",
    "packaged_gguf_path",
    "resolve_device",
    "resolve_model_path",
    "split_spec",
]
