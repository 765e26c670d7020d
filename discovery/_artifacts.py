"""The run-directory files stage 2 writes, each declared once (see :class:`synth.core.Artifact`)
with the model of one row (pydantic; a file may add fields to a row, never remove one)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from synth.core import artifact

_ROW = ConfigDict(extra="allow")


class ScoreRow(BaseModel):
    """``scores/task-<name>.jsonl`` and ``scores/reference.jsonl``: one sentence's label
    probabilities."""

    model_config = _ROW
    id: str
    probs: dict[str, float]


class HardRow(BaseModel):
    """``hard.jsonl``: one sentence of the hard subset, most divergent first."""

    model_config = _ROW
    id: str
    text: str
    rank: int
    divergence: float
    task_label: str
    reference_label: str
    task_probs: dict[str, float]
    reference_probs: dict[str, float]


class NgramRow(BaseModel):
    """``ngrams.jsonl``: one n-gram over-represented in the hard subset."""

    model_config = _ROW
    ngram: str
    hard_count: int
    corpus_count: int
    z: float
    q_value: float


class SliceRow(BaseModel):
    """``slices.jsonl`` and ``metadata.jsonl``: one slice of the corpus tested against the
    rest."""

    model_config = _ROW
    slice: str
    terms: list[str]
    n: int
    failures: int
    base_rate: float
    q_value: float
    significant: bool
    example_ids: list[str]


class WordRow(BaseModel):
    """``words.jsonl``: one word, phrase or group of related words whose deletion moves the
    task model."""

    model_config = _ROW
    word: str
    kind: str
    terms: list[str]
    n: int
    failures: int
    base_rate: float
    task_shift: float
    reference_shift: float | None
    z: float
    q_value: float
    significant: bool
    example_ids: list[str]


class FocusRow(BaseModel):
    """``focus.jsonl``: one candidate tested on new sentences."""

    model_config = _ROW
    ngram: str
    rank: int
    n: int
    failures: int
    base_rate: float
    q_value: float
    confirmed: bool
    source: str
    corpus_count: int


class FindingRow(BaseModel):
    """``findings.jsonl``: one finding of any kind, ranked (see :mod:`discovery._findings`)."""

    model_config = _ROW
    id: str
    rank: int
    kind: str
    name: str
    terms: list[str]
    example_ids: list[str]
    n: int
    failures: int
    rate: float
    low: float
    high: float
    base_rate: float
    score: float
    confirmed: bool
    reason: str
    rule: str
    evidence_q: float



TASK_SCORES = artifact("task_scores", "scores/task-{name}.jsonl", "score",
                       row=ScoreRow, doc="one task model's probabilities per corpus sentence")
REFERENCE_SCORES = artifact("reference_scores", "scores/reference.jsonl", "score",
                            row=ScoreRow, doc="the few-shot reference's calibrated probabilities")
SCORE_PARTS = artifact("score_parts", "scores/.parts", "score",
                       doc="the resumable chunk cache of scoring (a folder)")
TASK_PARTS = artifact("task_parts", "scores/.parts/task-{name}", "score",
                      doc="one task model's cached chunks (a folder)")
REFERENCE_PARTS = artifact("reference_parts", "scores/.parts/reference", "score",
                           doc="the reference's cached chunks (a folder)")
HELDOUT_PARTS = artifact("heldout_parts", "scores/.parts/heldout-{name}", "evaluate",
                         doc="one model's cached chunks of the held-out set (a folder)")
HARD = artifact("hard", "hard.jsonl", "rank",
                row=HardRow, doc="the hard subset: the most divergent sentences, ranked")
NGRAMS = artifact("ngrams", "ngrams.jsonl", "mine",
                  row=NgramRow, doc="n-grams over-represented in the hard subset, ranked")
NGRAMS_CSV = artifact("ngrams_csv", "ngrams.csv", "mine", doc="ngrams.jsonl as a CSV table")
SLICES = artifact("slices", "slices.jsonl", "semantic", row=SliceRow,
                  doc="semantic slices of the corpus")
SLICE_PARTS = artifact("slice_parts", "slices/.parts", "semantic",
                       doc="the corpus's cached embeddings, per chunk (a folder)")
METADATA_SLICES = artifact("metadata", "metadata.jsonl", "metadata",
                           row=SliceRow, doc="metadata slices (length, punctuation, negation, ...)")
WORDS = artifact("words", "words.jsonl", "occlusion",
                 row=WordRow, doc="occlusion words, phrases and groups of related words")
LABELLED = artifact("labelled", "labelled.jsonl", "labelled",
                    doc="findings on the user's labelled rows, judged by their gold labels")
FOCUS = artifact("focus", "focus.jsonl", "focus",
                 row=FocusRow, doc="focus rounds: each candidate tested on new sentences")
FOCUS_PARTS = artifact("focus_parts", "focus/.parts", "focus",
                       doc="each candidate's scored new sentences per round (a folder)")
FINDINGS = artifact("findings", "findings.jsonl", "findings",
                    row=FindingRow, doc="every kind of finding in one ranked list")
EVAL = artifact("eval", "eval.json", "evaluate",
                doc="held-out accuracy, the hard subset's precision, reliability warnings")
