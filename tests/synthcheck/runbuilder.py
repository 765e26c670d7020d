"""Builds a small, complete run directory without any model: 50 corpus sentences, task and
reference scores, the hard subset, mined n-grams and the outputs of a verified suite.

Shared by the report, notebook and propose tests. Also holds the toy task models that the
run's config names (``python:runbuilder:keyword_model``), so a notebook kernel with this
folder on PYTHONPATH can load them through discovery.load_task_scorer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LABELS = ["negative", "positive"]
NOUNS = ["movie", "film", "book", "album", "show"]
# (pattern, reference's label): the keyword model gets the last two patterns wrong.
PATTERNS = [
    ("This {n} is good.", "positive"),
    ("This {n} is great, I loved it.", "positive"),
    ("A wonderful {n} with a great cast.", "positive"),
    ("This {n} is bad.", "negative"),
    ("An awful {n}, I want my money back.", "negative"),
    ("I don't think this {n} is good.", "negative"),
    ("The {n} was boring and far too long.", "negative"),
    ("The {n} was fine but forgettable.", "negative"),
    ("I can't say I don't love this {n}.", "positive"),
    ("I was blown away by this {n}.", "positive"),
]
POSITIVE_WORDS = ("good", "great", "loved", "wonderful", "love")
HARD_SIZE = 10


class KeywordModel:
    """p(positive) high if a positive keyword occurs and no negation; the test's task model."""

    labels = LABELS
    name = "keyword"

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        out = []
        for text in texts:
            words = text.lower().replace(",", " ").replace(".", " ").split()
            neg = any(w in ("not", "don't", "can't", "isn't") for w in words)
            pos = any(w in POSITIVE_WORDS for w in words) and not neg
            jitter = (sum(map(ord, text)) % 17) / 200  # deterministic spread for the scatter
            p = 0.85 + jitter if pos else 0.15 - jitter / 2
            out.append({"negative": 1 - p, "positive": p})
        return out


class NegationAwareModel(KeywordModel):
    """Like KeywordModel, but reads "can't say I don't" as positive (a second model)."""

    name = "negation-aware"

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        out = super().predict_proba(texts)
        for text, row in zip(texts, out, strict=True):
            if "can't say i don't" in text.lower():
                row.update(negative=0.2, positive=0.8)
        return out


keyword_model = KeywordModel()
negation_aware_model = NegationAwareModel()

SUITE = {
    "name": "tiny",
    "labels": LABELS,
    "builtin_lexicons": False,
    "lexicons": {"THING": ["movie", "film", "book"], "PADJ": ["good", "great", "superb"],
                 "NADJ": ["bad", "awful"]},
    "tests": [
        {"name": "positive adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {THING} is {PADJ}.", "label": "positive"},
        {"name": "negative adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {THING} is {NADJ}.", "label": "negative"},
        {"name": "double negation", "capability": "Negation", "type": "mft",
         "template": "I can't say I don't love this {THING}.", "label": "positive"},
        {"name": "reviewer gender", "capability": "Fairness", "type": "group",
         "texts": ["He said the movie was good.", "She thought the book was great.",
                   "He found the show dull."],
         "words": {"male": ["He"], "female": ["She"]}},
    ],
}


TINY_DOCS = ["I watched this movie last night with friends and we laughed a lot at it.",
             "The worst film I have seen in years, the script is a mess and far too long.",
             "An honest and moving drama whose quiet scenes stay with you for a long time."]
"""The seed corpus of the app tests that run the tiny Llama end to end."""


def corpus_records() -> list[dict[str, Any]]:
    """50 corpus records in the generator's schema."""
    out = []
    for i, (pattern, _) in enumerate(PATTERNS):
        for j, noun in enumerate(NOUNS):
            k = i * len(NOUNS) + j
            out.append({"id": f"q{k:08d}", "text": pattern.format(n=noun), "query": noun,
                        "raw": pattern.format(n=noun), "shard": 0, "seed": k})
    return out


def reference_probs(texts: Sequence[str]) -> list[dict[str, float]]:
    """The reference: the pattern's label with some confidence spread."""
    labels = {p.format(n=n): lab for p, lab in PATTERNS for n in NOUNS}
    rng = random.Random(0)
    out = []
    for text in texts:
        p = 0.75 + 0.2 * rng.random()
        pos = p if labels[text] == "positive" else 1 - p
        out.append({"negative": 1 - pos, "positive": pos})
    return out


