"""Seed derivation: one independent stream per (run seed, item) pair.

``seed + index`` makes runs with neighbouring seeds share streams (seed 0's prompt 1 is seed
1's prompt 0); hashing the pair gives unrelated streams for every (seed, keys) combination.
"""

from __future__ import annotations

import hashlib
import random


def seed_key(seed: int, *keys: object) -> str:
    """The text both derivations hash: ``seed`` and ``keys`` joined by ``:``.

    >>> seed_key(0, "query", 7)
    '0:query:7'
    """
    return ":".join([str(seed), *(str(k) for k in keys)])


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from ``seed`` and ``keys`` by hashing (stable across processes):
    what a backend or ``torch.Generator`` takes.

    >>> derive_seed(0, "prompt", 1) != derive_seed(1, "prompt", 0)
    True
    """
    text = seed_key(seed, *keys)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def derive_rng(seed: int, *keys: object) -> random.Random:
    """A ``random.Random`` for the stream named by ``seed`` and ``keys`` (stable across
    processes): what Python-side draws (which query, which fill, which typo) take.

    It is seeded with :func:`seed_key`'s text, which ``random.Random`` hashes with SHA-512
    itself, so ``derive_rng(seed, "query", i)`` is the stream stage 1's queries always used.
    Separate concerns take separate keys (``"query"`` picks, ``"prompt"`` samples), never
    one value for both.

    >>> derive_rng(0, "query", 1).random() == derive_rng(0, "query", 1).random()
    True
    """
    return random.Random(seed_key(seed, *keys))
