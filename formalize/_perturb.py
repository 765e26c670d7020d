"""Seeded perturbations for INV and DIR tests, registered by name.

Each perturbation is a small class: the constructor stores and checks its parameters, and
``__call__(text, rng)`` returns the perturbed text, or None when it does not apply (no
negatable verb, nothing to contract). All randomness comes from the ``rng`` passed in, so
the same (seed, case) always gives the same text.
"""

from __future__ import annotations

import inspect
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from synth.core import ConfigError, Registry, TemplateError, did_you_mean


class PerturbFn(Protocol):
    def __call__(self, text: str, rng: random.Random) -> str | None: ...


def _choice(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"'{name}' must be one of {', '.join(allowed)}; got {value!r}")


def _positive_int(name: str, value: object, upper: int = 1000) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= upper:
        raise ValueError(f"'{name}' must be an integer in [1, {upper}]; got {value!r}")


_WORD = re.compile(r"[A-Za-z]{3,}")


class Typo:
    """Typos in one word: ``swap`` adjacent characters, ``delete`` or ``insert`` one.

    Args:
        kind: ``swap``, ``delete``, ``insert`` or ``any`` (one of the three per typo).
        n: typos to make in the chosen word.
        word: ``random`` (a random word of 3+ letters) or ``longest``.
    """

    def __init__(self, *, kind: str = "any", n: int = 1, word: str = "random") -> None:
        _choice("kind", kind, ("swap", "delete", "insert", "any"))
        _positive_int("n", n, 10)
        _choice("word", word, ("random", "longest"))
        self.kind, self.n, self.word = kind, n, word

    def __call__(self, text: str, rng: random.Random) -> str | None:
        spans = [m.span() for m in _WORD.finditer(text)]
        if not spans:
            return None
        if self.word == "longest":
            start, end = max(spans, key=lambda s: s[1] - s[0])
        else:
            start, end = rng.choice(spans)
        chars = list(text[start:end])
        for _ in range(self.n):
            kind = rng.choice(("swap", "delete", "insert")) if self.kind == "any" else self.kind
            if kind == "swap" and len(chars) >= 2:
                i = rng.randrange(len(chars) - 1)
                chars[i], chars[i + 1] = chars[i + 1], chars[i]
            elif kind == "delete" and len(chars) >= 2:
                del chars[rng.randrange(len(chars))]
            else:
                chars.insert(rng.randrange(len(chars) + 1), rng.choice(string.ascii_lowercase))
        out = text[:start] + "".join(chars) + text[end:]
        return out if out != text else None


class Nonsense:
    """A random string of non-alphabetic characters added as a prefix or suffix.

    Args:
        length: characters in the string.
        position: ``prefix`` or ``suffix``.
        chars: the alphabet (default: digits and ASCII punctuation).
    """

    def __init__(self, *, length: int = 5, position: str = "suffix",
                 chars: str = string.digits + "!#$%&*+-=?@^_~") -> None:
        _positive_int("length", length, 200)
        _choice("position", position, ("prefix", "suffix"))
        if not chars or any(c.isalpha() for c in chars):
            raise ValueError(f"'chars' must be non-empty and non-alphabetic; got {chars!r}")
        self.length, self.position, self.chars = length, position, chars

    def __call__(self, text: str, rng: random.Random) -> str | None:
        noise = "".join(rng.choice(self.chars) for _ in range(self.length))
        return f"{noise} {text}" if self.position == "prefix" else f"{text} {noise}"


class AddPhrase:
    """Add a phrase (one drawn from ``phrases`` or a lexicon) after or before the text.

    Args:
        phrases: the phrases to draw from (or give ``lexicon: NAME`` in the suite).
        position: ``after`` or ``before``.
    """

    default_lexicon: str | None = None

    def __init__(self, *, phrases: Sequence[str] = (), position: str = "after") -> None:
        if not phrases or not all(isinstance(p, str) and p.strip() for p in phrases):
            raise ValueError("'phrases' (or 'lexicon') must give at least one non-empty phrase")
        _choice("position", position, ("after", "before"))
        self.phrases, self.position = list(phrases), position

    def __call__(self, text: str, rng: random.Random) -> str | None:
        phrase = rng.choice(self.phrases).strip()
        return f"{phrase} {text}" if self.position == "before" else f"{text} {phrase}"


class Revision(AddPhrase):
    """An appended (or prepended) revision such as "I was wrong." (lexicon REVISION)."""

    default_lexicon = "REVISION"


_AUX = ("is", "was", "are", "were", "am", "can", "could", "will", "would", "should", "do",
        "does", "did", "has", "have", "had", "must", "might", "may", "shall")
_AUX_RE = re.compile(r"\b(" + "|".join(_AUX) + r")\b(?!')", re.IGNORECASE)
#: A contracted copula ("it's", "I'm", "they're") followed by a word: "not" goes after it.
_CONTRACTED_BE = re.compile(r"\b(?:it|that|there|here|what|he|she|i|you|we|they)(?:'|\u2019)"
                            r"(?:s|re|m)\b(?=\s+[A-Za-z])", re.IGNORECASE)
#: Words that make a sentence negated already: it is left out, not negated twice.
_NEGATED = re.compile(r"\b(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|cannot)\b"
                      r"|n(?:'|\u2019)t\b", re.IGNORECASE)
_SUBJECTS = ("i", "we", "you", "they", "he", "she", "it")
_THIRD = ("he", "she", "it")
_PRONOUN_VERB = re.compile(r"\b(" + "|".join(_SUBJECTS) + r")\s+([A-Za-z]+)\b(?!')",
                           re.IGNORECASE)
#: Words after have/has/had that make it the auxiliary of a perfect ("I have seen"); any other
#: word makes it the main verb ("I have a dog" -> "I do not have a dog").
_PARTICIPLE_END = ("ed", "en", "wn", "ne", "ht", "ung", "ugh")
_PARTICIPLES = frozenset("""been done gone had made said got gotten seen known shown taken
given found felt left kept met paid put read run set sent spent told thought bought brought
caught taught won lost heard held meant stood understood begun sung swum drunk come become
let hit cut hurt shut quit""".split())
#: Words after do/does/did that make it the main verb ("I did it" -> "I did not do it").
_OBJECT_START = frozenset("""a an the this that these those it my your his her its our their
me him us them something anything everything what well badly""".split())
#: Past tenses the pronoun fallback knows ("I liked" -> "I did not like"); any other word
#: ending in -ed is left alone, since its base form cannot be guessed reliably.
_PAST = {
    "liked": "like", "loved": "love", "enjoyed": "enjoy", "admired": "admire",
    "appreciated": "appreciate", "adored": "adore", "valued": "value", "hated": "hate",
    "disliked": "dislike", "regretted": "regret", "despised": "despise", "loathed": "loathe",
    "resented": "resent", "recommended": "recommend", "wanted": "want", "needed": "need",
    "expected": "expect", "watched": "watch", "played": "play", "tried": "try",
    "preferred": "prefer", "used": "use", "agreed": "agree", "hoped": "hope",
    "thought": "think", "felt": "feel", "found": "find", "saw": "see", "went": "go",
    "got": "get", "made": "make", "gave": "give", "took": "take", "knew": "know",
    "said": "say", "bought": "buy", "ate": "eat", "came": "come", "left": "leave",
    "heard": "hear", "understood": "understand", "meant": "mean", "read": "read",
    "paid": "pay", "told": "tell", "became": "become", "kept": "keep", "slept": "sleep",
}
#: Words that are not verbs but can follow a subject pronoun ("you and I", "they all").
_NOT_VERB = frozenset("""and or but all both too also each alone again here there then now
so as at in on of to for with by from guys two three""".split())
#: Adverbs that can sit between the subject and the verb ("I really like" -> "I do not really
#: like"); with he/she/it the verb after them must still take its -s.
_ADVERBS = frozenset("really truly just always usually often sometimes still even only "
                     "actually totally absolutely genuinely simply".split())


def _base_form(verb: str) -> str | None:
    """The base form of a third-person-singular present verb ("loves" -> "love",
    "watches" -> "watch", "tries" -> "try"), or None if ``verb`` is not one."""
    v = verb.lower()
    if len(v) < 3 or not v.endswith("s") or v.endswith("ss"):
        return None
    if v.endswith("ies"):
        return verb[:-3] + "y"
    if v.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return verb[:-2]
    return verb[:-1]


def case_like(src: str, out: str) -> str:
    """Return ``out`` cased like the text ``src`` it replaces: all capitals when ``src`` is
    (and is longer than one letter, so "I" does not count), capitalised when ``src`` is."""
    if src.isupper() and len(src) > 1:
        return out.upper()
    return out[:1].upper() + out[1:] if src[:1].isupper() else out


class Negation:
    """Negate an affirmative statement, by pattern.

    In order: the first auxiliary or copula ("is" -> "is not", "can" -> "cannot", "have
    seen" -> "have not seen"; "have"/"has"/"had" and "do"/"does"/"did" as main verbs get
    "do"-support: "I had fun" -> "I did not have fun"); else a contracted copula ("it's
    great" -> "it's not great"); else the verb after a subject pronoun ("I like" -> "I do not
    like", "she loves" -> "she does not love", "I liked" -> "I did not like" for known past
    tenses). Returns None (not applicable: no variant) for a text that is already negated
    (not, n't, no, never, nothing, ...), a question (it contains "?": inverted and tag
    questions are not negated by pattern), an inversion ("May I say ..."), or a text with
    no verb it can negate cleanly (an unknown past tense: "I walked" is left out).
    """

    def __init__(self) -> None:
        pass

    def __call__(self, text: str, rng: random.Random) -> str | None:
        if "?" in text or _NEGATED.search(text):
            return None
        for m in _AUX_RE.finditer(text):
            if m.group(1) == "May" and m.start() > 0:
                continue  # the month, not the modal
            return self._aux(text, m)
        be = _CONTRACTED_BE.search(text)
        if be:
            return text[: be.end()] + " not" + text[be.end():]
        return self._pronoun_verb(text)

    @staticmethod
    def _aux(text: str, m: re.Match[str]) -> str | None:
        word = m.group(1)
        low = word.lower()
        nxt = re.match(r"\s+([A-Za-z]+)", text[m.end():])
        after = nxt.group(1).lower() if nxt else ""
        before = text[: m.start()].rstrip()
        if after in _SUBJECTS and (not before or before[-1] in ".!,;:"):
            return None  # inverted ("May I say ...", "Had I known ..."): not a statement
        if low in ("have", "has", "had") and not (
                after in _PARTICIPLES or after.endswith(_PARTICIPLE_END)):
            # A main verb: "I have a dog" -> "I do not have a dog".
            aux = {"have": "do", "has": "does", "had": "did"}[low]
            return text[: m.start()] + case_like(word, f"{aux} not have") + text[m.end():]
        if low in ("do", "does", "did") and after in _OBJECT_START:
            # A main verb: "I did it" -> "I did not do it".
            return text[: m.start()] + case_like(word, f"{low} not do") + text[m.end():]
        neg = "cannot" if low == "can" else f"{low} not"
        return text[: m.start()] + case_like(word, neg) + text[m.end():]

    @staticmethod
    def _pronoun_verb(text: str) -> str | None:
        for m in _PRONOUN_VERB.finditer(text):
            pron, verb = m.groups()
            low = verb.lower()
            if low in _NOT_VERB:
                continue
            adverb = ""
            rest_start = m.end()
            if low in _ADVERBS:
                nxt = re.match(r"\s+([A-Za-z]+)\b(?!')", text[m.end():])
                if not nxt:
                    return None
                adverb, verb, low = low + " ", nxt.group(1), nxt.group(1).lower()
                rest_start = m.end() + nxt.end()
            if low in _PAST:
                aux, base = "did", _PAST[low]
            elif low.endswith("ed"):
                return None  # a past tense whose base form is not known
            elif pron.lower() in _THIRD:
                third = _base_form(verb)
                if third is None:
                    if adverb:
                        return None
                    continue  # not a verb after it ("give it time"): try the next subject
                aux, base = "does", third
            else:
                aux, base = "do", verb
            return (text[: m.start()] + f"{pron} {aux} not {adverb}{base}"
                    + text[rest_start:])
        return None


_CONTRACTIONS = [
    ("cannot", "can't"), ("will not", "won't"), ("is not", "isn't"), ("are not", "aren't"),
    ("was not", "wasn't"), ("were not", "weren't"), ("do not", "don't"),
    ("does not", "doesn't"), ("did not", "didn't"), ("have not", "haven't"),
    ("has not", "hasn't"), ("would not", "wouldn't"), ("should not", "shouldn't"),
    ("could not", "couldn't"), ("I am", "I'm"), ("it is", "it's"), ("that is", "that's"),
    ("I have", "I've"), ("you are", "you're"), ("they are", "they're"), ("we are", "we're"),
    ("I will", "I'll"), ("I would", "I'd"), ("there is", "there's"), ("what is", "what's"),
]


