"""YAML configuration loading shared by every stage.

Configs are pydantic models with ``extra="forbid"``. Loading reports malformed YAML with
its line number, and a validation error with the dotted field, the file and the line of
that field in the file. ``-P dotted.key=value`` overrides are applied before validation.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, PydanticUndefined

from synth.core._errors import ConfigDeprecation, ConfigError, DataError
from synth.core._io import read_text

ModelT = TypeVar("ModelT", bound=BaseModel)


MAX_YAML_BYTES = 16 * 1024 * 1024
"""The largest YAML document read (configs, suites and lexicons are far smaller)."""
MAX_YAML_NODES = 1_000_000
"""The most nodes a YAML document may expand to once every alias is followed (an
"alias bomb" of a few hundred bytes otherwise expands to billions of nodes)."""


class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints
    """PyYAML's safe loader, plus YAML 1.2 floats without a dot (``1e-3`` is a float, not the
    string PyYAML 1.1 makes of it): configs are validated strictly, so it must be a number."""


_Loader.yaml_implicit_resolvers = {
    key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _compose(text: str, where: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"malformed YAML: {problem}", where=f"{where}{line}", fix="fix the YAML syntax"
        ) from None


def _expanded_size(node: yaml.Node, where: str, limit: int = MAX_YAML_NODES) -> int:
    """Count the nodes of ``node`` with every alias expanded (shared nodes counted once per
    use, memoised); refuse a recursive alias or a document beyond ``limit`` nodes."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    aliased = [False]  # whether any node was reached twice (through an alias)

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            aliased[0] = True
            return sizes[key]
        if key in active:
            raise ConfigError("YAML alias refers to itself (a recursive anchor)",
                              where=f"{where}, line {n.start_mark.line + 1}",
                              fix="remove the recursive alias")
        active.add(key)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            total += sum(size(c) for c in n.value)
        elif isinstance(n, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in n.value)
        active.discard(key)
        if total > limit and not aliased[0]:  # large as written: no alias involved
            items = len(n.value) if isinstance(n.value, list) else 0
            raise ConfigError(
                f"YAML document holds more than {limit:,} values (the "
                f"{'list' if isinstance(n, yaml.SequenceNode) else 'mapping'} here has "
                f"{items:,} items)", where=f"{where}, line {n.start_mark.line + 1}",
                fix="keep long lists of values in a text file, one value a line (a suite "
                    "lexicon reads one with 'file: values.txt'), or split the document")
        if total > limit:
            raise ConfigError(
                f"YAML document expands to more than {limit:,} nodes through its aliases "
                "(an alias bomb?)", where=f"{where}, line {n.start_mark.line + 1}",
                fix="write the values out instead of nesting aliases of aliases")
        sizes[key] = total
        return total

    return size(node)


def load_yaml(path: str | Path, *, encoding: str = "utf-8") -> tuple[Any, yaml.Node | None]:
    """Parse a YAML file; return (data, node tree) where the node tree gives line numbers.

    The file must be at most :data:`MAX_YAML_BYTES` and expand (aliases followed) to at most
    :data:`MAX_YAML_NODES` nodes.

    Raises:
        ConfigError: the file is missing, a directory, too large, not valid ``encoding`` text
            (names the byte offset), or its YAML is malformed (names the line).
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError("expected a YAML file but this is a directory", where=str(path),
                          fix="give the path of a .yaml file")
    if not path.is_file():
        raise ConfigError("config file not found", where=str(path), fix="check the path")
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise ConfigError(f"YAML file is too large ({size:,} bytes, at most "
                              f"{MAX_YAML_BYTES:,})", where=str(path),
                              fix="a config, suite or lexicon is far smaller; check the path")
        text = read_text(path, encoding, kind="YAML file")
    except DataError as exc:
        raise ConfigError(exc.what, where=exc.where, fix=exc.fix) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror}", where=str(path),
                          fix="check its permissions") from None
    node = _compose(text, str(path))
    if node is None:
        return None, None
    _expanded_size(node, str(path))
    loader = _Loader("")
    try:
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"malformed YAML: {getattr(exc, 'problem', None) or exc}",
                          where=f"{path}{line}", fix="fix the YAML syntax") from None
    finally:
        loader.dispose()
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
    msg = err["msg"]
    if err["type"] == "value_error" and "error" in (err.get("ctx") or {}):
        msg = str(err["ctx"]["error"])  # a validator's own sentence, without "Value error, "
    return f"invalid value for '{field}': {msg}{got_txt}", "correct the value"


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``dotted.key=value``; the value is read as YAML (``0.9`` -> float, ``[a, b]`` -> list).

    Raises:
        ConfigError: there is no ``=`` or the key is empty.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
        raise ConfigError(
            f"bad override {text!r}", where="-P", fix="write it as dotted.key=value, e.g. -P seed=3"
        )
    try:
        value = yaml.load(raw, Loader=_Loader) if raw.strip() else ""  # noqa: S506 - safe loader
    except yaml.YAMLError:
        value = raw
    return key.strip().split("."), value


def _list_index(items: list[Any], key: str, text: str) -> int:
    if not key.isdigit() or int(key) >= len(items):
        raise ConfigError(
            f"override index {key!r} is not an item of a list of {len(items)}",
            where=f"-P {text}", fix=f"use an index from 0 to {len(items) - 1}" if items
            else "the list is empty; set the whole list, e.g. -P key='[...]'")
    return int(key)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Return a copy of ``data`` with each ``dotted.key=value`` override set; a numeric key
    indexes into a list (``-P task_models.0.spec=x``).

    Raises:
        ConfigError: a malformed override, or a list index that is not an existing item.
    """
    data = json.loads(json.dumps(data, default=str)) if data else {}
    for text in overrides:
        keys, value = parse_override(text)
        cursor: Any = data
        for depth, key in enumerate(keys[:-1]):
            if isinstance(cursor, list):
                cursor = cursor[_list_index(cursor, key, text)]
                continue
            nxt = cursor.get(key)
            if not isinstance(nxt, list) and keys[depth + 1].isdigit():
                field = ".".join(keys[: depth + 1])
                raise ConfigError(
                    f"override indexes item {keys[depth + 1]} of '{field}', which the config "
                    "does not hold as a list", where=f"-P {text}",
                    fix=f"write the list in the config file, or set it whole: -P {field}='[...]'")
            if not isinstance(nxt, dict | list):
                nxt = {}
                cursor[key] = nxt
            cursor = nxt
        if isinstance(cursor, list):
            cursor[_list_index(cursor, keys[-1], text)] = value
        else:
            cursor[keys[-1]] = value
    return data


