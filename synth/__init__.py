"""Stage 1 (SynthTest): seed corpora, queries, models, LLM backends, segmentation, generation.

``synth`` also owns what later stages share: the errors, record I/O, YAML configs,
registries and the LLM backends (the LLM that writes also judges).
"""

from synth._backends._base import Backend, Generation
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
from synth._errors import (
    ConfigError,
    DataError,
    ModelNotAvailable,
    RunDirError,
    SynthcheckError,
    TemplateError,
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
from synth._registry import Registry, did_you_mean, import_object
from synth._rundir import RunDir, git_commit, package_version, provenance
from synth._sampling import SamplingConfig
from synth._yamlconfig import (
    apply_overrides,
    config_hash,
    load_config,
    load_yaml,
    node_line,
    validation_to_config_error,
)

__all__ = [
    "Backend",
    "ConfigError",
    "DataError",
    "Generation",
    "GeneratorConfig",
    "ModelNotAvailable",
    "PromptConfig",
    "QueryConfig",
    "Registry",
    "RunDir",
    "RunDirError",
    "SamplingConfig",
    "SeedCorpusConfig",
    "SegmentConfig",
    "Stage1Config",
    "SynthcheckError",
    "TaskConfig",
    "TemplateError",
    "append_jsonl",
    "apply_overrides",
    "atomic_open",
    "config_hash",
    "did_you_mean",
    "dumps_record",
    "generation_hash_payload",
    "git_commit",
    "import_object",
    "iter_jsonl",
    "load_config",
    "load_yaml",
    "node_line",
    "package_version",
    "provenance",
    "read_jsonl",
    "validation_to_config_error",
    "write_json_atomic",
    "write_jsonl",
    "write_text_atomic",
]
