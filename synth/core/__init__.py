"""The ground floor every stage stands on: errors, record I/O, config loading, registries,
seeds, label spaces and run directories. Nothing here knows about models or stages."""

from synth.core._batching import length_sorted_batches
from synth.core._config import (
    STRICT,
    apply_overrides,
    config_hash,
    describe_field_error,
    format_loc,
    is_runtime_field,
    load_config,
    load_yaml,
    node_line,
    output_dump,
    runtime_field,
    validation_to_config_error,
)
from synth.core._errors import (
    ConfigError,
    DataError,
    ModelNotAvailable,
    RunDirError,
    SynthcheckError,
    TemplateError,
)
from synth.core._executor import Executor
from synth.core._io import (
    append_jsonl,
    atomic_open,
    cache_dir,
    dumps_record,
    iter_jsonl,
    iter_jsonl_lines,
    iter_jsonl_numbered,
    read_jsonl,
    write_json_atomic,
    write_jsonl,
    write_text_atomic,
)
from synth.core._labels import LabelSpace, check_unique_labels
from synth.core._progress import progress_bar, progress_enabled
from synth.core._registry import Registry, did_you_mean, import_object
from synth.core._rundir import RunDir, git_commit, package_version, provenance
from synth.core._seeds import derive_seed

__all__ = [
    "progress_bar",
    "progress_enabled",
    "STRICT",
    "ConfigError",
    "DataError",
    "Executor",
    "LabelSpace",
    "ModelNotAvailable",
    "Registry",
    "RunDir",
    "RunDirError",
    "SynthcheckError",
    "TemplateError",
    "append_jsonl",
    "apply_overrides",
    "atomic_open",
    "cache_dir",
    "check_unique_labels",
    "config_hash",
    "derive_seed",
    "describe_field_error",
    "did_you_mean",
    "dumps_record",
    "format_loc",
    "git_commit",
    "import_object",
    "is_runtime_field",
    "iter_jsonl",
    "iter_jsonl_lines",
    "iter_jsonl_numbered",
    "length_sorted_batches",
    "load_config",
    "load_yaml",
    "node_line",
    "output_dump",
    "package_version",
    "provenance",
    "read_jsonl",
    "runtime_field",
    "validation_to_config_error",
    "write_json_atomic",
    "write_jsonl",
    "write_text_atomic",
]
