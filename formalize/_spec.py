"""The suite YAML schema (pydantic models; ``extra="forbid"`` so typos are errors).

The entries under ``tests:`` are the spec models of the registered test types
(``formalize.types.TEST_TYPES``), told apart by their ``type:``.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, create_model, field_validator

from formalize.types import TEST_TYPES, builtin_type_names
from formalize.types._fields import RunTexts, TestSpecBase
from synth.core import STRICT, check_unique_labels

__all__ = ["LexiconFile", "PairedLexiconSpec", "RunTexts", "SuiteSpec", "check_suite_name",
           "suite_spec_model"]


class LexiconFile(BaseModel):
    """A lexicon read from a file (relative paths are relative to the suite file)."""

    model_config = STRICT

    file: str
    """Path to a ``.yaml``, ``.csv`` or ``.txt`` file."""
    column: str | None = None
    """CSV column holding the values (default: the first column)."""
    key: str | None = None
    """YAML key holding the list (default: the lexicon's own name)."""


class PairedLexiconSpec(BaseModel):
    """A paired lexicon: entries that fill several placeholders together."""

    model_config = STRICT

    slots: list[str]
    """The slot names its columns fill (``[TIME_ENTITY_S, TIME_ENTITY_L]``)."""
    values: list[list[Any]]
    """The entries, one value per slot each (``- [2 days, 2 weeks]``)."""


def _spec_models(names: list[str]) -> tuple[type[TestSpecBase], ...]:
    return tuple(TEST_TYPES.get(n).spec_model for n in names)


def _tests_type(models: tuple[type[TestSpecBase], ...]) -> Any:
    """``list[<union of the types' spec models, told apart by type:>]``."""
    return list[Annotated[Union[models], Field(discriminator="type")]]  # type: ignore[valid-type]  # noqa: UP007


class SuiteSpec(BaseModel):
    """A suite file: labels, lexicons and tests."""

    model_config = STRICT

    name: str = Field(min_length=1)
    """Suite name (the output folder under verify/)."""
    description: str = ""
    """What the suite covers."""
    text_fields: list[str] = Field(default_factory=lambda: ["text"], min_length=1, max_length=2)
    """The task's input fields: ``[text]`` (one text), or two for a sentence-pair task
    (``[premise, hypothesis]``): then its contrast items give ``fields:`` and the task models
    score pairs."""
    labels: list[str] = Field(min_length=2)
    """The task's label names; every gold label must be one of them. ``synthcheck verify
    --config C`` and ``discover`` also check that they are the run config's ``task.labels``
    (in any order)."""
    lexicons: dict[str, list[str] | LexiconFile | PairedLexiconSpec] = Field(
        default_factory=dict)
    """Suite lexicons (they override built-in ones of the same name): a list, a file, or a
    paired lexicon (``{slots: [A, B], values: [[a1, b1], ...]}``)."""
    lexicon_files: list[str] = Field(default_factory=list)
    """YAML files of lexicons (``NAME: [values]``) to load."""
    builtin_lexicons: bool = True
    """Make the built-in lexicons (formalize/lexicons, linked as configs/lexicons) available."""
    slots: dict[str, list[str]] = Field(default_factory=dict)
    """Slot aliases: a name -> the lexicons whose union it draws from
    (``ADJ: [POS_ADJ, NEG_ADJ]``)."""
    max_cases: int = Field(100_000, ge=1)
    """Refuse exhaustive expansion above this many cases (use sampling instead)."""
    seed: int = 0
    """Seed of sampling and perturbations."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """What an import keeps about the original files so an export can reproduce them (e.g.
    ``hatecheck: {columns, newline, placeholders}``); not used by expansion."""
    tests: _tests_type(_spec_models(builtin_type_names())) = Field(min_length=1)  # type: ignore[valid-type]
    """The tests (one entry per test; ``type:`` picks a registered test type)."""

    @field_validator("labels")
    @classmethod
    def _unique_labels(cls, labels: list[str]) -> list[str]:
        return check_unique_labels(labels)

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        return check_suite_name(name)


def check_suite_name(name: str) -> str:
    """Return ``name`` if it is a plain file name (it becomes the folder ``verify/<name>``);
    raise ValueError for a path (``/``, ``\\``), ``.``/``..``, a leading ``.`` or ``~``, or a
    control character, so that no suite writes outside its run directory."""
    if (name in {".", ".."} or any(c in name for c in "/\\") or name.startswith((".", "~"))
            or any(ord(c) < 32 or ord(c) == 127 for c in name) or name != name.strip()):
        raise ValueError(f"suite name {name!r} is not a plain file name (it names the output "
                         f"folder verify/<name>): use letters, digits, '-' and '_', without "
                         f"'/', '\\', a leading '.' or surrounding spaces")
    return name


_MODELS: dict[tuple[type[TestSpecBase], ...], type[SuiteSpec]] = {
    _spec_models(builtin_type_names()): SuiteSpec}


def suite_spec_model() -> type[SuiteSpec]:
    """The suite schema over the test types registered now: :class:`SuiteSpec` itself, or
    (after ``TEST_TYPES.register``) a subclass whose ``tests`` also accept the new types."""
    builtin = builtin_type_names()
    models = _spec_models([*builtin, *(n for n in TEST_TYPES.names() if n not in builtin)])
    model = _MODELS.get(models)
    if model is None:
        tests: Any = (_tests_type(models), Field(min_length=1))
        model = create_model("SuiteSpec", __base__=SuiteSpec, tests=tests)
        model.__doc__ = SuiteSpec.__doc__
        _MODELS[models] = model
    return model

