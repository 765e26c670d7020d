"""Length-sorted batching: the one rule every batched model call uses."""

from __future__ import annotations

from collections.abc import Sequence


def length_sorted_batches(lengths: Sequence[int], batch_size: int, *,
                          longest_first: bool = True) -> list[list[int]]:
    """Split item indices into batches of at most ``batch_size``, sorted by ``lengths`` so
    that each batch pads little. Ties keep input order (the sort is stable), so the batches
    depend on the lengths only.

    Args:
        lengths: one length per item (characters or tokens).
        batch_size: items per batch (>= 1).
        longest_first: longest items first (a too-large batch fails at once), else shortest.

    Raises:
        ValueError: ``batch_size`` is below 1.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__, reverse=longest_first)
    return [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
