"""CheckList: the suite's MFT, INV and DIR tests as CheckList's own ``TestSuite``.

CheckList saves suites with ``dill`` (a pickle), which synthcheck never writes itself. The
export is a JSON description (``synthcheck-checklist/1``): per test its type, capability,
description and data, MFT gold labels, INV tolerance, DIR label, direction and minimum move.
:mod:`formalize.formats.checklist_build`, a stand-alone script that needs only CheckList,
turns it into a ``checklist.test_suite.TestSuite`` with CheckList's own test classes and
expectations, and saves it with CheckList's ``TestSuite.save``, so ``TestSuite.from_file``
loads it::

    python checklist_build.py suite.checklist.json suite.pkl   # in CheckList's environment

Contrast and group tests have no CheckList equivalent; they are listed as left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from formalize._suite import Suite
from formalize.formats._base import Exported, Format

#: The description's format tag.
CHECKLIST_FORMAT = "synthcheck-checklist/1"
#: The stand-alone builder (run it with CheckList's Python).
BUILDER = Path(__file__).with_name("checklist_build.py")


def checklist_description(suite: Suite, *, sample: int | None = None, seed: int | None = None,
                          max_cases: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """The JSON description and the names of the tests left out (contrast, group)."""
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    tests, skipped = [], []
    for test in suite.tests:
        kind = test.type
        if kind not in ("mft", "inv", "dir"):
            skipped.append(test.name)
            continue
        entry: dict[str, Any] = {"name": test.name, "type": kind.upper(),
                                 "capability": test.capability,
                                 "description": test.spec.description or ""}
        cases = list(test.cases(sample, seed))
        if kind == "mft":
            entry["data"] = [c.text for c in cases]
            entry["labels"] = [c.label for c in cases]
        else:  # CheckList's INV/DIR data: [original, variant, variant, ...] per original
            groups: dict[str, list[str]] = {}
            for c in cases:
                groups.setdefault(str(c.base_id), [str(c.orig_text)]).append(c.text)
            entry["data"] = list(groups.values())
            if kind == "inv":
                entry["tolerance"] = getattr(test.spec, "tolerance", None)
            else:
                entry.update(label=test.spec.label, direction=test.spec.direction,
                             min_delta=test.spec.min_delta)
        tests.append(entry)
    return {"format": CHECKLIST_FORMAT, "name": suite.name, "labels": list(suite.labels),
            "tests": tests}, skipped


class CheckList(Format):
    """MFT/INV/DIR tests as a description CheckList's ``TestSuite`` is built from."""

    name = "checklist"
    description = ("MFT/INV/DIR tests for CheckList (JSON; formalize/formats/checklist_build.py "
                   "makes CheckList's own TestSuite file from it)")

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the description (see :func:`checklist_description`)."""
        from synth.core import write_text_atomic

        data, skipped = checklist_description(suite, sample=sample, seed=seed,
                                              max_cases=max_cases)
        write_text_atomic(out, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        n = sum(len(t["data"]) for t in data["tests"])
        return Exported(f"wrote {len(data['tests'])} tests ({n:,} CheckList test cases) to "
                        f"{out}; build CheckList's TestSuite from it with: python {BUILDER} "
                        f"{out} SUITE.pkl", skipped, cases=n)
