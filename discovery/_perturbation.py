"""Punctuation invariance: does the task model's label change when only punctuation changes?

A finding source over the scored corpus (``slices.sources: [perturbation]``, on by default),
CheckList's INV test (Ribeiro et al. 2020, "Robustness: punctuation") run on every corpus
sentence that holds a mark: each mark of :data:`EDITS` has a label-preserving edit (``?`` and
``!`` become ``.``, quotation marks and parentheses are dropped, an ellipsis becomes ``.``),
which keeps every word, so no reader's label changes with it. A sentence *fails* when the
edit changes the task model's top label. No judge is needed, so abstained sentences count
too, and a failure the reference cannot see (a flip on sentences that carry no label, where
a flipped model is as often right as wrong by the reference) is seen here.

The base rate is a control edit of the same sentences: one other word deleted (drawn with
``derive_rng(0, "perturbation-control", text)``), pooled over every sentence that holds any
mark, as the focus rounds' invariance test pools its controls. Deleting a word is a larger
edit than a punctuation change, so the control is conservative: a mark is reported when
changing it flips the task model significantly more often (one-sided Fisher exact test,
Benjamini-Hochberg over the marks) than deleting a word does. A model that ignores
punctuation (the demo's TF-IDF pipeline) never fails it.

A new label-preserving edit is one :data:`EDITS` entry (its membership is the
:data:`discovery._slices.METADATA` predicate of the same name).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from discovery._finding_sources import (
    FindingContext,
    FindingKind,
    FindingSource,
    Row,
    ScoredCorpus,
    finding,
    register_finding_source,
)
from discovery._slices import METADATA
from discovery._stats import benjamini_hochberg
from synth.core import artifact, derive_rng

if TYPE_CHECKING:
    from discovery._config import SlicesConfig

PERTURBATION = artifact("perturbation", "perturbation.jsonl", "perturbation",
                        doc="punctuation marks whose label-preserving edit changes the task "
                            "model's label")

EDITS: dict[str, Callable[[str], str]] = {
    "question mark": lambda t: re.sub(r"\?+", ".", t),
    "exclamation": lambda t: re.sub(r"!+", ".", t),
    "quotation": lambda t: " ".join(re.sub("[\"\u201c\u201d]", "", t).split()),
    "parenthesis": lambda t: " ".join(re.sub(r"[()]", "", t).split()),
    "ellipsis": lambda t: re.sub(r"(?:\.\.\.|\u2026)+", ".", t),
}
"""Each mark's label-preserving edit (every word kept), keyed by its metadata slice's name."""
ALPHA = 0.05
"""A mark is significant at q < ALPHA."""
MAX_EXAMPLES = 20
RULE = "invariance: changing only its punctuation changes the task model's top label"
"""The failure rule of this source's findings."""
_WORD = re.compile(r"[\w']+")


def delete_one_word(text: str) -> str | None:
    """``text`` with one word deleted, drawn with ``derive_rng(0, "perturbation-control",
    text)``: the control edit (None for a sentence of fewer than two words).

    >>> delete_one_word("a fine film") in {"fine film", "a film", "a fine"}
    True
    """
    words = [m.span() for m in _WORD.finditer(text)]
    if len(words) < 2:
        return None
    a, b = words[derive_rng(0, "perturbation-control", text).randrange(len(words))]
    return " ".join((text[:a] + text[b:]).split())


def invariance_rows(corpus: ScoredCorpus, slices: SlicesConfig | None = None
                    ) -> list[dict[str, Any]]:
    """One row per mark held by at least one sentence, most significant first: ``name``,
    ``terms`` (empty), ``n`` (sentences the edit changes), ``failures`` (of them, those whose
    task-model top label changes), ``base_rate`` (the control's flip rate), ``control_n``,
    ``control_failures``, ``p_value``, ``q_value``, ``significant`` and ``example_ids`` (the
    failing sentences, largest drop in the original top label's probability first) with
    ``examples`` (``{"id", "text", "edited"}``).

    Raises:
        ValueError: a corpus without the task model's probabilities or ``task_fn``.
    """
    from scipy.stats import fisher_exact

    if corpus.task is None or corpus.task_fn is None:
        raise ValueError("invariance_rows needs the task model's probabilities and task_fn")
    task = np.asarray(corpus.task, dtype=np.float64)
    members = {name: [(i, e) for i, t in enumerate(corpus.texts)
                      if METADATA[name](t) and (e := edit(t)) != t]
               for name, edit in EDITS.items()}
    members = {k: v for k, v in members.items() if v}
    held = sorted({i for v in members.values() for i, _ in v})
    controls = [(i, c) for i in held if (c := delete_one_word(corpus.texts[i])) is not None]
    texts = [e for v in members.values() for _, e in v] + [c for _, c in controls]
    if not texts:
        return []
    scored = np.asarray(corpus.task_fn(texts), dtype=np.float64)
    top = task.argmax(axis=1)
    new_top = scored.argmax(axis=1)
    control = scored[len(texts) - len(controls):]
    c_n = len(controls)
    c_k = int(sum(int(control[j].argmax()) != int(top[i]) for j, (i, _) in enumerate(controls)))
    rows: list[dict[str, Any]] = []
    at = 0
    for name, pairs in members.items():
        idx = np.array([i for i, _ in pairs])
        flipped = new_top[at:at + len(pairs)] != top[idx]
        drop = task[idx, top[idx]] - scored[np.arange(at, at + len(pairs)), top[idx]]
        k, n = int(flipped.sum()), len(pairs)
        p = float(fisher_exact([[k, n - k], [c_k, c_n - c_k]], alternative="greater").pvalue) \
            if c_n else 1.0
        order = sorted(np.flatnonzero(flipped), key=lambda j: (-float(drop[j]), int(idx[j])))
        rows.append({"name": name, "terms": [], "n": n, "failures": k,
                     "base_rate": c_k / c_n if c_n else 0.0, "control_n": c_n,
                     "control_failures": c_k, "p_value": p,
                     "example_ids": [corpus.ids[idx[j]] for j in order[:MAX_EXAMPLES]],
                     "examples": [{"id": corpus.ids[idx[j]], "text": corpus.texts[idx[j]],
                                   "edited": pairs[j][1]} for j in order[:5]]})
        at += len(pairs)
    q = benjamini_hochberg(np.array([r["p_value"] for r in rows]))
    for r, qv in zip(rows, q, strict=True):
        r["q_value"] = float(qv)
        r["significant"] = bool(qv < ALPHA and r["failures"] > 0)
    rows.sort(key=lambda r: (not r["significant"], r["q_value"], -r["failures"], r["name"]))
    return rows


def _findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    return [finding("perturbation", str(r["name"]), [], r["example_ids"], r["n"],
                    r["failures"], r["base_rate"],
                    f"invariance (CheckList INV): changing only the {r['name']} (every word "
                    f"kept) changes the task model's top label on {r['failures']} of "
                    f"{r['n']} sentences, vs {r['base_rate']:.2f} when one other word is "
                    f"deleted, q={r['q_value']:.2g}", q_value=r["q_value"], rule=RULE,
                    examples=[e["text"] for e in r.get("examples") or []])
            for r in list(rows)[:ctx.max_per_kind]]


SOURCE = FindingSource(
    "perturbation", PERTURBATION,
    (FindingKind("perturbation", "punctuation invariance (CheckList INV)", 6),),
    _findings, summary="punctuation marks the task model's label depends on",
    compute=invariance_rows, edits=True,
    doc="punctuation marks whose label-preserving edit changes the task model's label "
        "(CheckList INV)")
register_finding_source(SOURCE)
