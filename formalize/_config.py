"""Stage-3 settings of a run config (the ``verify:`` section)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from synth.core import STRICT as _STRICT
from synth.core import runtime_field


class VerifyConfig(BaseModel):
    """How ``synthcheck verify`` expands and scores a suite."""

    model_config = _STRICT

    sample: int | None = Field(None, ge=1)
    """Draw this many fills per templated test instead of the full product (None: all)."""
    seed: int | None = None
    """Seed of sampling and perturbations (None: the suite's own seed)."""
    max_cases: int | None = Field(None, ge=1)
    """Refuse exhaustive expansion above this many cases (None: the suite's max_cases)."""
    max_cases_per_test: int | None = Field(20_000, ge=1)
    """A test (with no ``sample`` of its own, and no ``sample`` here) that would expand to
    more cases is sampled down to this many, seeded and stratified over its templates, with a
    note; the case limit then applies to the sampled counts (None: no cap)."""
    batch_size: int = runtime_field(64, ge=1)
    """Texts per predict_proba call (does not change results)."""
    chunk_size: int = runtime_field(4096, ge=1)
    """Cases expanded and scored together; bounds memory (does not change results)."""
    max_examples: int = Field(5, ge=0)
    """Failures kept per test and model for the report."""
