"""DIR (``formalize/types/dir.py``): a label's probability must move one way, by at least
``min_delta``, under a perturbation."""

from __future__ import annotations

import pytest

from formalize import Suite, TemplateRunner
from tests.formalize.conftest import LengthScorer, suite_dict


@pytest.mark.parametrize("direction,min_delta,expected", [
    ("up", 0.0, True), ("up", 0.05, True), ("up", 0.2, False), ("down", 0.0, False)])
def test_dir_direction_and_min_delta(direction, min_delta, expected):
    # Adding " Wow, yes." (10 chars) raises p(positive) by exactly 0.10 under LengthScorer.
    data = suite_dict({"name": "d", "type": "dir", "texts": ["a" * 30],
                       "perturb": [{"name": "add_phrase", "phrases": ["Wow, yes."]}],
                       "label": "positive", "direction": direction, "min_delta": min_delta})
    result = TemplateRunner().run(Suite.from_dict(data), [LengthScorer()])
    assert list(result.cases.passed) == [expected]
