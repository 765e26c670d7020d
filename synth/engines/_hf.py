"""HFBackend: batched generation and scoring with transformers, on CPU or GPU."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from synth.engines._base import Generation, render_chat
from synth.engines._hf_generate import BOUNDARY
from synth.engines._planner import PrefixAlignment
from synth.engines._sampling import SamplingConfig

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# Decides, from a row's prompt and continuation so far, whether its first sentence is done.
SentenceDone = Callable[[str, str], bool]


class HFBackend:
    """A transformers causal LM behind the Backend protocol.

    Generation is continuously batched (see ``synth.engines._hf_generate``): prompts are
    taken in length order, left padded, and a row that finishes its first sentence leaves
    the batch while a waiting prompt takes its place, so every forward step runs a full
    batch. Each prompt samples from its own ``torch.Generator`` seeded with its seed, so a
    prompt's output does not depend on which batch it lands in.

    Args:
        model: a causal LM (``PreTrainedModel``), already on its device.
        tokenizer: its tokenizer (a pad token is added if missing).
        batch_size: prompts per forward batch (does not change outputs' distribution).
        sentence_done: optional early-stop test ``(prompt, continuation) -> bool``; the
            generation job passes the punkt-based one.
    """

    name = "hf"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        batch_size: int = 32,
        sentence_done: SentenceDone | None = None,
    ) -> None:
        from synth.engines._models import prepare_tokenizer

        prepare_tokenizer(tokenizer)
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.on_batch: Callable[[int], None] | None = None
        """Called with how many prompts finished, as they finish (progress bars)."""
        self.sentence_done = sentence_done
        # Few-shot prefix key/value states, reused across label_logprobs calls (see there).
        self.prefix_cache: dict[tuple[Any, ...], Any] = {}
        # Token id -> whether its text holds a sentence-boundary character.
        self._boundary_memo: dict[int, bool] = {}
        self.forward_calls = 0
        """Model forward passes ``generate`` has run (prefills and decode steps)."""

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @classmethod
    def from_spec(cls, spec: str, *, device: str = "auto", dtype: str = "auto",
                  batch_size: int = 32, **kwargs: Any) -> HFBackend:
        """Load ``spec`` with transformers (once per process, see ``load_hf_causal_lm``)."""
        from synth.engines._models import load_hf_causal_lm

        model, tokenizer = load_hf_causal_lm(spec, device=device, dtype=dtype)
        return cls(model, tokenizer, batch_size=batch_size, **kwargs)

    def render_chat(self, user: str, system: str | None = None) -> str:
        """Render one user turn (and optional system turn) with the model's chat template."""
        return render_chat(self.tokenizer, user, system)

    def generate(
        self, prompts: Sequence[str], params: SamplingConfig, seeds: Sequence[int]
    ) -> list[Generation]:
        """Sample one continuation per prompt, in input order (see the class docstring)."""
        from synth.engines._hf_generate import GenerationLoop

        if len(seeds) != len(prompts):
            raise ValueError(f"need one seed per prompt, got {len(seeds)} for {len(prompts)}")
        if not prompts:
            return []
        encoded = [self.tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]

        def row_done(i: int, tokens: list[int]) -> bool:
            return self._row_done(prompts[i], tokens)

        loop = GenerationLoop(
            model=self.model, ids=encoded, params=params, seeds=seeds,
            batch_size=self.batch_size, eos=_eos_ids(self.model, self.tokenizer),
            row_done=row_done if params.stop_at_sentence_end and self.sentence_done else None,
            pad=int(self.tokenizer.pad_token_id), on_done=self.on_batch)
        out = loop.run()
        self.forward_calls += loop.forward_calls
        return [Generation(text=self._decode(toks), num_tokens=len(toks)) for toks in out]

    def _decode(self, tokens: list[int]) -> str:
        # One sequence of ids decodes to one str (transformers' annotation covers batches too).
        return cast(str, self.tokenizer.decode(tokens, skip_special_tokens=True))

    def _boundary(self, token: int) -> bool:
        """True if ``token``'s text holds a sentence-boundary character (memoised)."""
        hit = self._boundary_memo.get(token)
        if hit is None:
            hit = self._boundary_memo[token] = any(c in self._decode([token]) for c in BOUNDARY)
        return hit

    def _row_done(self, prompt: str, tokens: list[int]) -> bool:
        # Only consult the (slower) sentence splitter while one of the last four tokens
        # carries a boundary character (punkt may need a few more tokens to decide).
        if self.sentence_done is None or not any(self._boundary(t) for t in tokens[-4:]):
            return False
        return self.sentence_done(prompt, self._decode(tokens))

    def label_logprobs(
        self,
        prefix: str,
        texts: Sequence[str],
        label_continuations: Mapping[str, str],
        suffix: str = "",
        *,
        align: PrefixAlignment | None = None,
    ) -> list[dict[str, float]]:
        """Log-probability of each label continuation after ``prefix + text + suffix``.

        The shared prefix's key/value cache is computed once per backend and prefix, and
        reused for every batch of this and every later call (``prefix_cache``, keyed by the
        prefix's token ids and the model). ``align`` pads the prefix to whole blocks of
        tokens, the same padded prompt the vLLM backend scores.
        """
        from synth.engines._hf_scoring import hf_label_logprobs

        return hf_label_logprobs(self.model, self.tokenizer, prefix, texts, label_continuations,
                                 suffix, batch_size=self.batch_size,
                                 prefix_cache=self.prefix_cache, align=align)


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None),
                  tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids
