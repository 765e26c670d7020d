"""Seed derivation: one independent stream per (run seed, item) pair.

``seed + index`` makes runs with neighbouring seeds share streams (seed 0's prompt 1 is seed
1's prompt 0); hashing the pair gives unrelated streams for every (seed, keys) combination.
"""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from ``seed`` and ``keys`` by hashing (stable across processes).

    >>> derive_seed(0, "prompt", 1) != derive_seed(1, "prompt", 0)
    True
    """
    text = ":".join([str(seed), *(str(k) for k in keys)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1
