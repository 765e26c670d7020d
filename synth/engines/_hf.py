"""HFBackend: batched generation and scoring with transformers, on CPU or GPU."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from synth.core._batching import length_sorted_batches
from synth.engines._base import Generation, render_chat
from synth.engines._sampling import SamplingConfig

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# Decides, from a row's prompt and continuation so far, whether its first sentence is done.
SentenceDone = Callable[[str, str], bool]


class HFBackend:
    """A transformers causal LM behind the Backend protocol.

    Generation is batched and length-sorted with left padding; finished rows leave the
    batch (their key/value cache rows are dropped), so a batch costs what its longest
    *first sentence* costs. Each prompt samples from its own ``torch.Generator`` seeded
    with its seed, so a prompt's noise does not depend on which batch it lands in.

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
        """Called with the batch's size after each generation batch (progress bars)."""
        self.sentence_done = sentence_done
        # Few-shot prefix key/value states, reused across label_logprobs calls (see there).
        self.prefix_cache: dict[tuple[Any, ...], Any] = {}

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
        if len(seeds) != len(prompts):
            raise ValueError(f"need one seed per prompt, got {len(seeds)} for {len(prompts)}")
        encoded = [self.tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]
        results: list[Generation | None] = [None] * len(prompts)
        for idx in length_sorted_batches([len(e) for e in encoded], self.batch_size,
                                         longest_first=False):
            batch = self._generate_batch([encoded[i] for i in idx], [prompts[i] for i in idx],
                                         params, [seeds[i] for i in idx])
            for i, gen in zip(idx, batch, strict=True):
                results[i] = gen
            if self.on_batch is not None:
                self.on_batch(len(idx))
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:  # every prompt is in exactly one batch; a gap would misalign outputs
            raise RuntimeError(f"internal error: no generation for prompts {missing[:5]}")
        return cast(list[Generation], results)

    def _generate_batch(
        self, ids: list[list[int]], prompts: list[str], params: SamplingConfig, seeds: list[int]
    ) -> list[Generation]:
        import torch

        device = self.device
        pad = int(self.tokenizer.pad_token_id)
        eos = _eos_ids(self.model, self.tokenizer)
        width = max(len(x) for x in ids)
        input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, seq in enumerate(ids):
            input_ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            mask[row, width - len(seq) :] = 1
        input_ids, mask = input_ids.to(device), mask.to(device)
        gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        out_tokens: list[list[int]] = [[] for _ in ids]
        alive = list(range(len(ids)))  # original row of each live batch row
        past = None
        step_ids = input_ids
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            for _ in range(params.max_new_tokens):
                out = self.model(input_ids=step_ids, attention_mask=mask, position_ids=positions,
                                 past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[:, -1, :].float().cpu()
                next_tokens = [
                    _sample(logits[r], params, gens[alive[r]]) for r in range(len(alive))
                ]
                keep: list[int] = []
                for r, tok in enumerate(next_tokens):
                    row = alive[r]
                    if tok in eos:
                        continue
                    out_tokens[row].append(tok)
                    if params.stop_at_sentence_end and self._row_done(prompts[row],
                                                                      out_tokens[row]):
                        continue
                    keep.append(r)
                if not keep:
                    break
                tokens = torch.tensor([next_tokens[r] for r in keep], dtype=torch.long,
                                      device=device).unsqueeze(-1)
                if len(keep) < len(alive):
                    sel = torch.tensor(keep, dtype=torch.long, device=device)
                    past.batch_select_indices(sel)
                    mask = mask.index_select(0, sel)
                    positions = positions.index_select(0, sel)
                    alive = [alive[r] for r in keep]
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
                positions = positions[:, -1:] + 1
                step_ids = tokens
        return [
            Generation(text=self._decode(toks), num_tokens=len(toks)) for toks in out_tokens
        ]

    def _decode(self, tokens: list[int]) -> str:
        # One sequence of ids decodes to one str (transformers' annotation covers batches too).
        return cast(str, self.tokenizer.decode(tokens, skip_special_tokens=True))

    def _row_done(self, prompt: str, tokens: list[int]) -> bool:
        text = self._decode(tokens[-4:])
        # Only consult the (slower) sentence splitter once a boundary character appeared.
        if self.sentence_done is None or not any(c in text for c in ".!?\n"):
            return False
        return self.sentence_done(prompt, self._decode(tokens))

    def label_logprobs(
        self,
        prefix: str,
        texts: Sequence[str],
        label_continuations: Mapping[str, str],
        suffix: str = "",
    ) -> list[dict[str, float]]:
        """Log-probability of each label continuation after ``prefix + text + suffix``.

        The shared prefix's key/value cache is computed once per backend and prefix, and
        reused for every batch of this and every later call (``prefix_cache``, keyed by the
        prefix's token ids and the model).
        """
        from synth.engines._hf_scoring import hf_label_logprobs

        return hf_label_logprobs(self.model, self.tokenizer, prefix, texts, label_continuations,
                                 suffix, batch_size=self.batch_size,
                                 prefix_cache=self.prefix_cache)


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None),
                  tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def _sample(logits: torch.Tensor, params: SamplingConfig, generator: torch.Generator) -> int:
    """Sample one token id from a row of logits with temperature, top-k and top-p."""
    import torch

    if params.temperature == 0:
        return int(torch.argmax(logits))
    logits = logits / params.temperature
    if params.top_k and params.top_k < logits.numel():
        kth = torch.topk(logits, params.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, sorted_idx = torch.sort(probs, descending=True)
        cum = sorted_probs.cumsum(-1)
        # Keep tokens until the mass before them reaches top_p (the top token is always kept).
        cut = (cum - sorted_probs) >= params.top_p
        sorted_probs = sorted_probs.masked_fill(cut, 0.0)
        probs = torch.zeros_like(probs).scatter(0, sorted_idx, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=generator))
