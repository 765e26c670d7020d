"""hf_label_logprobs: the cached-prefix path equals a plain full-prompt forward."""

from __future__ import annotations

import math

import pytest
import torch

from synth.core import ConfigError
from synth.engines._hf_scoring import build_rows, hf_label_logprobs
from tests.synth.engines import engine_fixtures

# The shared tiny-model fixtures (session-scoped).
tiny_tokenizer = engine_fixtures.tiny_tokenizer
tiny_llama = engine_fixtures.tiny_llama

PREFIX = "Question: Find the sentiment of this text. Answer: positive\n\nQuestion:"
TEXTS = [
    " a great and moving film .",
    " boring , predictable and far too long and dull and lifeless .",
    " not bad",
    "",
    " the plot is thin but the jokes land .",
]


def _full_forward(model, tokenizer, prefix, texts, labels, suffix):
    """Reference: one full forward per (text, label) over the same concatenated ids."""
    prefix_ids = tokenizer(prefix)["input_ids"]
    out = []
    for row_text in texts:
        fulls = {lab: tokenizer(row_text + suffix + w, add_special_tokens=False)["input_ids"]
                 for lab, w in labels.items()}
        seqs = list(fulls.values())
        ctx = 0
        while all(len(s) > ctx for s in seqs) and len({s[ctx] for s in seqs}) == 1:
            ctx += 1
        res = {}
        for lab, full in fulls.items():
            ids = torch.tensor([prefix_ids + full])
            with torch.no_grad():
                logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
            start = len(prefix_ids) + ctx
            res[lab] = sum(float(logp[p - 1, ids[0, p]]) for p in range(start, ids.shape[1]))
        out.append(res)
    return out


def _probs(logps):
    out = []
    for row in logps:
        z = math.log(sum(math.exp(v) for v in row.values()))
        out.append({k: math.exp(v - z) for k, v in row.items()})
    return out


@pytest.mark.parametrize("labels", [
    {"negative": " negative", "positive": " positive"},
    {"negative": " a dull mess", "positive": " great", "neutral": " the plot"},
])
@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_cached_prefix_equals_full_forward(tiny_llama, tiny_tokenizer, labels, batch_size):
    suffix = "\nAnswer:"
    got = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, suffix,
                            batch_size=batch_size)
    want = _full_forward(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, suffix)
    assert [list(r) for r in got] == [list(labels)] * len(TEXTS)
    for g, w in zip(got, want, strict=True):
        for lab in labels:
            assert g[lab] == pytest.approx(w[lab], abs=1e-4)
    dp = max(abs(a[k] - b[k]) for a, b in zip(_probs(got), _probs(want), strict=True) for k in a)
    assert dp <= 1e-4


def test_multi_token_label_sums_its_tokens(tiny_llama, tiny_tokenizer):
    rows = build_rows(tiny_tokenizer, [" good"], {"a": " a dull mess", "b": " great"}, "")
    multi = [r for r in rows if len(r.reads[0][1]) > 1]
    assert multi and len(multi[0].reads[0][1]) == len(
        tiny_tokenizer(" good a dull mess", add_special_tokens=False)["input_ids"]) - len(
        tiny_tokenizer(" good", add_special_tokens=False)["input_ids"])


def test_prefix_cache_is_not_mutated_across_batches(tiny_llama, tiny_tokenizer):
    labels = {"negative": " negative", "positive": " positive"}
    once = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS[:1], labels, "")
    many = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS * 3, labels, "",
                             batch_size=2)
    for row in many[0::len(TEXTS)]:
        assert row == pytest.approx(once[0], abs=1e-5)


def test_label_word_that_tokenizes_to_nothing_is_refused(tiny_llama, tiny_tokenizer):
    with pytest.raises(ConfigError, match="label word '' of label 'positive' tokenizes to nothing"):
        hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS,
                          {"negative": " negative", "positive": ""})


def test_label_word_prefix_of_another_is_refused(tiny_llama, tiny_tokenizer):
    with pytest.raises(ConfigError, match="adds no tokens after the text"):
        hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, [" good"],
                          {"a": " great", "b": " great film"})


def test_backend_reuses_the_prefix_state_across_calls(tiny_llama, tiny_tokenizer, monkeypatch):
    import synth.engines._hf_scoring as scoring
    from synth.engines import HFBackend

    labels = {"negative": " negative", "positive": " positive"}
    fresh = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, "\nAnswer:",
                              batch_size=2)
    calls = []
    real = scoring._prefix_state

    def counting(model, prefix_ids):
        calls.append(tuple(prefix_ids))
        return real(model, prefix_ids)

    monkeypatch.setattr(scoring, "_prefix_state", counting)
    backend = HFBackend(tiny_llama, tiny_tokenizer, batch_size=2)
    first = backend.label_logprobs(PREFIX, TEXTS, labels, "\nAnswer:")
    second = backend.label_logprobs(PREFIX, TEXTS[::-1], labels, "\nAnswer:")
    assert len(calls) == 1  # the second call ran no prefix forward
    assert first == second[::-1]
    for g, w in zip(first, fresh, strict=True):
        assert g == pytest.approx(w, abs=1e-6)
    backend.label_logprobs(PREFIX + " Again:", TEXTS[:1], labels)  # another prefix: computed
    assert len(calls) == 2
    for i in range(6):  # the cache keeps a few prefixes, not every one ever seen
        backend.label_logprobs(PREFIX + f" {i}", TEXTS[:1], labels)
    assert len(backend.prefix_cache) <= scoring._PREFIX_CACHE_SIZE
