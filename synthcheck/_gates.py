"""CI gates over a verify result: fail-rate thresholds, JUnit XML and a Markdown summary.

A test's gate is its suite ``max_fail_rate``, else ``verify --max-fail-rate``; a test with
neither has no gate (it is reported, never failed). Only scored test types (not group tests,
which have no pass/fail) are gated.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.core import visible, write_text_atomic

if TYPE_CHECKING:
    from formalize import Suite, VerifyResult

WORST_EXAMPLES = 5
"""Failing examples shown per test and model in JUnit and Markdown."""


@dataclass(frozen=True)
class GateRow:
    """One (test, model) outcome: its fail rate, the gate it is held to, the worst failures."""

    test: str
    capability: str
    type: str
    model: str
    n: int
    failures: int
    fail_rate: float
    gate: float | None
    examples: list[dict[str, Any]]

    @property
    def scored(self) -> bool:
        """Whether the test passes or fails (group tests do not)."""
        return self.n > 0 and not math.isnan(self.fail_rate)

    @property
    def failed(self) -> bool:
        """Whether the fail rate is above the gate (never without a gate)."""
        return self.scored and self.gate is not None and self.fail_rate > self.gate


def test_gates(suite: Suite, default: float | None) -> dict[str, float | None]:
    """Test name -> its gate: the suite's per-test ``max_fail_rate``, else ``default``."""
    return {t.name: (t.max_fail_rate if getattr(t, "max_fail_rate", None) is not None
                     else default) for t in suite.spec.tests}


def _gold_prob(example: Mapping[str, Any]) -> float:
    """The probability the model gave the expected label (1.0 when there is none), so the
    most confident mistakes sort first."""
    probs = example.get("probs") or {}
    label = example.get("label")
    if isinstance(probs, Mapping) and _given(label) and label in probs:
        return float(probs[label])
    return 1.0


def gate_rows(result: VerifyResult, gates: Mapping[str, float | None],
              worst: int = WORST_EXAMPLES) -> list[GateRow]:
    """One :class:`GateRow` per test (suite order) and model, with up to ``worst`` failing
    examples each, most confident mistakes first."""
    lookup = {(r.key, r.model): r for r in result.summary.itertuples() if r.level == "test"}
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for ex in result.examples.to_dict(orient="records"):
        by_key.setdefault((ex["test"], ex["model"]), []).append(ex)
    rows = []
    for test, info in result.tests.items():
        for model in result.models:
            r = lookup.get((test, model))
            n = int(r.n) if r is not None else 0
            failures = int(r.failures) if r is not None else 0
            rate = float(r.fail_rate) if r is not None and r.fail_rate is not None else math.nan
            examples = sorted(by_key.get((test, model), []), key=_gold_prob)[:worst]
            if info.get("checks"):  # a directional test: the direction it was held to
                examples = [{**ex, "checks": info["checks"]} for ex in examples]
            rows.append(GateRow(test, info.get("capability", ""), info.get("type", ""), model,
                                n, failures, rate, gates.get(test), examples))
    return rows


def _given(value: Any) -> bool:
    """Whether an example field holds a value (examples come from a DataFrame: NaN is none)."""
    return value is not None and value != "" and not (isinstance(value, float)
                                                      and math.isnan(value))


def _example_line(ex: Mapping[str, Any]) -> str:
    """One failing example: the text, the expected and predicted labels, the probabilities
    and, for a pair, the original text and its prediction."""
    probs = ex.get("probs") or {}
    shown = ", ".join(f"{k}={float(v):.2f}" for k, v in probs.items()) if isinstance(
        probs, Mapping) else ""
    orig = (f" (original: {ex['orig_text']!r} -> {ex.get('orig_pred')})"
            if _given(ex.get("orig_text")) else "")
    gold = f"expected {ex['label']}, " if _given(ex.get("label")) else ""
    if _given(ex.get("checks")):  # directional: no label was expected, a direction was
        before = (ex.get("orig_probs") or {}) if isinstance(ex.get("orig_probs"), Mapping) else {}
        label = ex.get("label")
        moved = (f" ({float(before[label]):.2f} -> {float(probs[label]):.2f})"
                 if isinstance(probs, Mapping) and label in before and label in probs else "")
        gold = f"checked {ex['checks']}{moved}, "
    return f"{ex.get('text')!r}: {gold}predicted {ex.get('pred')} [{shown}]{orig}"


