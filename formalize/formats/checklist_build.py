"""Build CheckList's own ``TestSuite`` from synthcheck's CheckList description.

Stand-alone: it imports only CheckList (0.0.11) and the standard library, so it runs with the
Python of CheckList's environment::

    python checklist_build.py suite.checklist.json suite.pkl

MFT tests get the gold labels (as label indices); INV tests ``Expect.inv(tolerance)``
(CheckList's own: the prediction may flip when the original prediction's probability moves by
at most the tolerance; synthcheck's default, no tolerance, is 0 here); DIR tests
``Expect.monotonic(label, increasing, tolerance=0)`` when the minimum move is 0, else a
pairwise expectation that the watched label's probability moves at least that far.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def build_suite(path: str) -> Any:
    """The ``checklist.test_suite.TestSuite`` the description at ``path`` describes."""
    from checklist.expect import Expect
    from checklist.test_suite import TestSuite
    from checklist.test_types import DIR, INV, MFT

    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if data.get("format") != "synthcheck-checklist/1":
        raise SystemExit(f"error: {path} is not a synthcheck CheckList description "
                         f"(format {data.get('format')!r}): export it with synthcheck export "
                         f"--format checklist")
    labels = list(data["labels"])
    suite = TestSuite()
    for t in data["tests"]:
        common = {"name": t["name"], "capability": t["capability"],
                  "description": t["description"]}
        if t["type"] == "MFT":
            test = MFT(t["data"], labels=[labels.index(x) for x in t["labels"]], **common)
        elif t["type"] == "INV":
            test = INV(t["data"], expect=Expect.inv(tolerance=t.get("tolerance") or 0.0),
                       **common)
        else:
            test = DIR(t["data"], expect=_direction(Expect, labels.index(t["label"]),
                                                    t["direction"] == "up",
                                                    float(t.get("min_delta") or 0.0)),
                       **common)
        suite.add(test)
    return suite


def _direction(expect: Any, label: int, up: bool, min_delta: float) -> Any:
    if min_delta == 0:
        return expect.monotonic(label=label, increasing=up, tolerance=0.0)

    def moved(orig_pred: Any, pred: Any, orig_conf: Any, conf: Any, labels: Any = None,
              meta: Any = None) -> bool:
        delta = float(conf[label]) - float(orig_conf[label])
        return (delta if up else -delta) >= min_delta - 1e-9

    return expect.pairwise(moved)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python checklist_build.py DESCRIPTION.json OUT.pkl", file=sys.stderr)
        return 2
    suite = build_suite(argv[0])
    suite.save(argv[1])
    print(f"wrote CheckList's TestSuite ({len(suite.tests)} tests) to {argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
