"""The run-directory files stage 1 writes, each declared once (see :class:`synth.core.Artifact`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from synth.core import artifact


class CorpusRow(BaseModel):
    """``corpus/shard-NNNNN.jsonl``: one generated sentence."""

    model_config = ConfigDict(extra="allow")
    id: str
    text: str
    query: str
    raw: str
    shard: int
    seed: int


CORPUS = artifact("corpus", "corpus", "generate", doc="the generated corpus (a folder)")
SHARD = artifact("shard", "corpus/shard-{shard:05d}.jsonl", "generate", row=CorpusRow,
                 doc="one shard's sentences")
SHARD_DONE = artifact("shard_done", "corpus/shard-{shard:05d}.done.json", "generate",
                      doc="a shard's completion marker (its config hash)")
SHARD_CLAIM = artifact("shard_claim", "corpus/.claims/shard-{shard:05d}.claim", "generate",
                       doc="a shard claimed by one process, under the run's lock")
CORPUS_STATS = artifact("corpus_stats", "corpus/stats.json", "generate",
                        doc="the corpus's counts and provenance, written once it is complete")
