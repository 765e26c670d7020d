"""The engine registry: engine name -> Backend class (lazy ``"module:Class"`` entries) and
what the rest of the code may assume about it (:class:`EngineCaps`).

A new engine is one module with a class that implements ``Backend`` and a classmethod
``from_spec(spec, *, device, dtype, batch_size, **kwargs)``, plus one entry here (its
capabilities are keyword arguments of :meth:`EngineRegistry.register`); configs name it in
``generator.backend`` / ``reference.backend``, checked against :data:`ENGINES` (an unknown
name gets "did you mean").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synth.core._errors import ConfigError
from synth.core._registry import Registry, did_you_mean
from synth.engines._base import Backend


@dataclass(frozen=True)
class EngineCaps:
    """What an engine offers beyond the ``Backend`` protocol.

    Attributes:
        prefix_align: the multiple of tokens ``reference.align_prefix: auto`` pads the
            few-shot prefix to (vLLM's prefix cache reuses whole blocks; 0: none).
        sentence_done: ``from_spec`` takes ``sentence_done`` (a text -> bool check), so
            generation stops a row as soon as its first sentence ended.
        requires: the Python module it needs beyond the base install (None: none), and
            ``install``: the command that installs it (``synthcheck models`` lists both).
    """

    prefix_align: int = 0
    sentence_done: bool = False
    requires: str | None = None
    install: str = ""


class EngineRegistry(Registry[Any]):
    """A :class:`~synth.core.Registry` of engines whose entries carry :class:`EngineCaps`."""

    def __init__(self) -> None:
        super().__init__("engine")
        self._caps: dict[str, EngineCaps] = {}

    def register(self, name: str, target: str, **caps: Any) -> None:
        """Add (or replace) engine ``name`` -> ``"module:Class"`` with its capabilities."""
        super().register(name, target)
        self._caps[name] = EngineCaps(**caps)

    def caps(self, name: str) -> EngineCaps:
        """Engine ``name``'s capabilities (ConfigError with "did you mean" when unknown)."""
        self.check(name)
        return self._caps[name]

    def check(self, name: str, where: str = "backend") -> str:
        """``name`` when it is a registered engine.

        Raises:
            ConfigError: it is not (with "did you mean").
        """
        if name not in self:
            raise ConfigError(f"unknown engine {name!r}", where=where,
                              fix=did_you_mean(name, self.names()))
        return name

    def unregister(self, name: str) -> None:
        """Remove engine ``name`` (a test's fake engine, for example)."""
        self._entries.pop(name, None)
        self._caps.pop(name, None)


ENGINES = EngineRegistry()
ENGINES.register("hf", "synth.engines._hf:HFBackend", sentence_done=True)
# vLLM's prefix alignment: a multiple of every block size the engine picks by default (32 on
# CPU, 16 with CUDA), so the padded few-shot prefix fills whole blocks and prefix caching
# reuses every token of it.
ENGINES.register("vllm", "synth.engines._vllm:VLLMBackend", prefix_align=32, requires="vllm",
                 install="pip install 'synthcheck[vllm]' (GPU)")


def check_engine(name: object) -> str:
    """A config validator's check of an engine name (ValueError with "did you mean")."""
    if not isinstance(name, str) or name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}: "
                         f"{did_you_mean(str(name), ENGINES.names())}")
    return name


def make_backend(
    spec: str, *, backend: str = "hf", device: str = "auto", dtype: str = "auto",
    batch_size: int = 32, **kwargs: Any,
) -> Backend:
    """Build the Backend registered as ``backend`` for the model ``spec``."""
    cls = ENGINES.get(backend)
    engine: Backend = cls.from_spec(spec, device=device, dtype=dtype, batch_size=batch_size,
                                    **kwargs)
    return engine
