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


def save_tiny_llama(folder, *, whitespace: bool = False):
    """Save a tiny random Llama and its tokenizer to ``folder`` (an ``hf:<folder>`` spec).

    With ``whitespace=True`` the tokenizer splits on whitespace and drops it, so a label word
    made only of spaces tokenizes to nothing (as some real tokenizers do).
    """
    from pathlib import Path

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    folder = Path(folder)
    if whitespace:
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "<unk>"],
                                      show_progress=False)
        tok.train_from_iterator(CORPUS * 3, trainer=trainer)
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>",
                                            bos_token="<s>", unk_token="<unk>")
    else:
        tokenizer = make_tokenizer()
    model = make_llama(len(tokenizer))
    model.config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# --- toy task models for `python:discovery_fixtures:<name>` specs (CLI tests) ---

_GOOD = ("great", "wonderful", "lovely", "sharp", "good")
_BAD = ("dull", "weak", "boring", "awful", "bad", "mess")


def keyword_model(texts):
    """p(positive) from counting a few sentiment words; fooled by negation."""
    import math

    out = []
    for text in texts:
        words = text.lower().split()
        score = sum(w in _GOOD for w in words) - sum(w in _BAD for w in words)
        p = 1.0 / (1.0 + math.exp(-1.5 * score))
        out.append({"negative": 1.0 - p, "positive": p})
    return out


def nan_model(texts):
    """A broken model: NaN probabilities."""
    return [{"negative": float("nan"), "positive": float("nan")} for _ in texts]


def wrong_labels_model(texts):
    """A model whose own label names ('pos', 'neg') are not the task's."""
    return [{"pos": 0.6, "neg": 0.4} for _ in texts]


# --- a planted phrase for the mining tests: "not bad at all" fools the word-counting model ---

GOOD = ["a wonderful film", "the acting is great", "a lovely story", "great fun for all",
        "a sharp and moving script", "the music is wonderful", "a great cast"]
BAD = ["a dull film", "the acting is weak", "a boring story", "no fun at all",
       "a lifeless and tired script", "the music is awful", "a weak cast"]


def planted_corpus():
    """60 sentences; every 6th carries "not bad at all"."""
    import numpy as np

    rng = np.random.default_rng(0)
    texts = []
    for i in range(60):
        base = (GOOD + BAD)[i % 14]
        texts.append(f"{base} , not bad at all" if i % 6 == 0 else f"{base} {rng.integers(9)}")
    return texts


def planted_models(texts):
    """(task, reference) probabilities: word counting, fooled by "not bad at all"; the
    reference knows the phrase."""
    import math

    import numpy as np

    def score(t, knows):
        s = sum(w in t for w in ("wonderful", "great", "lovely", "sharp", "fun")) - sum(
            w in t for w in ("dull", "weak", "boring", "lifeless", "awful", "bad"))
        if knows and "not bad at all" in t:
            s = 2
        return 1 / (1 + math.exp(-2 * s))

    task = np.array([[1 - score(t, False), score(t, False)] for t in texts])
    ref = np.array([[1 - score(t, True), score(t, True)] for t in texts])
    return task, ref


# --- the config sections a stage-2 job takes (what the app passes from its RunConfig) ---

def sections(**kw):
    """A :class:`Sections` with the default sections, ``kw`` put over them."""
    return Sections(**kw)


class Sections:
    """The task's labels and the stage-2 config sections, as keyword arguments for each
    job: ``score_run(run_dir, **s.score, ...)``, ``rank_run(run_dir, **s.rank)``."""

    def __init__(self, *, labels=("negative", "positive"), task_models=None, reference=None,
                 ranking=None, mining=None, evaluation=None):
        from discovery import (
            EvaluationConfig,
            MiningConfig,
            RankingConfig,
            ReferenceConfig,
            TaskModelConfig,
        )
        from synth.core import LabelSpace

        self.labels = LabelSpace.of(labels)
        self.task_models = list(task_models) if task_models is not None else [TaskModelConfig()]
        self.reference = reference or ReferenceConfig()
        self.ranking = ranking or RankingConfig()
        self.mining = mining or MiningConfig()
        self.evaluation = evaluation or EvaluationConfig()

    @property
    def score(self):
        return dict(labels=self.labels, task_models=self.task_models,
                    reference=self.reference, evaluation=self.evaluation)

    @property
    def rank(self):
        return dict(labels=self.labels, ranking=self.ranking, task_models=self.task_models)

    @property
    def mine(self):
        return dict(self.rank, mining=self.mining)

    @property
    def hashes(self):
        return dict(labels=self.labels, reference=self.reference, evaluation=self.evaluation)
