"""Stage-1 test helpers (no fixtures): a tiny Llama saved as a transformers folder, small
corpora and a small run config. Import them as ``from tests.synth.synth_fixtures import ...``;
the fixtures built on them live in tests/synth/conftest.py and tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

TRAIN = [
    "The film was great. I loved the acting and the music!",
    "This movie is terrible, boring and far too long. Never again.",
    "A quiet story about a family. The ending surprised me?",
    "The plot is thin but the jokes land well. Worth a look.",
]

DOCS = [
    "I watched this movie last night with my friends and we all laughed a lot.",
    "The worst film I have seen in years. The script is a mess and the cast is lost.",
    "An honest, moving drama. Its quiet scenes stay with you long after the credits.",
    "Short.",
    "Every frame of this animated feature is a small painting, and the songs are lovely too.",
]


def build_tiny_llama(folder: Path) -> Path:
    """Save a randomly initialised 2-layer Llama and a byte-level BPE tokenizer to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(TRAIN * 3, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>",
                                        eos_token="</s>")
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=256, eos_token_id=tokenizer.eos_token_id,
                      pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = LlamaForCausalLM(cfg)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder



def write_config(path: Path, corpus: Path, **generator: object) -> Path:
    """Write a small run config using ``corpus`` as the seed corpus."""
    gen = {"model": "hf:unused", "n": 10, "shard_size": 3, "batch_size": 4,
           "segment": {"min_words": 3, "max_words": 40}}
    gen.update(generator)
    cfg = {"name": "t", "corpus": {"source": str(corpus)}, "queries": {"k": 3},
           "generator": gen}
    import yaml

    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path
