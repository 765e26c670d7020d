"""Adaptive focus rounds: is a mined n-gram a failure pattern, or an anecdote?

A mined n-gram may rest on three hard sentences. A focus round spends a budget generating new
sentences that contain it (queries are windows of seed documents that contain it, or the
n-gram carried into the prompt), keeps those that still contain it after punkt segmentation,
scores them with the task model and the reference, and tests the n-gram's failure rate
against the base corpus's with a one-sided Fisher exact test; q-values are Benjamini-Hochberg
across candidates. Output: ``focus.jsonl``, one candidate per line, confirmed first.

This module holds the pieces (candidates, queries, generation, the failure rule and the
test); the stage that runs them on a run directory is ``discovery._focus_stage``. Everything
is seeded: prompt ``i`` of candidate ``c`` in round ``r`` samples with
``derive_seed(seed, "focus", r, c, i)`` and picks its query window from
``derive_rng(seed, "focus-query", r, c, i)``: two streams, as stage 1 keeps its query draw
(``"query"``) apart from its sampling seed (``"prompt"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._config import FocusConfig
from synth.core import derive_rng, derive_seed

if TYPE_CHECKING:
    from synth import GeneratorConfig
    from synth.engines import Backend

FOCUS_SEED_SCHEME = "window: derive_rng(seed, 'focus-query', r, c, i); " \
    "sample: derive_seed(seed, 'focus', r, c, i)"
"""How focus prompts are seeded; part of the focus stage's hash, so rounds run with the
former single stream (one value for both) are redone, not taken for current."""
GROUP_QUERY_SCHEME = "group: query i carries word i mod k"
"""How a group's queries carry its words; part of a group candidate's part file name, so a
group generated before its words took turns is generated again (one word's parts stay)."""

_BOUNDARY = re.compile(r"[.!?]\s")


GROUP_SEPARATOR = " | "


def candidate_terms(candidate: str) -> list[str]:
    """The n-grams of a candidate: one, or a group written ``"pizza | sushi | tacos"`` (a
    semantic slice's terms: a sentence holds the candidate when it holds any of them), each
    once (the first spelling of a term written twice, case aside)."""
    terms: dict[str, str] = {}
    for t in candidate.split(GROUP_SEPARATOR.strip()):
        if t.strip():
            terms.setdefault(t.strip().casefold(), t.strip())
    return list(terms.values())


def ngram_pattern(ngram: str) -> re.Pattern[str]:
    """Case-insensitive pattern of ``ngram``'s words as whole tokens (any non-word gap); for
    a group (see :func:`candidate_terms`), any of its n-grams."""
    return re.compile("|".join(_term_pattern(t) for t in candidate_terms(ngram)),
                      re.IGNORECASE)


_MARK = re.compile(r"[^\w\s']")


def _term_pattern(term: str) -> str:
    """One term's pattern: its tokens (words, or punctuation marks such as "?") in order,
    whole words only; words are separated by any non-word gap, a mark by optional space
    ("good?" and "good ?" are both "good?")."""
    toks = re.findall(r"[\w']+|[^\w\s']", term)
    out = ""
    for i, tok in enumerate(toks):
        if i:
            out += r"\s*" if _MARK.fullmatch(tok) or _MARK.fullmatch(toks[i - 1]) \
                else r"[^\w']+"
        out += re.escape(tok)
    if toks and not _MARK.fullmatch(toks[0]):
        out = "(?<![\\w'])" + out
    if toks and not _MARK.fullmatch(toks[-1]):
        out += r"(?![\w'])"
    return out


def contains_ngram(text: str, ngram: str) -> bool:
    """True if ``text`` holds ``ngram`` as whole words (mining's tokens, case-insensitive)."""
    return ngram_pattern(ngram).search(text) is not None


def delete_candidate(text: str, candidate: str) -> str:
    """``text`` with every occurrence of ``candidate`` (any of a group's terms) deleted, each
    gap left as one space: the counterfactual of a focus sentence."""
    return " ".join(ngram_pattern(candidate).sub(" ", text).split())


CONTROL_SCHEME = ("control: delete as many other words, "
                  "derive_rng(seed, 'focus-control', c, text)")
"""How each new sentence's control deletion is drawn (:func:`control_deletion`), kept with
each scored control (``control_scheme``): a control of another scheme is scored again."""
INVARIANCE_SCHEME = (CONTROL_SCHEME + "; test: Fisher vs the pooled controls, where the "
                     "reference's mean shift is below min_shift")
"""The invariance test (see :func:`confirm_candidates`); part of the focus stage's hash (not
of its parts: the new sentences and their scores stay current)."""

_WORD = re.compile(r"[\w']+")


def control_deletion(text: str, candidate: str, seed: int) -> str | None:
    """``text`` with as many other words deleted as :func:`delete_candidate` deletes, the
    control of the invariance test: a contiguous run of words that holds no part of the
    candidate, drawn with ``derive_rng(seed, "focus-control", candidate, text)`` (any as
    many other words where no run is free). None when the sentence has too few other words.

    >>> control_deletion("so having seen it I loved it", "having seen", 0) is not None
    True
    >>> control_deletion("having seen", "having seen", 0) is None
    True
    """
    spans = [m.span() for m in ngram_pattern(candidate).finditer(text)]
    words = [m.span() for m in _WORD.finditer(text)]
    inside = [any(a < e and s < b for s, e in spans) for a, b in words]
    k = max(1, sum(inside))
    starts = [i for i in range(len(words) - k + 1) if not any(inside[i:i + k])]
    outside = [i for i, x in enumerate(inside) if not x]
    if len(outside) < k:
        return None
    rng = derive_rng(seed, "focus-control", candidate, text)
    if starts:  # one run of k words
        i = rng.choice(starts)
        cut = list(range(i, i + k))
    else:  # none is free (the candidate met twice): any k other words
        cut = sorted(rng.sample(outside, k))
    out, at = [], 0
    for j in cut:
        out.append(text[at:words[j][0]])
        at = words[j][1]
    return " ".join(" ".join([*out, text[at:]]).split())


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
    A group (``"galli | milani | thati"``) is a hypothesis about each of its words: query
    ``i`` carries its words in turn (word ``i mod k``), from a seed window holding that word
    where one exists (with ``queries: seed``, a window holding any of its words when none
    does), else in the prompt form, so that a word the seed documents hold often does not
    fill the group's test.
    Two streams per query, kept apart as in stage 1: the window is picked by
    ``derive_rng(seed, "focus-query", round, candidate, i)`` and the LLM samples with
    ``derive_seed(seed, "focus", round, candidate, i)``.
    """
    terms = candidate_terms(candidate)
    whole = ngram_pattern(candidate)
    patterns = [whole] if len(terms) == 1 else [ngram_pattern(t) for t in terms]
    holders_of = [[d for d in docs if p.search(d)] if cfg.queries != "prompt" else []
                  for p in patterns]
    if cfg.queries == "seed" and not any(holders_of):
        return []
    out = []
    for i in range(start, start + cfg.budget):
        s = derive_seed(seed, "focus", round_, candidate, i)
        rng = derive_rng(seed, "focus-query", round_, candidate, i)
        which = i % len(patterns)
        holders, pattern = holders_of[which], patterns[which]
        if not holders and cfg.queries == "seed":
            holders, pattern = [d for d in docs if whole.search(d)], whole
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
            out.append(FocusQuery(" ".join([*context, terms[which]]), s, "prompt"))
    return out


def generate_raw(queries: Sequence[FocusQuery], backend: Backend, generator: GeneratorConfig
                 ) -> list[str]:
    """One continuation per query (any number of candidates' queries at once: a single
    ``backend.generate`` call, so the backend batches across candidates), with
    ``generator``'s prompt and sampling; each is a function of its query and seed only."""
    if not queries:
        return []
    from synth import draw_condition, render_prompt

    prompt = generator.prompt
    # a label-conditioned prompt draws its {label} word from the query's own seed
    texts = [render_prompt(prompt, backend, q.text, draw_condition(prompt, q.seed))
             for q in queries]
    return [g.text for g in backend.generate(texts, generator.sampling, [q.seed for q in queries])]


def keep_sentences(candidate: str, queries: Sequence[FocusQuery], raw: Sequence[str],
                   generator: GeneratorConfig, seen: set[str]) -> list[dict[str, Any]]:
    """Keep the first punkt sentence of each generation if it passes ``generator``'s segment
    filter, is new (not in ``seen``, updated) and still contains ``candidate``.

    Returns:
        ``{"text", "query", "seed", "source"}`` per kept sentence, in query order.
    """
    from synth import SentenceFilter, first_sentence

    keep = SentenceFilter(generator.segment, seen=seen)
    prefix = generator.prompt.style == "continuation" and generator.segment.include_query
    out = []
    from synth import chat_answer

    chat = generator.prompt.style == "chat"
    for q, g in zip(queries, raw, strict=True):
        text = first_sentence((q.text + g) if prefix else chat_answer(g) if chat else g)
        if contains_ngram(text, candidate) and keep(text):
            out.append({"text": text, "query": q.text, "seed": q.seed, "source": q.source})
    return out


def paired_test(task_shift: Sequence[float], reference_shift: Sequence[float],
                min_shift: float = 0.0) -> float | None:
    """One-sided Wilcoxon signed-rank p-value that deleting a candidate moves the task
    model's probability of its top label (``task_shift``, per new sentence) by more than
    ``min_shift`` beyond what it moves the reference's (``reference_shift``): an invariance
    test in CheckList's sense, where the reference says whether the edit should move the
    label. None when every difference is exactly ``min_shift`` (nothing to test)."""
    from scipy.stats import wilcoxon

    d = (np.asarray(task_shift, dtype=np.float64)
         - np.asarray(reference_shift, dtype=np.float64) - min_shift)
    if not len(d) or not np.any(np.abs(d) > 1e-12):
        return None
    return float(wilcoxon(d, alternative="greater", zero_method="zsplit").pvalue)


def confirm_candidates(rows: list[dict[str, Any]], base_failures: int, base_n: int,
                       alpha: float, min_shift: float | None = None
                       ) -> list[dict[str, Any]]:
    """Add ``p_value``, ``q_value`` (Benjamini-Hochberg across ``rows``), ``confirmed``,
    ``confirmed_by``, ``supported`` (not confirmed, but its own test is significant at
    ``alpha`` before the correction across candidates: the new sentences agree with the
    evidence that proposed it), the rate's 95% Wilson interval (``rate_lo``, ``rate_hi``) and
    the effect size (``rate_ratio`` and ``rate_diff`` against the base rate); return the rows
    ranked (confirmed first, then rows whose rate is above the base rate, then q-value, then
    rate).

    A candidate is confirmed only by a failure rate on the new sentences significantly above
    its base rate, by one of two tests (one Benjamini-Hochberg correction over both):

    - ``failure rate``: the task model's top label differs from the reference's more often
      than on the base corpus (``p_rate``, the one-sided Fisher exact test of the two rates);
    - ``invariance`` (CheckList's INV test, where a row has controls): deleting the candidate
      changes the task model's top label while the reference's stays (``flipped`` of
      ``invariance_n``) more often than deleting as many other words of the same sentences
      does, pooled over every candidate (``invariance_base``; ``p_invariance``, Fisher). Each
      such sentence is a failure: the reference gives it and its edit one label, the task
      model two. This catches a word that flips the task model where the task model is no
      better than chance, so flipping it does not raise its error rate. It applies only to
      a candidate the reference says carries no label (``invariance_applies``): deleting it
      moves the reference's probability of the task model's label by less than
      ``min_shift`` on average (``reference_shift``). Deleting "too" moves a small
      reference by 0.10 and seldom changes its label; that the task model's label changes
      is then no failure, the word being about the label. A threshold, not a test: read an
      invariance finding's new sentences before acting on it.

    The paired Wilcoxon test of the shifts (``p_paired``, see :func:`paired_test`) is kept as
    evidence beside them, never a confirmation: deleting a word can move the task model's
    probability more than the reference's on sentences where it is nevertheless right.
    """
    from scipy.stats import binomtest, false_discovery_control, fisher_exact

    def test(k: int, n: int, bk: int, bn: int) -> float:
        return float(fisher_exact([[k, n - k], [bk, bn - bk]], alternative="greater").pvalue)

    base_rate = base_failures / base_n if base_n else float("nan")
    ctrl_k = sum(int(r.get("control_flipped") or 0) for r in rows)
    ctrl_n = sum(int(r.get("control_n") or 0) for r in rows)
    inv_base = ctrl_k / ctrl_n if ctrl_n else None
    p_rates, p_invs = [], []
    for row in rows:
        k, n = row["failures"], row["n"]
        if n == 0:
            p = 1.0
            lo, hi = 0.0, 1.0
        else:
            p = test(k, n, base_failures, base_n)
            ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            lo, hi = float(ci.low), float(ci.high)
        rate = k / n if n else None
        row.update(rate=rate, rate_lo=lo, rate_hi=hi, base_failures=base_failures,
                   base_n=base_n, base_rate=base_rate,
                   rate_ratio=(rate / base_rate) if rate is not None and base_rate else None,
                   rate_diff=(rate - base_rate) if rate is not None else None,
                   p_rate=p, p_paired=row.get("p_paired"), p_value=p)
        p_rates.append(p)
        inv_n = int(row.get("invariance_n") or 0)
        applies = min_shift is None or float(row.get("reference_shift") or 0.0) < min_shift
        if inv_base is not None and inv_n:
            row["invariance_applies"] = applies
        if inv_base is not None and inv_n and applies:
            row.update(invariance_rate=row["flipped"] / inv_n, invariance_base=inv_base,
                       p_invariance=test(int(row["flipped"]), inv_n, ctrl_k, ctrl_n))
            p_invs.append(row["p_invariance"])
    qs = list(false_discovery_control(p_rates + p_invs)) if rows else []
    q_invs = iter(qs[len(rows):])
    for row, q in zip(rows, qs[:len(rows)], strict=True):
        row["q_value"] = row["q_rate"] = float(q)
        by_rate = bool(q < alpha and row["n"] > 0 and (row["rate"] or 0.0) > base_rate)
        up = "p_invariance" in row and row["invariance_rate"] > row["invariance_base"]
        if "p_invariance" in row:
            row["q_invariance"] = float(next(q_invs))
        by_inv = bool(up and row["q_invariance"] < alpha)
        row["confirmed"] = by_rate or by_inv
        row["confirmed_by"] = ("failure rate" if by_rate else "invariance" if by_inv
                               else None)
        if by_inv and not by_rate:
            row["q_value"] = row["q_invariance"]
        # above the base rate on its own test, not after the correction across candidates
        row["supported"] = bool(not row["confirmed"] and row["n"] > 0 and (
            (row["p_rate"] < alpha and (row["rate"] or 0.0) > base_rate)
            or (up and row["p_invariance"] < alpha)))
    ranked = sorted(rows, key=lambda r: (not r["confirmed"],
                                         not (r["rate"] or 0.0) > base_rate,
                                         r["q_value"], -(r["rate"] or 0.0), r["ngram"]))
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    return ranked
