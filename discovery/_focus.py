"""Adaptive focus rounds: is a mined n-gram a failure pattern, or an anecdote?

A mined n-gram may rest on three hard sentences. A focus round spends a budget generating new
sentences that contain it (queries are windows of seed documents that contain it, or the
n-gram carried into the prompt), keeps those that still contain it after punkt segmentation,
scores them with the task model and the reference, and tests the n-gram's failure rate
against the base corpus's with a one-sided Fisher exact test; q-values are Benjamini-Hochberg
across candidates. Output: ``focus.jsonl``, one candidate per line, confirmed first.

Everything is seeded (prompt ``i`` of candidate ``c`` in round ``r`` samples with
``derive_seed(seed, "focus", r, c, i)``), and resumable per (round, candidate): each one's
scored sentences are written atomically under ``focus/.parts/`` with the stage hash.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from discovery._config import FocusConfig
from discovery._ranking import divergence
from synth.core import (
    DataError,
    LabelSpace,
    RunDir,
    config_hash,
    derive_seed,
    iter_jsonl,
    output_dump,
    provenance,
    write_json_atomic,
    write_jsonl,
)

STAGE = "focus"
_BOUNDARY = re.compile(r"[.!?]\s")


def ngram_pattern(ngram: str) -> re.Pattern[str]:
    """Case-insensitive pattern of ``ngram``'s words as whole tokens (any non-word gap)."""
    words = [re.escape(w) for w in ngram.split()]
    return re.compile(r"(?<![\w'])" + r"[^\w']+".join(words) + r"(?![\w'])", re.IGNORECASE)


def contains_ngram(text: str, ngram: str) -> bool:
    """True if ``text`` holds ``ngram`` as whole words (mining's tokens, case-insensitive)."""
    return ngram_pattern(ngram).search(text) is not None


def select_candidates(texts: Sequence[str], hard_indices: Sequence[int], *, n: int,
                      min_support: int = 2, ngram_range: tuple[int, int] = (1, 4),
                      stopwords: str | Sequence[str] = "english", prior_strength: float = 100.0,
                      extra: Sequence[str] = ()) -> list[str]:
    """The ``n`` n-grams most enriched in the hard subset (z-score of the log-odds ratio,
    positive only), mined with ``min_support`` (so n-grams below ``mining.min_support``
    compete too), then ``extra`` (the user's own) not already listed."""
    from discovery._mining import NgramMiner

    miner = NgramMiner(ngram_range, min_support=min_support, statistic="z",
                       prior_strength=prior_strength, stopwords=stopwords, max_examples=0)
    table = miner.fit(texts, hard_indices).table_
    out = [str(g) for g, z in zip(table["ngram"], table["z"], strict=True) if z > 0][:n]
    return out + [g for g in extra if g not in out]


@dataclass(frozen=True)
class FocusQuery:
    """One focus prompt's query and its sampling seed."""

    text: str
    seed: int
    source: str  # "seed" (a seed-document window) or "prompt" (the n-gram carried in)


def focus_queries(candidate: str, docs: Sequence[str], cfg: FocusConfig, *, seed: int,
                  round_: int, start: int = 0) -> list[FocusQuery]:
    """``cfg.budget`` queries that contain ``candidate``, prompts ``start .. start+budget-1``.

    Seed windows: a random seed document containing the candidate, the candidate's
    occurrence in it and up to ``context_words`` words before it in the same sentence.
    Prompt form: the first ``context_words`` words of a random document, then the candidate.
    Each query's randomness is ``Random(derive_seed(seed, "focus", round, candidate, i))``.
    """
    pattern = ngram_pattern(candidate)
    holders = [d for d in docs if pattern.search(d)] if cfg.queries != "prompt" else []
    if cfg.queries == "seed" and not holders:
        return []
    out = []
    for i in range(start, start + cfg.budget):
        s = derive_seed(seed, "focus", round_, candidate, i)
        rng = random.Random(s)
        if holders:
            doc = holders[rng.randrange(len(holders))]
            matches = list(pattern.finditer(doc))
            m = matches[rng.randrange(len(matches))]
            before = doc[:m.start()]
            cut = [b.end() for b in _BOUNDARY.finditer(before)]
            before = before[cut[-1]:] if cut else before
            context = before.split()[-cfg.context_words:] if cfg.context_words else []
            out.append(FocusQuery(" ".join([*context, m.group(0)]), s, "seed"))
        else:
            doc = docs[rng.randrange(len(docs))] if docs else ""
            context = doc.split()[:cfg.context_words] if cfg.context_words else []
            out.append(FocusQuery(" ".join([*context, candidate]), s, "prompt"))
    return out