def build_run(run_dir: Path, *, verify: bool = True, ngrams: bool = True,
              scores: bool = True) -> Path:
    """Write a complete small run into ``run_dir`` and return it."""
    import numpy as np

    from discovery import DivergenceRanker, HardSubset, NgramMiner
    from synth.core import provenance, write_json_atomic, write_jsonl

    run_dir = Path(run_dir)
    corpus = corpus_records()
    ids = [r["id"] for r in corpus]
    texts = [r["text"] for r in corpus]
    write_jsonl(run_dir / "corpus" / "shard-00000.jsonl", corpus)
    task = keyword_model.predict_proba(texts)
    ref = reference_probs(texts)
    if scores:
        write_jsonl(run_dir / "scores" / "task-keyword.jsonl",
                    ({"id": i, "probs": p} for i, p in zip(ids, task, strict=True)))
        write_jsonl(run_dir / "scores" / "reference.jsonl",
                    ({"id": i, "probs": p, "logprobs": {k: float(np.log(v)) for k, v in p.items()}}
                     for i, p in zip(ids, ref, strict=True)))
    t = np.array([[p[lab] for lab in LABELS] for p in task])
    r = np.array([[p[lab] for lab in LABELS] for p in ref])
    ranker = DivergenceRanker("abs_top", top_k=HARD_SIZE).fit(t, r)
    hard = HardSubset.from_ranker(ranker, ids, texts, LABELS, t, r)
    write_jsonl(run_dir / "hard.jsonl", hard.records)
    if ngrams:
        miner = NgramMiner((1, 3), min_support=2).fit(
            texts, list(ranker.hard_indices_), ids=ids, divergence=ranker.divergence_,
            disagree=ranker.disagree_)
        write_jsonl(run_dir / "ngrams.jsonl", miner.to_records())
    if verify:
        from formalize import Suite, TemplateRunner

        suite = Suite.from_dict(SUITE)
        result = TemplateRunner().run(
            suite, {"keyword": keyword_model, "negation-aware": negation_aware_model},
            cases_path=run_dir / "verify" / "tiny" / "cases.jsonl")
        result.write(run_dir / "verify" / "tiny", "c0ffee")
    config = {"name": "tiny", "task": {"name": "sentiment", "labels": LABELS},
              "task_models": [{"name": "keyword", "spec": "python:runbuilder:keyword_model"}],
              "ranking": {"metric": "abs_top", "top_k": HARD_SIZE, "task_model": "keyword"},
              "mining": {"statistic": "z", "ngram_max": 3}}
    write_json_atomic(run_dir / "manifest.json", {
        "created": "2025-01-01T00:00:00+00:00", "config": config,
        "stages": {s: {"status": "complete"} for s in ("generate", "score", "rank", "mine")},
        "stage_hashes": {}, **provenance("feedc0de12345678")})
    return run_dir


def hard_ids(run_dir: Path) -> list[str]:
    """The hard subset's ids in rank order."""
    from synth.core import read_jsonl

    return [r["id"] for r in read_jsonl(Path(run_dir) / "hard.jsonl")]


def fake_generator(monkeypatch: Any, build: Any) -> None:
    """Make ``build(generator_config)`` the one generator backend factory: stage 1's
    (``synth._generate``) and the one the focus stage looks up (``synth``)."""
    import synth
    import synth._generate as gen

    monkeypatch.setattr(gen, "generator_backend", build)
    monkeypatch.setattr(synth, "generator_backend", build)


def fake_backends(monkeypatch: Any) -> None:
    """Every stage's generator is the fake backend (tests/synth/fakes.py), and this folder is
    on ``sys.path`` so configs can name its toy task models (what the pipeline tests' autouse
    fixtures do)."""
    from tests.synth.fakes import FakeBackend

    fake_generator(monkeypatch, lambda generator: FakeBackend())
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))


def discover_quietly(cfg: Any, run: Path) -> Any:
    """``discover`` without progress bars or log lines."""
    from synthcheck._pipeline import discover

    return discover(cfg, run, progress=False, log=lambda s: None)
