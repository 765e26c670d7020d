"""vllm_label_logprobs against a fake ``vllm`` module backed by a tiny Llama."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest
import torch

from synth.core import ConfigError, ModelNotAvailable
from synth.engines._hf_scoring import hf_label_logprobs
from synth.engines._vllm_scoring import vllm_label_logprobs
from tests.synth.engines import engine_fixtures

# The shared tiny-model fixtures (session-scoped).
tiny_tokenizer = engine_fixtures.tiny_tokenizer
tiny_llama = engine_fixtures.tiny_llama

PREFIX = "Question: Find the sentiment of this text. Answer: positive\n\nQuestion:"
TEXTS = [" a great and moving film .", " boring , predictable and far too long .", " not bad"]


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, Logprob] | None] | None
    outputs: list[CompletionOutput]
    finished: bool = True


class SamplingParams:
    def __init__(self, *, max_tokens=16, temperature=1.0, logprobs=None, prompt_logprobs=None,
                 allowed_token_ids=None):
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.logprobs = logprobs
        self.prompt_logprobs = prompt_logprobs
        self.allowed_token_ids = allowed_token_ids


class FakeLLM:
    """Answers like vLLM: top-K logprobs plus the sampled token, prompt logprobs.

    ``logprobs_mode`` is vLLM's engine argument: ``raw_logprobs`` (V1's default) reads the
    sampled position's log-probs before ``allowed_token_ids`` masks the logits;
    ``processed_logprobs`` (and the V0 engine) after it, renormalised over the allowed ids.
    Prompt log-probs are the model's own either way (no mask applies to the prompt).
    """

    def __init__(self, model, tokenizer, logprobs_mode="raw_logprobs"):
        self.model, self.tokenizer, self.calls, self.prompts = model, tokenizer, [], []
        self.logprobs_mode = logprobs_mode

    def get_tokenizer(self):
        return self.tokenizer

    def _entries(self, logp, k, extra):
        top = torch.topk(logp, k).indices.tolist() if k else []
        ranks = torch.argsort(torch.argsort(logp, descending=True))
        return {int(t): Logprob(float(logp[t]), int(ranks[t]) + 1, self.tokenizer.decode([t]))
                for t in dict.fromkeys(top + extra)}

    def generate(self, prompts, params, use_tqdm=True):
        assert isinstance(params, SamplingParams) and params.max_tokens == 1
        self.calls.append(params)
        self.prompts.extend(prompts)
        outs = []
        for i, prompt in enumerate(prompts):
            ids = prompt["prompt_token_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0], -1)
            last = logp[-1]
            allowed = params.allowed_token_ids
            sampled = int(max(allowed, key=lambda t: last[t])) if allowed else int(last.argmax())
            if allowed and self.logprobs_mode == "processed_logprobs":
                masked = torch.full_like(last, float("-inf"))
                masked[allowed] = last[allowed]
                last = torch.log_softmax(masked, -1)
            lps = [self._entries(last, params.logprobs, [sampled])] if params.logprobs else None
            plp = None
            if params.prompt_logprobs is not None:
                plp = [None] + [self._entries(logp[p - 1], params.prompt_logprobs, [ids[p]])
                                for p in range(1, len(ids))]
            outs.append(RequestOutput(str(i), None, ids, plp,
                                      [CompletionOutput(0, "", [sampled], None, lps)]))
        return outs


@pytest.fixture()
def fake_vllm(monkeypatch):
    mod = types.ModuleType("vllm")
    mod.SamplingParams = SamplingParams
    mod.LLM = FakeLLM
    monkeypatch.setitem(sys.modules, "vllm", mod)
    return mod


@pytest.mark.parametrize("top_k", [400, 1])
def test_vllm_matches_hf_single_token_labels(fake_vllm, tiny_llama, tiny_tokenizer, top_k):
    labels = {"negative": " negative", "positive": " positive", "neutral": " the"}
    llm = FakeLLM(tiny_llama, tiny_tokenizer)
    got = vllm_label_logprobs(llm, PREFIX, TEXTS, labels, "\nAnswer:", top_logprobs=top_k)
    want = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, "\nAnswer:")
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-4)
    first = llm.calls[0]
    assert first.logprobs == top_k and first.temperature == 0.0
    label_ids = {tiny_tokenizer(w, add_special_tokens=False)["input_ids"][0]
                 for w in labels.values()}
    assert set(first.allowed_token_ids) == label_ids
    # With K=1 two of the three labels are missing from the top-K: exact prompt_logprobs pass.
    assert len(llm.calls) == (2 if top_k == 1 else 1)
    if top_k == 1:
        assert llm.calls[1].prompt_logprobs == 1


def test_vllm_multi_token_labels_use_prompt_logprobs(fake_vllm, tiny_llama, tiny_tokenizer):
    labels = {"negative": " a dull mess", "positive": " great"}
    llm = FakeLLM(tiny_llama, tiny_tokenizer)
    got = vllm_label_logprobs(llm, PREFIX, TEXTS, labels, "\nAnswer:")
    want = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, "\nAnswer:")
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-4)
    assert any(c.prompt_logprobs == 1 for c in llm.calls)


def test_missing_vllm_names_the_install(monkeypatch, tiny_llama, tiny_tokenizer):
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ModelNotAvailable, match=r"vLLM is not installed.*pip install"):
        vllm_label_logprobs(FakeLLM(tiny_llama, tiny_tokenizer), PREFIX, TEXTS,
                            {"negative": " negative", "positive": " positive"})


def _normalized(rows, labels):
    """Each text's label log-probs renormalised over the labels (as the reference does)."""
    import numpy as np

    from discovery._calibration import log_normalize

    return log_normalize(np.array([[r[lab] for lab in labels] for r in rows]))


