from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import generation_config_hash, generation_hash_payload, run_generation
from synth.engines import HFBackend, SamplingConfig
from synth.engines._hf_generate import GenerationLoop
from synth.engines._models import cpu_supports_bf16, generation_dtype, resolve_dtype
from synthcheck import load_run_config
from tests.synth.fakes import FakeBackend
from tests.synth.synth_fixtures import write_config

PROMPTS = ["The film was", "A quiet story about", "This movie is terrible", "I"]


def test_generate_is_seeded_and_in_input_order(tiny_backend: HFBackend) -> None:
    params = SamplingConfig(max_new_tokens=8, stop_at_sentence_end=False)
    a = tiny_backend.generate(PROMPTS, params, [1, 2, 3, 4])
    b = tiny_backend.generate(PROMPTS, params, [1, 2, 3, 4])
    c = tiny_backend.generate(PROMPTS, params, [5, 6, 7, 8])
    assert a == b
    assert [g.text for g in a] != [g.text for g in c]
    assert all(0 < g.num_tokens <= 8 for g in a)
    # Each prompt's result depends on its own seed, not on its neighbours or position.
    alone = tiny_backend.generate([PROMPTS[2]], params, [3])
    assert alone[0] == a[2]


def test_batch_size_does_not_change_outputs(tiny_backend: HFBackend) -> None:
    params = SamplingConfig(max_new_tokens=6, stop_at_sentence_end=False)
    one = HFBackend(tiny_backend.model, tiny_backend.tokenizer, batch_size=1)
    assert one.generate(PROMPTS, params, [9, 8, 7, 6]) == tiny_backend.generate(
        PROMPTS, params, [9, 8, 7, 6])


def test_tiny_top_p_is_greedy(tiny_backend: HFBackend) -> None:
    greedy = tiny_backend.generate(PROMPTS, SamplingConfig(temperature=0, max_new_tokens=5,
                                                           stop_at_sentence_end=False), [0] * 4)
    nucleus = tiny_backend.generate(PROMPTS, SamplingConfig(top_p=1e-6, max_new_tokens=5,
                                                            stop_at_sentence_end=False), [1] * 4)
    top1 = tiny_backend.generate(PROMPTS, SamplingConfig(top_k=1, max_new_tokens=5,
                                                         stop_at_sentence_end=False), [2] * 4)
    assert greedy == nucleus == top1


def test_rows_stop_at_sentence_end(tiny_backend: HFBackend) -> None:
    tok = tiny_backend.tokenizer
    boundary = {i for i in range(len(tok)) if any(c in tok.decode([i]) for c in ".!?\n")}
    prompts, seeds = PROMPTS * 4, list(range(16))
    # Without early stop: every row's 30 tokens (the engine's own token ids).
    full = GenerationLoop(model=tiny_backend.model, ids=[tok(p)["input_ids"] for p in prompts],
                          params=SamplingConfig(max_new_tokens=30, stop_at_sentence_end=False),
                          seeds=seeds, batch_size=16, eos=set(), row_done=None,
                          pad=tok.pad_token_id).run()
    # The sentence end is forced (`done` says yes) at a row's first boundary token: keep
    # the rows that have one, and how many tokens each keeps.
    stops = {i: next(n for n, t in enumerate(toks, 1) if t in boundary)
             for i, toks in enumerate(full) if boundary & set(toks)}
    assert len(stops) >= 3 and len(set(stops.values())) >= 3
    rows = sorted(stops)
    asked: list[str] = []

    def done(prompt: str, continuation: str) -> bool:
        asked.append(continuation)
        return True

    early = HFBackend(tiny_backend.model, tok, batch_size=16, sentence_done=done)
    gens = early.generate([prompts[i] for i in rows], SamplingConfig(max_new_tokens=30),
                          [seeds[i] for i in rows])
    # Each row stopped at its boundary and got no token after it (same draws: seeds are
    # per prompt), and the batch ran only as many forward passes as its longest row needed.
    assert [g.num_tokens for g in gens] == [stops[i] for i in rows]
    for g, i in zip(gens, rows, strict=True):
        assert g.text == tok.decode(full[i][:stops[i]], skip_special_tokens=True)
    assert early.forward_calls == max(stops.values()) < 30
    assert len(asked) == len(rows)

    # Refilling freed rows with waiting prompts changes no output, only the work: with room
    # for two rows, the first row to stop hands its place to the third prompt.
    refill = HFBackend(tiny_backend.model, tok, batch_size=2, sentence_done=done)
    again = refill.generate([prompts[i] for i in rows], SamplingConfig(max_new_tokens=30),
                            [seeds[i] for i in rows])
    assert again == gens
    ordered = [stops[i] for i in sorted(rows, key=lambda i: (len(tok(prompts[i])["input_ids"]),
                                                              i))]
    assert refill.forward_calls < sum(max(ordered[j:j + 2]) for j in range(0, len(ordered), 2))


