"""The project's VLLMBackend against the real engine: determinism, stop strings, scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed (run `make test-vllm`)")
pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = [
    "The film was a long and", "I did not expect the ending", "This is the worst movie",
    "My kids loved every minute", "The acting in this one", "After twenty minutes I wanted",
    "A quiet story about a", "The soundtrack alone makes it",
]
SEEDS = [1000 + i for i in range(len(PROMPTS))]

CHILD = """
import json
from synth.engines import SamplingConfig, VLLMBackend
backend = VLLMBackend.from_spec("packaged:smollm2-135m-instruct")
gens = backend.generate({prompts!r}, SamplingConfig(max_new_tokens=48), {seeds!r})
print("RESULT" + json.dumps([[g.text, g.num_tokens] for g in gens]))
"""


def _params():
    from synth.engines import SamplingConfig

    return SamplingConfig(max_new_tokens=48)


@pytest.fixture(scope="module")
def whole_batch(vllm_backend):
    return vllm_backend.generate(PROMPTS, _params(), SEEDS)


def test_generation_does_not_depend_on_the_batch(vllm_backend, whole_batch):
    order = [5, 2, 7, 0]
    part = vllm_backend.generate([PROMPTS[i] for i in order], _params(), [SEEDS[i] for i in order])
    assert [g.text for g in part] == [whole_batch[i].text for i in order]
    one = vllm_backend.generate(PROMPTS[3:4], _params(), SEEDS[3:4])
    assert one[0] == whole_batch[3]
    other_seed = vllm_backend.generate(PROMPTS[3:4], _params(), [SEEDS[3] + 1])
    assert other_seed[0].text != whole_batch[3].text


def test_generation_is_the_same_in_another_process(whole_batch):
    code = CHILD.format(prompts=PROMPTS, seeds=SEEDS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    child = json.loads(out.split("RESULT", 1)[1])
    assert child == [[g.text, g.num_tokens] for g in whole_batch]


def test_rows_stop_at_a_sentence_end_with_the_stop_text_kept(vllm_backend, whole_batch):
    from synth import first_sentence
    from synth.engines import SamplingConfig
    from synth.engines._vllm import SENTENCE_STOPS

    stopped = [g for g in whole_batch if g.num_tokens < 48]
    assert len(stopped) >= len(PROMPTS) // 2, [g.text for g in whole_batch]
    for g in stopped:
        assert g.text.endswith(SENTENCE_STOPS), repr(g.text)
        assert first_sentence(g.text)
    free = vllm_backend.generate(PROMPTS, SamplingConfig(max_new_tokens=48,
                                                         stop_at_sentence_end=False), SEEDS)
    mean_stop = sum(g.num_tokens for g in whole_batch) / len(PROMPTS)
    mean_free = sum(g.num_tokens for g in free) / len(PROMPTS)
    assert mean_stop < mean_free
    # Same seed, same noise: a stopped row is the start of its unstopped twin.
    for g, f in zip(whole_batch, free, strict=True):
        assert f.text.startswith(g.text)


def test_label_scores_match_hf_float32(vllm_backend):
    import numpy as np

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines import HFBackend, load_hf_causal_lm

    texts = ["a gorgeous , witty , seductive movie .", "the plot is nothing but boilerplate .",
             "it 's not the worst film of the year , but it 's close .",
             "an uplifting , funny and heartfelt story .", "", "meh",
             "i loved the first half and hated the second ."]
    model, tok = load_hf_causal_lm("packaged:smollm2-135m-instruct", device="cpu",
                                   dtype="float32")
    labels = ["negative", "positive"]
    hf = FewShotReference(HFBackend(model, tok, batch_size=4), ReferenceConfig(), labels)
    vl = FewShotReference(vllm_backend, ReferenceConfig(), labels)
    want, got = hf.raw_logprobs(texts), vl.raw_logprobs(texts)
    assert got.shape == (len(texts), 2)
    assert np.abs(got - want).max() < 1e-4
    # Multi-token label words go through prompt log-probs: still the same numbers.
    words = {"negative": " not good at all", "positive": " great"}
    want2 = hf.backend.label_logprobs(hf.prefix, texts, words, hf.suffix)
    got2 = vllm_backend.label_logprobs(hf.prefix, texts, words, hf.suffix)
    for g, w in zip(got2, want2, strict=True):
        assert g == pytest.approx(w, abs=1e-4)


def test_the_prefix_is_reused_in_whole_blocks(vllm_backend):
    """Prefix caching reuses every full block of the few-shot prefix across texts."""
    from vllm import SamplingParams

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines._planner import plan_label_scoring
    from synth.engines._vllm import CPU_BLOCK_SIZE, vllm_on_cpu
    from synth.engines._vllm_scoring import prefix_block_reuse

    ref = FewShotReference(vllm_backend, ReferenceConfig(), ["negative", "positive"])
    tok = vllm_backend.llm.get_tokenizer()
    texts = [" a fine film", " a dull film"]
    plan = plan_label_scoring(tok, ref.prefix, texts, {"n": " negative", "p": " positive"},
                              ref.suffix)
    block = vllm_backend.llm.llm_engine.vllm_config.cache_config.block_size
    if vllm_on_cpu():
        assert block == CPU_BLOCK_SIZE
    reused, total = prefix_block_reuse(plan, block)
    params = SamplingParams(max_tokens=1, temperature=0.0)
    vllm_backend.llm.generate([{"prompt_token_ids": plan.prompt_ids(plan.rows[0])}], params,
                              use_tqdm=False)
    out = vllm_backend.llm.generate([{"prompt_token_ids": plan.prompt_ids(plan.rows[1])}],
                                    params, use_tqdm=False)
    assert out[0].num_cached_tokens == reused
    assert total - reused < block


def test_an_aligned_prefix_is_reused_whole_and_scores_like_hf_on_the_same_prompt(
        vllm_backend):
    """``reference.align_prefix`` (auto: 32 with vllm) pads the prefix to whole blocks: vLLM's
    prefix cache then reuses every prefix token, and HF scoring the same padded prompt
    (``align_prefix: 32``) agrees within 1e-4."""
    import numpy as np
    from vllm import SamplingParams

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines import HFBackend, load_hf_causal_lm
    from synth.engines._planner import PrefixAlignment, plan_label_scoring
    from synth.engines._vllm import PREFIX_ALIGN
    from synth.engines._vllm_scoring import prefix_block_reuse

    labels = ["negative", "positive"]
    vl = FewShotReference(vllm_backend, ReferenceConfig(backend="vllm"), labels)
    assert vl.config.prefix_alignment == PREFIX_ALIGN
    tok = vllm_backend.llm.get_tokenizer()
    block = vllm_backend.llm.llm_engine.vllm_config.cache_config.block_size
    words = {"n": " negative", "p": " positive"}
    texts = [" a fine film", " a dull film"]
    plain = plan_label_scoring(tok, vl.prefix, texts, words, vl.suffix)
    align = PrefixAlignment(PREFIX_ALIGN, vl.config.shot_separator)
    plan = plan_label_scoring(tok, vl.prefix, texts, words, vl.suffix, align=align)
    assert PREFIX_ALIGN % block == 0 and plan.padding > 0
    assert prefix_block_reuse(plan, block) == (len(plan.prefix_ids), len(plan.prefix_ids))
    params = SamplingParams(max_tokens=1, temperature=0.0)
    cached = []
    for p in (plain, plan):
        for row in p.rows:
            out = vllm_backend.llm.generate([{"prompt_token_ids": p.prompt_ids(row)}], params,
                                            use_tqdm=False)
            cached.append(out[0].num_cached_tokens)
    # The second text of each plan reuses what the first one left in the cache.
    assert cached[1] == prefix_block_reuse(plain, block)[0] < len(plain.prefix_ids)
    assert cached[3] == len(plan.prefix_ids)

    texts = ["a gorgeous , witty , seductive movie .", "the plot is nothing but boilerplate .",
             "it 's not the worst film of the year , but it 's close .", "", "meh"]
    model, hf_tok = load_hf_causal_lm("packaged:smollm2-135m-instruct", device="cpu",
                                      dtype="float32")
    hf_backend = HFBackend(model, hf_tok, batch_size=4)
    hf = FewShotReference(hf_backend, ReferenceConfig(align_prefix=PREFIX_ALIGN), labels)
    want, got = hf.raw_logprobs(texts), vl.raw_logprobs(texts)
    assert np.abs(got - want).max() < 1e-4
    # The padding is a different prompt: the unaligned HF scores differ from both.
    unaligned = FewShotReference(hf_backend, ReferenceConfig(), labels).raw_logprobs(texts)
    assert np.abs(unaligned - want).max() > 1e-3


def test_discover_end_to_end_with_vllm(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "synthcheck.cli", "discover", "--config",
           str(ROOT / "configs" / "sentiment.yaml"), "--run", str(run),
           "-P", "generator.n=16", "-P", "generator.shard_size=8",
           "-P", "generator.backend=vllm", "-P", "reference.backend=vllm",
           "-P", "evaluation.size=16", "-P", "suite=null"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    corpus = [json.loads(line) for f in sorted((run / "corpus").glob("shard-*.jsonl"))
              for line in f.read_text().splitlines()]
    assert 0 < len(corpus) <= 16
    ref = [json.loads(line) for line in (run / "scores" / "reference.jsonl").read_text()
           .splitlines()]
    assert [r["id"] for r in ref] == [r["id"] for r in corpus]
    for row in ref:
        probs = row["probs"] if "probs" in row else row
        assert sum(probs[k] for k in ("negative", "positive")) == pytest.approx(1.0, abs=1e-6)
    assert (run / "hard.jsonl").is_file()
    manifest = (run / "manifest.json").read_text()
    assert '"vllm"' in manifest
