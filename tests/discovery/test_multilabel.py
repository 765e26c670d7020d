"""A multi-label (independent sigmoid) HF classifier is not renormalised."""

from __future__ import annotations

import numpy as np
import pytest

from discovery import load_task_scorer
from tests.discovery.discovery_fixtures import make_tokenizer

LABELS = ["negative", "positive"]


def test_multi_label_hf_model_scores_each_label_with_its_own_sigmoid(tmp_path):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tok = make_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     num_labels=2, id2label={0: "negative", 1: "positive"},
                     label2id={"negative": 0, "positive": 1}, pad_token_id=tok.pad_token_id,
                     problem_type="multi_label_classification")
    model = BertForSequenceClassification(cfg)
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    scorer = load_task_scorer(f"hf:{tmp_path / 'm'}", LABELS, max_length=8)
    texts = ["a great film", "not bad at all"]
    got = scorer.predict_proba(texts)
    enc = tok(texts, padding=True, truncation=True, max_length=8, return_tensors="pt")
    with torch.inference_mode():
        logits = model.eval()(**enc).logits.float()
    want = torch.sigmoid(logits).numpy()
    for row, expect in zip(got, want, strict=True):
        assert [row["negative"], row["positive"]] == pytest.approx(list(expect), abs=1e-5)
    assert not np.allclose([sum(r.values()) for r in got], 1.0)  # not renormalised
