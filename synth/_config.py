"""Stage-1 configuration: task, seed corpus, query sampling, prompting and the generator."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from synth.core._config import STRICT as _STRICT
from synth.core._config import output_dump, runtime_field
from synth.core._labels import LabelSpace, check_unique_labels
from synth.engines._registry import check_engine
from synth.engines._sampling import SamplingConfig


class TaskConfig(BaseModel):
    """The classification task: its name and its label names (strings, in a fixed order)."""

    model_config = _STRICT

    name: str = "sentiment"
    """Task name, used in file names and reports."""
    labels: list[str] = Field(default_factory=lambda: ["negative", "positive"], min_length=2)
    """Label names; every record uses these names, never bare indices."""

    @field_validator("labels")
    @classmethod
    def _unique(cls, labels: list[str]) -> list[str]:
        return check_unique_labels(labels)

    @property
    def label_space(self) -> LabelSpace:
        """The labels as a LabelSpace (what stages take)."""
        return LabelSpace.of(self.labels)


class SeedCorpusConfig(BaseModel):
    """Where the real documents that queries are sampled from come from."""

    model_config = _STRICT

    source: str = "packaged:imdb"
    """``packaged:imdb``, ``packaged:rotten_tomatoes``, ``packaged:tweets3`` (3-class tweets),
    or a path to a .jsonl, .csv or .txt file."""
    text_field: str = "text"
    """The JSONL field or CSV column that holds the text."""
    label_field: str | None = None
    """Optional JSONL field or CSV column with a gold label: held-out evaluation reads it
    when ``evaluation.data`` is this same file and ``evaluation.label_field`` is unset."""
    limit: int | None = Field(None, ge=1)
    """Read at most this many documents (after filtering)."""
    encoding: str = "utf-8"
    """Text encoding of a seed corpus file (e.g. ``latin-1``, ``cp1252``); undecodable bytes
    are an error naming the file and byte offset."""

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, encoding: str) -> str:
        from synth.core import check_encoding

        return check_encoding(encoding)


class QueryConfig(BaseModel):
    """How a short query is drawn from a seed document."""

    model_config = _STRICT

    strategy: Literal["first-k", "random-k"] = "first-k"
    """``first-k``: the first k words of a document (the original SynthEval code);
    ``random-k``: k consecutive words starting in a random sentence (the paper)."""
    k: int = Field(5, ge=1, le=200)
    """Words per query (the paper: 5)."""
    min_doc_words: int = Field(0, ge=0)
    """Skip documents shorter than this many words."""


class PromptConfig(BaseModel):
    """How a query becomes a prompt."""

    model_config = _STRICT

    style: Literal["continuation", "chat"] = "continuation"
    """``continuation``: the query is the text to continue (base-model style);
    ``chat``: the instruction below goes through the model's chat template."""
    template: str = "{query}"
    """Prompt text; ``{query}`` is replaced by the query."""
    system: str | None = None
    """System message for ``chat`` style (ignored otherwise)."""
    labels: list[str] = Field(default_factory=list)
    """Attribute-conditioned prompts (as in ZeroGen / SuperGen): the words that fill
    ``{label}`` in the template (e.g. ``[negative, positive]``). Prompt ``i`` takes one by a
    uniform draw from ``derive_rng(seed, "label", i)`` (balanced in expectation, the same
    for any sharding), recorded as the corpus row's ``condition``. Empty: no ``{label}``."""

    @field_validator("template")
    @classmethod
    def _has_query(cls, template: str) -> str:
        if "{query}" not in template:
            raise ValueError("template must contain '{query}'")
        return template

    @model_validator(mode="after")
    def _labels_match(self) -> PromptConfig:
        if self.labels and "{label}" not in self.template:
            raise ValueError("prompt.labels is set but the template has no '{label}' to fill: "
                             "add '{label}' to the template, or remove labels")
        if "{label}" in self.template and not self.labels:
            raise ValueError("the template has '{label}' but prompt.labels is empty: list the "
                             "words that fill it, e.g. labels: [negative, positive]")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"prompt.labels has duplicates: {self.labels}")
        return self


