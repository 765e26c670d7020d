"""Benchmark: the generation engines side by side against the original one-prompt loop.

Every row uses the packaged SmolLM2-135M-Instruct on the same IMDb 5-word queries, with
plain sampling (top_p=1.0, temperature=1.0) and the same punkt first-sentence filter:

- naive loop, float32: the original SynthEval code's way: ``model.generate`` per prompt,
  max_new_tokens=50, no early stop (the first ``--naive`` prompts);
- HF float32: ``HFBackend.generate`` in float32: continuous, length-sorted batches, rows
  leave at the end of their first sentence;
- HF default: the same in the dtype ``generator.dtype: auto`` resolves to on this machine
  (bfloat16 on CPUs with native bfloat16, else float32: then the row repeats HF float32);
- vLLM default: ``VLLMBackend`` when vllm is importable (a line says it is skipped otherwise).

For each: tokens/s, kept sentences/s, and the share of the arithmetic limit for its dtype
(2 x parameters FLOPs per token against the matmul rate measured here for that dtype).
The last line is ``ratio``: kept sentences/s of the default path over the naive loop.
Run: ``python bench/generate.py [--threads 2] [--prompts 128] [--naive 16]``; ``--small``
(the test suite's small mode) runs 8 prompts, 2 in the naive loop, 16 new tokens.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def matmul_flops(threads: int, dtype: str = "float32", size: int = 1024, reps: int = 20) -> float:
    """Measured matmul rate (FLOP/s) in ``dtype`` with ``threads`` threads."""
    import torch

    torch.set_num_threads(threads)
    kind = getattr(torch, dtype)
    a, b = torch.randn(size, size, dtype=kind), torch.randn(size, size, dtype=kind)
    for _ in range(3):
        a @ b
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t0)


@dataclass
class Row:
    """One engine's measurement."""

    name: str
    dtype: str
    prompts: int
    tokens: int
    seconds: float
    kept: int

    def kept_s(self) -> float:
        return self.kept / self.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=128, help="prompts for the batched rows")
    parser.add_argument("--naive", type=int, default=16,
                        help="prompts for the naive loop (the first N of the same list)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=50)
    parser.add_argument("--small", action="store_true",
                        help="the test suite's small mode: 8 prompts, 2 naive, 16 new tokens")
    args = parser.parse_args()
    if args.small:
        args.prompts, args.naive, args.max_new_tokens = 8, 2, 16

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
    from synth.engines import HFBackend, SamplingConfig, load_hf_causal_lm, make_backend
    from synth.engines._models import generation_dtype

    torch.set_num_threads(args.threads)
    # The file is a whole run config; the benchmark needs only its stage-1 sections.
    data, _ = load_yaml(REPO / "configs" / "sentiment.yaml")
    cfg = Stage1Config.model_validate({k: data[k] for k in Stage1Config.model_fields if k in data})
    spec = cfg.generator.model
    default = generation_dtype("auto", "cpu")
    fp32_model, tokenizer = load_hf_causal_lm(spec, device="cpu", dtype="float32")
    params_count = sum(p.numel() for p in fp32_model.parameters())
    sampler = QuerySampler(load_seed_corpus(cfg.corpus), cfg.queries, seed=0)
    queries = [q.text for q in sampler.queries(range(args.prompts))]
    seeds = list(range(len(queries)))
    rates = {d: matmul_flops(args.threads, d) for d in sorted({"float32", default})}
    print(f"model: {spec} ({params_count / 1e6:.1f}M parameters), threads {args.threads}, "
          f"default dtype {default}, matmul rate "
          + ", ".join(f"{d} {r / 1e9:.0f} GFLOP/s" for d, r in rates.items()))

    def kept_count(texts: list[str]) -> int:
        keep = SentenceFilter(cfg.generator.segment)
        return sum(keep(first_sentence(t)) for t in texts)

    sampling = SamplingConfig(max_new_tokens=args.max_new_tokens, stop_at_sentence_end=True)

    def timed(name: str, dtype: str, run: Callable[[], list[Any]]) -> Row:
        t0 = time.perf_counter()
        gens = run()
        secs = time.perf_counter() - t0
        texts = [q + g.text for q, g in zip(queries, gens, strict=True)]
        return Row(name, dtype, len(gens), sum(g.num_tokens for g in gens), secs,
                   kept_count(texts))

    rows: list[Row] = []
    # Naive: one prompt at a time, fixed 50 new tokens, no early stop, float32.
    naive_q = queries[: args.naive]
    torch.manual_seed(0)
    t0 = time.perf_counter()
    naive_tokens, naive_texts = 0, []
    with torch.inference_mode():
        for q in naive_q:
            enc = tokenizer(q, return_tensors="pt")
            out = fp32_model.generate(**enc, do_sample=True, top_p=1.0, temperature=1.0,
                                      top_k=0, max_new_tokens=args.max_new_tokens,
                                      min_new_tokens=args.max_new_tokens,
                                      pad_token_id=tokenizer.pad_token_id)
            new = out[0, enc["input_ids"].shape[1]:]
            naive_tokens += int(new.numel())
            naive_texts.append(q + tokenizer.decode(new, skip_special_tokens=True))
    rows.append(Row("naive loop", "float32", len(naive_q), naive_tokens,
                    time.perf_counter() - t0, kept_count(naive_texts)))

    for name, dtype in [("HF float32", "float32"), ("HF default", default)]:
        model, tok = load_hf_causal_lm(spec, device="cpu", dtype=dtype)
        backend = HFBackend(model, tok, batch_size=args.batch_size, sentence_done=sentence_done)
        backend.generate(queries[:4], sampling, seeds[:4])  # warm-up (first-call costs)
        rows.append(timed(name, dtype, lambda b=backend: b.generate(queries, sampling, seeds)))

    if importlib.util.find_spec("vllm") is None:
        print("vLLM: skipped (vllm is not importable here; see docs/gpu.md to install it)")
    else:
        vllm_backend = make_backend(spec, backend="vllm", device="cpu", dtype=default)
        vllm_backend.generate(queries[:4], sampling, seeds[:4])
        rows.append(timed("vLLM default", default,
                          lambda: vllm_backend.generate(queries, sampling, seeds)))

    print(f"{'engine':<16}{'dtype':>9}{'prompts':>8}{'tokens':>8}{'seconds':>9}{'tok/s':>8}"
          f"{'kept':>6}{'kept/s':>8}{'limit%':>8}")
    for r in rows:
        tok_s = r.tokens / r.seconds
        rate = rates.get(r.dtype) or matmul_flops(args.threads, r.dtype)
        limit = 100 * tok_s * 2 * params_count / rate
        print(f"{r.name:<16}{r.dtype:>9}{r.prompts:>8}{r.tokens:>8}{r.seconds:>9.1f}"
              f"{tok_s:>8.1f}{r.kept:>6}{r.kept_s():>8.2f}{limit:>7.1f}%")
    by_name = {r.name: r for r in rows}
    naive, fp32, ours = by_name["naive loop"], by_name["HF float32"], by_name["HF default"]
    print(f"HF default over HF float32 (kept sentences/s): {ours.kept_s() / fp32.kept_s():.2f}x")
    print(f"ratio (kept sentences/s, HF default over the naive loop): "
          f"{ours.kept_s() / max(naive.kept_s(), 1e-9):.1f}x (target >= 30)")


if __name__ == "__main__":
    main()