_SINGLE = {"negative": " negative", "positive": " positive", "neutral": " the"}
_MIXED = {"negative": " a dull mess", "positive": " great", "neutral": " the"}


@pytest.mark.parametrize(("labels", "top_k"), [
    pytest.param(_SINGLE, 400, id="single-token-all-in-top-k"),
    pytest.param(_SINGLE, 1, id="single-token-missing-from-top-k"),
    pytest.param(_MIXED, 400, id="multi-and-single-token"),
])
def test_processed_logprobs_are_never_mixed_with_raw_ones(fake_vllm, tiny_llama,
                                                          tiny_tokenizer, labels, top_k):
    """With ``logprobs_mode=processed_logprobs`` pass 1's values are renormalised over the
    allowed label ids: a per-text shift that cancels over the labels, as long as no text
    takes some labels from pass 1 and others from the raw prompt log-probs of pass 2."""
    llm = FakeLLM(tiny_llama, tiny_tokenizer, logprobs_mode="processed_logprobs")
    got = vllm_label_logprobs(llm, PREFIX, TEXTS, labels, "\nAnswer:", top_logprobs=top_k)
    want = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, labels, "\nAnswer:")
    names = list(labels)
    assert _normalized(got, names) == pytest.approx(_normalized(want, names), abs=1e-4)


def test_processed_single_token_labels_come_from_pass_one(fake_vllm, tiny_llama,
                                                          tiny_tokenizer):
    import math

    llm = FakeLLM(tiny_llama, tiny_tokenizer, logprobs_mode="processed_logprobs")
    got = vllm_label_logprobs(llm, PREFIX, TEXTS, _SINGLE, "\nAnswer:", top_logprobs=20)
    assert len(llm.calls) == 1 and llm.calls[0].allowed_token_ids
    # Renormalised over the three allowed label tokens: each text's values sum to 1.
    for row in got:
        assert sum(math.exp(v) for v in row.values()) == pytest.approx(1.0, abs=1e-5)


def test_a_text_with_a_multi_token_label_is_scored_in_one_pass(fake_vllm, tiny_llama,
                                                               tiny_tokenizer):
    llm = FakeLLM(tiny_llama, tiny_tokenizer)
    got = vllm_label_logprobs(llm, PREFIX, TEXTS, _MIXED, "\nAnswer:")
    want = hf_label_logprobs(tiny_llama, tiny_tokenizer, PREFIX, TEXTS, _MIXED, "\nAnswer:")
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-4)
    # No text may take its single-token labels from pass 1 and its multi-token one from
    # pass 2, so every label of every text comes from the prompt log-probs pass.
    assert [c.prompt_logprobs for c in llm.calls] == [1]


