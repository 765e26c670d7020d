"""Label log-probabilities with transformers, reusing the few-shot prefix's key/value cache.

The few-shot prefix is the same for every text, so its key/value cache is computed once and
reused for every batch: each batch only runs the per-text rows (text + suffix, plus the
leading tokens of multi-token labels), right-padded, at positions that continue after the
prefix. The result equals one full-prompt forward per text (see tests/discovery).

What is tokenized and read, and how results are assembled, is the shared plan in
``synth.engines._planner`` (the vLLM path runs the same plan).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.core._batching import length_sorted_batches
from synth.core._errors import ConfigError
from synth.engines._hf_cache import cache_kwargs, output_cache
from synth.engines._planner import (
    PrefixAlignment,
    build_rows,
    check_label_words,
    plan_label_scoring,
)

__all__ = ["build_rows", "check_label_words", "hf_label_logprobs"]


def _prefix_state(model: Any, prefix_ids: list[int]) -> tuple[Any, Any]:
    """Run the prefix once; return (per-layer (keys, values) tensors, last-position log-probs)."""
    import torch

    if not prefix_ids:
        return None, None
    device = model.device
    with torch.inference_mode():
        out = model(
            input_ids=torch.tensor([prefix_ids], device=device),
            use_cache=True,
            logits_to_keep=1,
        )
    cache = output_cache(out)
    layers = [(layer.keys, layer.values) for layer in cache.layers]
    last = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
    return layers, last


_PREFIX_CACHE_SIZE = 4

HEAD_AT_READS_ONLY = True
"""Run the output head only on the (row, position) pairs whose distribution is read. False
runs it at every position any row of the batch reads, for every row (the former way, the
same results; ``bench/reference.py --head-compare`` measures both side by side)."""


def _cached_prefix_state(model: Any, prefix_ids: list[int],
                         cache: dict[tuple[Any, ...], Any] | None) -> tuple[Any, Any]:
    """``_prefix_state``, looked up in (and stored into) ``cache`` when one is given."""
    if cache is None:
        return _prefix_state(model, prefix_ids)
    key = (id(model), str(model.device), tuple(prefix_ids))
    state = cache.get(key)
    if state is None:
        state = _prefix_state(model, prefix_ids)
        while len(cache) >= _PREFIX_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = state
    return state


def _head_logprobs(model: Any, hidden: Any) -> Any:
    """Next-token log-probabilities from final hidden states (m x d -> m x vocab): the
    model's output head, with its final logit soft-capping when it has one (Gemma 2/3)."""
    import torch

    logits = model.get_output_embeddings()(hidden)
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap is not None:
        logits = torch.tanh(logits / cap) * cap
    return torch.log_softmax(logits.float(), dim=-1)


