"""Seed derivation: every stream is named by (run seed, keys), hashed, never seed + index."""

from __future__ import annotations

import random

from synth.core import derive_rng, derive_seed, seed_key


def test_seed_key_joins_seed_and_keys() -> None:
    assert seed_key(0, "query", 7) == "0:query:7"


def test_query_stream_is_the_one_stage_1_always_drew_from() -> None:
    # derive_rng seeds random.Random with the key text: the corpus of a run made before the
    # derivation was shared is the corpus of the same run now.
    assert derive_rng(0, "query", 5).randrange(10**6) == 810124
    assert derive_rng(0, "query", 5).random() == random.Random("0:query:5").random()


def test_neighbouring_seeds_and_keys_give_unrelated_streams() -> None:
    assert derive_rng(0, "query", 1).random() != derive_rng(1, "query", 0).random()
    assert derive_seed(0, "prompt", 1) != derive_seed(1, "prompt", 0)
    assert derive_seed(3, "focus", 1, "superb", 0) == 5993683249019478853
