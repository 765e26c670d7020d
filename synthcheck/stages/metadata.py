"""Stage 2, metadata: sentences sharing a surface property (length band, ``!``, ``?``,
digits, question, negation, ...), each tested against the rest
(``discovery.metadata_run``; the declaration is
:func:`synthcheck.stages._slice_base.corpus_slice_stage`'s)."""

from __future__ import annotations

from synthcheck.stages._slice_base import corpus_slice_stage

STAGE = corpus_slice_stage("metadata")
