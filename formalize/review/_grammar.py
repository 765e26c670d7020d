"""What a template draft may be made of: the tagged sentence's word tokens
(:func:`draft_text`), and where a lexicon's values fit a sentence (:func:`fits`), so that
every fill of a draft is English ("I really looked forward" gives no "I {INTENSIFIER} looked
forward", whose fill "I very looked forward" is not)."""

from __future__ import annotations

import re

# -- tokens that are words ---------------------------------------------------------------
_OPENERS = "\"'“‘([{«"
_CLOSERS = "\"'”’)]}».,;:!?…"
_WORD = re.compile(r"^(?:[^\W\d_]|\d)+(?:['’\-&](?:[^\W\d_]|\d)+)*['’]?$")
_INITIALS = re.compile(r"^(?:[^\W\d_]\.)+[^\W\d_]?$")  # U.S., e.g.
_CAMEL = re.compile(r"[a-z][A-Z]")
_NUMBER = re.compile(r"^[$£€]?\d+(?:[.,:/]\d+)*(?:%|s|st|nd|rd|th)?$")
_PUNCT_TOKENS = frozenset({"-", "–", "—", "...", "…", "&", "/"})
_HANDLE = re.compile(r"^[@#][^\W_]\w*$")  # @united, #fail: a tweet's words
_PAIRS = (('"', '"'), ("“", "”"), ("(", ")"), ("[", "]"), ("«", "»"))


def _is_word_token(token: str) -> bool:
    """A word (letters or digits, with inner apostrophes or hyphens; initials such as
    "U.S."), a number, or a dash/ellipsis, with any quotes, brackets and punctuation around
    it; a social-media handle or hashtag (``@united``, ``#fail``). Glued-together words
    ("its.uments", "site.com") and run-together capitalised words ("dingDogShop": two or
    more lower-to-upper case changes; "YouTube" has one) are not."""
    if token in _PUNCT_TOKENS:
        return True
    core = token.lstrip(_OPENERS).rstrip(_CLOSERS)
    if _HANDLE.match(core):
        return True
    if not core or len(_CAMEL.findall(core)) >= 2:
        return False
    return bool(_WORD.match(core) or _INITIALS.match(core + ".") or _NUMBER.match(core))


def draft_text(text: str) -> str:
    """The sentence a draft is made from: special tokens and every token that is not a
    word (:func:`_is_word_token`: ``##``, ``<br>``, ``@@``, ``|``, a URL) dropped, a quote
    or bracket without its partner removed, whitespace collapsed. The words themselves are
    kept as the sentence has them."""
    from synth import clean_generation

    tokens = [t for t in clean_generation(text).split() if _is_word_token(t)]
    out = " ".join(tokens)
    for left, right in _PAIRS:
        if left == right:
            if out.count(left) % 2:
                out = out.replace(left, "")
        elif out.count(left) != out.count(right):
            out = out.replace(left, "").replace(right, "")
    return " ".join(out.split())


def garbled(text: str) -> str | None:
    """Why ``text`` is too garbled to draft a template from (None: it is fine): fewer than
    three words left once the tokens that are not words are dropped, more than a third of
    its tokens not words, one word three times in a row, or a "word" of over 25 letters.
    A template copies the sentence's own words, so a garbled sentence makes a garbled test."""
    from synth import clean_generation

    tokens = clean_generation(text).split()
    words = [t for t in tokens if _is_word_token(t)]
    if len(words) < 3:
        return f"only {len(words)} word(s) once the tokens that are not words are dropped"
    if len(words) < len(tokens) * 2 / 3:
        return f"{len(tokens) - len(words)} of its {len(tokens)} tokens are not words"
    low = [w.lower().strip(".,!?;:\"'") for w in words]
    for a, b, c in zip(low, low[1:], low[2:], strict=False):
        if a and a == b == c:
            return f"{a!r} three times in a row"
    long = next((w for w in words if sum(ch.isalpha() for ch in w) > 25), None)
    if long is not None:
        return f"a run-on token ({long[:30]}...)"
    return None


# -- where a lexicon's values fit ---------------------------------------------------------
_SUBJECTS = frozenset("i you we they".split())
_AUXILIARIES = frozenset(
    "to do does did don't doesn't didn't will would can could should must might may won't "
    "wouldn't can't couldn't shouldn't really truly also still always never absolutely "
    "genuinely sincerely simply".split())
_NOT_BEFORE_NOUN = _SUBJECTS | _AUXILIARIES | frozenset("he she it not".split())
_NOT_BEFORE_ADJ = frozenset("have has had having for".split())
_ADJ_SUFFIXES = ("ful", "ous", "ive", "able", "ible", "less", "ic", "ish", "est")
_PREV_WORD = re.compile(r"([\w'’-]+) +$")
_NEXT_WORD = re.compile(r"^ +([\w'’-]+)")


def lexicon_kind(lexicon: str) -> str | None:
    """The part of speech a lexicon's name says its values are (None: no rule)."""
    name = lexicon.upper()
    if name == "INTENSIFIER" or name.endswith("_INTENSIFIER"):
        return "intensifier"
    if name.endswith("_VERB"):
        return "verb"
    if name.endswith("_ADJ"):
        return "adjective"
    if name == "NOUN" or name.endswith("_NOUN"):
        return "noun"
    return None


def fits(lexicon: str, text: str, start: int, end: int, adjectives: frozenset[str]) -> bool:
    """Can every value of ``lexicon`` stand at ``text[start:end]``, given its neighbours?

    A lexicon's name gives its part of speech; the values must fit where the matched word
    stands, not only the word itself:

    - an intensifier ("really", "very") only directly before an adjective (a value of an
      ``*_ADJ`` lexicon, or a word with an adjective suffix): "I really looked" -> "I very
      looked" is refused;
    - a present-tense verb ("like", "love") only after a subject pronoun or an auxiliary
      ("I like", "to love", "really enjoy"): "looks like a dream" keeps its preposition;
    - a noun ("watch", "show", "play") not where a verb stands (after a pronoun or an
      auxiliary): "I watch it" -> "I pizza it" is refused;
    - an adjective not where a noun stands ("have fun", "for good").
    """
    kind = lexicon_kind(lexicon)
    if kind is None:
        return True
    prev_m = _PREV_WORD.search(text, 0, start)
    prev = prev_m.group(1).lower() if prev_m else None
    next_m = _NEXT_WORD.match(text[end:])
    nxt = next_m.group(1).lower() if next_m else None
    if kind == "intensifier":
        return nxt is not None and (nxt in adjectives or nxt.endswith(_ADJ_SUFFIXES))
    if kind == "verb":
        return prev is not None and (prev in _SUBJECTS or prev in _AUXILIARIES)
    if kind == "noun":
        return prev not in _NOT_BEFORE_NOUN
    return prev not in _NOT_BEFORE_ADJ
