"""VLLMBackend: generation and scoring with vLLM's offline API, CPU or CUDA build (optional)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from synth.engines._base import Generation, render_chat
from synth.engines._planner import PrefixAlignment
from synth.engines._registry import ENGINES
from synth.engines._sampling import SamplingConfig
from synth.engines._vllm_scoring import import_vllm, vllm_label_logprobs

# Where a row's first sentence may end. vLLM matches these in the decoded text and, with
# ``include_stop_str_in_output``, keeps them; punkt then decides the first sentence
# (``synth.first_sentence``), as it does for the transformers backend.
SENTENCE_STOPS = (". ", "! ", "? ", '." ', '!" ', '?" ', "\n")

# vLLM on CPU: the KV cache is sized by this variable (GiB), not by a memory fraction.
CPU_KVCACHE_GIB = "4"
# The CPU build's attention prefers blocks of a multiple of 32 tokens; prefix caching reuses
# whole blocks only, so the smallest such block reuses the most of a shared prefix (the
# default, 128, reuses 128 of a 152-token few-shot prefix; 32 reuses every full 32).
CPU_BLOCK_SIZE = 32
PREFIX_ALIGN = ENGINES.caps("vllm").prefix_align
"""The prefix alignment ``reference.align_prefix: auto`` uses with this engine (declared on
its registry entry)."""


def vllm_on_cpu() -> bool:
    """True when the installed vLLM is the CPU build (its platform is the CPU)."""
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def cpu_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """Set the CPU build's defaults in ``env`` (``os.environ``) where the user set none.

    - ``VLLM_CPU_KVCACHE_SPACE=4`` (GiB): plenty for SmolLM2-sized models and 64-prompt shards.
    - ``VLLM_ENABLE_V1_MULTIPROCESSING=0``: the engine runs in the calling process (no
      spawned engine process, so no ``if __name__ == "__main__":`` guard is needed, and
      notebooks work). On two free cores this is ~1.8x the multiprocess default, but it
      degrades badly when another process competes for the cores: set it to ``1`` there.
    - ``VLLM_CPU_OMP_THREADS_BIND=nobind``: do not pin OpenMP threads to cores (pinning
      collapses when the cores are shared).
    - ``OMP_NUM_THREADS``: the cores this process may use (without it vLLM drops torch to
      one thread "for serving").

    Returns the values now in effect.
    """
    target: Any = os.environ if env is None else env
    defaults = {"VLLM_CPU_KVCACHE_SPACE": CPU_KVCACHE_GIB,
                "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
                "VLLM_CPU_OMP_THREADS_BIND": "nobind",
                "OMP_NUM_THREADS": str(len(os.sched_getaffinity(0)))}
    for key, value in defaults.items():
        target.setdefault(key, value)
    return {key: str(target[key]) for key in defaults}


def engine_arguments(dtype: str, on_cpu: bool, **engine_kwargs: Any) -> dict[str, Any]:
    """``vllm.LLM`` arguments for the project's defaults; ``engine_kwargs`` override them.

    ``dtype="auto"`` is float32 on CPU and bfloat16 on GPU, as for the transformers backend
    (vLLM's own ``auto`` would run a float32 checkpoint in half precision). On CPU the
    engine runs eagerly (compiling costs 65-142 s at load for at most ~10% speed) with
    ``CPU_BLOCK_SIZE``-token KV blocks.
    """
    args: dict[str, Any] = {
        "dtype": ("float32" if on_cpu else "bfloat16") if dtype == "auto" else dtype,
        "enable_prefix_caching": True,
    }
    if on_cpu:
        args.update(enforce_eager=True, block_size=CPU_BLOCK_SIZE)
    args.update(engine_kwargs)
    return args


class VLLMBackend:
    """A vLLM ``LLM`` behind the Backend protocol.

    ``generate`` sends a whole shard in one ``LLM.generate`` call with one
    ``SamplingParams`` per prompt, each with its own ``seed`` (one shared seeded
    ``SamplingParams`` would give every prompt the same noise), so a prompt's output does
    not depend on the batch it is in. vLLM schedules the batch itself (continuous
    batching), so there is no batch size here.
    """

    name = "vllm"

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    @classmethod
    def from_spec(cls, spec: str, *, dtype: str = "auto", device: str = "auto",
                  batch_size: int = 32, **engine_kwargs: Any) -> VLLMBackend:
        """Build the engine for a model spec (packaged models load from the conversion cache).

        The CPU build gets ``cpu_environment`` and ``engine_arguments``' CPU settings.
        ``device`` and ``batch_size`` are accepted for a uniform engine interface: vLLM
        places the model on its build's platform and schedules its own batches.

        Raises:
            ModelNotAvailable: vLLM is not installed, or the model spec cannot be resolved.
        """
        del device, batch_size
        from synth.engines._models import resolve_model_path

        vllm = import_vllm()
        path = resolve_model_path(spec)
        on_cpu = vllm_on_cpu()
        if on_cpu:
            cpu_environment()
        llm = vllm.LLM(model=str(path), **engine_arguments(dtype, on_cpu, **engine_kwargs))
        return cls(llm)

    def render_chat(self, user: str, system: str | None = None) -> str:
        """Render one user turn (and optional system turn) with the model's chat template."""
        return render_chat(self.llm.get_tokenizer(), user, system)

    def sampling_params(self, params: SamplingConfig, seed: int) -> Any:
        """Translate the SamplingConfig into one vLLM ``SamplingParams`` for one prompt."""
        vllm = import_vllm()
        kwargs: dict[str, Any] = {
            "n": 1,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_new_tokens,
            "seed": int(seed),
        }
        if params.top_k:
            kwargs["top_k"] = params.top_k
        if params.stop_at_sentence_end:
            # Stop where a sentence may end, keeping the stop text; punkt trims afterwards.
            kwargs["stop"] = list(SENTENCE_STOPS)
            kwargs["include_stop_str_in_output"] = True
        return vllm.SamplingParams(**kwargs)

    def generate(
        self, prompts: Sequence[str], params: SamplingConfig, seeds: Sequence[int]
    ) -> list[Generation]:
        """Sample one continuation per prompt in a single engine call, input order kept."""
        if len(seeds) != len(prompts):
            raise ValueError(f"need one seed per prompt, got {len(seeds)} for {len(prompts)}")
        per_prompt = [self.sampling_params(params, s) for s in seeds]
        outputs = self.llm.generate(list(prompts), per_prompt, use_tqdm=False)
        return [
            Generation(text=o.outputs[0].text, num_tokens=len(o.outputs[0].token_ids))
            for o in outputs
        ]

    def label_logprobs(
        self,
        prefix: str,
        texts: Sequence[str],
        label_continuations: Mapping[str, str],
        suffix: str = "",
        *,
        align: PrefixAlignment | None = None,
    ) -> list[dict[str, float]]:
        """Log-probability of each label continuation (prefix caching shares the prefix).

        ``align`` pads the prefix to a multiple of ``align.multiple`` tokens so that prefix
        caching, which reuses whole KV blocks only, reuses all of it when the block size
        divides that multiple (``PREFIX_ALIGN``, 32, is a multiple of the CPU build's
        32-token and the CUDA build's default 16-token blocks).
        """

        return vllm_label_logprobs(self.llm, prefix, texts, label_continuations, suffix,
                                   align=align)