def test_chat_template_rendering(tiny_backend: HFBackend) -> None:
    tok = tiny_backend.tokenizer
    tok.chat_template = ("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                         "[assistant]")
    assert tiny_backend.render_chat("hi", "be brief") == "[system]be brief[user]hi[assistant]"


def test_cpu_bf16_support_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 avx512_vnni\n")
    assert cpu_supports_bf16(info)
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 amx_bf16 amx_tile\n")
    assert cpu_supports_bf16(info)
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert not cpu_supports_bf16(info)
    assert not cpu_supports_bf16(tmp_path / "missing")


@pytest.mark.parametrize("native", [True, False])
def test_auto_dtype_resolves_before_the_hash(monkeypatch: pytest.MonkeyPatch, native: bool,
                                             tmp_path: Path, corpus_file: Path) -> None:
    import synth.engines._models as models

    monkeypatch.setattr(models, "cpu_supports_bf16", lambda: native)
    want = "bfloat16" if native else "float32"
    assert generation_dtype("auto", "cpu") == want
    assert generation_dtype("auto", "cuda") == "bfloat16"
    assert generation_dtype("float16", "cpu") == "float16"
    # Scoring keeps float32 on CPU whatever the CPU supports.
    assert str(resolve_dtype("auto", "cpu")) == "torch.float32"

    path = write_config(tmp_path / "c.yaml", corpus_file, device="cpu")
    auto = load_run_config(path)
    assert generation_hash_payload(auto)["generator"]["dtype"] == want  # type: ignore[index]
    # `auto` hashes as the dtype it resolves to, and the two dtypes hash differently.
    pinned = {d: generation_config_hash(load_run_config(path, [f"generator.dtype={d}"]))
              for d in ("float32", "bfloat16")}
    assert generation_config_hash(auto) == pinned[want] != pinned[
        "float32" if native else "bfloat16"]
    # The resolved dtype is recorded in the corpus stats and the manifest.
    run_generation(auto, tmp_path / "r", backend=FakeBackend(), progress=False)
    stats = json.loads((tmp_path / "r" / "corpus" / "stats.json").read_text())
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert stats["dtype"] == manifest["stages"]["generate"]["dtype"] == want
    assert stats["config_hash"] == pinned[want]


def test_the_projects_own_llm_calls_raise_no_future_warning(tiny_backend: HFBackend) -> None:
    # transformers 5.2x warns on every forward that passes `past_key_values` (renamed
    # `cache`): generation and prefix-cached label scoring pass the declared name. Warnings
    # are errors here, raised at the call that would warn, not filtered away.
    import logging
    import warnings

    from transformers.utils import logging as tf_logging

    # transformers also *logs* a deprecation, once per process, on `out.past_key_values`.
    tf_logging.warning_once.cache_clear()
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    tf_logging.get_logger("transformers").addHandler(handler)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        tiny_backend.generate(PROMPTS[:2], SamplingConfig(max_new_tokens=4,
                                                          stop_at_sentence_end=False), [1, 2])
        tiny_backend.label_logprobs("Review: ", ["great film", "dull"],
                                    {"negative": " bad", "positive": " good"})
    tf_logging.get_logger("transformers").removeHandler(handler)
    assert [m for m in logged if "deprecated" in m] == []


def test_cache_is_passed_under_the_name_forward_declares() -> None:
    from synth.engines._hf_cache import cache_kwargs

    class New:
        def forward(self, input_ids=None, cache=None): ...  # noqa: ANN001, ANN202

    class Old:
        def forward(self, input_ids=None, past_key_values=None): ...  # noqa: ANN001, ANN202

    assert cache_kwargs(New(), "kv") == {"cache": "kv"}
    assert cache_kwargs(Old(), "kv") == {"past_key_values": "kv"}
