"""Words over-represented among failing corpus sentences (one-sided Fisher exact test).

A finding source over the scored corpus alone (``slices.sources: [enriched]``): for every word
in at least ``MIN_COUNT`` sentences, is it in more of the sentences that fail (under the
slices' failure rule) than chance allows? P(X >= failures) for X ~ Hypergeometric(corpus,
failing sentences, sentences holding the word), Benjamini-Hochberg q-values over the words.
Unlike mining (the hard subset against the corpus) it counts every corpus sentence under
the calibrated failure rule, and unlike occlusion it needs no model call.
"""

from __future__ import annotations

import re
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
from discovery._mining import TOKEN_PATTERN, english_stopwords
from discovery._stats import benjamini_hochberg, fisher_enrichment
from synth.core import artifact

if TYPE_CHECKING:
    from collections.abc import Sequence

    from discovery._config import SlicesConfig

ENRICHED = artifact("enriched", "enriched.jsonl", "enriched",
                    doc="words over-represented among failing corpus sentences")

MIN_COUNT = 3
"""A word in fewer corpus sentences is not tested."""
ALPHA = 0.05
"""A word is significant at q < ALPHA."""
MAX_EXAMPLES = 20


def enriched_words(corpus: ScoredCorpus, slices: SlicesConfig | None = None
                   ) -> list[dict[str, Any]]:
    """One row per tested word, most significant first: ``word``, ``terms``, ``n``
    (sentences holding it), ``failures`` (of them failing), ``base_rate`` (the failure rate
    of the other sentences), ``p_value``, ``q_value``, ``significant`` and ``example_ids``
    (its failing sentences, most likely wrong first)."""
    stop = english_stopwords()
    pattern = re.compile(TOKEN_PATTERN)
    holding: dict[str, list[int]] = {}
    for i, text in enumerate(corpus.texts):
        for w in dict.fromkeys(t.lower() for t in pattern.findall(text)):
            if w not in stop:
                holding.setdefault(w, []).append(i)
    words = sorted(w for w, hits in holding.items() if len(hits) >= MIN_COUNT)
    fail = np.asarray(corpus.fail, dtype=bool)
    n_all, n_fail = len(fail), int(fail.sum())
    n = np.array([len(holding[w]) for w in words], dtype=np.int64)
    k = np.array([int(fail[holding[w]].sum()) for w in words], dtype=np.int64)
    p = fisher_enrichment(k, n_fail, n, n_all) if words else np.zeros(0)
    q = benjamini_hochberg(p)
    rows = []
    order = sorted(range(len(words)), key=lambda j: (q[j], p[j], -k[j], words[j]))
    for j in order:
        w = words[j]
        failing = sorted((i for i in holding[w] if fail[i]),
                         key=lambda i: (-float(corpus.p_wrong[i]), i))
        rest = n_all - int(n[j])
        rows.append({"word": w, "terms": [w], "n": int(n[j]), "failures": int(k[j]),
                     "base_rate": (n_fail - int(k[j])) / rest if rest else 0.0,
                     "p_value": float(p[j]), "q_value": float(q[j]),
                     "significant": bool(q[j] < ALPHA and k[j] > 0),
                     "example_ids": [corpus.ids[i] for i in failing[:MAX_EXAMPLES]]})
    return rows


def _findings(rows: Sequence[Row], ctx: FindingContext) -> list[dict[str, Any]]:
    return [finding("enriched", str(r["word"]), r["terms"], r["example_ids"], r["n"],
                    r["failures"], r["base_rate"],
                    f"in {r['failures']} of the {r['n']} sentences holding it that fail vs "
                    f"{r['base_rate']:.2f} of the others (one-sided Fisher p="
                    f"{r['p_value']:.2g}, q={r['q_value']:.2g})", q_value=r["q_value"])
            for r in list(rows)[:ctx.max_per_kind] if str(r["word"]) not in ctx.tested]


SOURCE = FindingSource(
    "enriched", ENRICHED,
    (FindingKind("enriched", "word enriched among failures (Fisher)", 8),),
    _findings,
    proposes=lambda rows: {str(r["word"]): float(r["q_value"]) for r in rows},
    pool=lambda rows: [(str(r["word"]), "enriched") for r in rows],
    summary="Fisher-enriched words", compute=enriched_words,
    doc="words over-represented among failing corpus sentences (Fisher, BH)")
register_finding_source(SOURCE)
