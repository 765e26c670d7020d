"""Stage 2, semantic: the whole scored corpus embedded (all-MiniLM-L6-v2), grouped by a
seeded k-means, each group's failure rate tested against the rest's
(``discovery.semantic_run``; the declaration is
:func:`synthcheck.stages._slice_base.corpus_slice_stage`'s)."""

from __future__ import annotations

from synthcheck.stages._slice_base import corpus_slice_stage

STAGE = corpus_slice_stage("semantic", progress=True)
