"""AdaTest: a test tree CSV with a topic per capability and test."""

from __future__ import annotations

import uuid
from pathlib import Path

from formalize._expand import Case
from formalize._suite import Suite
from formalize.formats._base import Exported, Format, csv_text, gold_tests
from synth.core import write_text_atomic

ADATEST_COLUMNS = ["topic", "input", "output", "label", "labeler", "description"]


def export_adatest(suite: Suite, path: str | Path, *, sample: int | None = None,
                   seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write an AdaTest test tree CSV (id index, topic, input, output, label, labeler,
    description): a topic per ``/capability/test``, a topic marker row for each, and one
    ``pass`` row per case whose output is its gold label. Returns the tests left out."""
    kept, skipped = gold_tests(suite)
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    rows = []

    def clean(s: str) -> str:
        return s.replace("/", " ").strip()

    for test in kept:
        topic = f"/{clean(test.capability)}/{clean(test.name)}"
        rows.append([uuid.uuid5(uuid.NAMESPACE_URL, topic).hex, topic, "", "", "topic_marker",
                     "synthcheck", test.spec.description])
        case: Case
        for case in test.cases(sample, seed):
            rows.append([uuid.uuid5(uuid.NAMESPACE_URL, f"{topic}/{case.case_id}").hex, topic,
                         case.text, case.label, "pass", "synthcheck", ""])
    write_text_atomic(path, csv_text(["", *ADATEST_COLUMNS], rows))
    return skipped


class AdaTest(Format):
    """An AdaTest test tree (gold-label tests only)."""

    name = "adatest"
    description = "an AdaTest test tree CSV"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the tree (see :func:`export_adatest`)."""
        return Exported(f"wrote {out}", export_adatest(suite, out, sample=sample, seed=seed,
                                                        max_cases=max_cases))
