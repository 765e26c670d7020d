"""The template language: a tokenizer, an AST and a renderer.

A template is literal text with placeholders::

    This {NOUN} is not {POS_ADJ}.      a slot filled from the lexicon NOUN, another from POS_ADJ
    {NOUN} and {NOUN1}                 NOUN1 is a second, independent draw from the lexicon NOUN
    I bought {a:NOUN}.                 "a book", "an album" (``{A:NOUN}`` capitalises the article)
    {Cap:GROUP} are here.              the value with its first letter capitalised (sentence start)
    a literal {{brace}}                 ``{{`` and ``}}`` are literal braces

The slot *key* (``NOUN1``) names one fill; its *lexicon* is the key without trailing digits
(``NOUN``). Every occurrence of one key in a template gets the same value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal as TypingLiteral

from synth.core import TemplateError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TRAILING_DIGITS = re.compile(r"[0-9]+\Z")
ARTICLE_MODIFIERS = ("a", "A")
#: The modifier that capitalises a value's first letter (``{Cap:NAME}``).
CAPITALISE = "Cap"
MODIFIERS = (*ARTICLE_MODIFIERS, CAPITALISE)


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: ``text`` (literal run), ``open``, ``close``, ``colon`` or ``name``."""

    kind: TypingLiteral["text", "open", "close", "colon", "name"]
    value: str
    column: int  # 1-based column of the token's first character


@dataclass(frozen=True, slots=True)
class Text:
    """A literal run of text."""

    value: str


@dataclass(frozen=True, slots=True)
class Slot:
    """A placeholder: fill ``key`` (drawn from ``lexicon``), optionally with a modifier: an
    article (``a``/``A``) or ``Cap`` (the value capitalised)."""

    key: str
    lexicon: str
    article: str | None  # the modifier: None, "a", "A" or "Cap"
    column: int


Node = Text | Slot


def slot_lexicon(key: str) -> str:
    """Return the lexicon a slot key draws from: the key without trailing digits (NOUN1 -> NOUN)."""
    stripped = _TRAILING_DIGITS.sub("", key)
    return stripped or key


def tokenize(template: str, where: str = "template") -> list[Token]:
    """Split ``template`` into tokens; ``{{``/``}}`` become literal braces.

    Raises:
        TemplateError: a brace is unbalanced (names the column).
    """
    tokens: list[Token] = []
    buf: list[str] = []
    buf_start = 1
    i, n = 0, len(template)
    inside = False
    open_col = 0

    def flush() -> None:
        if buf:
            tokens.append(Token("text", "".join(buf), buf_start))
            buf.clear()

    while i < n:
        ch = template[i]
        col = i + 1
        if not inside:
            if ch == "{" and template.startswith("{{", i):
                if not buf:
                    buf_start = col
                buf.append("{")
                i += 2
                continue
            if ch == "}" and template.startswith("}}", i):
                if not buf:
                    buf_start = col
                buf.append("}")
                i += 2
                continue
            if ch == "{":
                flush()
                tokens.append(Token("open", ch, col))
                inside, open_col = True, col
                i += 1
                continue
            if ch == "}":
                raise TemplateError(
                    f"unmatched '}}' at column {col} in {template!r}", where=where,
                    fix="write '}}' for a literal brace, or open the placeholder with '{'",
                )
            if not buf:
                buf_start = col
            buf.append(ch)
            i += 1
            continue
        # Inside a placeholder: names, ':' and the closing brace only.
        if ch == "}":
            tokens.append(Token("close", ch, col))
            inside = False
            i += 1
        elif ch == ":":
            tokens.append(Token("colon", ch, col))
            i += 1
        elif ch == "{":
            raise TemplateError(
                f"unclosed '{{' at column {open_col} in {template!r} (a new '{{' at column {col})",
                where=where,
                fix="close the placeholder with '}', or write '{{' for a literal brace",
            )
        else:
            j = i
            while j < n and template[j] not in "{}:":
                j += 1
            tokens.append(Token("name", template[i:j], col))
            i = j
    if inside:
        raise TemplateError(
            f"unclosed '{{' at column {open_col} in {template!r}", where=where,
            fix="close the placeholder with '}', or write '{{' for a literal brace",
        )
    flush()
    return tokens


