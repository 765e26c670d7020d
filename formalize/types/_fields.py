"""Spec pieces that several test types share (pydantic models, ``extra="forbid"``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from synth.core import STRICT


class LabelRule(BaseModel):
    """A gold label that depends on the fill: the lexicon a slot's value came from picks it."""

    model_config = STRICT

    by: str
    """The slot key whose fill decides the label (e.g. ``ADJ``)."""
    map: dict[str, str] = Field(min_length=1)
    """Source lexicon -> label (e.g. ``{POS_ADJ: negative, NEG_ADJ: positive}``)."""


class RunTexts(BaseModel):
    """Base texts drawn from a run directory's generated corpus (``corpus/shard-*.jsonl``)."""

    model_config = STRICT

    run: str = Field(min_length=1)
    """The run directory (``--run`` of ``synthcheck generate``/``discover``); a relative path
    is relative to the suite file's folder, like every path in a suite."""
    limit: int | None = Field(None, ge=1)
    """Draw this many texts (a seeded sample, kept in corpus order); ``None``: every text.
    Only texts the test applies to are drawn: with ``words``/``pattern`` and no ``add``,
    texts that mention the attribute."""
    seed: int | None = None
    """Seed of the draw (default: the suite's ``seed``)."""


class TestSpecBase(BaseModel):
    """The fields of every test: its name, capability and description. A test type's spec
    model subclasses it and adds ``type: Literal["<its name>"]``."""

    __test__ = False  # not a pytest test class
    model_config = STRICT

    name: str = Field(min_length=1)
    """Test name, unique in the suite."""
    capability: str = "General"
    """Capability the test belongs to (rows of the report)."""
    description: str = ""
    """What the test checks, in a sentence."""
    max_fail_rate: float | None = Field(None, ge=0, le=1)
    """CI gate: ``synthcheck verify`` exits 1 when a model's fail rate on this test is above
    it (overrides ``--max-fail-rate``; ``None``: the flag's value, else no gate)."""


class SourcedSpec(TestSpecBase):
    """The fields of a test whose base texts come from templates and plain texts."""

    templates: list[str] = Field(default_factory=list)
    """Templates with placeholders (see docs/formalize.md)."""
    texts: list[str] = Field(default_factory=list)
    """Plain texts used verbatim."""
    sample: int | None = Field(None, ge=1)
    """Always draw this many template fills (seeded) instead of the full product."""

    @model_validator(mode="before")
    @classmethod
    def _template_alias(cls, data: Any) -> Any:
        # `template: "..."` is shorthand for a one-element `templates` list.
        if isinstance(data, dict) and "template" in data:
            data = dict(data)
            if "templates" in data:
                raise ValueError("give either 'template' or 'templates', not both")
            data["templates"] = [data.pop("template")]
        return data
