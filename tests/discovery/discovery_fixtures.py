"""Tiny models and tokenizers built in memory (no downloads) for stage-2 tests."""

from __future__ import annotations

CORPUS = [
    "Question: Find the sentiment of this text. Answer with positive or negative:",
    "Answer: positive", "Answer: negative",
    "a great and moving film , full of heart .",
    "a dull , lifeless mess that never works .",
    "the acting is wonderful and the story is sharp .",
    "boring , predictable and far too long .",
    "not bad at all , actually quite good .",
    "the plot is thin but the jokes land .",
]


def make_tokenizer():
    """A byte-level BPE tokenizer trained on a few sentences (offline, deterministic)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<pad>", "<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>")


def make_llama(vocab_size: int, seed: int = 0):
    """A randomly initialised 2-layer Llama with a few hundred thousand parameters."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(cfg).eval()
    return model