@pytest.fixture(scope="module")
def bos_tokenizer():
    """The tiny tokenizer with a post-processor that adds BOS, as Llama's does."""
    from tokenizers import processors

    from tests.discovery.discovery_fixtures import make_tokenizer  # on the path via engine_fixtures

    tok = make_tokenizer()
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)])
    return tok


class _RecordingModel(torch.nn.Module):
    """Wraps a model and records the unpadded token rows of every forward."""

    def __init__(self, model):
        super().__init__()
        self.model, self.rows = model, []

    @property
    def device(self):
        return self.model.device

    @property
    def config(self):
        return self.model.config

    def forward(self, input_ids, attention_mask=None, past_key_values=None, **kw):
        p_len = past_key_values.get_seq_length() if past_key_values is not None else 0
        for b, ids in enumerate(input_ids.tolist()):
            keep = (attention_mask[b, p_len:].tolist() if attention_mask is not None
                    else [1] * len(ids))
            self.rows.append([t for t, m in zip(ids, keep, strict=True) if m])
        from synth.engines._hf_cache import cache_kwargs

        # the inner model's own name for the cache (no transformers deprecation warning)
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          **cache_kwargs(self.model, past_key_values), **kw)


@pytest.mark.parametrize("prefix", [PREFIX, ""])
@pytest.mark.parametrize("adds_bos", [True, False], ids=["bos", "no-bos"])
def test_both_backends_run_the_same_token_rows(fake_vllm, tiny_llama, tiny_tokenizer,
                                               bos_tokenizer, prefix, adds_bos):
    """HF (cached prefix + rows) and vLLM (whole prompts) see the same ids, BOS included."""
    tok = bos_tokenizer if adds_bos else tiny_tokenizer
    labels = {"negative": " negative", "positive": " positive"}
    rec = _RecordingModel(tiny_llama)
    want = hf_label_logprobs(rec, tok, prefix, TEXTS, labels, "\nAnswer:", batch_size=2)
    llm = FakeLLM(tiny_llama, tok)
    got = vllm_label_logprobs(llm, prefix, TEXTS, labels, "\nAnswer:", top_logprobs=400)
    assert len(llm.calls) == 1  # every label in the top-K: the prompts are the plain rows
    sent = [list(p["prompt_token_ids"]) for p in llm.prompts]
    bos = [tok.bos_token_id] if adds_bos else []
    want_prefix = bos + tok(prefix, add_special_tokens=False)["input_ids"]
    if want_prefix:  # HF runs the prefix once, then the rows after it
        assert rec.rows[0] == want_prefix
        hf_prompts = sorted(want_prefix + r for r in rec.rows[1:])
    else:
        hf_prompts = sorted(rec.rows)
    assert sorted(sent) == hf_prompts
    assert all(s[:len(want_prefix)] == want_prefix for s in sent)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-4)


def test_bos_is_kept_for_an_empty_prefix(tiny_llama, bos_tokenizer):
    """An empty prefix still starts with the tokenizer's BOS, as ``tokenizer(prompt)`` does."""
    from synth.engines._planner import plan_label_scoring

    plan = plan_label_scoring(bos_tokenizer, "", [" good"], {"a": " great", "b": " bad"})
    assert plan.prefix_ids == (bos_tokenizer.bos_token_id,)
    full = bos_tokenizer(" good great")["input_ids"]
    assert plan.prompt_ids(plan.rows[0]) == full[:-1]
    got = hf_label_logprobs(tiny_llama, bos_tokenizer, "", [" good"], {"a": " great", "b": " bad"})
    with torch.no_grad():
        logp = torch.log_softmax(tiny_llama(input_ids=torch.tensor([full])).logits[0], -1)
    assert got[0]["a"] == pytest.approx(float(logp[-2, full[-1]]), abs=1e-5)


