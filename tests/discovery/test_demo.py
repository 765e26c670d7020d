"""The Rotten Tomatoes split and the demo model: one model per split, never trained on the
held-out sentences that `evaluate` uses."""

from __future__ import annotations

import re

import pytest

import discovery._demo as demo
from discovery import (
    EvaluationConfig,
    SklearnScorer,
    TaskModelConfig,
    ensure_demo_model,
    load_task_scorer,
    rotten_tomatoes_split,
    train_demo_model,
)
from discovery._demo import demo_model_path
from synth import load_movie_reviews
from synth.core import ConfigError

LABELS = ["negative", "positive"]


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def no_training(monkeypatch):
    """Record (and refuse) any demo-model training."""
    calls = []

    def refuse(out=None, **kwargs):
        calls.append((out, kwargs))
        raise RuntimeError("training refused in this test")

    monkeypatch.setattr(demo, "train_demo_model", refuse)
    return calls


@pytest.mark.parametrize(("seed", "fraction"), [(0, 0.2), (7, 0.35)])
def test_rotten_tomatoes_split_is_disjoint_and_deterministic(seed, fraction):
    docs = load_movie_reviews("rotten_tomatoes")
    train, held = rotten_tomatoes_split(seed=seed, holdout_fraction=fraction)
    again_train, again_held = rotten_tomatoes_split(seed=seed, holdout_fraction=fraction)
    assert (train, held) == (again_train, again_held)
    assert len(held) == round(fraction * len(docs)) and len(train) + len(held) == len(docs)
    assert not set(train.texts) & set(held.texts)
    assert sorted(train.texts + held.texts) == sorted(d.text for d in docs)
    gold = {d.text: str(d.label) for d in docs}
    assert [gold[t] for t in held.texts] == held.labels
    assert set(held.labels) == set(LABELS)
    # Evaluation reads the head of the held-out side: still disjoint from train.
    assert not set(held.head(50).texts) & set(train.texts)


def test_other_seeds_hold_out_other_sentences():
    _, held0 = rotten_tomatoes_split(seed=0)
    _, held1 = rotten_tomatoes_split(seed=1)
    assert held0.texts != held1.texts
    assert len(set(held0.texts) & set(held1.texts)) < len(held0) // 2


def test_each_split_has_its_own_model_file():
    paths = {demo_model_path(seed=s, holdout_fraction=f)
             for s, f in [(0, 0.2), (1, 0.2), (0, 0.25), (0, 0.2000001)]}
    assert len(paths) == 4
    assert demo_model_path().name == "demo-sentiment-tfidf-lr-split0-holdout0.2.skops"
    with pytest.raises(ConfigError, match=r"held-out fraction must be in \(0, 1\), got 1\.0"):
        demo_model_path(holdout_fraction=1.0)


def test_trained_demo_model_loads_through_the_demo_spec(no_training):
    import skops.io as sio

    # (`train_demo_model` here is the real one; `no_training` patched the one
    # `ensure_demo_model` calls.)
    path = train_demo_model(seed=5, holdout_fraction=0.3, limit=300)
    assert path == demo_model_path(seed=5, holdout_fraction=0.3)
    ev = EvaluationConfig(split_seed=5, holdout_fraction=0.3)
    scorer = load_task_scorer("demo:sentiment", LABELS, evaluation=ev, name="demo")
    assert isinstance(scorer, SklearnScorer) and not no_training  # loaded, not retrained
    assert scorer.mapper.model_labels == LABELS
    train, held = rotten_tomatoes_split(seed=5, holdout_fraction=0.3)
    # Trained on the first 300 train sentences only: its vocabulary comes from them.
    words = {w for t in train.texts[:300] for w in re.findall(r"(?u)[\w']+", t.lower())}
    vocab = scorer.estimator.named_steps["tfidf"].vocabulary_
    assert {w for gram in vocab for w in gram.split(" ")} <= words
    out = scorer.predict_proba(held.texts[:20])
    direct = sio.load(path, trusted=sio.get_untrusted_types(file=path))
    want = direct.predict_proba(held.texts[:20])
    for row, probs in zip(out, want, strict=True):
        assert [row[c] for c in direct.classes_] == pytest.approx(list(probs))


def test_the_demo_spec_follows_the_config_split(no_training):
    from discovery import ReferenceConfig, build_task_scorers
    from synth.core import LabelSpace

    train_demo_model(seed=5, holdout_fraction=0.3, limit=300)
    built = build_task_scorers([TaskModelConfig(name="demo", spec="demo:sentiment")],
                               LabelSpace.of(LABELS), reference=ReferenceConfig(),
                               evaluation=EvaluationConfig(split_seed=5, holdout_fraction=0.3))
    assert isinstance(built["demo"], SklearnScorer) and not no_training
    # Another split needs its own model: the seed-5 file is not reused for split 6.
    with pytest.raises(RuntimeError, match="training refused"):
        load_task_scorer("demo:sentiment", LABELS,
                         evaluation=EvaluationConfig(split_seed=6, holdout_fraction=0.3))
    assert no_training == [(demo_model_path(seed=6, holdout_fraction=0.3),
                            {"seed": 6, "holdout_fraction": 0.3, "task": "sentiment"})]
    # No evaluation config: the default split's model.
    with pytest.raises(RuntimeError, match="training refused"):
        ensure_demo_model()
    assert no_training[-1][0] == demo_model_path(seed=0, holdout_fraction=0.2)


def test_train_demo_model_bad_arguments(tmp_path):
    with pytest.raises(ConfigError, match=r"limit must be at least 2 sentences, got 0 "
                                          r"\(limit\)"):
        train_demo_model(tmp_path / "m.skops", limit=0)
    with pytest.raises(ConfigError, match=r"split seed must be >= 0, got -1 \(seed\)"):
        train_demo_model(tmp_path / "m.skops", seed=-1)
    assert not (tmp_path / "m.skops").exists()
