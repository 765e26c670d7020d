"""A deterministic fake Backend for unit tests (not part of the package)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from synth.engines import Generation, SamplingConfig

WORDS = ("good bad film plot actor scene music story great dull long short funny sad "
         "bright dark quiet loud").split()


class FakeBackend:
    """Continuations drawn from ``random.Random(seed)``: a pure function of each prompt's seed."""

    name = "fake"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[list[str]] = []

    def render_chat(self, user: str, system: str | None = None) -> str:
        return f"<|user|>{user}<|assistant|>"

    def generate(self, prompts: Sequence[str], params: SamplingConfig,
                 seeds: Sequence[int]) -> list[Generation]:
        self.calls.append(list(prompts))
        out = []
        for seed in seeds:
            rng = random.Random(seed)
            words = [rng.choice(WORDS) for _ in range(rng.randint(2, 9))]
            out.append(Generation(" " + " ".join(words) + ". And then more", len(words) + 4))
        time.sleep(self.delay)
        return out

    def label_logprobs(self, prefix, texts, label_continuations, suffix=""):  # pragma: no cover
        raise NotImplementedError