def _batch_cache(model: Any, layers: list[tuple[Any, Any]], batch: int) -> Any:
    """A fresh DynamicCache holding the prefix expanded to ``batch`` rows.

    Built anew for every batch because the forward pass appends to the cache it is given.
    ``expand`` makes views, and DynamicLayer.update concatenates into new tensors, so the
    stored prefix tensors are never modified.
    """
    from transformers import DynamicCache

    data = [(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in layers]
    return DynamicCache(data, config=model.config)


def hf_label_logprobs(
    model: Any,
    tokenizer: Any,
    prefix: str,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
    *,
    batch_size: int = 32,
    progress: bool = False,
    prefix_cache: dict[tuple[Any, ...], Any] | None = None,
    align: PrefixAlignment | None = None,
) -> list[dict[str, float]]:
    """Log-probability of each label's continuation after ``prefix + text + suffix``.

    Args:
        model: a transformers causal LM (eval mode).
        tokenizer: its tokenizer.
        prefix: the shared few-shot prefix; its key/value cache is computed once.
        texts: the texts to score (results keep this order).
        label_continuations: label name -> continuation, e.g. ``{"positive": " positive"}``.
        suffix: text after each input, e.g. ``"\\nAnswer:"``.
        batch_size: rows per forward pass (does not change results).
        progress: show a tqdm progress bar.
        prefix_cache: a dict that keeps the prefix's key/value states between calls, keyed
            by the model and the prefix's token ids (``HFBackend`` passes its own). The
            stored tensors are never modified (see ``_batch_cache``). At most
            ``_PREFIX_CACHE_SIZE`` prefixes are kept; the oldest is dropped first.
        align: pad the prefix to whole blocks of tokens, as the vLLM path does for its
            block-wise prefix cache (``synth.engines._planner.align_prefix_ids``); ``None``
            scores the prefix as tokenized.

    Returns:
        One ``{label: log-probability}`` dict per text; multi-token labels sum their tokens.

    Raises:
        ConfigError: a label continuation tokenizes to nothing, or the prompt is empty.
    """
    import torch

    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}", where="batch_size")
    if not texts:
        return []
    plan = plan_label_scoring(tokenizer, prefix, texts, label_continuations, suffix,
                              align=align)
    prefix_ids, rows = list(plan.prefix_ids), plan.rows
    layers, prefix_last = _cached_prefix_state(model, prefix_ids, prefix_cache)
    p_len = len(prefix_ids)
    device = model.device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    scores = plan.new_scores()
    batches = length_sorted_batches([len(r.ids) for r in rows], batch_size)
    if progress:
        from tqdm.auto import tqdm

        batches = tqdm(batches, desc="reference", unit="batch")
    for batch_rows in batches:
        rows_b = [rows[r] for r in batch_rows]
        width = max(len(r.ids) for r in rows_b)
        logp_rows: list[dict[int, Any]] = [{} for _ in rows_b]
        if width > 0:
            ids = torch.full((len(rows_b), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows_b), p_len + width), dtype=torch.long)
            mask[:, :p_len] = 1
            for b, row in enumerate(rows_b):
                ids[b, :len(row.ids)] = torch.tensor(row.ids, dtype=torch.long)
                mask[b, p_len:p_len + len(row.ids)] = 1
            # Only the (row, position) pairs whose next-token distribution is read go
            # through the output head: a large vocabulary (gemma3's 262k) makes the head
            # the costliest layer when it runs at every position of every row.
            wanted = [sorted({pos for _, reads in row.reads for pos, _ in reads if pos >= 0})
                      for row in rows_b]
            position_ids = (torch.arange(width) + p_len).unsqueeze(0).expand(len(rows_b), -1)
            decoder_in = dict(
                input_ids=ids.to(device), attention_mask=mask.to(device),
                position_ids=position_ids.to(device),
                use_cache=layers is not None)
            cache = _batch_cache(model, layers, len(rows_b)) if layers else None
            # A model without a separate decoder (e.g. a wrapper) gets the full forward.
            if HEAD_AT_READS_ONLY and hasattr(model, "get_decoder"):
                with torch.inference_mode():
                    decoder = model.get_decoder()
                    hidden = decoder(**decoder_in,
                                     **cache_kwargs(decoder, cache)).last_hidden_state
                    at_b = [b for b, ps in enumerate(wanted) for _ in ps]
                    at_p = [p for ps in wanted for p in ps]
                    logp = _head_logprobs(model, hidden[at_b, at_p]).cpu()
                it = iter(range(len(at_p)))
                for b, ps in enumerate(wanted):
                    logp_rows[b] = {pos: logp[next(it)] for pos in ps}
            else:  # the head at every position some row of the batch reads, for every row
                positions = sorted({p for ps in wanted for p in ps})
                keep = torch.tensor(positions, dtype=torch.long, device=device)
                with torch.inference_mode():
                    out = model(**decoder_in, **cache_kwargs(model, cache),
                                logits_to_keep=keep)
                logp = torch.log_softmax(out.logits.float(), dim=-1).cpu()
                for b in range(len(rows_b)):
                    logp_rows[b] = {pos: logp[b, c] for c, pos in enumerate(positions)}
        for b, row in enumerate(rows_b):
            for label, reads in row.reads:
                total = 0.0
                for pos, tok in reads:
                    dist = prefix_last if pos < 0 else logp_rows[b][pos]
                    total += float(dist[tok])
                scores.set(row.text_index, label, total)
    return scores.result()
