"""Benchmark stage 3: expansion rate and runner throughput, with peak memory (tracemalloc).

Run it standalone: ``python bench/verify.py``. It first prints the expansion-rate table
(one template expanded and de-duplicated at 10k ... 400k cases: the rate should stay flat,
within 20% of the 10k rate at 400k), then a 540k- and a 5.4M-case test verified under
``max_cases_per_test`` (20,000 drawn, stratified): time and memory follow the sample.
It then builds suites of ~10k and ~100k+ cases from
the built-in lexicons, expands them lazily (cases/s), runs them through the TemplateRunner with
a fast toy scorer (cases/s), and reports tracemalloc's peak for each size side by side: the
runner streams (chunked scoring, counters, cases.jsonl written as it goes), so the peak should
stay flat as the suite grows 10x. The "materialised" row shows what keeping every case in a
list costs, for comparison. Numbers are printed, never asserted. ``--small`` (the test suite's
small mode) runs every table on a few thousand cases.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formalize import Suite, TemplateRunner  # noqa: E402


class FastScorer:
    """A toy scorer: p(positive) from a keyword, no model (measures the framework, not a model)."""

    labels = ["negative", "positive"]
    name = "fast"

    def predict_proba(self, texts):
        out = []
        for t in texts:
            p = 0.1 if " not " in t else 0.9
            out.append({"negative": 1 - p, "positive": p})
        return out


def make_suite(n_nouns: int) -> Suite:
    """NOUN (first n_nouns) x POS_ADJ x NEG_ADJ-ish: 83*36*k cases with a fill-dependent label."""
    from formalize import builtin_lexicons

    lex = builtin_lexicons()
    nouns = list(lex["NOUN"])
    mods = list(lex["NEUTRAL_ADJ"]) + list(lex["TIME"])
    extra = [f"{a} {n}" for a in mods for n in nouns][:n_nouns]
    return Suite.from_dict({
        "name": "bench", "labels": ["negative", "positive"], "max_cases": 10_000_000,
        "lexicons": {"THING": extra}, "slots": {"ADJ": ["POS_ADJ", "NEG_ADJ"]},
        "tests": [
            {"name": "negated", "type": "mft", "template": "This {THING} is not {ADJ}.",
             "label": {"by": "ADJ", "map": {"POS_ADJ": "negative", "NEG_ADJ": "positive"}}},
            {"name": "typos", "type": "inv", "template": "I think {a:THING} is {ADJ}.",
             "perturb": [{"name": "typo"}], "sample": max(1, n_nouns * 66 // 10)},
        ]})


def rate_suite(n_cases: int) -> Suite:
    """One MFT template over two made-up lexicons: exactly ``n_cases`` distinct cases."""
    a = [f"w{i}" for i in range(n_cases // 100)]
    b = [f"v{i}" for i in range(100)]
    return Suite.from_dict({
        "name": "rate", "labels": ["x", "y"], "max_cases": 10**8, "builtin_lexicons": False,
        "lexicons": {"A": a, "B": b},
        "tests": [{"name": "t", "type": "mft", "label": "x", "template": "The {A} and {B}."}]})


def rate_table(sizes: list[int]) -> None:
    """Expansion + de-duplication rate per suite size, and its ratio to the smallest size's
    rate (linear expansion keeps the ratio near 1; the target is within 20% at 400k)."""
    rates = []
    for n in sizes:
        suite = rate_suite(n)
        t0 = time.perf_counter()
        k = sum(1 for _ in suite.cases())
        rates.append((n, k, k / (time.perf_counter() - t0)))
    print(f"{'cases':>9} {'expanded':>9} {'cases/s':>10} {'vs first':>9}")
    for n, k, r in rates:
        print(f"{n:>9,} {k:>9,} {r:>10,.0f} {r / rates[0][2]:>9.2f}")


def capped_row(n_cases: int, cap: int = 20_000) -> None:
    """A test of ``n_cases`` fills verified under ``max_cases_per_test=cap``: the plan is
    counted, ``cap`` cases are drawn stratified and scored; time and tracemalloc peak should
    follow ``cap``, not ``n_cases``."""
    suite = Suite.from_dict({  # the default case limit (100,000): refused without the cap
        "name": "capped", "labels": ["negative", "positive"], "builtin_lexicons": False,
        "lexicons": {"A": [f"w{i}" for i in range(n_cases // 100)],
                     "B": [f"v{i}" for i in range(100)]},
        "tests": [{"name": "t", "type": "mft", "label": "positive",
                   "template": "The {A} and {B}."}]})
    runner = TemplateRunner(keep_cases=False, max_cases_per_test=cap, batch_size=256)
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    result = runner.run(suite, [FastScorer()])
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    sampled = result.meta["sampled"]["t"]
    print(f"{sampled['total']:>11,} {sampled['sampled']:>9,} {dt:>8.2f}s {peak / 2**20:>9.1f}")


def measure(fn):
    """Time ``fn`` without tracing (tracemalloc slows allocation several-fold), then run it
    again under tracemalloc for its peak."""
    gc.collect()
    t0 = time.perf_counter()
    value = fn()
    dt = time.perf_counter() - t0
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, dt, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="150,1500,3000",
                    help="THING lexicon sizes (cases = 66x + 10%%)")
    ap.add_argument("--rate-sizes", default="10000,50000,100000,200000,400000",
                    help="case counts of the expansion-rate table")
    ap.add_argument("--capped-sizes", default="540000,5400000",
                    help="test sizes verified under max_cases_per_test (--cap)")
    ap.add_argument("--cap", type=int, default=20_000, help="max_cases_per_test")
    ap.add_argument("--small", action="store_true",
                    help="the test suite's small mode: a few thousand cases per table")
    args = ap.parse_args()
    if args.small:
        args.sizes, args.rate_sizes = "15,30", "1000,2000"
        args.capped_sizes, args.cap = "5000", 1000
    print("expansion rate (one template, de-duplicated):")
    rate_table([int(s) for s in args.rate_sizes.split(",")])
    print()
    print(f"a huge test under verify.max_cases_per_test={args.cap:,} (sampled, stratified; run "
          "incl. scoring):")
    print(f"{'test cases':>11} {'sampled':>9} {'time':>9} {'peak MiB':>9}")
    for n in [int(s) for s in args.capped_sizes.split(",")]:
        capped_row(n, args.cap)
    print()
    # Warm-up: imports (pandas) and caches are paid once, outside the measured runs.
    TemplateRunner(keep_cases=False).run(make_suite(10), [FastScorer()])
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        suite = make_suite(size)
        total = suite.check_limit()
        n_exp, t_exp, peak_exp = measure(lambda s=suite: sum(1 for _ in s.cases()))
        _, t_list, peak_list = measure(lambda s=suite: len(list(s.cases())))
        with tempfile.TemporaryDirectory() as tmp:
            runner = TemplateRunner(keep_cases=False, batch_size=256, chunk_size=4096)
            result, t_run, peak_run = measure(
                lambda s=suite, r=runner, tmp=tmp: r.run(s, [FastScorer()],
                                                        cases_path=Path(tmp) / "cases.jsonl"))
            size_mb = (Path(tmp) / "cases.jsonl").stat().st_size / 1e6
        rows.append((size, total, n_exp, t_exp, peak_exp, peak_list, result.meta["cases"], t_run,
                     peak_run, size_mb))
    print(f"python {sys.version.split()[0]}; tracemalloc peaks (MiB); toy scorer, batch 256, "
          "chunk 4096")
    print(f"{'cases':>9} {'expand/s':>10} {'expand peak':>12} {'list peak':>10} "
          f"{'run cases/s':>12} {'run peak':>9} {'cases.jsonl':>12}")
    for _size, _total, n_exp, t_exp, pk_e, pk_l, n_run, t_run, pk_r, mb in rows:
        print(f"{n_exp:>9,} {n_exp / t_exp:>10,.0f} {pk_e / 2**20:>12.2f} {pk_l / 2**20:>10.1f} "
              f"{n_run / t_run:>12,.0f} {pk_r / 2**20:>9.2f} {mb:>10.1f}MB")


if __name__ == "__main__":
    main()
