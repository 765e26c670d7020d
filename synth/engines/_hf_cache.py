"""How a key/value cache is handed to a transformers causal LM.

transformers 5.2x renamed the forward argument ``past_key_values`` to ``cache`` and warns
(FutureWarning, removal in 5.40) on every call that uses the old name; older releases (the
vLLM venv pins one) only know ``past_key_values``. The project's own calls pass the cache
under the name the loaded model's ``forward`` declares, and read it back from the output
under the name it has (transformers 5.2x logs a deprecation on ``out.past_key_values``), so
neither release warns and user code keeps its own warnings (no global filter)."""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any


@cache
def _kwarg_for(forward_type: type) -> str:
    try:
        params = inspect.signature(forward_type.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


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
