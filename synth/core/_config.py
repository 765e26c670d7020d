"""YAML configuration loading shared by every stage.

Configs are pydantic models with ``extra="forbid"``. Loading reports malformed YAML with
its line number, and a validation error with the dotted field, the file and the line of
that field in the file. ``-P dotted.key=value`` overrides are applied before validation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, PydanticUndefined

from synth.core._errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


def _compose(text: str, where: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"malformed YAML: {problem}", where=f"{where}{line}", fix="fix the YAML syntax"
        ) from None


def load_yaml(path: str | Path) -> tuple[Any, yaml.Node | None]:
    """Parse a YAML file; return (data, node tree) where the node tree gives line numbers.

    Raises:
        ConfigError: the file is missing or its YAML is malformed (names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError("config file not found", where=str(path), fix="check the path")
    text = path.read_text(encoding="utf-8")
    node = _compose(text, str(path))
    data = yaml.safe_load(text) if node is not None else None
    return data, node


def node_line(node: yaml.Node | None, loc: Sequence[int | str]) -> int | None:
    """Return the 1-based line of the YAML node at ``loc`` (or its deepest existing parent)."""
    line = None
    for key in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for knode, vnode in node.value:
                if knode.value == key:
                    line = knode.start_mark.line + 1
                    nxt = vnode
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def format_loc(loc: Iterable[int | str]) -> str:
    """Format a pydantic error location as a dotted field path (``a.b[0].c``)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def validation_to_config_error(
    exc: ValidationError, source: str, node: yaml.Node | None = None
) -> ConfigError:
    """Turn the first pydantic error into a ConfigError naming the field, file and line."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    field = format_loc(loc)
    line = node_line(node, loc) if node is not None else None
    where = f"{source}, field '{field}'" + (f", line {line}" if line else "")
    what, fix = describe_field_error(err, field)
    return ConfigError(what, where=where, fix=fix)


def describe_field_error(err: ErrorDetails, field: str) -> tuple[str, str]:
    """Return the message and the fix for one pydantic error about ``field`` (a dotted path,
    see :func:`format_loc`): an unknown field, a missing one, or an invalid value."""
    if err["type"] == "extra_forbidden":
        return f"unknown field '{field}'", "remove it or check its spelling"
    if err["type"] == "missing":
        return f"missing required field '{field}'", "add it"
    got = err.get("input")
    got_txt = f"; got {got!r}" if not isinstance(got, dict | list) else ""
    return f"invalid value for '{field}': {err['msg']}{got_txt}", "correct the value"


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``dotted.key=value``; the value is read as YAML (``0.9`` -> float, ``[a, b]`` -> list).

    Raises:
        ConfigError: there is no ``=`` or the key is empty.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"bad override {text!r}", where="-P", fix="write it as dotted.key=value, e.g. -P seed=3"
        )
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.strip().split("."), value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Return a copy of ``data`` with each ``dotted.key=value`` override set."""
    data = json.loads(json.dumps(data)) if data else {}
    for text in overrides:
        keys, value = parse_override(text)
        cursor = data
        for key in keys[:-1]:
            nxt = cursor.get(key)
            if not isinstance(nxt, dict):
                nxt = {}
                cursor[key] = nxt
            cursor = nxt
        cursor[keys[-1]] = value
    return data


def load_config(
    path: str | Path, model: type[ModelT], overrides: Sequence[str] = (),
) -> ModelT:
    """Load a YAML file into the pydantic ``model``, applying ``overrides`` first.

    Raises:
        ConfigError: malformed YAML, an unknown field, a wrong type or a bad override; the
            message names the file, the field and its line.
    """
    data, node = load_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config must be a YAML mapping", where=str(path),
                          fix="write key: value pairs at the top level")
    data = apply_overrides(data, overrides)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_to_config_error(exc, str(path), node) from None


def config_hash(payload: Any) -> str:
    """Return a short, stable SHA-256 hash of a JSON-serialisable payload."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


# --- Output-affecting fields, marked once on the config models -------------------------

STRICT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
"""The model config every synthcheck config section uses: unknown fields are errors."""

_RUNTIME = "synthcheck_runtime"


def runtime_field(default: Any = PydanticUndefined, **kwargs: Any) -> Any:
    """A pydantic ``Field`` for a setting that does not change outputs (batch size, device,
    progress...). Such fields are left out of every stage hash by :func:`output_dump`, so
    changing them never invalidates finished work. Declare it here, nowhere else."""
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    extra[_RUNTIME] = True
    return Field(default, json_schema_extra=extra, **kwargs)


def is_runtime_field(model: type[BaseModel], name: str) -> bool:
    """True if ``model.name`` was declared with :func:`runtime_field`."""
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get(_RUNTIME))


def output_dump(value: Any) -> Any:
    """JSON-ready dump of a config (model, list or plain value) without its runtime fields,
    recursively: the one payload that stage hashes are computed from."""
    if isinstance(value, BaseModel):
        cls = type(value)
        return {name: output_dump(getattr(value, name)) for name in cls.model_fields
                if not is_runtime_field(cls, name)}
    if isinstance(value, list | tuple):
        return [output_dump(v) for v in value]
    if isinstance(value, dict):
        return {str(k): output_dump(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value
