"""One ranked list of findings of every kind: ``findings.jsonl``.

Each row (the schema other tools read; fields may be added, never removed)::

    {"id": "f0001", "rank": 1,
     "kind": "ngram"|"semantic"|"metadata"|"word"|"phrase"|"group"|"focus",
     "name": str, "terms": [str], "example_ids": [corpus ids, most telling first, <= 20],
     "n": int, "failures": int, "rate": float, "low": float, "high": float,
     "base_rate": float, "score": float, "confirmed": bool, "reason": str,
     "data": "corpus"|"labelled"}

``data`` says which data a finding was read from: ``corpus`` (the synthetic corpus, judged by
the reference; focus rows: the focus rounds' new sentences) or ``labelled`` (the user's
labelled rows, judged by their gold labels; ``n``/``failures`` count labelled rows, the task
model's errors, and ``example_ids`` are labelled row ids ``L<row>``; ``examples`` hold their
texts). Labelled rows rank among the others by the same keys.
``n``/``failures`` count corpus sentences under the slices' failure rule (for ``focus``
rows: the focus rounds' new sentences under the focus rule), ``low``/``high`` are the
rate's 95% Wilson interval, ``score`` is ``low - base_rate`` (how far above the rest of the
corpus the rate is, at least, with 95% confidence). Every count is over judged sentences
(:func:`discovery.judge`: abstained ones are in none), so every row of a run shares one
base rate (a focus row's ``base_rate`` is the judged corpus's, the same). ``q_value`` is the
finding's own Benjamini-Hochberg q-value (within its kind); ``evidence_q`` is what ranks
it. A candidate that focus rounds tested appears once, as its ``focus`` row (``source``
names the kind that proposed it, ``corpus_n``/``corpus_failures`` keep its corpus counts).

Ranking means what it says:

- confirmed rows first; only a focus row is confirmed, and only when its failure rate on
  new sentences is significantly above the base rate (the paired deletion test is shown
  as evidence, never a confirmation on its own);
- then rows whose rate is above their base rate (``above_base``), before every row whose
  rate is not, whatever their q-values;
- a focus test that did not replicate (new sentences, not confirmed) drops its finding:
  the row is kept, marked ``status: "not replicated"``, after every other row, never
  ranked on the evidence that proposed it;
- within each group, by ``evidence_q``, then by ``score``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from discovery._focus_rounds import candidate_terms, ngram_pattern
from discovery._stats import wilson_interval

KINDS = ("focus", "semantic", "group", "phrase", "word", "ngram", "metadata")


def group_name(terms: Sequence[str], size: int = 4) -> str:
    """The focus candidate of a semantic slice: its first ``size`` terms as a group."""
    return " | ".join(terms[:size])


def corpus_counts(texts: Sequence[str], candidate: str, fail: np.ndarray,
                  p_wrong: np.ndarray, ids: Sequence[str], max_examples: int = 20
                  ) -> dict[str, Any]:
    """Corpus sentences holding ``candidate`` (any of a group's terms): ``n``, ``failures``,
    and the failing ones' ids, most likely wrong first."""
    pattern = ngram_pattern(candidate)
    hits = [i for i, t in enumerate(texts) if pattern.search(t)]
    failing = sorted((i for i in hits if fail[i]), key=lambda i: (-p_wrong[i], i))
    return {"n": len(hits), "failures": len(failing),
            "example_ids": [ids[i] for i in failing[:max_examples]]}


def _interval(k: int, n: int) -> tuple[float, float]:
    lo, hi = wilson_interval(np.array([k]), np.array([n]))
    return float(lo[0]), float(hi[0])


def _finding(kind: str, name: str, terms: Sequence[str], example_ids: Sequence[str], n: int,
             failures: int, base_rate: float, reason: str, *, confirmed: bool = False,
             **extra: Any) -> dict[str, Any]:
    low, high = _interval(failures, n) if n else (0.0, 1.0)
    return {"kind": kind, "name": name, "terms": list(terms),
            "example_ids": list(example_ids)[:20], "n": int(n), "failures": int(failures),
            "rate": failures / n if n else 0.0, "low": low, "high": high,
            "base_rate": float(base_rate), "score": (low - float(base_rate)) if n else 0.0,
            "confirmed": bool(confirmed), "reason": reason, **extra}


LABELLED_WHAT = {"ngram": "rows holding it", "metadata": "rows in this slice",
                 "semantic": "semantically close rows", "word": "rows holding it",
                 "group": "rows holding any of these words"}


def labelled_candidate(row: Mapping[str, Any]) -> str:
    """The focus candidate of a labelled finding: its terms as a group (one term: itself);
    "" for one without terms (a length band, a rating band)."""
    terms = [str(t) for t in row.get("terms") or [] if str(t).strip()]
    return group_name(terms) if terms else ""


def labelled_findings(rows: Sequence[Mapping[str, Any]], max_per_kind: int = 20
                      ) -> list[dict[str, Any]]:
    """Findings rows (``data: labelled``) from ``labelled.jsonl``'s significant rows, the
    first ``max_per_kind`` of each kind."""
    out: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for r in rows:
        kind = str(r["kind"])
        if not r.get("significant") or taken.get(kind, 0) >= max_per_kind:
            continue
        taken[kind] = taken.get(kind, 0) + 1
        shift = (f"; deleting it moves the task model towards the gold label by "
                 f"{r['gold_shift']:+.2f} on average, fixing {r['fixed']} error(s)"
                 if "gold_shift" in r else "")
        out.append(_finding(
            kind, str(r["name"]), r.get("terms") or [], r.get("example_ids") or [],
            int(r["n"]), int(r["failures"]), float(r["base_rate"]),
            f"labelled data: the task model is wrong on {r['failures']} of {r['n']} "
            f"{LABELLED_WHAT.get(kind, 'rows')} vs {float(r['base_rate']):.2f} elsewhere"
            f"{shift}, q={float(r['q_value']):.2g}",
            q_value=float(r["q_value"]), data="labelled",
            examples=[e.get("text") for e in r.get("examples") or [] if isinstance(e, dict)]))
    return out


RARE = 3
"""A finding in at most this many corpus sentences, all of them in higher-ranked findings'
sentences, is moved after the others (its evidence is theirs: "uncle" under a family group)."""


def _covered_last(rows: list[dict[str, Any]], texts: Sequence[str]) -> list[dict[str, Any]]:
    """``rows`` in order, except that a rare row (corpus sentences <= :data:`RARE`) whose
    sentences are all in higher-ranked rows' is moved after every row that is not, with
    ``covered_by`` naming the first row holding its sentences. Metadata rows (no terms) and
    focus rows' new sentences do not count; a row's corpus sentences are those holding any
    of its terms."""
    hits: list[set[int]] = []
    for r in rows:
        terms = [t for t in r.get("terms") or [] if t]
        pattern = ngram_pattern(" | ".join(terms)) if terms and r["kind"] != "metadata" \
            and r.get("data", "corpus") == "corpus" else None
        hits.append({i for i, t in enumerate(texts) if pattern.search(t)} if pattern else set())
    kept: list[tuple[dict[str, Any], set[int]]] = []
    moved: list[dict[str, Any]] = []
    covered: set[int] = set()
    for r, h in zip(rows, hits, strict=True):
        if h and len(h) <= RARE and h <= covered:
            holder = next(k for k, kh in kept if h & kh)
            moved.append({**r, "covered_by": holder["name"]})
            continue
        kept.append((r, h))
        covered |= h
    return [r for r, _ in kept] + moved


def build_findings(*, texts: Sequence[str], ids: Sequence[str], fail: np.ndarray,
                   p_wrong: np.ndarray, rule: str, ngrams: Sequence[Mapping[str, Any]] = (),
                   semantic: Sequence[Mapping[str, Any]] = (),
                   metadata: Sequence[Mapping[str, Any]] = (),
                   words: Sequence[Mapping[str, Any]] = (),
                   focus: Sequence[Mapping[str, Any]] = (),
                   labelled: Sequence[Mapping[str, Any]] = (),
                   focus_rule: str = "", max_per_kind: int = 20) -> list[dict[str, Any]]:
    """The ranked findings (see the module docstring) from each stage's rows.

    Args:
        texts, ids, fail, p_wrong: the corpus, its failure flags under ``rule`` and the
            reference's probability that the task model is wrong.
        ngrams: ``ngrams.jsonl`` rows (mining order); the first ``max_per_kind`` enter.
        semantic, metadata: the significant rows of ``slices.jsonl`` / ``metadata.jsonl``.
        words: the significant rows of ``words.jsonl`` (words and groups of words).
        focus: ``focus.jsonl`` rows (``source`` says which kind proposed each candidate).
        labelled: the significant rows of ``labelled.jsonl`` (the first ``max_per_kind`` of
            each kind enter, with ``data: labelled``).
    """
    fail = np.asarray(fail, dtype=bool)
    p_wrong = np.asarray(p_wrong, dtype=np.float64)
    base = float(fail.mean()) if len(fail) else 0.0
    rows: list[dict[str, Any]] = []
    tested = {str(r["ngram"]) for r in focus}
    proposed = {**{str(r["ngram"]): float(r["q_value"]) for r in ngrams},
                **{group_name(r["terms"]): float(r["q_value"]) for r in semantic
                   if r.get("terms")},
                **{str(r["word"]): float(r["q_value"]) for r in words},
                **{labelled_candidate(r): float(r["q_value"]) for r in labelled
                   if labelled_candidate(r)}}
    for r in focus:
        name = str(r["ngram"])
        c = corpus_counts(texts, name, fail, p_wrong, ids)
        q = r.get("q_value")
        source_q = proposed.get(name)
        evidence = 1.0 if q is None else float(q)
        status = "confirmed" if r.get("confirmed") else (
            "not replicated" if r["n"] else "untested")
        rows.append(_finding(
            "focus", name, candidate_terms(name), c["example_ids"], int(r["n"]),
            int(r["failures"]), base,
            (f"focus rounds: {r['failures']} of {r['n']} new sentences fail ({focus_rule}) vs "
             f"the corpus's {base:.2f}"
             + (f"; deleting it moves the task model by {r['task_shift']:+.2f} and the "
                f"reference by {r['reference_shift']:+.2f}, flipping the task model alone "
                f"on {r['flipped']}" if r.get("flipped") is not None else "")
             + f", q={q:.2g}"
             if q is not None else "focus rounds: no new sentence kept"),
            confirmed=bool(r.get("confirmed")), status=status,
            source=str(r.get("source", "ngram")),
            corpus_n=c["n"], corpus_failures=c["failures"], q_value=q, evidence_q=evidence,
            source_q=source_q, **{k: r[k] for k in ("flipped", "task_shift", "reference_shift",
                                                   "p_rate", "p_paired") if k in r},
            examples=[x.get("text") for x in r.get("examples") or [] if isinstance(x, dict)]))
    for r in list(semantic)[:max_per_kind]:
        name = group_name(r["terms"]) if r["terms"] else str(r["slice"])
        if name in tested:
            continue
        rows.append(_finding(
            "semantic", name, r["terms"], r["example_ids"], r["n"], r["failures"],
            r["base_rate"], f"{r['slice']}: {r['failures']} of {r['n']} semantically close "
            f"sentences fail vs {r['base_rate']:.2f} elsewhere, q={r['q_value']:.2g}",
            q_value=r["q_value"]))
    for kind in ("group", "phrase", "word"):
        for r in [r for r in words if r.get("kind", "word") == kind][:max_per_kind]:
            if r["word"] in tested:
                continue
            ref = r.get("reference_shift")
            ref_s = "unchecked" if ref is None else f"{ref:+.2f}"
            what = ("deleting it moves" if kind != "group" else
                    f"deleting any of these {len(r['terms'])} related words moves")
            rows.append(_finding(
                kind, r["word"], r.get("terms") or [r["word"]], r["example_ids"], r["n"],
                r["failures"], r["base_rate"], f"{what} the task model's top label by "
                f"{r['task_shift']:+.2f} on average over {r['n']} sentence(s), the "
                f"reference's by {ref_s}; z={r['z']:.1f}, q={r['q_value']:.2g}",
                q_value=r["q_value"], task_shift=r["task_shift"], reference_shift=ref))
    for r in list(ngrams)[:max_per_kind]:
        name = str(r["ngram"])
        if name in tested:
            continue
        c = corpus_counts(texts, name, fail, p_wrong, ids)
        rows.append(_finding(
            "ngram", name, [name], c["example_ids"], c["n"], c["failures"], base,
            f"in {r['hard_count']} hard sentences of {r['corpus_count']} in the corpus "
            f"(z={float(r['z']):.2f}, q={float(r['q_value']):.2g})",
            q_value=float(r["q_value"])))
    for r in list(metadata)[:max_per_kind]:
        rows.append(_finding(
            "metadata", r["slice"], r["terms"], r["example_ids"], r["n"], r["failures"],
            r["base_rate"], f"{r['failures']} of {r['n']} sentences fail vs "
            f"{r['base_rate']:.2f} without it" + (
                f"; the reference's mean p(task model wrong) {r['mean_p_wrong']:.2f} vs "
                f"{r['base_p_wrong']:.2f}" if "mean_p_wrong" in r else "")
            + f", q={r['q_value']:.2g}", q_value=r["q_value"]))
    for r in rows:
        r.setdefault("data", "corpus")
    rows += labelled_findings(labelled, max_per_kind)
    for r in rows:
        r.setdefault("evidence_q", 1.0 if r.get("q_value") is None else float(r["q_value"]))
        r["above_base"] = bool(r["n"] and r["rate"] > float(r["base_rate"]))
    order = {k: i for i, k in enumerate(KINDS)}
    rows.sort(key=lambda r: (r.get("status") == "not replicated", not r["confirmed"],
                             not r["above_base"], r["evidence_q"], -r["score"],
                             order[r["kind"]], r["name"]))
    dropped = [r for r in rows if r.get("status") == "not replicated"]
    kept = [r for r in rows if r.get("status") != "not replicated"]
    # Moving covered rare rows down stays within each group: never below a weaker group.
    rows = (_covered_last([r for r in kept if r["confirmed"] or r["above_base"]], texts)
            + _covered_last([r for r in kept if not (r["confirmed"] or r["above_base"])],
                            texts) + dropped)
    out = []
    for rank, r in enumerate(rows, start=1):
        out.append({"id": f"f{rank:04d}", "rank": rank, **r, "rule": rule})
    return out
