"""The suite YAML schema (pydantic models; ``extra="forbid"`` so typos are errors)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_STRICT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class LabelRule(BaseModel):
    """A gold label that depends on the fill: the lexicon a slot's value came from picks it."""

    model_config = _STRICT

    by: str
    """The slot key whose fill decides the label (e.g. ``ADJ``)."""
    map: dict[str, str] = Field(min_length=1)
    """Source lexicon -> label (e.g. ``{POS_ADJ: negative, NEG_ADJ: positive}``)."""


class LexiconFile(BaseModel):
    """A lexicon read from a file (relative paths are relative to the suite file)."""

    model_config = _STRICT

    file: str
    """Path to a ``.yaml``, ``.csv`` or ``.txt`` file."""
    column: str | None = None
    """CSV column holding the values (default: the first column)."""
    key: str | None = None
    """YAML key holding the list (default: the lexicon's own name)."""


class CaseSpec(BaseModel):
    """One hand-written case: its text and (for MFT tests) its gold label."""

    model_config = _STRICT

    text: str
    """The text, used verbatim (no placeholders)."""
    label: str | None = None
    """Gold label (MFT; defaults to the test's label)."""


class ContrastItem(BaseModel):
    """One DisKnE-style contrast: a text, an entity in it and the entities to swap in."""

    model_config = _STRICT

    text: str
    """The original text (gold label ``label``)."""
    entity: str
    """The entity mention in ``text`` to replace (whole-word match)."""
    alternatives: list[str] | None = None
    """The replacements; each makes a case labeled ``contrast_label``."""
    lexicon: str | None = None
    """Or: take the alternatives from this lexicon (the entity itself left out)."""
    label: str | None = None
    """Gold label of the original (default: the test's ``label``)."""
    contrast_label: str | None = None
    """Gold label of the substituted texts (default: the test's ``contrast_label``)."""


class RunTexts(BaseModel):
    """Base texts drawn from a run directory's generated corpus (``corpus/shard-*.jsonl``)."""

    model_config = _STRICT

    run: str = Field(min_length=1)
    """The run directory (``--run`` of ``synthcheck generate``/``discover``); a relative path
    is relative to the suite file's folder, like every path in a suite."""
    limit: int | None = Field(None, ge=1)
    """Draw this many texts (a seeded sample, kept in corpus order); ``None``: every text.
    Only texts the test applies to are drawn: with ``words``/``pattern`` and no ``add``,
    texts that mention the attribute."""
    seed: int | None = None
    """Seed of the draw (default: the suite's ``seed``)."""


class _TestBase(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1)
    """Test name, unique in the suite."""
    capability: str = "General"
    """Capability the test belongs to (rows of the report)."""
    description: str = ""
    """What the test checks, in a sentence."""


class _Sourced(_TestBase):
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


