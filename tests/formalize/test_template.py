"""The template language: tokenizer, parser, articles, escapes, errors with columns."""

from __future__ import annotations

import pytest

from formalize import Slot, Text, indefinite_article, parse_template, render, tokenize
from formalize._template import to_template_text
from synth.core import TemplateError


def test_parse_slots_articles_and_second_draw():
    nodes = parse_template("I bought {a:NOUN} and {NOUN1}.")
    assert nodes == (Text("I bought "), Slot("NOUN", "NOUN", "a", 10), Text(" and "),
                     Slot("NOUN1", "NOUN", None, 23), Text("."))


def test_render_article_agreement():
    nodes = parse_template("{A:NOUN} and {a:NOUN1}")
    assert render(nodes, {"NOUN": "album", "NOUN1": "book"}) == "An album and a book"
    assert render(nodes, {"NOUN": "hour", "NOUN1": "university"}) == "An hour and a university"
    assert render(nodes, {"NOUN": "MRI", "NOUN1": "CT scan"}) == "An MRI and a CT scan"


@pytest.mark.parametrize("word,article", [("apple", "an"), ("book", "a"), ("honest man", "an"),
                                          ("user", "a"), ("e-reader", "an"), ("one", "a")])
def test_indefinite_article(word, article):
    assert indefinite_article(word) == article


def test_escaped_braces_are_literal():
    nodes = parse_template("a {{literal}} {X}}}")
    assert render(nodes, {"X": "v"}) == "a {literal} v}"
    assert to_template_text(nodes) == "a {{literal}} {X}}}"


def test_tokens_carry_columns():
    toks = tokenize("ab {X}")
    assert [(t.kind, t.value, t.column) for t in toks] == [
        ("text", "ab ", 1), ("open", "{", 4), ("name", "X", 5), ("close", "}", 6)]


@pytest.mark.parametrize("template,message", [
    ("This {NOUN is", r"unclosed '\{' at column 6"),
    ("This NOUN} is", r"unmatched '\}' at column 10"),
    ("a {X {Y}", r"unclosed '\{' at column 3"),
    ("a {} b", r"empty placeholder '\{\}' at column 3"),
    ("a {the:X}", r"unknown modifier 'the'"),
    ("a {X Y}", r"bad placeholder name 'X Y' .* at column 3"),
    ("a {a:b:c}", r"malformed placeholder"),
])
def test_bad_templates_name_the_column(template, message):
    with pytest.raises(TemplateError, match=message):
        parse_template(template, where="suite.yaml, test 't'")


def test_cap_modifier_capitalises_the_value():
    from formalize._template import parse_template, render

    nodes = parse_template("{Cap:GROUP} are here, {a:GROUP} too.")
    assert render(nodes, {"GROUP": "immigrants"}) == "Immigrants are here, an immigrants too."
    with pytest.raises(TemplateError, match=r"unknown modifier 'cap' \(only 'a', 'A' and 'Cap'"):
        parse_template("{cap:GROUP}")
