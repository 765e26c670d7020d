"""Benchmark: batched, early-stopping generation vs the original one-prompt-at-a-time loop.

Both sides use the packaged SmolLM2-135M-Instruct on the same IMDb 5-word queries, with
plain sampling (top_p=1.0, temperature=1.0) and the same punkt first-sentence filter:

- naive: the original SynthEval code's way: ``model.generate`` per prompt, max_new_tokens=50,
  no early stop;
- ours:  ``HFBackend.generate``: length-sorted batches with left padding, rows leave the
  batch once their first sentence is done.

Prints tokens/s, kept sentences/s, ``ratio`` (kept sentences/s, ours over naive) and the
fraction of the arithmetic limit (2 x parameters FLOPs per token against a matmul rate
measured here). Run: ``python bench/generate.py [--threads 2] [--prompts 128] [--naive 16]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def matmul_flops(threads: int, size: int = 1024, reps: int = 20) -> float:
    """Measured float32 matmul rate (FLOP/s) with ``threads`` threads."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        a @ b
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=128, help="prompts for the batched side")
    parser.add_argument("--naive", type=int, default=16,
                        help="prompts for the naive loop (the first N of the same list)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=50)
    args = parser.parse_args()

    import torch

    from synth import (
        QuerySampler,
        SentenceFilter,
        Stage1Config,
        first_sentence,
        load_seed_corpus,
        sentence_done,
    )
    from synth.core import load_yaml
    from synth.engines import HFBackend, SamplingConfig, load_hf_causal_lm

    torch.set_num_threads(args.threads)
    # The file is a whole run config; the benchmark needs only its stage-1 sections.
    data, _ = load_yaml(REPO / "configs" / "sentiment.yaml")
    cfg = Stage1Config.model_validate({k: data[k] for k in Stage1Config.model_fields if k in data})
    model, tokenizer = load_hf_causal_lm(cfg.generator.model, device="cpu")
    params_count = sum(p.numel() for p in model.parameters())
    sampler = QuerySampler(load_seed_corpus(cfg.corpus), cfg.queries, seed=0)
    queries = [q.text for q in sampler.queries(range(args.prompts))]
    flops = matmul_flops(args.threads)
    print(f"model: {cfg.generator.model} ({params_count / 1e6:.1f}M parameters), "
          f"threads {args.threads}, matmul rate {flops / 1e9:.1f} GFLOP/s")

    def kept_count(texts: list[str]) -> int:
        keep = SentenceFilter(cfg.generator.segment)
        return sum(keep(first_sentence(t)) for t in texts)

    # Naive: one prompt at a time, fixed 50 new tokens, no early stop.
    tokenizer.padding_side = "left"
    naive_q = queries[: args.naive]
    torch.manual_seed(0)
    t0 = time.perf_counter()
    naive_tokens, naive_texts = 0, []
    with torch.inference_mode():
        for q in naive_q:
            enc = tokenizer(q, return_tensors="pt")
            out = model.generate(**enc, do_sample=True, top_p=1.0, temperature=1.0, top_k=0,
                                 max_new_tokens=args.max_new_tokens,
                                 min_new_tokens=args.max_new_tokens,
                                 pad_token_id=tokenizer.pad_token_id)
            new = out[0, enc["input_ids"].shape[1]:]
            naive_tokens += int(new.numel())
            naive_texts.append(q + tokenizer.decode(new, skip_special_tokens=True))
    naive_s = time.perf_counter() - t0

    # Ours: batched, length-sorted, early stop at the end of the first sentence.
    backend = HFBackend(model, tokenizer, batch_size=args.batch_size, sentence_done=sentence_done)
    sampling = SamplingConfig(max_new_tokens=args.max_new_tokens, stop_at_sentence_end=True)
    t0 = time.perf_counter()
    gens = backend.generate(queries, sampling, list(range(len(queries))))
    ours_s = time.perf_counter() - t0
    ours_tokens = sum(g.num_tokens for g in gens)
    ours_texts = [q + g.text for q, g in zip(queries, gens, strict=True)]

    # Same batching without early stop: the tokens/s of the engine alone.
    fixed = SamplingConfig(max_new_tokens=args.max_new_tokens, stop_at_sentence_end=False)
    t0 = time.perf_counter()
    gens_fixed = backend.generate(queries[: args.batch_size], fixed, list(range(args.batch_size)))
    fixed_s = time.perf_counter() - t0
    fixed_tokens = sum(g.num_tokens for g in gens_fixed)

    rows = [
        ("naive loop", len(naive_q), naive_tokens, naive_s, kept_count(naive_texts)),
        ("batched, no early stop", args.batch_size, fixed_tokens, fixed_s,
         kept_count([q + g.text for q, g in zip(queries, gens_fixed, strict=False)])),
        ("batched + early stop (ours)", len(queries), ours_tokens, ours_s,
         kept_count(ours_texts)),
    ]
    print(f"{'method':<30}{'prompts':>8}{'tokens':>8}{'seconds':>9}{'tok/s':>8}"
          f"{'kept':>6}{'kept/s':>8}{'limit%':>8}")
    rates = {}
    for name, n, toks, secs, kept in rows:
        tok_s = toks / secs
        limit = 100 * tok_s * 2 * params_count / flops
        rates[name] = kept / secs
        print(f"{name:<30}{n:>8}{toks:>8}{secs:>9.1f}{tok_s:>8.1f}{kept:>6}{kept / secs:>8.2f}"
              f"{limit:>7.1f}%")
    ratio = rates["batched + early stop (ours)"] / max(rates["naive loop"], 1e-9)
    print(f"ratio (kept sentences/s, ours over the naive loop): {ratio:.1f}x (target >= 10)")


if __name__ == "__main__":
    main()