class MFTTest(_Sourced):
    """Minimum functionality test: every case has a gold label."""

    type: Literal["mft"]
    label: str | LabelRule | None = None
    """The gold label, or a rule that picks it from a fill's source lexicon."""
    cases: list[CaseSpec] = Field(default_factory=list)
    """Hand-written cases (each with its own label, or the test's)."""

    @field_validator("cases", mode="before")
    @classmethod
    def _plain_cases(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value


class PerturbTest(_Sourced):
    """Shared fields of INV and DIR tests: base texts and the perturbation(s)."""

    perturb: list[dict[str, Any]] = Field(min_length=1)
    """Perturbations by name with their parameters, e.g. ``{name: typo, kind: swap}``;
    each one makes a variant of every base text."""
    variants: int = Field(1, ge=1, le=100)
    """Seeded variants per base text and perturbation."""

    @field_validator("perturb", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if isinstance(value, str | dict):
            value = [value]
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


class INVTest(PerturbTest):
    """Invariance: the prediction must not change under the perturbation."""

    type: Literal["inv"]
    tolerance: float | None = Field(None, ge=0, le=1)
    """Also pass when the prediction flips but the probability of the original prediction
    moved by at most this much (forgives flips at the decision boundary)."""


class DIRTest(PerturbTest):
    """Directional: the probability of ``label`` must move ``direction`` by ``min_delta``."""

    type: Literal["dir"]
    label: str
    """The label whose probability is watched."""
    direction: Literal["up", "down"]
    """``up``: p(label) must not fall (rise by at least min_delta); ``down``: the reverse."""
    min_delta: float = Field(0.0, ge=0, le=1)
    """Required change in the stated direction (0: it must not move the other way)."""


class GroupTest(_TestBase):
    """A test group: one variant of each base text per group value; no gold labels."""

    type: Literal["group"]
    texts: list[str] = Field(default_factory=list)
    """Base texts (and/or ``texts_file``, ``texts_from_run``; all given sources are used)."""
    texts_file: str | None = None
    """A ``.txt`` (one per line), ``.jsonl`` or ``.csv`` file (``text`` field/column),
    relative to the suite file's folder."""
    texts_from_run: RunTexts | None = None
    """Base texts from a run's generated corpus: a run directory (``texts_from_run: runs/demo``,
    every corpus text) or ``{run: runs/demo, limit: 200, seed: 1}`` (a seeded sample)."""
    attribute: str = "group"
    """The attribute that varies (gender, age, ethnicity)."""
    words: dict[str, list[str]] | None = None
    """Group value -> its marker words, aligned by position (``man``/``woman``,
    ``he``/``she``); a marker of any group is changed into the target group's."""
    pattern: str | None = None
    """Regular expression matching an existing mention (e.g. ``\\b\\d+ ?yo\\b``)."""
    values: dict[str, str] | None = None
    """With ``pattern``: group value -> the mention text that replaces the match."""
    add: str | None = None
    """When a text has no mention: insert this (``{mention}`` is the group's mention);
    without ``add`` such texts are skipped."""
    at: Literal["start", "end"] = "start"
    """Where ``add`` goes."""

    @field_validator("texts_from_run", mode="before")
    @classmethod
    def _run_shorthand(cls, value: Any) -> Any:
        # `texts_from_run: runs/demo` is shorthand for `{run: runs/demo}`.
        return {"run": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_mode(self) -> GroupTest:
        if (self.words is None) == (self.pattern is None):
            raise ValueError("give either 'words' or 'pattern' (with 'values')")
        if self.pattern is not None and not self.values:
            raise ValueError("'pattern' needs 'values' (group value -> mention text)")
        groups = self.words if self.words is not None else self.values
        if groups is not None and len(groups) < 2:
            raise ValueError("a test group needs at least two group values")
        if self.words is not None:
            lengths = {len(v) for v in self.words.values()}
            if len(lengths) != 1:
                raise ValueError("every group's 'words' list must have the same length")
        if self.add is not None and "{mention}" not in self.add:
            raise ValueError("'add' must contain '{mention}'")
        return self


class ContrastTest(_TestBase):
    """Contrast set by entity substitution (DisKnE style): originals and their negatives."""

    type: Literal["contrast"]
    items: list[ContrastItem] = Field(min_length=1)
    """Texts with the entity to replace and its alternatives."""
    label: str | None = None
    """Default gold label of the originals."""
    contrast_label: str | None = None
    """Default gold label of the substituted texts."""
    include_original: bool = True
    """Also score the original texts (with ``label``)."""


TestSpec = Annotated[MFTTest | INVTest | DIRTest | GroupTest | ContrastTest,
                     Field(discriminator="type")]


class SuiteSpec(BaseModel):
    """A suite file: labels, lexicons and tests."""

    model_config = _STRICT

    name: str = Field(min_length=1)
    """Suite name (the output folder under verify/)."""
    description: str = ""
    """What the suite covers."""
    labels: list[str] = Field(min_length=2)
    """The task's label names; every gold label must be one of them. ``synthcheck verify
    --config C`` and ``discover`` also check that they are the run config's ``task.labels``
    (in any order)."""
    lexicons: dict[str, list[str] | LexiconFile] = Field(default_factory=dict)
    """Suite lexicons (they override built-in ones of the same name)."""
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
    tests: list[TestSpec] = Field(min_length=1)
    """The tests."""

    @field_validator("labels")
    @classmethod
    def _unique_labels(cls, labels: list[str]) -> list[str]:
        if len(set(labels)) != len(labels):
            raise ValueError(f"labels must be unique, got {labels}")
        return labels