_Loc = tuple[int | str, ...]


def _non_finite(data: Any, loc: _Loc = ()) -> tuple[_Loc, float] | None:
    """Return the location and value of the first inf/nan number in ``data``, or None."""
    if isinstance(data, float) and not math.isfinite(data):
        return loc, data
    items: Iterable[tuple[int | str, Any]] = (
        data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list)
        else ())
    for key, value in items:
        found = _non_finite(value, (*loc, key))
        if found is not None:
            return found
    return None


def _override_for(loc: Sequence[int | str], overrides: Sequence[str]) -> str | None:
    """The last ``-P`` override that set ``loc`` or one of its parents or children."""
    want = [str(p) for p in loc]
    for text in reversed(overrides):
        keys = text.partition("=")[0].strip().split(".")
        n = min(len(keys), len(want))
        if keys[:n] == want[:n]:
            return text
    return None


def _where(source: str, node: yaml.Node | None, loc: Sequence[int | str],
           overrides: Sequence[str]) -> str:
    field = format_loc(loc)
    override = _override_for(loc, overrides)
    if override is not None:  # the value came from the command line, not the file
        if len(override) > 100:  # a huge value is not repeated whole in the message
            override = override[:100] + "..."
        return f"-P {override}, field '{field}'"
    line = node_line(node, loc) if node is not None else None
    return f"{source}, field '{field}'" + (f", line {line}" if line else "")


def load_config(
    path: str | Path, model: type[ModelT], overrides: Sequence[str] = (),
) -> ModelT:
    """Load a YAML file into the pydantic ``model``, applying ``overrides`` first.

    Validation is strict, as JSON is: ``true`` is not the integer 1 and ``"3"`` is not a
    number (an integer is still a valid float), and inf/nan are refused everywhere.

    Raises:
        ConfigError: malformed YAML, an unknown field, a wrong type, a non-finite number or a
            bad override; the message names the file (or the ``-P`` override), the field and
            its line.
    """
    data, node = load_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config must be a YAML mapping", where=str(path),
                          fix="write key: value pairs at the top level")
    data = apply_overrides(data, overrides)
    bad = _non_finite(data)
    if bad is not None:
        loc, value = bad
        raise ConfigError(f"invalid value for '{format_loc(loc)}': {value} is not a finite number",
                          where=_where(str(path), node, loc, overrides),
                          fix="use a finite number")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cfg = model.model_validate_json(json.dumps(data, default=str), strict=True)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"]
                    if not (isinstance(p, str) and p.startswith("function-")))
        what, fix = describe_field_error(err, format_loc(loc))
        raise ConfigError(what, where=_where(str(path), node, loc, overrides), fix=fix) from None
    for w in caught:  # a moved field: the warning names the file (or -P) and line
        message = w.message
        if isinstance(message, ConfigDeprecation):
            message = ConfigDeprecation(message.field, message.fix, where=_where(
                str(path), node, message.field.split("."), overrides))
        warnings.warn_explicit(message, w.category, w.filename, w.lineno)
    return cfg


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
        dump = {name: output_dump(getattr(value, name)) for name in cls.model_fields
                if not is_runtime_field(cls, name)}
        # A model may keep a moved field where hashes had it (``output_layout``).
        layout = getattr(value, "output_layout", None)
        return layout(dump) if callable(layout) else dump
    if isinstance(value, list | tuple):
        return [output_dump(v) for v in value]
    if isinstance(value, dict):
        return {str(k): output_dump(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def section_hash(sections: Mapping[str, Any], upstream: Mapping[str, str | None]) -> str:
    """The one stage-hash rule: ``config_hash`` of each section's :func:`output_dump` (the
    fields that change outputs), keyed by section name, plus the upstream stages' hashes,
    keyed by stage name."""
    return config_hash({**{name: output_dump(v) for name, v in sections.items()}, **upstream})
