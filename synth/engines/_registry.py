"""The engine registry: engine name -> Backend class (lazy ``"module:Class"`` entries).

A new engine is one module with a class that implements ``Backend`` and a classmethod
``from_spec(spec, *, device, dtype, batch_size, **kwargs)``, plus one entry here.
"""

from __future__ import annotations

from typing import Any

from synth.core._registry import Registry
from synth.engines._base import Backend

ENGINES: Registry[Any] = Registry("engine", {
    "hf": "synth.engines._hf:HFBackend",
    "vllm": "synth.engines._vllm:VLLMBackend",
})


def make_backend(
    spec: str, *, backend: str = "hf", device: str = "auto", dtype: str = "auto",
    batch_size: int = 32, **kwargs: Any,
) -> Backend:
    """Build the Backend registered as ``backend`` for the model ``spec``."""
    cls = ENGINES.get(backend)
    engine: Backend = cls.from_spec(spec, device=device, dtype=dtype, batch_size=batch_size,
                                    **kwargs)
    return engine
