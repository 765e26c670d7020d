"""The run-directory files stage 2 writes, each declared once (see :class:`synth.core.Artifact`)."""

from __future__ import annotations

from synth.core import artifact

TASK_SCORES = artifact("task_scores", "scores/task-{name}.jsonl", "score",
                       doc="one task model's probabilities per corpus sentence")
REFERENCE_SCORES = artifact("reference_scores", "scores/reference.jsonl", "score",
                            doc="the few-shot reference's calibrated probabilities")
SCORE_PARTS = artifact("score_parts", "scores/.parts", "score",
                       doc="the resumable chunk cache of scoring (a folder)")
HARD = artifact("hard", "hard.jsonl", "rank",
                doc="the hard subset: the most divergent sentences, ranked")
NGRAMS = artifact("ngrams", "ngrams.jsonl", "mine",
                  doc="n-grams over-represented in the hard subset, ranked")
NGRAMS_CSV = artifact("ngrams_csv", "ngrams.csv", "mine", doc="ngrams.jsonl as a CSV table")
SLICES = artifact("slices", "slices.jsonl", "semantic", doc="semantic slices of the corpus")
SLICE_PARTS = artifact("slice_parts", "slices/.parts", "semantic",
                       doc="the corpus's cached embeddings, per chunk (a folder)")
METADATA_SLICES = artifact("metadata", "metadata.jsonl", "metadata",
                           doc="metadata slices (length, punctuation, negation, ...)")
WORDS = artifact("words", "words.jsonl", "occlusion",
                 doc="occlusion words, phrases and groups of related words")
FOCUS = artifact("focus", "focus.jsonl", "focus",
                 doc="focus rounds: each candidate tested on new sentences")
FOCUS_PARTS = artifact("focus_parts", "focus/.parts", "focus",
                       doc="each candidate's scored new sentences per round (a folder)")
FINDINGS = artifact("findings", "findings.jsonl", "findings",
                    doc="every kind of finding in one ranked list")
EVAL = artifact("eval", "eval.json", "evaluate",
                doc="held-out accuracy, the hard subset's precision, reliability warnings")
