"""Contrast sets (``formalize/types/contrast.py``): entity substitution with the articles fixed,
and the contrast label on the substituted cases."""

from __future__ import annotations

from formalize import Suite, substitute_entity


def test_contrast_set_fixes_articles_and_labels():
    assert substitute_entity("I got a rash.", "rash", "itch") == "I got an itch."
    assert substitute_entity("An ulcer, then an ulcer.", "ulcer", "cough") == \
        "A cough, then a cough."
    data = {"name": "ade", "labels": ["no_ade", "ade"], "tests": [{
        "name": "c", "type": "contrast", "label": "ade", "contrast_label": "no_ade",
        "items": [{"text": "It gave me an upset stomach.", "entity": "upset stomach",
                   "alternatives": ["better sleep", "calmer mood"]}]}]}
    cases = list(Suite.from_dict(data).cases())
    assert [(c.text, c.label) for c in cases] == [
        ("It gave me an upset stomach.", "ade"), ("It gave me better sleep.", "no_ade"),
        ("It gave me a calmer mood.", "no_ade")]  # no "a better sleep" (issue 12)


def test_article_fix_only_where_it_agrees():
    assert substitute_entity("It gave me an infection.", "infection", "a calmer mood") == \
        "It gave me a calmer mood."
    assert substitute_entity("I had a headache.", "headache", "fewer migraines") == \
        "I had fewer migraines."
    assert substitute_entity("A asthma attack.", "asthma", "flu") == "A flu attack."  # not its own
    assert substitute_entity("ASTHMA and asthma.", "Asthma", "flu") == "FLU and flu."