class SegmentConfig(BaseModel):
    """Which generated sentences are kept."""

    model_config = _STRICT

    min_words: int = Field(4, ge=1)
    """Drop sentences with fewer words."""
    max_words: int = Field(60, ge=1)
    """Drop sentences with more words."""
    include_query: bool = True
    """Keep the query as the start of the sentence (the continuation alone is often a fragment)."""
    drop_garbled: bool = False
    """Drop sentences that are not prose (:func:`synth._segment.garble_reason`): fewer than
    80% alphabetic words, markup or code characters (``< > { } = _ | \\``, ``http``), a
    word repeated three times in a row, or a chat answer's preamble ("Sure, here is...").
    Counted as ``garbled`` in ``stats.json``."""
    near_duplicate: float | None = Field(None, gt=0.0, le=1.0)
    """Drop a sentence whose set of lower-cased words overlaps an already kept sentence of
    its shard by at least this Jaccard similarity (e.g. 0.7); ``None``: only exact
    duplicates are dropped. Per shard, so every shard stays independent of the others.
    Counted as ``near_duplicate``."""
    drop_truncated: bool = True
    """Drop a row cut by ``sampling.max_new_tokens`` in its first sentence (it generated that
    many tokens, and its punkt first sentence is the whole row, with no sentence end): a
    fragment such as "...which could be". Counted as ``truncated`` in ``stats.json``."""

    @model_validator(mode="after")
    def _range(self) -> SegmentConfig:
        if self.max_words < self.min_words:
            raise ValueError(
                f"max_words ({self.max_words}) must be >= min_words ({self.min_words})")
        return self


MAX_PROMPTS = 100_000_000
"""The most prompts one corpus may have (the paper's runs use about 10^4 to 10^5)."""
MAX_SHARDS = 1_000_000
"""The most shards one corpus may have (each is a file pair and a manifest check)."""
_BYTES_PER_PROMPT = 400  # a kept record (text, query, raw continuation) is ~200-500 bytes
_PROMPTS_PER_SECOND = 100.0  # a fast GPU with vLLM and a small model


