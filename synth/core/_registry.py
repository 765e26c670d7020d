"""Registries that map names to implementations through lazy ``"module:attr"`` entries."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

from synth.core._errors import ConfigError, ModelNotAvailable

T = TypeVar("T")


def import_object(target: str, *, install_hint: str | None = None) -> object:
    """Import ``"package.module:attr"`` and return the attribute.

    Raises:
        ModelNotAvailable: the module's package is missing (with the pip command to run).
        ConfigError: the string is malformed or the attribute does not exist.
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"bad import target {target!r}", fix="write it as 'package.module:name'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = install_hint or f"pip install {(exc.name or module_name).split('.')[0]}"
        raise ModelNotAvailable(
            f"cannot import module '{module_name}' ({exc.name} is not installed)", fix=hint
        ) from None
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"module '{module_name}' has no attribute '{attr}'", where=target,
                              fix="check the name")
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """A name -> lazy ``"module:attr"`` map; ``get`` imports on first use.

    An unknown name raises ConfigError with a "did you mean" suggestion.
    """

    def __init__(self, kind: str, entries: dict[str, str] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, str] = dict(entries or {})

    def register(self, name: str, target: str) -> None:
        """Add or replace the entry ``name`` -> ``"module:attr"``."""
        self._entries[name] = target

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """Return the implementation registered as ``name``."""
        if name not in self._entries:
            raise ConfigError(f"unknown {self.kind} {name!r}", fix=did_you_mean(name, self.names()))
        return import_object(self._entries[name])  # type: ignore[return-value]


def did_you_mean(name: str, choices: list[str]) -> str:
    """Return "did you mean 'x'?" for the closest choice, else the list of choices."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    if close:
        return f"did you mean {close[0]!r}? (choices: {', '.join(choices)})"
    return f"choose one of: {', '.join(choices)}"
