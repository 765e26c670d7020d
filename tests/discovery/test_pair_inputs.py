"""Sentence pairs at the adapters: HF natively, scikit-learn joined, callables as tuples."""

from __future__ import annotations

import pytest
from discovery_fixtures import make_tokenizer

from discovery import load_task_scorer
from discovery._scorers import PAIR_SEPARATOR, CallableScorer, SklearnScorer, join_pairs

LABELS = ["negative", "positive"]
PAIRS = [("a great film", "not bad"), ("ok", "a dull mess that never works")]


def test_hf_scores_pairs_with_the_tokenizers_pair_encoding(tmp_path):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tok = make_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     num_labels=2, id2label={0: "negative", 1: "positive"},
                     label2id={"negative": 0, "positive": 1}, pad_token_id=tok.pad_token_id)
    model = BertForSequenceClassification(cfg)
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    got = load_task_scorer(f"hf:{tmp_path / 'm'}", LABELS, max_length=32).predict_proba(PAIRS)
    for (a, b), row in zip(PAIRS, got, strict=True):
        enc = tok([a], [b], return_tensors="pt")
        with torch.inference_mode():
            want = torch.softmax(model.eval()(**enc).logits.float(), dim=-1)[0].tolist()
        assert [row["negative"], row["positive"]] == pytest.approx(want, abs=1e-5)


def test_sklearn_gets_joined_pairs_and_callables_get_tuples():
    seen: list[object] = []

    class Est:
        classes_ = ["negative", "positive"]

        def predict_proba(self, texts):
            seen.extend(texts)
            return [[0.5, 0.5] for _ in texts]

    SklearnScorer(Est(), LABELS).predict_proba(PAIRS)
    assert seen == [f"a great film{PAIR_SEPARATOR}not bad", f"ok{PAIR_SEPARATOR}a dull mess "
                    "that never works"] == join_pairs(PAIRS)
    got: list[object] = []
    CallableScorer(lambda xs: got.extend(xs) or [{"negative": 0.5, "positive": 0.5}
                                                 for _ in xs], LABELS).predict_proba(PAIRS)
    assert got == PAIRS
