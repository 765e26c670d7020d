"""AdaTest: a test tree CSV with a topic per capability and test."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from formalize._expand import Case
from formalize._suite import Suite
from formalize.formats._base import (
    Exported,
    Format,
    check_imported_labels,
    csv_text,
    gold_tests,
    read_csv,
)
from synth.core import write_text_atomic

ADATEST_COLUMNS = ["topic", "input", "output", "label", "labeler", "description"]


def export_adatest(suite: Suite, path: str | Path, *, sample: int | None = None,
                   seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write an AdaTest test tree CSV (id index, topic, input, output, label, labeler,
    description): a topic per ``/capability/test`` (each part URL-quoted, as AdaTest writes
    topics), a topic marker row for each, and per case
    one ``pass`` row whose output is its gold label and one ``fail`` row per other label
    (that output would be a failure). With ``pass`` rows alone, AdaTest's per-topic labeling
    model learns that every output passes and flags no failure. Returns the tests left out."""
    kept, skipped = gold_tests(suite)
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    rows = []

    def clean(s: str) -> str:  # AdaTest's topic parts are URL-quoted ("double%20negation")
        return quote(s.replace("/", " ").strip(), safe="")

    for test in kept:
        topic = f"/{clean(test.capability)}/{clean(test.name)}"
        rows.append([uuid.uuid5(uuid.NAMESPACE_URL, topic).hex, topic, "", "", "topic_marker",
                     "synthcheck", test.spec.description])
        case: Case
        for case in test.cases(sample, seed):
            rows.append([uuid.uuid5(uuid.NAMESPACE_URL, f"{topic}/{case.case_id}").hex, topic,
                         case.text, case.label, "pass", "synthcheck", ""])
            for wrong in suite.spec.labels:
                if wrong != case.label:
                    rows.append([uuid.uuid5(uuid.NAMESPACE_URL,
                                            f"{topic}/{case.case_id}/{wrong}").hex, topic,
                                 case.text, wrong, "fail", "synthcheck", ""])
    write_text_atomic(path, csv_text(["", *ADATEST_COLUMNS], rows))
    return skipped


def import_adatest(path: str | Path, *, name: str = "adatest",
                   labels: Sequence[str] | None = None, encoding: str = "utf-8"
                   ) -> dict[str, Any]:
    """Read an AdaTest test tree CSV into suite data: one MFT test per topic (its capability
    the topic's first part, its name the rest; a ``topic_marker`` row's description becomes
    the test's), one case per row with an ``input``.

    A ``pass`` row's gold label is its ``output``; a ``fail`` row's output is a wrong answer,
    so with two labels its gold label is the other one; with more, such rows are left out
    (a warning counts them). Other labeler marks (``Unknown``, ``off_topic``) are left out too.

    Raises:
        DataError: the file is missing or lacks a column.
    """
    rows = read_csv(path, ["topic", "input", "output", "label"], "AdaTest", encoding)
    described: dict[str, str] = {}
    tests: dict[str, list[dict[str, str]]] = {}
    outputs: set[str] = set()
    left_out = 0
    for n, row in enumerate(rows, start=1):
        if row["label"] == "topic_marker":
            described[row["topic"]] = row.get("description") or ""
        elif row["input"] and row["label"] in ("pass", "fail"):
            if not row["output"].strip():
                from synth.core import DataError

                raise DataError(f"row {n} ({row['label']}, input {row['input'][:60]!r}) has "
                                f"an empty output", where=f"{path}, row {n}",
                                fix="give the row the model output it judges (a label), or "
                                    "delete it")
            tests.setdefault(row["topic"], []).append(row)
            outputs.add(row["output"])
        elif row["input"]:
            left_out += 1
    all_labels = list(labels) if labels else sorted(outputs)
    out: list[dict[str, Any]] = []
    for topic, topic_rows in tests.items():
        golds: list[tuple[str, str]] = []
        passed = {row["input"] for row in topic_rows if row["label"] == "pass"}
        for row in topic_rows:
            if row["label"] == "pass":
                golds.append((row["input"], row["output"]))
            elif row["input"] in passed:
                continue  # the pass row gives this input's gold label
            elif len(all_labels) == 2 and row["output"] in all_labels:
                golds.append((row["input"],
                              next(lab for lab in all_labels if lab != row["output"])))
            else:
                left_out += 1
        # A pass row and its fail rows name one case: each (text, label) once.
        cases = [{"text": t, "label": lab} for t, lab in dict.fromkeys(golds)]
        if not cases:
            continue
        parts = [unquote(p) for p in topic.split("/") if p]
        capability = parts[0] if parts else "General"
        test = {"name": "/".join(parts[1:]) or capability, "capability": capability,
                "type": "mft", "cases": cases}
        if described.get(topic):
            test["description"] = described[topic]
        out.append(test)
    if left_out:
        warnings.warn(f"{path}: {left_out:,} rows left out (a 'fail' row names a wrong output, "
                      f"which gives no gold label with {len(all_labels)} labels; other marks "
                      f"have none)", stacklevel=2)
    return check_imported_labels({"name": name, "labels": all_labels, "tests": out}, path,
                                 "AdaTest")


class AdaTest(Format):
    """An AdaTest test tree (gold-label tests only; import reads ``pass``/``fail`` rows)."""

    name = "adatest"
    description = "an AdaTest test tree CSV"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the tree (see :func:`export_adatest`)."""
        return Exported(f"wrote {out}", export_adatest(suite, out, sample=sample, seed=seed,
                                                        max_cases=max_cases))

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = (), encoding: str = "utf-8") -> dict[str, Any]:
        """Read the tree (see :func:`import_adatest`)."""
        return import_adatest(path, name=name, labels=labels, encoding=encoding)