def parse_template(template: str, where: str = "template") -> tuple[Node, ...]:
    """Parse ``template`` into a tuple of :class:`Text` and :class:`Slot` nodes.

    Grammar (inside braces): ``NAME`` | ``MOD ':' NAME`` where MOD is ``a``, ``A`` or ``Cap``.

    Raises:
        TemplateError: unbalanced braces, an empty or malformed placeholder, or an unknown
            modifier; the message names the column.
    """
    if not isinstance(template, str):
        raise TemplateError(f"a template must be a string, got {template!r}", where=where,
                            fix="quote the template in the YAML")
    tokens = tokenize(template, where)
    nodes: list[Node] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "text":
            nodes.append(Text(tok.value))
            i += 1
            continue
        # tok is "open": collect the tokens up to "close" (tokenize guarantees one exists).
        j = i + 1
        while tokens[j].kind != "close":
            j += 1
        nodes.append(_parse_placeholder(tokens[i + 1 : j], tok.column, template, where))
        i = j + 1
    return tuple(nodes)


def _parse_placeholder(body: list[Token], column: int, template: str, where: str) -> Slot:
    def bad(what: str) -> TemplateError:
        return TemplateError(
            f"{what} at column {column} in {template!r}", where=where,
            fix="write a placeholder as {NAME}, {NAME1}, {a:NAME} or {Cap:NAME}; '{{' for a "
                "literal brace",
        )

    kinds = [t.kind for t in body]
    if kinds == ["name"]:
        article, name = None, body[0].value.strip()
    elif kinds == ["name", "colon", "name"]:
        article, name = body[0].value.strip(), body[2].value.strip()
        if article not in MODIFIERS:
            raise bad(f"unknown modifier {article!r} (only 'a', 'A' and 'Cap' are defined)")
    elif not body:
        raise bad("empty placeholder '{}'")
    else:
        raise bad("malformed placeholder '{" + "".join(t.value for t in body) + "}'")
    if not _NAME.match(name):
        raise bad(f"bad placeholder name {name!r} (letters, digits and '_' only)")
    return Slot(key=name, lexicon=slot_lexicon(name), article=article, column=column)


_AN_EXCEPTIONS = ("hour", "honest", "honor", "honour", "heir", "herb")
_A_EXCEPTIONS = ("uni", "use", "usu", "uti", "uro", "eu", "ewe", "one", "once", "ubiq", "ukul")


def indefinite_article(word: str) -> str:
    """Return "a" or "an" for ``word`` by its sound (vowel letters, with common exceptions)."""
    w = word.strip().lower()
    if not w:
        return "a"
    if w.startswith(_AN_EXCEPTIONS):
        return "an"
    if w.startswith(_A_EXCEPTIONS):
        return "a"
    first = word.strip()[0]
    # Acronyms read letter by letter: "an MRI", "an FDA label", "a CT scan".
    token = word.strip().split()[0]
    if len(token) > 1 and token.isupper():
        return "an" if first in "AEFHILMNORSX" else "a"
    return "an" if w[0] in "aeiou" else "a"


def with_article(value: str, article: str) -> str:
    """Return ``value`` preceded by its indefinite article, capitalised when ``article`` is "A"."""
    art = indefinite_article(value)
    if article == "A":
        art = art.capitalize()
    return f"{art} {value}"


def capitalise(value: str) -> str:
    """Return ``value`` with its first letter upper-cased (the rest as it is)."""
    return value[:1].upper() + value[1:]


def apply_modifier(value: str, modifier: str | None) -> str:
    """Return a fill as a slot with ``modifier`` (None, ``a``, ``A`` or ``Cap``) renders it."""
    if modifier is None:
        return value
    if modifier == CAPITALISE:
        return capitalise(value)
    return with_article(value, modifier)


def render(nodes: tuple[Node, ...], fills: dict[str, str]) -> str:
    """Render parsed nodes with ``fills`` (slot key -> value)."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append(node.value)
        else:
            parts.append(apply_modifier(fills[node.key], node.article))
    return "".join(parts)


def slot_keys(nodes: tuple[Node, ...]) -> list[str]:
    """Return the distinct slot keys of a parsed template, in first-occurrence order."""
    seen: dict[str, None] = {}
    for node in nodes:
        if isinstance(node, Slot):
            seen.setdefault(node.key, None)
    return list(seen)


def to_template_text(nodes: tuple[Node, ...]) -> str:
    """Write nodes back as template text (escaping literal braces); inverse of parse."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.value.replace("{", "{{").replace("}", "}}"))
        elif node.article:
            out.append(f"{{{node.article}:{node.key}}}")
        else:
            out.append(f"{{{node.key}}}")
    return "".join(out)
