"""Toy task scorers with known behaviour, and small suites, for the formalize tests."""

from __future__ import annotations

from collections.abc import Sequence

import pytest


class KeywordScorer:
    """p(positive) = 0.9 if a positive keyword occurs and no "not", 0.1 otherwise; typos and
    nonsense leave it alone unless they break the keyword."""

    labels = ["negative", "positive"]

    def __init__(self, name: str = "keyword", positives: Sequence[str] = ("good", "great")):
        self.name = name
        self.positives = tuple(positives)
        self.calls: list[int] = []

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        self.calls.append(len(texts))
        out = []
        for text in texts:
            words = text.lower().replace(".", " ").replace(",", " ").split()
            pos = any(w in self.positives for w in words) and "not" not in words
            p = 0.9 if pos else 0.1
            out.append({"negative": 1 - p, "positive": p})
        return out


class LengthScorer:
    """p(positive) = min(1, len(text) / 100): any added text raises it (for DIR tests)."""

    labels = ["negative", "positive"]
    name = "length"

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        return [{"positive": min(1.0, len(t) / 100), "negative": 1 - min(1.0, len(t) / 100)}
                for t in texts]


@pytest.fixture
def keyword() -> KeywordScorer:
    return KeywordScorer()


def suite_dict(*tests: dict, **extra) -> dict:
    data = {"name": "toy", "labels": ["negative", "positive"], "tests": list(tests)}
    data.update(extra)
    return data
