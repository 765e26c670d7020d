"""Suite YAML -> SuiteSpec, with every problem named by the field the user wrote and its line.

Pydantic reports locations through the union of test types (``tests.0.mft.templat``); this
module maps them back onto the YAML (``tests[0].templat``, line 6) with ``synth.core``'s
``format_loc``/``describe_field_error``/``node_line``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from formalize._spec import SuiteSpec, suite_spec_model
from formalize.types import TEST_TYPES, builtin_type_names
from synth.core import (
    ConfigError,
    TemplateError,
    describe_field_error,
    did_you_mean,
    format_loc,
    load_yaml,
    node_line,
)


def suite_where(source: str, node: yaml.Node | None, *loc: int | str,
                test: str | None = None) -> str:
    """``file, test 'name', field.path, line N`` for a suite location ``loc``."""
    line = node_line(node, loc) if node is not None else None
    where = source
    if test is not None:
        where += f", test {test!r}"
    field_path = ".".join(str(p) for p in loc[2:]) if test is not None else ""
    if field_path:
        where += f", {field_path}"
    return where + (f", line {line}" if line else "")


def read_suite_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """Read a suite file's data and its YAML node (for line numbers).

    Raises:
        TemplateError: the file is missing or not valid YAML (with the line).
    """
    try:
        return load_yaml(path)
    except ConfigError as exc:
        what = exc.what.replace("config file", "suite file")
        raise TemplateError(what, where=exc.where, fix=exc.fix) from None


def validate_suite(data: Any, source: str, node: yaml.Node | None) -> SuiteSpec:
    """Validate suite data against the registered test types.

    Raises:
        TemplateError: not a mapping, or the first schema error (field path and line).
    """
    if not isinstance(data, dict):
        raise TemplateError("a suite must be a YAML mapping", where=source,
                            fix="write name:, labels: and tests: at the top level")
    try:
        return suite_spec_model().model_validate(data)
    except ValidationError as exc:
        raise _schema_error(exc, data, source, node) from None


_TYPE_TAG = re.compile(r"(?:str|int|float|bool|none|[A-Z]\w*|.*\[.*\])\Z")


def _user_loc(loc: Sequence[int | str], data: Any) -> tuple[tuple[int | str, ...], bool]:
    """Return a pydantic error location as the user wrote it, and whether it ended on a union
    member: union tags (a test's ``mft``, ``str``, ``LabelRule``, ``list[str]``) dropped, and
    ``templates`` written back as ``template`` where the test used the shorthand.

    A tag is a part that is not a key of the mapping the user wrote at that point (a field
    that is missing is one too, but only as the last part, and it is never a type name).
    """
    out: list[int | str] = []
    cur: Any = data
    parts = [p for p in loc if not (isinstance(p, str) and p.startswith("function-"))]
    tagged = False
    k = 0
    while k < len(parts):
        part = parts[k]
        last = k == len(parts) - 1
        tagged = False
        if isinstance(part, int):
            out.append(part)
            cur = cur[part] if isinstance(cur, list) and part < len(cur) else None
        elif isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and cur.get("type") == part:
            tagged = True  # the test type: pydantic's tag of the discriminated union
        elif (part == "templates" and isinstance(cur, dict) and "template" in cur):
            out.append("template")  # the shorthand: templates[0] is `template:` itself
            cur = cur["template"]
            if k + 1 < len(parts) and parts[k + 1] == 0:
                k += 1
        elif last and not _TYPE_TAG.match(part):
            out.append(part)  # a missing field
        else:
            tagged = True  # a union tag: the same input, seen as one member of the union
        k += 1
    return tuple(out), tagged


def _schema_where(source: str, data: Any, node: yaml.Node | None,
                  loc: Sequence[int | str], field_path: str) -> str:
    """``file, test 'name', field 'tests[0].templat', line 6`` (the line of that field)."""
    line = node_line(node, loc) if node is not None else None
    where = source
    tests = data.get("tests") if isinstance(data, dict) else None
    if len(loc) >= 2 and loc[0] == "tests" and isinstance(loc[1], int) and \
            isinstance(tests, list) and loc[1] < len(tests):
        test = tests[loc[1]]
        if isinstance(test, dict) and isinstance(test.get("name"), str):
            where += f", test {test['name']!r}"
    return where + f", field '{field_path}'" + (f", line {line}" if line else "")


def _type_names() -> list[str]:
    """The registered test types, built-in ones first in their documented order."""
    builtin = builtin_type_names()
    return [*builtin, *(n for n in TEST_TYPES.names() if n not in builtin)]


def _schema_error(exc: ValidationError, data: Any, source: str,
                  node: yaml.Node | None) -> TemplateError:
    """The first schema error, named by the field path the user wrote (``tests[0].templat``,
    not pydantic's ``tests[0].mft.templat``) and the line of that field in the file."""
    errors = [(err, *_user_loc(err["loc"], data)) for err in exc.errors()]
    err, loc, tagged = errors[0]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):  # a test's `type:`
        field_path = format_loc((*loc, "type"))
        where = _schema_where(source, data, node, (*loc, "type"), field_path)
        names = _type_names()
        if err["type"] == "union_tag_not_found":
            return TemplateError(f"missing required field '{field_path}'", where=where,
                                 fix=f"add type: {', '.join(names[:-1])} or {names[-1]}")
        return TemplateError(f"unknown test type {err['input'].get('type')!r}", where=where,
                             fix=did_you_mean(str(err["input"].get("type")), names))
    if tagged and err["type"].endswith("_type"):
        # The input is not of the first union member's type ("a string?" for a mapping):
        # report what is wrong inside the member it does match, if any.
        inner = [e for e in errors[1:] if e[1][:len(loc)] == loc and not e[0]["type"]
                 .endswith("_type")]
        if inner:
            err, loc, tagged = inner[0]
    fix = None
    if err["type"] == "missing":
        # A required field missing beside an unknown one is most likely misspelled: say so.
        extra = [e for e in errors if e[0]["type"] == "extra_forbidden"
                 and e[1][:-1] == loc[:-1]]
        if extra:
            fix = f"did you mean {loc[-1]!r}? (a required field, missing here)"
            err, loc, tagged = extra[0]
    field_path = format_loc(loc)
    what, default_fix = describe_field_error(err, field_path)
    return TemplateError(what, where=_schema_where(source, data, node, loc, field_path),
                         fix=fix or default_fix)