def _size(num: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if num < 1000:
            return f"{num:.0f} {unit}"
        num /= 1000
    return f"{num:.0f} EB"


def generation_size_problem(n: int, shard_size: int) -> str | None:
    """Why ``n`` prompts in shards of ``shard_size`` is too large to start (with an estimate
    of the disk and time it would take), or None if it is within :data:`MAX_PROMPTS` and
    :data:`MAX_SHARDS`."""
    shards = -(-n // shard_size)
    if n <= MAX_PROMPTS and shards <= MAX_SHARDS:
        return None
    days = n / _PROMPTS_PER_SECOND / 86400
    return (f"{n:,} prompts in {shards:,} shard(s) of {shard_size} is unreasonably large "
            f"(at most {MAX_PROMPTS:,} prompts and {MAX_SHARDS:,} shards): it would need about "
            f"{_size(n * _BYTES_PER_PROMPT)} of corpus and {days:,.0f} days of generation at "
            f"{_PROMPTS_PER_SECOND:.0f} prompts/s")


class GeneratorConfig(BaseModel):
    """The LLM that writes the synthetic corpus, and how the job is split."""

    model_config = _STRICT

    model: str = "packaged:smollm2-135m-instruct"
    """Model spec (``packaged:NAME`` or ``hf:ID_OR_PATH``)."""
    backend: str = "hf"
    """Engine, a name in ``synth.engines.ENGINES``: ``hf`` (transformers, CPU or GPU) or
    ``vllm`` (GPU)."""
    prompt: PromptConfig = Field(default_factory=PromptConfig)
    """Prompting."""

    @field_validator("backend")
    @classmethod
    def _known_engine(cls, backend: str) -> str:
        return check_engine(backend)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    """Sampling parameters (what a backend reads)."""
    seed: int = Field(0, ge=0)
    """Run seed; prompt i's randomness derives from (seed, prompt index) only: its query from
    ``derive_rng(seed, "query", i)``, its sampling from ``derive_seed(seed, "prompt", i)``
    (backends take those per-prompt seeds; focus rounds derive theirs from it too). Formerly
    ``generator.sampling.seed``, which is still read (with a warning) and hashed where it was,
    so a run keeps its hashes and outputs."""
    segment: SegmentConfig = Field(default_factory=SegmentConfig)
    """Sentence filtering."""
    n: int = runtime_field(256, ge=1)
    """How many prompts to run (the corpus has at most this many sentences). Not in the
    hash: shards are independent, so raising ``n`` and resuming extends a corpus."""
    shard_size: int = Field(64, ge=1)
    """Prompts per shard: the unit of work, determinism and resumption."""
    batch_size: int = runtime_field(32, ge=1)
    """Prompts per forward batch (does not change outputs)."""
    device: str = runtime_field("auto")
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (does not change the config hash)."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """Weights dtype for generation. ``auto`` is bfloat16 on a GPU and on a CPU with native
    bfloat16 (``avx512_bf16`` or ``amx_bf16`` in /proc/cpuinfo; about 1.5x float32's speed there),
    float32 on other CPUs. ``auto`` is resolved before hashing: the generation hash, the
    manifest and ``corpus/stats.json`` record the concrete dtype, so machines that resolve
    it differently write different corpora under different hashes (pin a dtype to make
    array jobs on mixed machines agree). Scoring (``reference``) stays float32 on CPU."""

    @model_validator(mode="before")
    @classmethod
    def _seed_from_sampling(cls, data: object) -> object:
        """Read the run seed's former place, ``generator.sampling.seed`` (a warning says to
        move it); both places with different values are refused."""
        if not isinstance(data, dict):
            return data
        sampling = data.get("sampling")
        if not isinstance(sampling, dict) or "seed" not in sampling:
            return data
        data = {**data, "sampling": {k: v for k, v in sampling.items() if k != "seed"}}
        old = sampling["seed"]
        if "seed" in data and data["seed"] != old:
            raise ValueError(f"generator.sampling.seed ({old!r}) and generator.seed "
                             f"({data['seed']!r}) are both set: generator.sampling.seed is the "
                             f"run seed's former name; keep generator.seed only")
        import warnings

        from synth.core._errors import ConfigDeprecation

        warnings.warn(ConfigDeprecation(
            "generator.sampling.seed", f"the run seed is now generator.seed (same value, same "
            f"hashes and outputs): write `seed: {old!r}` under generator: (-P "
            f"generator.seed={old!r})"),
            stacklevel=2)
        return {**data, "seed": old}

    def output_layout(self, dump: dict[str, object]) -> dict[str, object]:
        """The payload every hash reads (:func:`~synth.core.output_dump`): the run seed
        where it was before it had a field of its own (``sampling.seed``), so runs keep
        their stage hashes and outputs byte for byte."""
        dump = dict(dump)
        seed = dump.pop("seed")
        sampling = dump["sampling"]
        assert isinstance(sampling, dict)
        dump["sampling"] = {**sampling, "seed": seed}
        return dump

    @model_validator(mode="after")
    def _reasonable_size(self) -> GeneratorConfig:
        problem = generation_size_problem(self.n, self.shard_size)
        if problem:
            raise ValueError(problem)
        return self


class Stage1Config(BaseModel):
    """What stage 1 reads: the task, the seed corpus, queries and the generator."""

    model_config = _STRICT

    task: TaskConfig = Field(default_factory=TaskConfig)
    """The task: its name and label names."""
    corpus: SeedCorpusConfig = Field(default_factory=SeedCorpusConfig)
    """The real seed corpus queries are drawn from (stage 1)."""
    queries: QueryConfig = Field(default_factory=QueryConfig)
    """How queries are drawn from seed documents (stage 1)."""
    generator: GeneratorConfig = Field(default_factory=GeneratorConfig)
    """The LLM that writes the synthetic corpus, and how the job is sharded (stage 1)."""


def generation_hash_payload(cfg: Stage1Config) -> dict[str, object]:
    """The parts of the stage-1 config that change generated shards (for the config hash):
    the corpus, queries and generator sections without their runtime fields, with
    ``generator.dtype`` resolved on this machine (``auto`` never reaches the hash)."""
    from synth.engines._models import generation_dtype_for

    generator = output_dump(cfg.generator)
    generator["dtype"] = generation_dtype_for(cfg.generator.model, cfg.generator.dtype,
                                              cfg.generator.device)
    return {"corpus": output_dump(cfg.corpus), "queries": output_dump(cfg.queries),
            "generator": generator, "seeds": SEED_SCHEME}


SEED_SCHEME = "derive_seed(seed, 'prompt', i); inverse-CDF draw per token"
"""How per-prompt randomness is derived and used (the seed, and one uniform draw per token
from the prompt's generator); part of the generation hash, so a corpus made with the former
``seed + i`` seeds or ``torch.multinomial`` sampling is never resumed with this one."""
