"""One copy of an LLM's weights per process: every backend built for one spec shares it."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth.engines import HFBackend, SamplingConfig, make_backend
from synth.engines._models import clear_model_cache, load_hf_causal_lm

PROMPTS = ["The film was", "A quiet story about", "I"]
TEXTS = [" a great film", " boring and far too long", ""]
WORDS = {"negative": " bad", "positive": " good"}


@pytest.fixture()
def counted_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from transformers import AutoModelForCausalLM

    clear_model_cache()
    calls: list[str] = []
    real = AutoModelForCausalLM.from_pretrained

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", counting)
    yield calls
    clear_model_cache()


def test_same_spec_shares_one_model(tiny_llama_dir: Path, counted_loads: list[str]) -> None:
    a = make_backend(f"hf:{tiny_llama_dir}", device="cpu", batch_size=2)
    b = make_backend(f"hf:{tiny_llama_dir}/", device="cpu", batch_size=8)  # same folder
    assert a.model is b.model and len(counted_loads) == 1
    # Each backend has its own tokenizer object (attributes it sets stay its own).
    assert a.tokenizer is not b.tokenizer
    a.tokenizer.chat_template = "{{ messages[0].content }}"
    assert b.tokenizer.chat_template != a.tokenizer.chat_template
    # Another dtype is another model.
    c, _ = load_hf_causal_lm(f"hf:{tiny_llama_dir}", device="cpu", dtype="float64")
    assert c is not a.model and len(counted_loads) == 2


def test_shared_model_gives_the_results_of_separate_loads(tiny_llama_dir: Path,
                                                          counted_loads: list[str]) -> None:
    params = SamplingConfig(max_new_tokens=6, stop_at_sentence_end=False)
    spec = f"hf:{tiny_llama_dir}"
    # Separately loaded: a fresh model for generation and another for scoring.
    gen_alone = make_backend(spec, device="cpu").generate(PROMPTS, params, [1, 2, 3])
    clear_model_cache()
    score_alone = make_backend(spec, device="cpu").label_logprobs("Answer:", TEXTS, WORDS)
    clear_model_cache()
    # Shared: generation and scoring interleaved on two backends over one model, with the
    # tokenizer's padding side flipped in between (neither path relies on it).
    gen_b, score_b = make_backend(spec, device="cpu"), make_backend(spec, device="cpu")
    assert gen_b.model is score_b.model
    first = gen_b.generate(PROMPTS, params, [1, 2, 3])
    scores = score_b.label_logprobs("Answer:", TEXTS, WORDS)
    gen_b.tokenizer.padding_side = "right"
    score_b.tokenizer.padding_side = "right"
    again = gen_b.generate(PROMPTS, params, [1, 2, 3])
    scores_again = score_b.label_logprobs("Answer:", TEXTS, WORDS)
    assert first == gen_alone == again
    for got, want in ((scores, score_alone), (scores_again, score_alone)):
        for g, w in zip(got, want, strict=True):
            assert g == pytest.approx(w, abs=1e-6)
    assert len(counted_loads) == 3  # two separate loads, then one shared


def test_a_rewritten_folder_is_loaded_again(tiny_llama_dir: Path, tmp_path: Path,
                                            counted_loads: list[str]) -> None:
    import os
    import shutil

    folder = Path(shutil.copytree(tiny_llama_dir, tmp_path / "m"))
    first, _ = load_hf_causal_lm(f"hf:{folder}", device="cpu")
    cfg = folder / "config.json"
    os.utime(cfg, ns=(cfg.stat().st_atime_ns, cfg.stat().st_mtime_ns + 10**9))
    second, _ = load_hf_causal_lm(f"hf:{folder}", device="cpu")
    assert second is not first and len(counted_loads) == 2


def test_generate_never_drops_a_missing_result(tiny_backend: HFBackend,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import synth.engines._hf_generate as hf

    # A planning bug that leaves one prompt out of the queue must not shift the outputs.
    monkeypatch.setattr(hf, "sorted", lambda xs, key=None: list(xs)[1:], raising=False)
    with pytest.raises(RuntimeError, match=r"internal error: no generation for prompts \[0\]"):
        tiny_backend.generate(PROMPTS, SamplingConfig(max_new_tokens=2), [1, 2, 3])