def generate_sentences(candidate: str, queries: Sequence[FocusQuery], backend: Any,
                       generator: Any, seen: set[str]) -> list[dict[str, Any]]:
    """Generate one continuation per query with ``backend`` and ``generator``'s prompt,
    sampling and segment settings (stage 1's), keep the first punkt sentence if it passes
    the segment filter, is new (not in ``seen``, updated) and still contains ``candidate``.

    Returns:
        ``{"text", "query", "seed", "source"}`` per kept sentence, in query order.
    """
    from synth import SentenceFilter, first_sentence

    if not queries:
        return []
    prompt = generator.prompt
    texts = [prompt.template.replace("{query}", q.text) for q in queries]
    if prompt.style == "chat":
        texts = [backend.render_chat(t, prompt.system) for t in texts]
    gens = backend.generate(texts, generator.sampling, [q.seed for q in queries])
    keep = SentenceFilter(generator.segment, seen=seen)
    prefix = prompt.style == "continuation" and generator.segment.include_query
    out = []
    for q, g in zip(queries, gens, strict=True):
        text = first_sentence((q.text + g.text) if prefix else g.text)
        if contains_ngram(text, candidate) and keep(text):
            out.append({"text": text, "query": q.text, "seed": q.seed, "source": q.source})
    return out


