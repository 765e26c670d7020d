"""Label log-probabilities with transformers, reusing the few-shot prefix's key/value cache.

The few-shot prefix is the same for every text, so its key/value cache is computed once and
reused for every batch: each batch only runs the per-text suffix tokens (text + suffix, plus
the leading tokens of multi-token labels), right-padded, at positions that continue after the
prefix. The result equals one full-prompt forward per text (see tests/discovery).

Tokenization: the prefix is tokenized alone (with the tokenizer's special tokens, e.g. BOS),
and ``text + suffix + label`` alone (without them); the ids are concatenated. Within one text,
each label's tokens are what follows the longest common token prefix of all labels'
``text + suffix + label`` encodings, so every label is scored against the same context even
when the tokenizer merges across the suffix/label boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth.core._batching import length_sorted_batches
from synth.core._errors import ConfigError


@dataclass(frozen=True)
class _Row:
    """One forward row: suffix ids (after the prefix) and what to read from it."""

    text_index: int
    ids: tuple[int, ...]
    # (label, [(position in ids whose next-token distribution we read, target token id), ...])
    reads: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]


def _common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for i in range(n):
        tok = first[i]
        if any(s[i] != tok for s in seqs[1:]):
            return i
    return n


def check_label_words(tokenizer: Any, label_continuations: Mapping[str, str]) -> None:
    """Refuse label continuations that tokenize to nothing.

    Raises:
        ConfigError: a label's continuation encodes to zero tokens.
    """
    for label, word in label_continuations.items():
        if not tokenizer(word, add_special_tokens=False)["input_ids"]:
            raise ConfigError(
                f"label word {word!r} of label '{label}' tokenizes to nothing",
                where="reference.label_words",
                fix="use a non-empty continuation such as ' positive'",
            )


def build_rows(
    tokenizer: Any,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
) -> list[_Row]:
    """Tokenize each ``text + suffix + label`` and plan the rows that score every label.

    Labels whose continuation is one token after the shared context share one row; a
    multi-token label gets its own row (context + all its tokens but the last).

    Raises:
        ConfigError: a label's continuation adds no tokens after the shared context.
    """
    labels = list(label_continuations)
    check_label_words(tokenizer, label_continuations)
    strings = [t + suffix + label_continuations[lab] for t in texts for lab in labels]
    encoded = tokenizer(strings, add_special_tokens=False)["input_ids"]
    rows: list[_Row] = []
    n_lab = len(labels)
    for i in range(len(texts)):
        fulls = encoded[i * n_lab:(i + 1) * n_lab]
        ctx_len = _common_prefix_len(fulls)
        ctx = tuple(fulls[0][:ctx_len])
        single: list[tuple[str, tuple[tuple[int, int], ...]]] = []
        for lab, full in zip(labels, fulls, strict=True):
            targets = full[ctx_len:]
            if not targets:
                raise ConfigError(
                    f"label word {label_continuations[lab]!r} of label '{lab}' adds no tokens "
                    f"after the text (it is a prefix of another label's word)",
                    where="reference.label_words",
                    fix="choose label words that are not prefixes of each other",
                )
            reads = tuple((ctx_len - 1 + j, int(tok)) for j, tok in enumerate(targets))
            if len(targets) == 1:
                single.append((lab, reads))
            else:
                rows.append(_Row(i, ctx + tuple(targets[:-1]), ((lab, reads),)))
        if single:
            rows.append(_Row(i, ctx, tuple(single)))
    return rows


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
    cache = out.past_key_values
    layers = [(layer.keys, layer.values) for layer in cache.layers]
    last = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
    return layers, last


_PREFIX_CACHE_SIZE = 4


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
    return state  # type: ignore[no-any-return]


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
    prefix_ids = list(tokenizer(prefix)["input_ids"]) if prefix else []
    if not prefix_ids and tokenizer.bos_token_id is not None and getattr(
        tokenizer, "add_bos_token", False
    ):
        prefix_ids = [tokenizer.bos_token_id]
    rows = build_rows(tokenizer, texts, label_continuations, suffix)
    if not prefix_ids and any(len(r.ids) == 0 for r in rows):
        raise ConfigError("the prompt before a label is empty", where="reference.prompt",
                          fix="give the reference a non-empty prompt or suffix")
    layers, prefix_last = _cached_prefix_state(model, prefix_ids, prefix_cache)
    p_len = len(prefix_ids)
    device = model.device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    results: list[dict[str, float]] = [{} for _ in texts]
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
            # Positions this batch reads; rows sorted by length share most of them.
            positions = sorted({pos for row in rows_b for _, reads in row.reads
                                for pos, _ in reads if pos >= 0})
            keep = torch.tensor(positions, dtype=torch.long, device=device)
            position_ids = (torch.arange(width) + p_len).unsqueeze(0).expand(len(rows_b), -1)
            with torch.inference_mode():
                out = model(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    position_ids=position_ids.to(device),
                    past_key_values=_batch_cache(model, layers, len(rows_b)) if layers else None,
                    use_cache=layers is not None,
                    logits_to_keep=keep,
                )
            logp = torch.log_softmax(out.logits.float(), dim=-1).cpu()
            col = {pos: c for c, pos in enumerate(positions)}
            for b in range(len(rows_b)):
                logp_rows[b] = {pos: logp[b, c] for pos, c in col.items()}
        for b, row in enumerate(rows_b):
            for label, reads in row.reads:
                total = 0.0
                for pos, tok in reads:
                    dist = prefix_last if pos < 0 else logp_rows[b][pos]
                    total += float(dist[tok])
                results[row.text_index][label] = total
    labels = list(label_continuations)
    return [{lab: res[lab] for lab in labels} for res in results]
