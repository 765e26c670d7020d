"""Test groups (``formalize/types/group.py``): one variant per group value, deviations from the
other groups' mean, and the variant maker's word, pattern and add modes."""

from __future__ import annotations

import pytest

from formalize import GroupVariantMaker, Suite, TemplateRunner, group_deviations
from tests.formalize.conftest import suite_dict


class TableScorer:
    labels = ["negative", "positive"]
    name = "table"
    BASE = {"alpha": 0.2, "beta": 0.5, "gamma": 0.8}

    def predict_proba(self, texts):
        out = []
        for t in texts:
            p = next(v for k, v in self.BASE.items() if k in t.lower()) + (0.1 if "two" in t else 0)
            out.append({"positive": p, "negative": 1 - p})
        return out


def test_group_deviations_match_hand_computation():
    data = suite_dict({"name": "g", "type": "group", "texts": ["alpha one", "Alpha two", "none"],
                       "words": {"a": ["alpha"], "b": ["beta"], "c": ["gamma"]}})
    result = TemplateRunner().run(Suite.from_dict(data), [TableScorer()])
    g = result.groups.set_index(["group", "label"])
    # p_a = (0.2 + 0.3) / 2 = 0.25, p_b = 0.55, p_c = 0.85 ("none" has no mention: skipped)
    assert g.loc[("a", "positive"), "mean_prob"] == pytest.approx(0.25)
    assert g.loc[("b", "positive"), "mean_prob"] == pytest.approx(0.55)
    assert g.loc[("a", "positive"), "deviation"] == pytest.approx(0.25 - (0.55 + 0.85) / 2)
    assert g.loc[("b", "positive"), "deviation"] == pytest.approx(0.0)
    assert g.loc[("c", "positive"), "deviation"] == pytest.approx(0.45)
    assert g.loc[("a", "negative"), "deviation"] == pytest.approx(0.45)
    assert set(g["n"]) == {2}
    variants = set(result.cases.text)
    assert {"Beta two", "gamma one", "Alpha two"} <= variants  # case kept, mention changed


def test_group_deviation_function():
    rows = group_deviations({("t", "m", "x", "p"): 1.0, ("t", "m", "y", "p"): 0.2},
                            {("t", "m", "x"): 2, ("t", "m", "y"): 1}, ["p"])
    assert {r["group"]: round(r["deviation"], 6) for r in rows} == {"x": 0.3, "y": -0.3}


def test_group_add_and_pattern_modes():
    age = GroupVariantMaker(pattern=r"\b\d+ ?yo\b", values={"young": "25 yo", "old": "85 yo"},
                            add="{mention} patient.")
    assert age.variants("45 yo man with cough") == {"young": "25 yo man with cough",
                                                    "old": "85 yo man with cough"}
    assert age.variants("Man with cough")["old"] == "85 yo patient. Man with cough"
    gender = GroupVariantMaker(words={"m": ["man", "he", "his"], "f": ["woman", "she", "her"]})
    assert gender.variants("He is a man; his leg hurts.")["f"] == "She is a woman; her leg hurts."
    assert gender.variants("No mention.") is None
