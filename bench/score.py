"""Stage-2 benchmark, side by side in one run (never part of the test suite's pass/fail).

1. Reference scoring on the packaged SmolLM2: batched with the few-shot prefix's key/value
   cache computed once (ours) vs one full-prompt forward per sentence (the original
   SynthEval code's way). Also checks that both give the same probabilities.
   With vLLM importable (run it with `.venv-vllm/bin/python`, see `make test-vllm`), the
   same sentences through vLLM's CPU/CUDA build in float32 and bfloat16, and their largest
   label log-prob difference from the transformers float32 scores.
2. Task scoring with the demo model: batched vs one call per sentence.
3. N-gram mining (1- to 4-grams) of a 10% hard subset against 100,000 sentences: seconds and
   peak memory.

Usage: python bench/score.py [--threads 2] [--ours 512] [--naive 48] [--mine 100000]
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _sentences(n: int) -> list[str]:
    """Up to n distinct sentences: Rotten Tomatoes sentences, then IMDb review sentences."""
    from synth import load_movie_reviews

    seen: dict[str, None] = {}
    for doc in load_movie_reviews("rotten_tomatoes"):
        seen.setdefault(doc.text, None)
    if len(seen) < n:
        for doc in load_movie_reviews("imdb"):
            for sent in re.split(r"(?<=[.!?])\s+", doc.text):
                if 4 <= sent.count(" ") <= 60:
                    seen.setdefault(sent, None)
            if len(seen) >= n:
                break
    return list(seen)[:n]


def bench_mining(n: int) -> None:
    from discovery import NgramMiner

    texts = _sentences(n)
    rng = np.random.default_rng(0)
    hard = rng.choice(len(texts), size=len(texts) // 10, replace=False)
    divergence = rng.random(len(texts))
    disagree = rng.random(len(texts)) < 0.2
    before = _rss_mib()
    start = time.perf_counter()
    miner = NgramMiner((1, 4), min_support=3).fit(texts, hard, divergence=divergence,
                                                   disagree=disagree)
    seconds = time.perf_counter() - start
    peak = _rss_mib()
    print(f"mining: {len(texts)} sentences, hard {len(hard)}, 1-4-grams, "
          f"{len(miner.table_)} n-grams kept: {seconds:.1f} s; peak RSS {peak:.0f} MiB "
          f"(+{peak - before:.0f} MiB over the loaded corpus)")


def bench_task(n_batched: int, n_single: int) -> None:
    from discovery import load_task_scorer

    texts = _sentences(n_batched)
    scorer = load_task_scorer("demo:sentiment", ["negative", "positive"])
    scorer.predict_proba(texts[:10])  # warm-up
    start = time.perf_counter()
    batched = scorer.predict_proba(texts)
    t_batched = time.perf_counter() - start
    start = time.perf_counter()
    single = [scorer.predict_proba([t])[0] for t in texts[:n_single]]
    t_single = time.perf_counter() - start
    same = max(abs(a["positive"] - b["positive"]) for a, b in zip(batched, single, strict=False))
    rate_b, rate_s = n_batched / t_batched, n_single / t_single
    print(f"task (demo tf-idf+lr): batched {rate_b:.0f} sentences/s ({n_batched}), "
          f"one call per sentence {rate_s:.0f} sentences/s ({n_single}); "
          f"ratio {rate_b / rate_s:.1f}x; max |dp| {same:.1e}")


def bench_reference(n_ours: int, n_naive: int, batch_size: int) -> tuple[list[str], np.ndarray]:
    import torch

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines import HFBackend, load_hf_causal_lm

    model, tok = load_hf_causal_lm("packaged:smollm2-135m-instruct", device="cpu")
    backend = HFBackend(model, tok, batch_size=batch_size)
    ref = FewShotReference(backend, ReferenceConfig(), ["negative", "positive"])
    texts = _sentences(n_ours)
    words = [" negative", " positive"]
    word_ids = [tok(w, add_special_tokens=False)["input_ids"][0] for w in words]

    ref.raw_logprobs(texts[:2])  # warm-up
    start = time.perf_counter()
    ours = ref.raw_logprobs(texts)
    t_ours = time.perf_counter() - start

    # The naive way: build each full prompt, one forward pass, read the label tokens' logits.
    naive = []
    start = time.perf_counter()
    n_tokens = 0
    for text in texts[:n_naive]:
        ids = tok(ref.prompt_for(text), return_tensors="pt")["input_ids"]
        n_tokens += ids.shape[1]
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1]
        naive.append(torch.log_softmax(logits.float(), -1)[word_ids].tolist())
    t_naive = time.perf_counter() - start

    def probs(lp: np.ndarray) -> np.ndarray:
        e = np.exp(lp - lp.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    dp = np.abs(probs(np.array(naive)) - probs(ours[:n_naive])).max()
    rate_o, rate_n = n_ours / t_ours, n_naive / t_naive
    prompt_len = n_tokens / n_naive
    # The arithmetic ceiling of prefix caching for this prompt: FLOPs per sentence of one
    # full-prompt forward (logits at every position, as the naive way computes them) over
    # those of ours (only the text + suffix tokens, logits at the read position).
    head = model.get_output_embeddings().weight.numel()
    body = sum(p.numel() for p in model.parameters()) - head
    prefix_len = len(tok(ref.prefix)["input_ids"])
    own = prompt_len - prefix_len
    ceiling = prompt_len * (body + head) / (own * body + head)
    print(f"reference (SmolLM2-135M, {torch.get_num_threads()} threads, prompt ~{prompt_len:.0f} "
          f"tokens): cached prefix batched {rate_o:.2f} sentences/s ({n_ours}, batch "
          f"{batch_size}); naive full prompt per sentence {rate_n:.2f} sentences/s "
          f"({n_naive}); ratio {rate_o / rate_n:.1f}x; effective prompt tokens/s "
          f"{rate_o * prompt_len:.0f} vs {rate_n * prompt_len:.0f}; max |dp| {dp:.1e} "
          f"(naive tokenizes the whole prompt at once)")
    print(f"reference arithmetic ceiling for this prompt ({prefix_len} shared prefix tokens, "
          f"~{own:.0f} per-sentence tokens): {ceiling:.1f}x; ours reaches "
          f"{rate_o / rate_n / ceiling:.0%} of it")
    return texts, ours


def bench_reference_vllm(texts: list[str], hf_fp32: np.ndarray,
                         dtypes: tuple[str, ...] = ("float32", "bfloat16")) -> None:
    """The reference through vLLM, one engine per dtype, against the HF float32 scores."""
    import gc
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        print("reference vLLM: not importable here (run with .venv-vllm/bin/python)")
        return
    from discovery import FewShotReference, ReferenceConfig
    from synth.engines import VLLMBackend
    from synth.engines._planner import plan_label_scoring
    from synth.engines._vllm_scoring import prefix_block_reuse

    for dtype in dtypes:
        start = time.perf_counter()
        backend = VLLMBackend.from_spec("packaged:smollm2-135m-instruct", dtype=dtype)
        load = time.perf_counter() - start
        ref = FewShotReference(backend, ReferenceConfig(), ["negative", "positive"])
        ref.raw_logprobs(texts[:2])  # warm-up (and the prefix's blocks into the cache)
        start = time.perf_counter()
        got = ref.raw_logprobs(texts)
        seconds = time.perf_counter() - start
        tok = backend.llm.get_tokenizer()
        plan = plan_label_scoring(tok, ref.prefix, texts, dict(ref.config.label_words),
                                  ref.suffix)
        own = sum(len(r.ids) for r in plan.rows) / len(texts)
        block = backend.llm.llm_engine.vllm_config.cache_config.block_size
        reused, total = prefix_block_reuse(plan, block)
        d = np.abs(got - hf_fp32).max()
        print(f"reference vLLM {dtype} (load {load:.0f} s): {len(texts) / seconds:.2f} "
              f"sentences/s ({len(texts)}); ~{own:.1f} own tokens per sentence + "
              f"{total - reused} of {total} prefix tokens recomputed ({block}-token blocks); "
              f"max |d logprob| vs HF fp32 {d:.1e}")
        del ref, backend
        gc.collect()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ours", type=int, default=512,
                    help="sentences, cached-prefix batched (a corpus-sized sample: batches of "
                         "length-sorted rows pad little)")
    ap.add_argument("--naive", type=int, default=48, help="sentences, one forward each")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--task", type=int, default=4000, help="sentences, batched task scoring")
    ap.add_argument("--task-single", type=int, default=400)
    ap.add_argument("--mine", type=int, default=100_000, help="corpus size for mining")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["reference", "vllm", "task", "mining"])
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    if "mining" not in args.skip:
        bench_mining(args.mine)
    if "task" not in args.skip:
        bench_task(args.task, args.task_single)
    if "reference" not in args.skip:
        texts, ours = bench_reference(args.ours, args.naive, args.batch_size)
        if "vllm" not in args.skip:
            bench_reference_vllm(texts, ours)


if __name__ == "__main__":
    main()
