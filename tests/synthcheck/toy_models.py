"""Toy task models for the pipeline tests, loaded through the `python:` spec."""

from __future__ import annotations

import os
import time

POSITIVE = {"good", "great", "funny", "bright", "loved", "lovely", "wonderful"}
NEGATIVE = {"bad", "dull", "long", "dark", "worst", "mess", "boring"}


def keyword_sentiment(texts: list[str]) -> list[dict[str, float]]:
    """Counts positive and negative words; ``TOY_DELAY`` seconds of sleep per call."""
    time.sleep(float(os.environ.get("TOY_DELAY", "0")))
    out = []
    for text in texts:
        words = text.lower().replace(".", " ").split()
        score = sum(w in POSITIVE for w in words) - sum(w in NEGATIVE for w in words)
        p = min(0.95, max(0.05, 0.5 + 0.2 * score))
        out.append({"negative": 1 - p, "positive": p})
    return out


def parity_sentiment(texts: list[str]) -> list[dict[str, float]]:
    """Positive when a text has an even number of words: a deterministic toy that disagrees
    with any reference on some sentences, so a run of gibberish still has a hard subset."""
    out = []
    for text in texts:
        p = 0.8 if len(text.split()) % 2 == 0 else 0.2
        out.append({"negative": 1 - p, "positive": p})
    return out


TOY_SUITE = """\
name: toy
labels: [negative, positive]
tests:
  - {name: adj, type: mft, template: "This {NOUN} is {POS_ADJ}.", label: positive}
"""
"""A one-test MFT suite (labels negative/positive) for the CLI tests."""


def write_toy_suite(folder, monkeypatch, module: str, probs: dict[str, float]):  # noqa: ANN001, ANN201
    """Write ``toy.yaml`` (:data:`TOY_SUITE`) and a ``python:<module>:predict`` model that gives
    every text ``probs`` into ``folder``, put ``folder`` on the import path; return it."""
    (folder / "toy.yaml").write_text(TOY_SUITE)
    (folder / f"{module}.py").write_text(
        f"def predict(texts):\n    return [{probs!r} for _ in texts]\n")
    monkeypatch.syspath_prepend(str(folder))
    return folder
