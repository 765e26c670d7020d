"""How a key/value cache is handed to a transformers causal LM.

transformers 5.2x renamed the forward argument ``past_key_values`` to ``cache`` and warns
(FutureWarning, removal in 5.40) on every call that uses the old name; older releases (the
vLLM venv pins one) only know ``past_key_values``. The project's own calls pass the cache
under the name the loaded model's ``forward`` declares, and read it back from the output
under the name it has (transformers 5.2x logs a deprecation on ``out.past_key_values``), so
neither release warns and user code keeps its own warnings (no global filter)."""

from __future__ import annotations

import inspect
from typing import Any

_KWARG_FOR: dict[object, str] = {}
"""The cache argument's name per model class (its forward's signature is read once)."""


def _kwarg_for(model_type: Any) -> str:
    if model_type not in _KWARG_FOR:
        try:
            params = inspect.signature(model_type.forward).parameters
            name = "cache" if "cache" in params else "past_key_values"
        except (AttributeError, TypeError, ValueError):
            name = "past_key_values"
        _KWARG_FOR[model_type] = name
    return _KWARG_FOR[model_type]


def cache_kwargs(model: Any, cache_value: Any) -> dict[str, Any]:
    """``{name: cache_value}`` for ``model(...)``: ``cache`` where its forward takes it, else
    ``past_key_values``."""
    return {_kwarg_for(type(model)): cache_value}


def output_cache(out: Any) -> Any:
    """The key/value cache of a forward's output: ``out.cache`` where ``past_key_values``
    is only a deprecated alias of it (a property), else ``out.past_key_values``."""
    if isinstance(getattr(type(out), "past_key_values", None), property):
        return out.cache
    return out.past_key_values