def test_empty_prompt_is_refused_by_both_backends(fake_vllm, tiny_llama, tiny_tokenizer):
    labels = {"a": " great", "b": " bad"}
    for run in (lambda: hf_label_logprobs(tiny_llama, tiny_tokenizer, "", [""], labels),
                lambda: vllm_label_logprobs(FakeLLM(tiny_llama, tiny_tokenizer), "", [""],
                                            labels)):
        with pytest.raises(ConfigError, match="the prompt before a label is empty"):
            run()


def test_prefix_block_reuse_counts_whole_blocks(tiny_tokenizer):
    from synth.engines._planner import plan_label_scoring
    from synth.engines._vllm_scoring import prefix_block_reuse

    plan = plan_label_scoring(tiny_tokenizer, PREFIX * 4, [" good"], {"a": " great", "b": " x"})
    n = len(plan.prefix_ids)
    assert prefix_block_reuse(plan, 32) == (n // 32 * 32, n)
    assert prefix_block_reuse(plan, 1) == (n, n)


SHOTS = "A: good\n\nA: bad\n\nA: fine\n\nQuestion:"


@pytest.mark.parametrize("adds_bos", [True, False], ids=["bos", "no-bos"])
def test_pads_lengthen_the_separators_to_a_multiple(tiny_tokenizer, bos_tokenizer, adds_bos):
    from synth.engines import PrefixAlignment
    from synth.engines._planner import plan_label_scoring, separator_ends

    tok = bos_tokenizer if adds_bos else tiny_tokenizer
    labels = {"a": " great", "b": " bad"}
    nl = tok("\n", add_special_tokens=False)["input_ids"]
    assert len(nl) == 1
    plain = plan_label_scoring(tok, SHOTS, [" good"], labels)
    ids = list(plain.prefix_ids)
    ends = separator_ends(tok, SHOTS, ids, "\n\n")
    assert len(ends) == 3 and all(ids[e - 1] == nl[0] for e in ends)
    aligned = plan_label_scoring(tok, SHOTS, [" good"], labels,
                                 align=PrefixAlignment(16, "\n\n"))
    n_pad = -len(ids) % 16
    assert n_pad >= 3 and aligned.padding == n_pad and len(aligned.prefix_ids) % 16 == 0
    per = [n_pad // 3 + (j < n_pad % 3) for j in range(3)]
    want, prev = [], 0
    for e, k in zip(ends, per, strict=True):
        want += ids[prev:e] + nl * k
        prev = e
    assert list(aligned.prefix_ids) == want + ids[prev:]
    assert tok.decode(aligned.prefix_ids, skip_special_tokens=True) == SHOTS.replace(
        "\n\n", "\n\n" + "\n" * per[0], 1).replace(
        "A: bad\n\n", "A: bad\n\n" + "\n" * per[1]).replace(
        "A: fine\n\n", "A: fine\n\n" + "\n" * per[2])
    assert aligned.rows == plain.rows


@pytest.mark.parametrize("adds_bos", [True, False], ids=["bos", "no-bos"])
@pytest.mark.parametrize("separator", ["", "###"])
def test_without_a_separator_end_of_text_pads_go_in_front(tiny_tokenizer, bos_tokenizer,
                                                          adds_bos, separator):
    from synth.engines import PrefixAlignment
    from synth.engines._planner import alignment_pad_id, plan_label_scoring

    tok = bos_tokenizer if adds_bos else tiny_tokenizer
    labels = {"a": " great", "b": " bad"}
    plain = plan_label_scoring(tok, PREFIX, [" good"], labels)
    aligned = plan_label_scoring(tok, PREFIX, [" good"], labels,
                                 align=PrefixAlignment(32, separator))
    n = len(plain.prefix_ids)
    assert n % 32 and plain.padding == 0
    assert len(aligned.prefix_ids) == (n // 32 + 1) * 32
    assert aligned.padding == len(aligned.prefix_ids) - n
    lead = 1 if adds_bos else 0
    assert aligned.prefix_ids == (plain.prefix_ids[:lead]
                                  + (alignment_pad_id(tok),) * aligned.padding
                                  + plain.prefix_ids[lead:])
    # Already a multiple, or a multiple of 0 or 1: the prefix as tokenized.
    for multiple in (n, 1, 0):
        assert plan_label_scoring(tok, PREFIX, [" good"], labels,
                                  align=PrefixAlignment(multiple, separator)) == plain
    with pytest.raises(ConfigError, match="prefix alignment must be >= 0 tokens, got -8"):
        plan_label_scoring(tok, PREFIX, [" good"], labels, align=PrefixAlignment(-8))


def test_the_front_pad_token_is_end_of_text_then_eos_then_pad(tiny_tokenizer):
    from types import SimpleNamespace

    from synth.engines._planner import alignment_pad_id

    def tok(vocab, eos=None, pad=None):
        return SimpleNamespace(get_vocab=lambda: vocab, eos_token_id=eos, pad_token_id=pad)

    assert alignment_pad_id(tok({"<|endoftext|>": 0, "x": 5}, eos=2, pad=3)) == 0
    assert alignment_pad_id(tok({"x": 5}, eos=2, pad=3)) == 2
    assert alignment_pad_id(tok({"x": 5}, pad=3)) == 3
    assert alignment_pad_id(tiny_tokenizer) == tiny_tokenizer.pad_token_id
    with pytest.raises(ConfigError, match="no end-of-text, EOS or pad token"):
        alignment_pad_id(tok({"x": 5}))


@pytest.mark.parametrize("adds_bos", [True, False], ids=["bos", "no-bos"])
def test_both_backends_score_the_same_aligned_prompt(fake_vllm, tiny_llama, tiny_tokenizer,
                                                     bos_tokenizer, adds_bos):
    """With ``align`` both engines score the padded prompt, and agree as they do without."""
    from synth.engines import PrefixAlignment
    from synth.engines._planner import plan_label_scoring
    from synth.engines._vllm_scoring import prefix_block_reuse

    tok = bos_tokenizer if adds_bos else tiny_tokenizer
    labels = {"negative": " negative", "positive": " positive"}
    align = PrefixAlignment(16, "\n\n")
    plan = plan_label_scoring(tok, SHOTS, TEXTS, labels, "\nAnswer:", align=align)
    assert plan.padding > 0
    assert prefix_block_reuse(plan, 16) == (len(plan.prefix_ids), len(plan.prefix_ids))
    assert prefix_block_reuse(plan, 8)[0] == len(plan.prefix_ids)
    rec = _RecordingModel(tiny_llama)
    hf = hf_label_logprobs(rec, tok, SHOTS, TEXTS, labels, "\nAnswer:", batch_size=2,
                           align=align)
    assert rec.rows[0] == list(plan.prefix_ids)  # the padded prefix, run once
    llm = FakeLLM(tiny_llama, tok)
    got = vllm_label_logprobs(llm, SHOTS, TEXTS, labels, "\nAnswer:", top_logprobs=400,
                              align=align)
    assert all(tuple(p["prompt_token_ids"][:len(plan.prefix_ids)]) == plan.prefix_ids
               for p in llm.prompts)
    # One full forward over the padded ids gives the same numbers.
    for text, g, h in zip(TEXTS, got, hf, strict=True):
        assert g == pytest.approx(h, abs=1e-4)
        for lab, word in labels.items():
            ids = list(plan.prefix_ids) + tok(text + "\nAnswer:" + word,
                                              add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(tiny_llama(input_ids=torch.tensor([ids])).logits[0], -1)
            assert h[lab] == pytest.approx(float(logp[-2, ids[-1]]), abs=1e-4)
    # The padding is real: the unaligned scores differ; no alignment is the default exactly.
    plain = hf_label_logprobs(tiny_llama, tok, SHOTS, TEXTS, labels, "\nAnswer:")
    assert max(abs(a[k] - b[k]) for a, b in zip(plain, hf, strict=True) for k in a) > 1e-3
    assert hf_label_logprobs(tiny_llama, tok, SHOTS, TEXTS, labels, "\nAnswer:",
                             align=None) == plain
