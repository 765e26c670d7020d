"""Stage 1 (SynthTest): seed corpora, queries, prompts, segmentation, the generation job, merge.

The ground floor that every stage shares lives in :mod:`synth.core` (errors, record I/O,
config loading, registries, seeds, ``LabelSpace``, ``RunDir``) and the LLM engines in
:mod:`synth.engines` (the ``Backend`` protocol, ``hf``, ``vllm``, model specs).
"""

from synth._artifacts import CORPUS, CORPUS_STATS, SHARD, SHARD_CLAIM, SHARD_DONE, CorpusRow
from synth._config import (
    GeneratorConfig,
    PromptConfig,
    QueryConfig,
    SeedCorpusConfig,
    SegmentConfig,
    Stage1Config,
    TaskConfig,
    generation_hash_payload,
)
from synth._corpus import (
    DRUGREVIEW_COLUMNS,
    MOVIE_REVIEW_LABELS,
    Document,
    clean_text,
    drug_reviews,
    load_movie_reviews,
    load_packaged,
    load_seed_corpus,
    movie_reviews_csv,
)
from synth._corpus_files import check_corpus_owner, has_corpus, iter_corpus
from synth._generate import (
    GenerationReport,
    chat_answer,
    draw_condition,
    generation_config_hash,
    generator_backend,
    render_prompt,
    run_generation,
)
from synth._merge import merge_runs
from synth._queries import Query, QuerySampler
from synth._segment import (
    SentenceFilter,
    clean_generation,
    ensure_punkt,
    first_sentence,
    is_truncated,
    sentence_done,
    split_sentences,
)
from synth._shards import parse_shard_arg, shard_ranges

__all__ = [
    "CORPUS",
    "CORPUS_STATS",
    "SHARD",
    "SHARD_CLAIM",
    "SHARD_DONE",
    "CorpusRow",
    "MOVIE_REVIEW_LABELS",
    "DRUGREVIEW_COLUMNS",
    "drug_reviews",
    "Document",
    "GenerationReport",
    "chat_answer",
    "draw_condition",
    "render_prompt",
    "GeneratorConfig",
    "PromptConfig",
    "Query",
    "QueryConfig",
    "QuerySampler",
    "SeedCorpusConfig",
    "SegmentConfig",
    "SentenceFilter",
    "Stage1Config",
    "TaskConfig",
    "check_corpus_owner",
    "clean_generation",
    "clean_text",
    "ensure_punkt",
    "first_sentence",
    "generation_config_hash",
    "generation_hash_payload",
    "generator_backend",
    "has_corpus",
    "is_truncated",
    "iter_corpus",
    "load_movie_reviews",
    "load_packaged",
    "load_seed_corpus",
    "merge_runs",
    "movie_reviews_csv",
    "parse_shard_arg",
    "run_generation",
    "sentence_done",
    "shard_ranges",
    "split_sentences",
]