def _cased(word: str) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement: ``word``, capitalised like the text it replaces."""
    return lambda m: case_like(m.group(0), word)


def _swap_all(text: str, pairs: list[tuple[str, str]]) -> str:
    for a, b in pairs:
        text = re.sub(rf"\b{re.escape(a)}\b", _cased(b), text, flags=re.IGNORECASE)
    return text


class Contraction:
    """Contract ("is not" -> "isn't") or expand ("isn't" -> "is not") every such phrase.

    Args:
        mode: ``contract``, ``expand``, or ``toggle`` (expand if the text has contractions,
            else contract).
    """

    def __init__(self, *, mode: str = "toggle") -> None:
        _choice("mode", mode, ("contract", "expand", "toggle"))
        self.mode = mode

    def __call__(self, text: str, rng: random.Random) -> str | None:
        mode = self.mode
        if mode == "toggle":
            expanded = _swap_all(text, [(b, a) for a, b in _CONTRACTIONS])
            mode = "expand" if expanded != text else "contract"
        if mode == "expand":
            out = _swap_all(text, [(b, a) for a, b in _CONTRACTIONS])
        else:
            out = _swap_all(text, _CONTRACTIONS)
        return out if out != text else None


class Punctuation:
    """Change the final punctuation.

    Args:
        mode: ``strip`` (remove it), ``add`` (add "." or "!" where there is none), ``swap``
            (replace it with another of . ! ?), or ``any`` (one that applies, drawn by rng).
    """

    _ENDS = ".!?"

    def __init__(self, *, mode: str = "any") -> None:
        _choice("mode", mode, ("strip", "add", "swap", "any"))
        self.mode = mode

    def __call__(self, text: str, rng: random.Random) -> str | None:
        body = text.rstrip()
        has_end = bool(body) and body[-1] in self._ENDS
        mode = self.mode
        if mode == "any":
            mode = rng.choice(("strip", "swap")) if has_end else "add"
        if mode == "strip":
            out = body.rstrip(self._ENDS + " ")
        elif mode == "add":
            out = body if has_end else body + rng.choice(".!")
        else:
            if not has_end:
                return None
            out = body[:-1] + rng.choice([c for c in self._ENDS if c != body[-1]])
        return out if out and out != text else None


#: Perturbations by name; register your own with ``PERTURBATIONS.register(name, "mod:Class")``.
PERTURBATIONS: Registry[Callable[..., PerturbFn]] = Registry("perturbation", {
    "typo": "formalize._perturb:Typo",
    "nonsense": "formalize._perturb:Nonsense",
    "add_phrase": "formalize._perturb:AddPhrase",
    "revision": "formalize._perturb:Revision",
    "negation": "formalize._perturb:Negation",
    "contraction": "formalize._perturb:Contraction",
    "punctuation": "formalize._perturb:Punctuation",
    "change_name": "formalize._perturb_entities:ChangeName",
    "change_location": "formalize._perturb_entities:ChangeLocation",
    "change_number": "formalize._perturb_entities:ChangeNumber",
})


@dataclass(frozen=True)
class Perturbation:
    """A configured perturbation: its name, parameters and the callable that applies it."""

    name: str
    params: tuple[tuple[str, Any], ...]
    fn: PerturbFn

    def __call__(self, text: str, rng: random.Random) -> str | None:
        return self.fn(text, rng)

    def describe(self) -> str:
        """Return e.g. ``typo(kind=swap)``."""
        args = ", ".join(f"{k}={v}" for k, v in self.params if k != "phrases")
        return f"{self.name}({args})" if args else self.name


def make_perturbation(spec: dict[str, Any], lexicon_values: Callable[[str], Sequence[str]],
                      where: str) -> Perturbation:
    """Build a :class:`Perturbation` from a suite entry such as ``{name: typo, kind: swap}``.

    ``lexicon: NAME`` is resolved through ``lexicon_values`` into the ``phrases`` parameter.

    Raises:
        TemplateError: an unknown perturbation or parameter, or a bad parameter value.
    """
    params = dict(spec)
    name = params.pop("name", None)
    if not isinstance(name, str):
        raise TemplateError("a perturbation needs a 'name'", where=where,
                            fix=f"choose one of: {', '.join(PERTURBATIONS.names())}")
    try:
        cls = PERTURBATIONS.get(name)
    except ConfigError as exc:
        raise TemplateError(exc.what, where=where, fix=exc.fix) from None
    accepted = [p for p in inspect.signature(cls).parameters if p != "self"]
    lexicon = params.pop("lexicon", getattr(cls, "default_lexicon", None)
                         if "phrases" not in params else None)
    if lexicon is not None:
        if "phrases" not in accepted:
            raise TemplateError(f"perturbation {name!r} takes no 'lexicon'", where=where,
                                fix=f"its parameters: {', '.join(accepted) or '(none)'}")
        try:
            params["phrases"] = list(lexicon_values(str(lexicon)))
        except TemplateError as exc:  # name the test and line, not just the suite
            raise TemplateError(exc.what, where=where, fix=exc.fix) from None
    for key in params:
        if key not in accepted:
            raise TemplateError(
                f"unknown parameter {key!r} for perturbation {name!r}", where=where,
                fix=did_you_mean(key, accepted) if accepted else "it takes no parameters")
    try:
        fn = cls(**params)
    except ValueError as exc:
        raise TemplateError(f"perturbation {name!r}: {exc}", where=where,
                            fix="correct the parameter") from None
    shown = tuple((k, v) for k, v in spec.items() if k != "name")
    return Perturbation(name, shown, fn)
