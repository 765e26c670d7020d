"""HF generation loop: continuous batching over one call's prompts, batched per-row sampling.

Where the time goes on a CPU (SmolLM2-135M, 2 cores): the weights are read once per forward
step whatever the batch size, so a step with few live rows wastes most of it. The loop keeps
the batch full: prompts wait in a length-sorted queue, and when rows finish (end of their
first sentence, EOS, or ``max_new_tokens``) new prompts are prefilled and merged into the
batch's key/value cache. Finished rows are dropped from the cache lazily (with the next
admission, or once a quarter of the batch is finished) because each drop copies the whole
cache, while a finished row carried along costs one token of compute per step.

Each prompt samples from its own ``torch.Generator`` (one uniform draw per token, inverse
CDF over the filtered distribution), so its output depends only on its prompt and seed,
never on its neighbours, its batch or the order of admission. Sampling is batched over rows:
temperature, top-k, top-p and the CDF are one tensor operation per step.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from synth.engines._hf_cache import cache_kwargs, output_cache
from synth.engines._sampling import SamplingConfig

if TYPE_CHECKING:  # pragma: no cover
    import torch

# Characters after which a row's first sentence may be finished (checked before punkt runs).
BOUNDARY = ".!?\n"


@dataclass
class _Batch:
    """The live batch: one entry per row (``rows[r]`` is its prompt index, -1 once finished)."""

    rows: list[int]
    cache: Any
    mask: torch.Tensor  # [B, T] 1 where the cache (and the next token) holds a real token
    positions: torch.Tensor  # [B, 1] position id of each row's next input token
    tokens: torch.Tensor  # [B, 1] each row's next input token
    finished: int = 0  # rows whose prompt is done but that are still in the tensors

    @property
    def live(self) -> int:
        return len(self.rows) - self.finished


@dataclass
class GenerationLoop:
    """One ``generate`` call's state: the queue, the live batch and each prompt's tokens.

    Args:
        model: the causal LM.
        ids: each prompt's token ids.
        params: sampling parameters.
        seeds: each prompt's seed.
        batch_size: most rows in one forward step.
        eos: token ids that end a row (not kept).
        row_done: ``(prompt index, tokens so far) -> bool``, the early-stop test (or None).
        pad: the pad token id.
        on_done: called with 1 each time a prompt finishes (progress bars), or None.
    """

    model: Any
    ids: Sequence[Sequence[int]]
    params: SamplingConfig
    seeds: Sequence[int]
    batch_size: int
    eos: set[int]
    row_done: Callable[[int, list[int]], bool] | None
    pad: int
    on_done: Callable[[int], None] | None = None
    out: list[list[int]] = field(default_factory=list)
    forward_calls: int = 0

    def run(self) -> list[list[int]]:
        """Generate every prompt's tokens; return them in input order."""
        import torch

        self.out = [[] for _ in self.ids]
        self.gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in self.seeds]
        self.device = next(self.model.parameters()).device
        self.refill_ok = True
        self.admitted = [False] * len(self.ids)
        queue = deque(sorted(range(len(self.ids)), key=lambda i: (len(self.ids[i]), i)))
        batch: _Batch | None = None
        with torch.inference_mode():
            while True:
                if batch is None or not batch.live:
                    if not queue:
                        break
                    take = [queue.popleft() for _ in range(min(self.batch_size, len(queue)))]
                    batch = self._admit(None, take)
                    continue  # every admitted row may have finished at its first token
                free = self.batch_size - batch.live
                if queue and self.refill_ok and free >= min(len(queue),
                                                            max(1, self.batch_size // 4)):
                    take = [queue.popleft() for _ in range(min(free, len(queue)))]
                    batch = self._admit(batch, take)
                elif batch.finished >= max(1, len(batch.rows) // 4):
                    batch = self._compact(batch, [])
                self._step(batch)
        missing = [i for i, seen in enumerate(self.admitted) if not seen]
        if missing:  # every prompt must pass through the batch; a gap would misalign outputs
            raise RuntimeError(f"internal error: no generation for prompts {missing[:5]}")
        return self.out

    # -- sampling and bookkeeping -------------------------------------------------------

    def _take(self, batch_rows: list[int], logits: torch.Tensor) -> list[bool]:
        """Sample one token for each listed row (-1: finished, skipped); return which go on."""
        live = [r for r, p in enumerate(batch_rows) if p >= 0]
        go_on = [False] * len(batch_rows)
        if not live:
            return go_on
        idx = live if len(live) < len(batch_rows) else slice(None)
        picked = sample_rows(logits[idx], self.params, [self.gens[batch_rows[r]] for r in live])
        max_new = self.params.max_new_tokens
        for r, tok in zip(live, picked, strict=True):
            p = batch_rows[r]
            if tok in self.eos:
                continue
            toks = self.out[p]
            toks.append(tok)
            if len(toks) >= max_new:
                continue
            if self.row_done is not None and self.row_done(p, toks):
                continue
            go_on[r] = True
        return go_on

    def _step(self, batch: _Batch) -> None:
        import torch

        out = self.model(input_ids=batch.tokens, attention_mask=batch.mask,
                         position_ids=batch.positions, **cache_kwargs(self.model, batch.cache),
                         use_cache=True)
        self.forward_calls += 1
        batch.cache = output_cache(out)
        go_on = self._take(batch.rows, out.logits[:, -1, :].float().cpu())
        nxt = [self.out[p][-1] if p >= 0 and go_on[r] else self.pad
               for r, p in enumerate(batch.rows)]
        for r, p in enumerate(batch.rows):
            if p >= 0 and not go_on[r]:
                batch.rows[r] = -1
                batch.finished += 1
                if self.on_done is not None:
                    self.on_done(1)
        batch.tokens = torch.tensor(nxt, dtype=torch.long).unsqueeze(-1).to(self.device)
        batch.mask = torch.cat([batch.mask, torch.ones_like(batch.mask[:, :1])], dim=-1)
        batch.positions = batch.positions + 1

    # -- admission and compaction -------------------------------------------------------

    def _prefill(self, take: list[int]) -> _Batch:
        """Run the prompts ``take`` through the model and sample their first tokens."""
        import torch

        width = max(len(self.ids[p]) for p in take)
        input_ids = torch.full((len(take), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(take), width), dtype=torch.long)
        for r, p in enumerate(take):
            seq = self.ids[p]
            input_ids[r, width - len(seq):] = torch.tensor(list(seq), dtype=torch.long)
            mask[r, width - len(seq):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        input_ids, mask, positions = (t.to(self.device) for t in (input_ids, mask, positions))
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions,
                         use_cache=True, logits_to_keep=1)
        self.forward_calls += 1
        rows = list(take)
        for p in take:
            self.admitted[p] = True
        go_on = self._take(rows, out.logits[:, -1, :].float().cpu())
        nxt = [self.out[p][-1] if go_on[r] else self.pad for r, p in enumerate(rows)]
        finished = 0
        for r in range(len(rows)):
            if not go_on[r]:
                rows[r] = -1
                finished += 1
                if self.on_done is not None:
                    self.on_done(1)
        batch = _Batch(rows=rows, cache=output_cache(out),
                       mask=torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1),
                       positions=positions[:, -1:] + 1,
                       tokens=torch.tensor(nxt, dtype=torch.long).unsqueeze(-1).to(self.device),
                       finished=finished)
        if not _mergeable(batch.cache):
            # A cache we cannot splice (sliding-window layers, other cache types): batches
            # run to their end as they were admitted, with eager compaction.
            self.refill_ok = False
        return batch

    def _admit(self, batch: _Batch | None, take: list[int]) -> _Batch:
        new = self._prefill(take)
        if batch is None or not batch.live:
            return self._compact(new, [])
        return self._compact(batch, [new])

    def _compact(self, batch: _Batch, extra: list[_Batch]) -> _Batch:
        """Drop finished rows of ``batch``, append ``extra`` batches, trim all-pad columns."""
        import torch

        parts: list[tuple[_Batch, torch.Tensor | None]] = []
        for b in [batch, *extra]:
            keep = [r for r, p in enumerate(b.rows) if p >= 0]
            if not keep:
                continue
            sel = None if len(keep) == len(b.rows) else torch.tensor(keep, device=self.device)
            parts.append((b, sel))
        if not parts:
            return _Batch(rows=[], cache=batch.cache, mask=batch.mask[:0],
                          positions=batch.positions[:0], tokens=batch.tokens[:0])
        if len(parts) == 1:
            b, sel = parts[0]
            if sel is not None:
                b.cache.batch_select_indices(sel)
                b = _Batch(rows=[b.rows[int(i)] for i in sel.tolist()], cache=b.cache,
                           mask=b.mask.index_select(0, sel),
                           positions=b.positions.index_select(0, sel),
                           tokens=b.tokens.index_select(0, sel))
            return _trim(b)
        width = max(b.mask.shape[1] for b, _ in parts)
        layers = [b.cache.layers for b, _ in parts]
        for li, layer in enumerate(layers[0]):
            keys, values = [], []
            for (_, sel), ls in zip(parts, layers, strict=True):
                k, v = ls[li].keys, ls[li].values
                if sel is not None:
                    k, v = k.index_select(0, sel), v.index_select(0, sel)
                keys.append(_left_pad(k, width - 1, dim=2))
                values.append(_left_pad(v, width - 1, dim=2))
            layer.keys, layer.values = torch.cat(keys, 0), torch.cat(values, 0)
        masks, positions, tokens, rows = [], [], [], []
        for b, sel in parts:
            m, pos, tok = b.mask, b.positions, b.tokens
            if sel is not None:
                m, pos, tok = m.index_select(0, sel), pos.index_select(0, sel), \
                    tok.index_select(0, sel)
            masks.append(_left_pad(m, width, dim=1))
            positions.append(pos)
            tokens.append(tok)
            rows.extend(b.rows if sel is None else [b.rows[int(i)] for i in sel.tolist()])
        merged = _Batch(rows=rows, cache=parts[0][0].cache, mask=torch.cat(masks, 0),
                        positions=torch.cat(positions, 0), tokens=torch.cat(tokens, 0))
        return _trim(merged)


def _mergeable(cache: Any) -> bool:
    from transformers.cache_utils import DynamicLayer

    layers: list[Any] = list(getattr(cache, "layers", None) or [])
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


def _left_pad(t: torch.Tensor, width: int, *, dim: int) -> torch.Tensor:
    import torch

    extra = width - t.shape[dim]
    if extra <= 0:
        return t
    shape = list(t.shape)
    shape[dim] = extra
    return torch.cat([torch.zeros(shape, dtype=t.dtype, device=t.device), t], dim=dim)


def _trim(batch: _Batch) -> _Batch:
    """Drop leading columns that no row attends to (the mask's last column is the next token)."""
    used = batch.mask[:, :-1].any(0)
    if bool(used.all()) or not _mergeable(batch.cache):
        return batch
    first = int(used.nonzero()[0]) if bool(used.any()) else used.shape[0]
    if first == 0:
        return batch
    for layer in batch.cache.layers:
        layer.keys = layer.keys[:, :, first:].contiguous()
        layer.values = layer.values[:, :, first:].contiguous()
    batch.mask = batch.mask[:, first:]
    return batch


def sample_rows(logits: torch.Tensor, params: SamplingConfig,
                generators: Sequence[torch.Generator]) -> list[int]:
    """Sample one token id per row of ``logits`` ([rows, vocab], float32, CPU).

    Temperature, top-k and top-p filter each row; then row ``r`` draws one uniform number
    from ``generators[r]`` and takes the token where the filtered distribution's cumulative
    sum passes it (inverse CDF). Temperature 0 is greedy and draws nothing.
    """
    import torch

    if params.temperature == 0:
        return [int(t) for t in logits.argmax(-1).tolist()]
    logits = logits / params.temperature
    vocab = logits.shape[-1]
    if params.top_k and params.top_k < vocab:
        kth = torch.topk(logits, params.top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, sorted_idx = torch.sort(probs, dim=-1, descending=True, stable=True)
        # Keep tokens until the mass before them reaches top_p (the top token is always kept).
        cut = (sorted_probs.cumsum(-1) - sorted_probs) >= params.top_p
        probs = torch.zeros_like(probs).scatter(-1, sorted_idx,
                                                sorted_probs.masked_fill(cut, 0.0))
    cdf = probs.cumsum(-1)
    draws = torch.cat([torch.rand(1, generator=g) for g in generators]).to(cdf.dtype)
    target = (draws * cdf[:, -1]).unsqueeze(-1)
    picked = torch.searchsorted(cdf, target, right=True).clamp_(max=vocab - 1)
    return [int(t) for t in picked.squeeze(-1).tolist()]
