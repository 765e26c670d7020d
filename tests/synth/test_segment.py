from __future__ import annotations

from synth import SegmentConfig, SentenceFilter, clean_generation, first_sentence, sentence_done


def test_first_sentence_uses_punkt() -> None:
    assert first_sentence("Mr. Smith liked it. Then he left.") == "Mr. Smith liked it."
    assert first_sentence("  great film<|im_end|> and more\nsecond line") == "great film and more"
    assert first_sentence("<|endoftext|>") == ""


def test_clean_generation_strips_special_tokens() -> None:
    assert clean_generation("a</s> b [SEP]  c") == "a b c"


def test_sentence_done() -> None:
    assert not sentence_done("I saw Mr.", " Smith")
    assert sentence_done("It was fine.", " Then")
    assert sentence_done("It was fine", " and\nmore")


def test_filter_counts_reasons() -> None:
    keep = SentenceFilter(SegmentConfig(min_words=2, max_words=4))
    kept = [s for s in ["", "one", "one two", "one two", "a b c d e"] if keep(s)]
    assert kept == ["one two"]
    assert dict(keep.drop_counts) == {"empty": 1, "too_short": 1, "duplicate": 1, "too_long": 1}