def failures(task: np.ndarray, reference: np.ndarray, rule: str, *, metric: str = "abs_top",
             threshold: float | None = None, require_disagreement: bool = False) -> np.ndarray:
    """Per-row failure indicator: top-label disagreement, or the hard-subset rule
    (divergence >= ``threshold``, and disagreement if ``require_disagreement``)."""
    task = np.asarray(task, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if len(task) == 0:
        return np.zeros(0, dtype=bool)
    disagree = task.argmax(axis=1) != reference.argmax(axis=1)
    if rule == "disagreement":
        return np.asarray(disagree)
    if threshold is None:
        raise ValueError("the hard_rule failure needs the base hard subset's threshold")
    hard = divergence(task, reference, metric) >= threshold
    return np.asarray(hard & disagree if require_disagreement else hard)


def confirm_candidates(rows: list[dict[str, Any]], base_failures: int, base_n: int,
                    alpha: float) -> list[dict[str, Any]]:
    """Add ``p_value`` (one-sided Fisher exact: is the candidate's failure rate above the
    base corpus's?), ``q_value`` (Benjamini-Hochberg across ``rows``), ``confirmed``,
    the rate's 95% Wilson interval and ``rate_ratio``; return the rows ranked (confirmed
    first, then q-value, then rate)."""
    from scipy.stats import binomtest, false_discovery_control, fisher_exact

    base_rate = base_failures / base_n if base_n else float("nan")
    pvals = []
    for row in rows:
        k, n = row["failures"], row["n"]
        if n == 0:
            p = 1.0
            lo, hi = 0.0, 1.0
        else:
            p = float(fisher_exact([[k, n - k], [base_failures, base_n - base_failures]],
                                   alternative="greater").pvalue)
            ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            lo, hi = float(ci.low), float(ci.high)
        rate = k / n if n else None
        row.update(rate=rate, rate_lo=lo, rate_hi=hi, base_failures=base_failures,
                   base_n=base_n, base_rate=base_rate,
                   rate_ratio=(rate / base_rate) if rate is not None and base_rate else None,
                   p_value=p)
        pvals.append(p)
    qs = false_discovery_control(pvals) if pvals else []
    for row, q in zip(rows, qs, strict=True):
        row["q_value"] = float(q)
        row["confirmed"] = bool(q < alpha and row["n"] > 0)
    ranked = sorted(rows, key=lambda r: (not r["confirmed"], r["q_value"],
                                         -(r["rate"] or 0.0), r["ngram"]))
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    return ranked


@dataclass(frozen=True)
class FocusBase:
    """The base corpus the candidates are tested against (already scored).

    Attributes:
        texts: every corpus sentence.
        task, reference: n x labels probabilities (reference calibrated).
        hard_indices: the hard subset, as indices into ``texts``.
        metric, require_disagreement: the ranking rule (for ``failure: hard_rule``).
        upstream: the hash of the stage the candidates come from (e.g. mine's).
    """

    texts: Sequence[str]
    task: np.ndarray
    reference: np.ndarray
    hard_indices: Sequence[int]
    metric: str = "abs_top"
    require_disagreement: bool = False
    upstream: str = ""


@dataclass(frozen=True)
class FocusModels:
    """What focus rounds generate and score with.

    Attributes:
        backend: the stage-1 generator backend (``synth.engines.Backend``).
        task: texts -> n x labels probabilities of the ranked task model.
        reference: texts -> n x labels calibrated reference probabilities (calibrated
            like the base corpus, e.g. with the score stage's fitted bias).
        key: a hash of what changes the two models' scores (their stage hashes).
    """

    backend: Any
    task: Callable[[list[str]], np.ndarray]
    reference: Callable[[list[str]], np.ndarray]
    key: str


def focus_stage_hash(cfg: FocusConfig, labels: LabelSpace, generator: Any, docs: Sequence[str],
                     base: FocusBase, models: FocusModels) -> str:
    """Hash of what changes ``focus.jsonl``: the focus and generator configs, the labels,
    the seed documents, the upstream stage and the models."""
    h = hashlib.sha256()
    for d in docs:
        h.update(d.encode("utf-8") + b"\n")
    return config_hash({"focus": output_dump(cfg), "generator": output_dump(generator),
                        "labels": list(labels), "seed_docs": h.hexdigest()[:16],
                        "upstream": base.upstream, "models": models.key,
                        "rule": [base.metric, base.require_disagreement]})


def _part_path(run: RunDir, shash: str, round_: int, candidate: str) -> Path:
    tag = hashlib.sha256(candidate.encode("utf-8")).hexdigest()[:12]
    return run.path / "focus" / ".parts" / f"round{round_}-{tag}-{shash}.jsonl"


def run_focus(run_dir: str | Path, cfg: FocusConfig, labels: LabelSpace, *, generator: Any,
              seed_docs: Sequence[str], base: FocusBase, models: FocusModels,
              candidates: Sequence[str] | None = None, config_dump: dict[str, Any] | None = None,
              progress: bool = True) -> dict[str, Any]:
    """Run ``cfg.rounds`` focus rounds into ``run_dir`` and write ``focus.jsonl``.

    Args:
        run_dir: the run directory (``focus.jsonl``, ``focus.jsonl.meta.json`` and the
            per-candidate parts under ``focus/.parts/`` are written there).
        cfg: the focus section.
        labels: the task's labels (column order of every probability array).
        generator: the stage-1 ``GeneratorConfig`` (prompt, sampling and its seed, segment).
        seed_docs: the seed corpus texts queries are drawn from.
        base: the scored base corpus and its hard subset.
        models: the generator backend and the two scorers.
        candidates: the n-grams to test (default: :func:`select_candidates` on the base
            corpus with ``cfg``'s settings, plus ``cfg.ngrams``).
        config_dump: the resolved run config to record in the manifest.
        progress: print a line per candidate.

    Returns:
        ``{"skipped", "stage_hash", "candidates", "confirmed", "sentences", "seconds"}``.

    Raises:
        DataError: the base corpus is empty, or its scores do not match its texts.
    """
    n_base = len(base.texts)
    if n_base == 0 or base.task.shape != (n_base, len(labels)) \
            or base.reference.shape != base.task.shape:
        raise DataError(f"the base corpus must be scored by both models ({n_base} texts, task "
                        f"{base.task.shape}, reference {base.reference.shape})",
                        where=str(run_dir), fix="run `synthcheck score` first")
    run = RunDir(run_dir)
    shash = focus_stage_hash(cfg, labels, generator, seed_docs, base, models)
    out = run.path / "focus.jsonl"
    if run.is_current(STAGE, shash) and out.is_file():
        return {"skipped": True, "stage_hash": shash}
    started = time.perf_counter()
    threshold = float(np.min(divergence(base.task, base.reference, base.metric)[
        np.asarray(base.hard_indices, dtype=np.int64)])) if len(base.hard_indices) else None
    rule: dict[str, Any] = dict(metric=base.metric, threshold=threshold,
                                require_disagreement=base.require_disagreement)
    base_fail = failures(base.task, base.reference, cfg.failure, **rule)
    if candidates is None:
        candidates = select_candidates(base.texts, base.hard_indices, n=cfg.candidates,
                                       min_support=cfg.min_support, extra=cfg.ngrams)
    candidates = list(dict.fromkeys(candidates))
    run.open_stage(config_dump or {"focus": cfg.model_dump(mode="json")}, STAGE, shash)
    seen = set(base.texts)
    sentences: dict[str, list[dict[str, Any]]] = {c: [] for c in candidates}
    rows: list[dict[str, Any]] = []
    for r in range(1, cfg.rounds + 1):
        todo = candidates if r == 1 else [
            row["ngram"] for row in rows if not row["confirmed"] and row["n"]
            and (row["rate"] or 0.0) > row["base_rate"]]
        for c in todo:
            part = _part_path(run, shash, r, c)
            if part.is_file():
                recs = list(iter_jsonl(part))
            else:
                queries = focus_queries(c, seed_docs, cfg, seed=generator.sampling.seed,
                                        round_=r, start=(r - 1) * cfg.budget)
                recs = generate_sentences(c, queries, models.backend, generator, seen)
                texts = [x["text"] for x in recs]
                task = np.asarray(models.task(texts)) if texts else np.zeros((0, len(labels)))
                ref = np.asarray(models.reference(texts)) if texts \
                    else np.zeros((0, len(labels)))
                fail = failures(task, ref, cfg.failure, **rule)
                for x, t, p, f in zip(recs, task, ref, fail, strict=True):
                    x.update(task_probs=dict(zip(labels, map(float, t), strict=True)),
                             reference_probs=dict(zip(labels, map(float, p), strict=True)),
                             failure=bool(f))
                write_jsonl(part, recs)
            seen.update(x["text"] for x in recs)
            sentences[c].extend(recs)
            if progress:
                k = sum(x["failure"] for x in sentences[c])
                print(f"focus round {r}: {c!r}: {k}/{len(sentences[c])} failures", flush=True)
        rows = confirm_candidates([_row(c, sentences[c], base.texts, base_fail, cfg.max_examples)
                                for c in candidates], int(base_fail.sum()), n_base, cfg.alpha)
    write_jsonl(out, rows)
    seconds = time.perf_counter() - started
    total = sum(len(v) for v in sentences.values())
    write_json_atomic(out.with_name(out.name + ".meta.json"), {
        **provenance(shash), "focus": cfg.model_dump(mode="json"), "candidates": len(rows),
        "sentences": total, "base_sentences": n_base, "stage": STAGE})
    confirmed = [row["ngram"] for row in rows if row["confirmed"]]
    run.complete(STAGE, shash, stage_hash=shash, candidates=len(rows), sentences=total,
                 confirmed=len(confirmed), seconds=round(seconds, 2))
    return {"skipped": False, "stage_hash": shash, "candidates": len(rows),
            "confirmed": confirmed, "sentences": total, "seconds": seconds}


def _row(candidate: str, recs: list[dict[str, Any]], base_texts: Sequence[str],
         base_fail: np.ndarray, max_examples: int) -> dict[str, Any]:
    pattern = ngram_pattern(candidate)
    in_base = np.array([pattern.search(t) is not None for t in base_texts], dtype=bool)
    return {
        "ngram": candidate,
        "n": len(recs),
        "failures": int(sum(x["failure"] for x in recs)),
        "corpus_count": int(in_base.sum()),
        "corpus_failures": int((in_base & base_fail).sum()),
        "examples": [x["text"] for x in recs if x["failure"]][:max_examples],
    }