def junit_xml(rows: Sequence[GateRow], suite: str) -> str:
    """JUnit XML: one ``<testsuite>`` per model, one ``<testcase>`` per suite test. A test
    over its gate is a ``<failure>`` listing the worst examples; a test without pass/fail
    (group tests) is ``<skipped>``; other failures are listed in ``<system-out>``."""
    root = ET.Element("testsuites", name=suite)
    models = list(dict.fromkeys(r.model for r in rows))
    for model in models:
        mine = [r for r in rows if r.model == model]
        ts = ET.SubElement(root, "testsuite", name=f"{suite} [{model}]",
                           tests=str(len(mine)),
                           failures=str(sum(r.failed for r in mine)),
                           skipped=str(sum(not r.scored for r in mine)), errors="0")
        for r in mine:
            tc = ET.SubElement(ts, "testcase", name=r.test, classname=f"{suite}.{r.capability}")
            if not r.scored:
                ET.SubElement(tc, "skipped", message=f"{r.type} tests have no pass/fail")
                continue
            detail = "\n".join(_example_line(ex) for ex in r.examples)
            gate = "no gate" if r.gate is None else f"max_fail_rate {r.gate:g}"
            summary = (f"fail rate {r.fail_rate:.3f} ({r.failures}/{r.n} cases, {gate})")
            if r.failed:
                fail = ET.SubElement(tc, "failure", message=summary, type="FailRateExceeded")
                fail.text = detail
            else:
                out = ET.SubElement(tc, "system-out")
                out.text = summary + ("\n" + detail if detail else "")
    for node in root.iter():  # XML 1.0 cannot hold most control characters; none may act
        node.text = None if node.text is None else visible(node.text, keep="\n\t")
        for key, value in node.attrib.items():
            node.attrib[key] = visible(value)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def markdown_summary(rows: Sequence[GateRow], suite: str) -> str:
    """A pull-request summary: a verdict line, a table of tests with each model's fail rate
    (over-gate cells marked), then the worst failing examples of each failed test. Every
    value is HTML-escaped and safe in a table cell."""
    from synthcheck.report._render import md_text

    models = list(dict.fromkeys(r.model for r in rows))
    failed = [r for r in rows if r.failed]
    verdict = (f"**{len(failed)} gate(s) exceeded**" if failed else
               "**all gates passed**" if any(r.gate is not None for r in rows) else
               "no gates set (pass `--max-fail-rate` or a test's `max_fail_rate`)")
    lines = [f"## synthcheck verify: suite `{md_text(suite)}`", "", verdict, ""]
    lines.append("| test | capability | gate | " + " | ".join(md_text(m) for m in models) + " |")
    lines.append("|---|---|---|" + "---|" * len(models))
    cell = {(r.test, r.model): r for r in rows}
    for test in dict.fromkeys(r.test for r in rows):
        first = cell[(test, models[0])]
        cells = []
        for m in models:
            r = cell[(test, m)]
            text = "-" if not r.scored else f"{100 * r.fail_rate:.1f}% ({r.failures}/{r.n})"
            cells.append(f"**{text} ✗**" if r.failed else text)
        gate = "-" if first.gate is None else f"{100 * first.gate:g}%"
        lines.append(f"| {md_text(test)} | {md_text(first.capability)} | {gate} | "
                     + " | ".join(cells) + " |")
    for r in failed:
        lines += ["", f"### {md_text(r.test)} on {md_text(r.model)}", ""]
        shown = [f"- {md_text(_example_line(ex))}" for ex in r.examples]
        lines += shown or ["- (no examples kept)"]
    return "\n".join(lines) + "\n"


def apply_gates(suite: Suite, result: VerifyResult, max_fail_rate: float | None, *,
                junit: str | Path | None = None, markdown: str | Path | None = None
                ) -> list[GateRow]:
    """Hold ``result`` to the suite's and ``max_fail_rate``'s gates, write the JUnit and
    Markdown files asked for, and return the (test, model) rows over their gate."""
    rows = gate_rows(result, test_gates(suite, max_fail_rate))
    if junit is not None:
        write_text_atomic(Path(junit), junit_xml(rows, suite.name))
    if markdown is not None:
        write_text_atomic(Path(markdown), markdown_summary(rows, suite.name))
    return [r for r in rows if r.failed]
