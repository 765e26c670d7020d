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


def test_a_row_cut_by_the_token_limit_is_truncated() -> None:
    from synth import is_truncated

    cut = "The movie was about a family which could be"
    assert first_sentence(cut) == cut
    assert is_truncated(cut, first_sentence(cut), 48, 48)
    # Below the limit (EOS or an early stop): not cut by the limit.
    assert not is_truncated(cut, first_sentence(cut), 30, 48)
    # Ended with a sentence end, or the limit cut a later sentence: the first one is whole.
    whole = "The movie was about a family."
    assert not is_truncated(whole, first_sentence(whole), 48, 48)
    assert not is_truncated('He said "I loved it!"', 'He said "I loved it!"', 48, 48)
    later = "I loved the movie. The acting was"
    assert first_sentence(later) == "I loved the movie."
    assert not is_truncated(later, first_sentence(later), 48, 48)
    # A newline ended the first sentence.
    assert not is_truncated("I loved the movie\nand then", "I loved the movie", 48, 48)


def test_filter_drops_truncated_rows_with_their_own_reason() -> None:
    keep = SentenceFilter(SegmentConfig(min_words=2, max_words=40))
    assert not keep("the plot is thin which could be", truncated=True)
    assert keep("the plot is thin but it works.")
    assert dict(keep.drop_counts) == {"truncated": 1}
    lenient = SentenceFilter(SegmentConfig(min_words=2, max_words=40, drop_truncated=False))
    assert lenient("the plot is thin which could be", truncated=True)
    assert dict(lenient.drop_counts) == {}
