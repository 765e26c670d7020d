"""Markdown reference of every run-config field, generated from the pydantic models."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is not None:
        args = ", ".join(_type_name(a) for a in typing.get_args(tp))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if tp is type(None):
        return "null"
    return getattr(tp, "__name__", str(tp))


def _default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        value = field.default
    elif field.default_factory is not None:
        value = field.default_factory()
    else:
        return "required"
    if isinstance(value, BaseModel):
        return "(section)"
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        value = [v.model_dump(mode="json") for v in value]
    text = json.dumps(value, ensure_ascii=False)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _sections(model: type[BaseModel], prefix: str, out: list[str]) -> None:
    rows, nested = [], []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        desc = " ".join((field.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_name(field.annotation)} | {_default(field)} | {desc} |")
        inner = field.annotation
        if typing.get_origin(inner) is list and _is_model(typing.get_args(inner)[0]):
            nested.append((f"{key}[]", typing.get_args(inner)[0]))
        elif _is_model(inner):
            nested.append((key, inner))
    title = prefix.rstrip(".") or "top level"
    doc = " ".join((model.__doc__ or "").split())
    out += [f"## `{title}`", "", doc, "", "| field | type | default | meaning |",
            "| --- | --- | --- | --- |", *rows, ""]
    for key, sub in nested:
        _sections(sub, key + ".", out)


def config_reference() -> str:
    """Return the Markdown reference of the run config (docs/config-reference.md)."""
    from synthcheck._config import RunConfig

    out = ["# Run config reference", "",
           "Generated from the pydantic models by `synthcheck config --reference`; do not edit.",
           "Every section is optional; unknown fields are errors. Override any field on the "
           "command line with `-P dotted.key=value`.", ""]
    _sections(RunConfig, "", out)
    return "\n".join(out).rstrip() + "\n"
