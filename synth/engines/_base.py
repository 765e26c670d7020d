"""The Backend protocol: batch in, batch out, results in input order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from synth.engines._planner import PrefixAlignment
from synth.engines._sampling import SamplingConfig


@dataclass(frozen=True)
class Generation:
    """One prompt's continuation.

    Attributes:
        text: the generated continuation, without the prompt and special tokens.
        num_tokens: how many tokens were generated for it.
    """

    text: str
    num_tokens: int


def render_chat(tokenizer: Any, user: str, system: str | None = None) -> str:
    """Render one user turn (and optional system turn) with ``tokenizer``'s chat template."""
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": user}
    ]
    return str(tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=True))


@runtime_checkable
class Backend(Protocol):
    """An LLM engine. Every method takes a batch and returns results in input order."""

    name: str

    def render_chat(self, user: str, system: str | None = None) -> str:
        """Render one user turn (and optional system turn) with the model's chat template."""
        ...

    def generate(
        self, prompts: Sequence[str], params: SamplingConfig, seeds: Sequence[int]
    ) -> list[Generation]:
        """Sample one continuation per prompt; ``seeds[i]`` drives prompt i's randomness.

        ``seeds`` is the only seed a backend reads (the caller derives them from the run
        seed, ``GeneratorConfig.seed``: ``derive_seed(seed, "prompt", i)``)."""
        ...

    def label_logprobs(
        self,
        prefix: str,
        texts: Sequence[str],
        label_continuations: Mapping[str, str],
        suffix: str = "",
        *,
        align: PrefixAlignment | None = None,
    ) -> list[dict[str, float]]:
        """Log-probability of each label's continuation after ``prefix + text + suffix``.

        Multi-token continuations sum their tokens' log-probabilities. ``align`` pads the
        tokenized prefix to whole blocks (``synth.engines._planner.align_prefix_ids``);
        callers pass it only when they pad, so an engine without prefix alignment may
        leave the keyword out.
        """
        ...
