from __future__ import annotations

from synth.engines import HFBackend, SamplingConfig

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
    calls: list[str] = []

    def done(prompt: str, continuation: str) -> bool:
        calls.append(continuation)
        return True

    backend = HFBackend(tiny_backend.model, tiny_backend.tokenizer, batch_size=4,
                        sentence_done=done)
    gens = backend.generate(PROMPTS, SamplingConfig(max_new_tokens=30), [1, 2, 3, 4])
    # A row stops right after the first token that carries a boundary character.
    for g in gens:
        assert g.num_tokens == 30 or any(c in g.text for c in ".!?\n")


def test_chat_template_rendering(tiny_backend: HFBackend) -> None:
    tok = tiny_backend.tokenizer
    tok.chat_template = ("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                         "[assistant]")
    assert tiny_backend.render_chat("hi", "be brief") == "[system]be brief[user]hi[assistant]"
