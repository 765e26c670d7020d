"""length_sorted_batches: the one batching rule (HF generation, label scoring, classifiers)."""

from __future__ import annotations

import pytest

from synth.core import length_sorted_batches


def test_longest_first_with_ties_in_input_order():
    assert length_sorted_batches([3, 5, 5, 1, 3, 7], 2) == [[5, 1], [2, 0], [4, 3]]


def test_shortest_first_covers_every_index_once():
    lengths = [3, 5, 5, 1, 3, 7, 2]
    batches = length_sorted_batches(lengths, 4, longest_first=False)
    assert batches == [[3, 6, 0, 4], [1, 2, 5]]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


def test_empty_and_bad_batch_size():
    assert length_sorted_batches([], 3) == []
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        length_sorted_batches([1], 0)
