"""Executor benchmark: the local executor vs Ray on the same small corpus (never part of the
test suite's pass/fail).

Generates the same corpus (configs/sentiment.yaml, the packaged SmolLM2, ``--n`` prompts in
shards of ``--shard-size``) and scores it (the config's task model and reference), once with
the local executor (this process, ``--threads`` torch threads) and once with the Ray executor
(which starts Ray here with this machine's CPUs; ``--workers`` actors of ``--threads /
--workers`` CPUs each); checks that both wrote the same bytes, and prints each stage's
seconds, Ray's overhead (seconds and ratio) and where it goes (starting Ray; actors loading
their models).

Usage: python bench/executor.py [--n 64] [--shard-size 16] [--threads 2] [--workers 2];
``--small`` (the test suite's small mode): 4 prompts in shards of 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _files(run: Path, pattern: str) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.glob(pattern))
            if p.is_file()}


def _run(cfg: Any, run: Path, executor: Any, n: int) -> dict[str, float]:
    """Generate then score into ``run`` on ``executor``; seconds per stage."""
    from synth import run_generation
    from synthcheck._pipeline import score

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    report = run_generation(cfg, run, n=n, progress=False, executor=executor)
    out["generate"] = time.perf_counter() - t0
    out["kept"] = report.kept
    t0 = time.perf_counter()
    score(cfg, run, progress=False, executor=executor)
    out["score"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="prompts to generate")
    ap.add_argument("--shard-size", type=int, default=16, help="prompts per shard")
    ap.add_argument("--threads", type=int, default=2, help="CPUs for either executor")
    ap.add_argument("--workers", type=int, default=2, help="Ray actors")
    ap.add_argument("--small", action="store_true",
                    help="the test suite's small mode: 4 prompts in shards of 2")
    args = ap.parse_args()
    if args.small:
        args.n, args.shard_size = 4, 2

    import torch

    torch.set_num_threads(args.threads)
    from synthcheck import load_run_config
    from synthcheck._executors import ExecutorConfig, LocalExecutor
    from synthcheck._executors_ray import RayExecutor

    cfg = load_run_config(ROOT / "configs" / "sentiment.yaml",
                          [f"generator.shard_size={args.shard_size}", "suite=null"])
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {args.n} prompts in "
          f"shards of {args.shard_size}; generator {cfg.generator.model}; task models "
          f"{[t.spec for t in cfg.task_models]}; local: 1 process, {args.threads} threads; "
          f"ray: {args.workers} actors x {args.threads / args.workers:g} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        local_dir, ray_dir = Path(tmp) / "local", Path(tmp) / "ray"
        t0 = time.perf_counter()
        with LocalExecutor() as local_ex:
            local = _run(cfg, local_dir, local_ex, args.n)
        local["total"] = time.perf_counter() - t0

        rcfg = ExecutorConfig(kind="ray", num_workers=args.workers,
                              cpus_per_worker=args.threads / args.workers)
        t0 = time.perf_counter()
        with RayExecutor(rcfg) as ray_ex:  # starts Ray here with this machine's CPUs
            ray_start = time.perf_counter() - t0
            t1 = time.perf_counter()
            # Actors start and load the generator before the clock for generation starts.
            from functools import partial

            from synth import generation_config_hash, generator_backend

            ray_ex.start(f"generate:{generation_config_hash(cfg)}",
                         partial(generator_backend, cfg.generator))
            actors_load = time.perf_counter() - t1
            remote = _run(cfg, ray_dir, ray_ex, args.n)
        remote["total"] = time.perf_counter() - t0
        remote["generate"] += actors_load
        same = all(_files(local_dir, pat) == _files(ray_dir, pat) for pat in
                   ("corpus/shard-*.jsonl", "corpus/stats.json", "scores/*.jsonl",
                    "scores/.parts/**/*"))

    print(f"kept {int(local['kept'])} sentences; outputs byte-identical: {same}")
    print(f"{'stage':<28}{'local s':>9}{'ray s':>9}{'overhead s':>12}{'ratio':>8}")
    for stage in ("generate", "score", "total"):
        lo, ra = local[stage], remote[stage]
        print(f"{stage:<28}{lo:>9.1f}{ra:>9.1f}{ra - lo:>12.1f}{ra / lo:>8.2f}")
    print(f"{'  of which: ray.init':<28}{'':>9}{ray_start:>9.1f}")
    print(f"{'  actors start + load gen.':<28}{'':>9}{actors_load:>9.1f}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
