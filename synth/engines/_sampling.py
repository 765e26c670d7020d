"""The one sampling parameter object; only backends translate it into engine kwargs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SamplingConfig(BaseModel):
    """How the generator samples continuations (nucleus sampling by default). No seed: a
    backend takes one per prompt (``generate(prompts, params, seeds)``); the run seed they
    derive from is ``GeneratorConfig.seed``."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    temperature: float = Field(1.0, ge=0.0)
    """Softmax temperature; 0 means greedy decoding. The paper uses 1.0."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling: keep the smallest token set whose probability reaches top_p (in (0, 1])."""
    top_k: int = Field(0, ge=0)
    """Keep only the k most likely tokens; 0 disables top-k filtering."""
    max_new_tokens: int = Field(48, ge=1, le=4096)
    """Most tokens generated per prompt."""
    stop_at_sentence_end: bool = True
    """Stop each row once its first sentence is finished (saves most of the compute)."""
