"""Discovery power: how many planted failures does each configuration surface in its top 10?

For each planted word the bench reports its occurrences in the base corpus (and in the hard
subset), its rank among the mined n-grams (``ngrams.jsonl``'s order, no focus rounds) and
its rank among the focus findings at each budget (``focus.jsonl``'s order, then the mined
n-grams not tested), whether focus rounds confirmed it, and how many planted words each
configuration puts in its top 10. Generations and scores are memoised by (prompt, seed) and
by text across budgets, so the 2x run pays only for its second half of prompts (prompt ``i``
has the same seed at every budget).

A planted task model is the demo model with its top label flipped on every sentence that
contains a planted word or phrase. Planted phrases are picked from the base corpus in three
frequency bands (common, about 1% of sentences, rare). For each configuration we count how
many planted phrases appear in the top 10 findings: mined n-grams (``ngrams.jsonl``'s
ranking) without focus rounds, and confirmed-first focus rows (``focus.jsonl``'s ranking)
at 1x/2x/4x the focus budget. A finding surfaces a phrase when it equals it or contains it.

The base corpus and its reference scores come from an existing run directory (``make demo``
writes ``runs/demo``); focus rounds generate new sentences with the run's generator and
score them with the demo model (planted) and the calibrated reference.

    python bench/discovery_power.py --run runs/demo --budgets 1 2 4 --out bench/power.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

BANDS = {"common": (0.03, 0.10), "1%": (0.006, 0.015), "rare": (0.002, 0.005)}


def pick_planted(texts: list[str], per_band: int, seed: int) -> dict[str, list[str]]:
    """Content words per frequency band (share of sentences containing them), seeded."""
    import random

    from sklearn.feature_extraction.text import CountVectorizer

    from discovery._mining import TOKEN_PATTERN, english_stopwords

    vec = CountVectorizer(binary=True, token_pattern=TOKEN_PATTERN, lowercase=True)
    counts = np.asarray(vec.fit_transform(texts).sum(axis=0)).ravel()
    vocab = vec.get_feature_names_out()
    stop = english_stopwords()
    rng = random.Random(seed)
    out = {}
    for band, (lo, hi) in BANDS.items():
        pool = sorted(str(w) for w, c in zip(vocab, counts, strict=True)
                      if lo <= c / len(texts) < hi and w not in stop and w.isalpha()
                      and len(w) > 3)
        out[band] = rng.sample(pool, min(per_band, len(pool)))
    return out


def planted_probs(base: np.ndarray, texts: list[str], planted: list[str]) -> np.ndarray:
    """Flip the task model's probabilities (reverse the label order) where a planted phrase
    occurs: its top label becomes the least likely one."""
    from discovery._focus import contains_ngram

    out = np.array(base, dtype=np.float64)
    for i, t in enumerate(texts):
        if any(contains_ngram(t, p) for p in planted):
            out[i] = out[i][::-1]
    return out


def surfaced(findings: list[str], planted: list[str], top: int = 10) -> dict[str, int | None]:
    """Rank (1-based) of the first top-``top`` finding that equals or contains each phrase."""
    from discovery._focus import contains_ngram

    ranks: dict[str, int | None] = {}
    for p in planted:
        ranks[p] = next((r for r, g in enumerate(findings[:top], start=1)
                         if contains_ngram(g, p)), None)
    return ranks


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="runs/demo", help="a scored run directory (make demo)")
    ap.add_argument("--config", default="configs/sentiment.yaml")
    ap.add_argument("--budgets", type=float, nargs="+", default=[1.0])
    ap.add_argument("--per-band", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--words", nargs="*", help="plant these instead of picking by band")
    ap.add_argument("--candidates", type=int, default=None, help="focus.candidates")
    ap.add_argument("--failure", default=None, help="focus.failure (default: the config's)")
    ap.add_argument("--budget", type=int, default=None, help="focus.budget at 1x")
    ap.add_argument("--work", default="/tmp/discovery_power", help="scratch run directories")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)

    from discovery._calibration import Calibrator
    from discovery._data import read_corpus, read_score_file
    from discovery._focus_stage import FocusBase, FocusModels, run_focus
    from discovery._mining import NgramMiner
    from discovery._ranking import DivergenceRanker
    from discovery._reference import FewShotReference
    from discovery._scorers import load_task_scorer
    from synth import generator_backend, load_seed_corpus
    from synth.core import LabelSpace
    from synthcheck._config import load_run_config

    cfg = load_run_config(args.config)
    labels = LabelSpace.of(cfg.task.labels)
    run = Path(args.run)
    ids, texts = read_corpus(run)
    ref = read_score_file(run / "scores" / "reference.jsonl", ids, labels.list)
    demo = load_task_scorer(cfg.task_models[0].spec, labels.list, evaluation=cfg.evaluation)

    def task_fn(batch: list[str]) -> np.ndarray:
        rows = demo.predict_proba(batch)
        return np.array([[r[lab] for lab in labels] for r in rows])

    base_task = task_fn(texts)
    bands = ({"given": args.words} if args.words
             else pick_planted(texts, args.per_band, args.seed))
    planted = [w for ws in bands.values() for w in ws]
    task = planted_probs(base_task, texts, planted)
    counts = {p: int(sum(_has(t, p) for t in texts)) for p in planted}
    print("planted:", {b: [(w, counts[w]) for w in ws] for b, ws in bands.items()}, flush=True)

    r = cfg.ranking
    ranker = DivergenceRanker(r.metric, top_k=r.top_k, top_fraction=r.top_fraction,
                              require_disagreement=r.require_disagreement).fit(task, ref)
    hard = [int(i) for i in ranker.hard_indices_]
    m = cfg.mining
    miner = NgramMiner((m.ngram_min, m.ngram_max), min_support=m.min_support,
                       statistic=m.statistic, test=m.test, prior_strength=m.prior_strength,
                       stopwords=m.stopwords, drop_subsumed=m.drop_subsumed, max_examples=0)
    ngrams = [str(g) for g in miner.fit(texts, hard).table_["ngram"]]
    hard_counts = {p: int(sum(_has(texts[i], p) for i in hard)) for p in planted}
    results: dict[str, Any] = {
        "corpus": len(texts), "hard": len(hard), "bands": bands, "occurrences": counts,
        "hard_occurrences": hard_counts,
        "ngrams": {"top10": ngrams[:10], "ranks": surfaced(ngrams, planted),
                   "full_ranks": surfaced(ngrams, planted, top=len(ngrams))},
        "focus": {},
    }
    print("ngrams top10:", ngrams[:10], flush=True)
    print("ngrams ranks:", results["ngrams"]["full_ranks"], flush=True)

    meta = json.loads((run / "scores" / "reference.jsonl.meta.json").read_text())
    cal = Calibrator(meta["calibration"]["method"], meta["calibration"]["average"])
    cal.bias_ = np.array([meta["calibration"]["bias"][lab] for lab in labels])
    reference = FewShotReference.from_config(cfg.reference, labels.list)

    memo_ref: dict[str, np.ndarray] = {}
    memo_task: dict[str, np.ndarray] = {}

    def memo(cache: dict[str, np.ndarray], fn: Any, batch: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in batch if t not in cache))
        if todo:
            cache.update(zip(todo, np.asarray(fn(todo)), strict=True))
        return np.array([cache[t] for t in batch]).reshape(len(batch), len(labels))

    def ref_fn(batch: list[str]) -> np.ndarray:
        return memo(memo_ref, lambda b: cal.predict_proba(reference.raw_logprobs(b)), batch)

    gen = cfg.generator
    backend = _MemoBackend(generator_backend(cfg.generator))
    docs = [d.text for d in load_seed_corpus(cfg.corpus)]
    base = FocusBase(texts=texts, task=task, reference=ref, hard_indices=hard,
                     metric=r.metric, require_disagreement=r.require_disagreement,
                     upstream="bench")
    models = FocusModels(backend=backend, task=lambda b: memo(
        memo_task, lambda x: planted_probs(task_fn(x), x, planted), b),
        reference=ref_fn, key="bench:" + ",".join(planted))
    default = cfg.focus
    for mult in args.budgets:
        budget = int(round((args.budget or default.budget) * mult))
        fcfg = default.model_copy(update={
            "budget": budget, "candidates": args.candidates or default.candidates,
            **({"failure": args.failure} if args.failure else {})})
        work = Path(args.work) / f"x{mult:g}"
        start = time.perf_counter()
        out = run_focus(work, fcfg, labels, generator=gen, seed_docs=docs, base=base,
                        models=models, progress=False, mining=m)
        seconds = time.perf_counter() - start
        rows = [json.loads(line) for line in (work / "focus.jsonl").read_text().splitlines()]
        findings = [row["ngram"] for row in rows] + [g for g in ngrams
                                                     if g not in {row["ngram"] for row in rows}]
        results["focus"][f"{mult:g}x"] = {
            "budget": budget, "candidates": fcfg.candidates, "seconds": round(seconds, 1),
            "sentences": out.get("sentences"), "confirmed": out.get("confirmed"),
            "rows": [{k: row[k] for k in ("rank", "ngram", "n", "failures", "rate", "q_value",
                                          "confirmed")} for row in rows],
            "ranks": surfaced(findings, planted),
            "full_ranks": surfaced(findings, planted, top=len(findings)),
            "prompts_generated": backend.generated,
            "confirmed_planted": [p for p in planted
                                  if any(_has(c, p) for c in out.get("confirmed", []))],
        }
        print(f"focus {mult:g}x (budget {budget}): {seconds:.0f}s, confirmed "
              f"{out.get('confirmed')}, ranks {results['focus'][f'{mult:g}x']['ranks']}",
              flush=True)
        if args.out:  # after every budget, so a cut-short sweep keeps what it measured
            Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(table(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def table(results: dict[str, Any]) -> str:
    """The planted-failure table (Markdown): per word its band, occurrences in the corpus and
    the hard subset, its rank without focus (mined n-grams) and with focus at each budget
    (``*``: confirmed), then how many planted words each configuration has in its top 10."""
    budgets = list(results["focus"])
    head = ["word", "band", "corpus", "hard", "ngrams rank"] + [f"focus {b}" for b in budgets]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    band_of = {w: b for b, ws in results["bands"].items() for w in ws}
    for w in results["occurrences"]:
        cells = [w, band_of[w], str(results["occurrences"][w]),
                 str(results["hard_occurrences"][w]),
                 str(results["ngrams"]["full_ranks"][w] or "-")]
        for b in budgets:
            f = results["focus"][b]
            rank = f["full_ranks"][w]
            cells.append(f"{rank or '-'}{'*' if w in f['confirmed_planted'] else ''}")
        lines.append("| " + " | ".join(cells) + " |")
    top = [str(sum(r is not None for r in results["ngrams"]["ranks"].values()))]
    top += [str(sum(r is not None for r in results["focus"][b]["ranks"].values()))
            for b in budgets]
    lines.append("| in top 10 | | | | " + " | ".join(top) + " |")
    conf = [str(len(results["focus"][b]["confirmed_planted"])) for b in budgets]
    lines.append("| confirmed | | | | | " + " | ".join(conf) + " |")
    secs = [f"{results['focus'][b]['seconds']:.0f}s" for b in budgets]
    lines.append("| focus time | | | | | " + " | ".join(secs) + " |")
    return "\n".join(lines)


class _MemoBackend:
    """A generator backend that remembers each (prompt, seed)'s generation, so a larger
    budget regenerates nothing a smaller one made (same prompt and seed, same output)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.cache: dict[tuple[str, int], Any] = {}
        self.generated = 0

    def render_chat(self, user: str, system: str | None = None) -> str:
        return str(self.backend.render_chat(user, system))

    def generate(self, prompts: Any, params: Any, seeds: Any) -> list[Any]:
        keys = list(zip(prompts, seeds, strict=True))
        todo = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if todo:
            outs = self.backend.generate([p for p, _ in todo], params, [s for _, s in todo])
            self.cache.update(zip(todo, outs, strict=True))
            self.generated += len(todo)
        return [self.cache[k] for k in keys]


def _has(text: str, phrase: str) -> bool:
    from discovery._focus import contains_ngram

    return contains_ngram(text, phrase)


if __name__ == "__main__":
    main()
