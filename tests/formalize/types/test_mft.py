"""MFT (``formalize/types/mft.py``): pass/fail against the gold label, and the per-fill
breakdown."""

from __future__ import annotations

import pytest

from formalize import Suite, TemplateRunner
from tests.formalize.conftest import suite_dict


def test_mft_pass_fail_and_fill_breakdown(keyword):
    suite = Suite.from_dict(suite_dict(
        {"name": "adj", "capability": "Vocab", "type": "mft", "template": "This {NOUN} is {ADJ}.",
         "label": "positive"},
        lexicons={"ADJ": ["good", "great", "fine"], "NOUN": ["film", "book"]}))
    result = TemplateRunner().run(suite, [keyword])
    row = result.summary.query("level == 'test'").iloc[0]
    assert (row.n, row.failures) == (6, 2) and row.fail_rate == pytest.approx(1 / 3)
    acc = result.fills.query("slot == 'ADJ'").set_index("value")["accuracy"].to_dict()
    assert acc == {"good": 1.0, "great": 1.0, "fine": 0.0}
    assert set(result.examples.text) == {"This film is fine.", "This book is fine."}
    assert result.summary.query("level == 'label'").iloc[0].key == "positive"
    assert len(result.cases) == 6 and set(result.cases.columns) >= {"pred", "probs", "passed"}
