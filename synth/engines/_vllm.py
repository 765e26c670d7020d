"""VLLMBackend: GPU generation and scoring with vLLM's offline API (optional extra)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.core._errors import ModelNotAvailable
from synth.engines._base import Generation, render_chat
from synth.engines._sampling import SamplingConfig

VLLM_INSTALL = "pip install 'synthcheck[vllm]' (needs a CUDA GPU)"


def import_vllm() -> Any:
    """Import vllm or raise ModelNotAvailable with the install command."""
    try:
        import vllm
    except ImportError:
        raise ModelNotAvailable("vLLM is not installed", where="backend: vllm",
                                fix=VLLM_INSTALL) from None
    return vllm


class VLLMBackend:
    """A vLLM ``LLM`` behind the Backend protocol.

    ``generate`` sends a whole shard in one ``LLM.generate`` call with one
    ``SamplingParams`` per prompt, each with its own ``seed`` (one shared seeded
    ``SamplingParams`` would give every prompt the same noise). vLLM schedules the batch
    itself (continuous batching), so there is no batch size here.
    """

    name = "vllm"

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    @classmethod
    def from_spec(cls, spec: str, *, dtype: str = "auto", device: str = "auto",
                  batch_size: int = 32, **engine_kwargs: Any) -> VLLMBackend:
        """Build the engine for a model spec (packaged models load from the conversion cache).

        ``device`` and ``batch_size`` are accepted for a uniform engine interface: vLLM
        places the model itself and schedules its own batches."""
        del device, batch_size
        from synth.engines._models import resolve_model_path

        vllm = import_vllm()
        path = resolve_model_path(spec)
        llm = vllm.LLM(model=str(path), dtype=dtype, enable_prefix_caching=True, **engine_kwargs)
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
            # A newline always ends the first sentence; punkt trims the rest afterwards.
            kwargs["stop"] = ["\n"]
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
    ) -> list[dict[str, float]]:
        """Log-probability of each label continuation (prefix caching shares the prefix)."""
        from synth.engines._vllm_scoring import vllm_label_logprobs

        return vllm_label_logprobs(self.llm, prefix, texts, label_continuations, suffix)

