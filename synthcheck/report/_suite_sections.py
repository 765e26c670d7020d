"""The report's sections about one verified suite: fail rate per test, capability and label
(the one number `verify`, the CI gates and `diff` use); the failing examples per test with
their fills; test-group deviations; fail rate per fill."""

from __future__ import annotations

import math
from typing import Any

from formalize import VERIFY_EXAMPLES, VERIFY_FILLS, VERIFY_SUMMARY, summary_tests
from synthcheck.report import _figures as figs
from synthcheck.report._blocks import (
    FailRate,
    Figure,
    Heading,
    Para,
    ReportSection,
    Table,
    num,
    slug,
)
from synthcheck.report._data import VerifyOutputs


def suite_sections(v: VerifyOutputs, top_fills: int) -> list[ReportSection]:
    """Every section of one suite, in reading order."""
    s = slug(v.suite)
    models = _models(v)
    return [fail_rates(v, s, models), failing_examples(v, s), groups(v, s),
            fills(v, s, models, top_fills)]


def _models(v: VerifyOutputs) -> list[str]:
    rows = v.summary.get("summary") or []
    return [str(m) for m in v.summary.get("models") or dict.fromkeys(r["model"] for r in rows)]


def _fail_rows(v: VerifyOutputs, level: str) -> dict[tuple[str, str], FailRate]:
    return {(str(r["key"]), str(r["model"])): FailRate(r["fail_rate"])
            for r in v.summary.get("summary") or []
            if r.get("level") == level and r.get("fail_rate") is not None}


def fail_rates(v: VerifyOutputs, s: str, models: list[str]) -> ReportSection:
    """Fail rate per test (a bar chart and a table), then per capability and per label."""
    data, suite = v.summary, v.suite
    sec = ReportSection(f"verify-{s}", f"Suite {suite}: fail rate per test")
    rate = _fail_rows(v, "test")
    if not rate:
        sec.skipped = f"suite {suite!r} has no pass/fail tests in {v.dir / VERIFY_SUMMARY.name}"
        return sec
    tests = summary_tests(data)
    names = [t for t, info in tests.items() if info.get("type") != "group"]  # suite order
    names += [k for k in dict.fromkeys(k for k, _ in rate) if k not in names]
    png = figs.template_fail_rate(names, models, rate)
    cap = (f"Fail rate per test of suite {suite!r} for {len(models)} model(s) (the share of "
           f"its cases each model fails; lower is better), {data.get('cases', '?')} cases "
           f"(provenance: config hash {data.get('config_hash', '?')}, git "
           f"{data.get('git_commit', '?')}).")
    shade = range(1, len(models) + 1)
    sec.blocks += [Figure(f"fig-fail-rate-{s}", png, "per-test fail-rate bars", cap),
                   Table.of(["test", *models],
                            [[t, *[rate.get((t, m), FailRate(math.nan)) for m in models]]
                             for t in names], shade=shade)]
    for level, title in (("capability", "Fail rate per capability"),
                         ("label", "Fail rate per expected label")):
        rows = _fail_rows(v, level)
        if rows:
            keys = list(dict.fromkeys(k for k, _ in rows))
            sec.blocks += [Heading(title), Table.of(
                [level, *models], [[k, *[rows.get((k, m), FailRate(math.nan)) for m in models]]
                                   for k in keys], shade=shade)]
    return sec


def _probs(p: Any) -> str:
    if not isinstance(p, dict):
        return "-"
    return ", ".join(f"{k} {float(x):.3f}" for k, x in p.items())


def _fills(fills: list[dict[str, Any]]) -> str:
    return "; ".join(f"{f.get('slot')}={f.get('value')}" for f in fills) or "-"


def failing_examples(v: VerifyOutputs, s: str) -> ReportSection:
    """The failures verify kept (``examples.jsonl``), per test in suite order, with fills."""
    sec = ReportSection(f"examples-{s}", f"Suite {v.suite}: failing examples")
    examples = v.failing_examples()
    if examples is None:
        sec.skipped = f"no {v.dir / VERIFY_EXAMPLES.name}"
        return sec
    if not examples:
        sec.skipped = f"suite {v.suite!r}: no model failed a test"
        return sec
    order = list(summary_tests(v.summary))
    by_test: dict[str, list[dict[str, Any]]] = {}
    for e in examples:
        by_test.setdefault(str(e.get("test")), []).append(e)
    sec.blocks.append(Para(f"{len(examples):,} failing cases kept by verify (the first few per "
                           "test and model), with the lexicon values that filled the template."))
    header = ["model", "text", "fills", "expected", "predicted", "probabilities"]
    info = v.summary.get("tests") or {}
    for test in sorted(by_test, key=lambda t: (order.index(t) if t in order else len(order), t)):
        rows = [[e.get("model"), e.get("text"), _fills(e["fills"]),
                 expectation(e, info.get(test) or {}), e.get("pred"), _probs(e.get("probs"))]
                for e in by_test[test]]
        sec.blocks += [Heading(test), Table.of(header, rows)]
    return sec


def expectation(example: dict[str, Any], test: dict[str, Any]) -> str:
    """What a failing case was held to: the expected label (MFT, contrast); the original's
    prediction (INV); for a directional test the direction checked, with the watched
    label's probability before and after (never an "expected" label it was not held to)."""
    if test.get("type") == "dir":
        label = example.get("label")
        before = (example.get("orig_probs") or {}).get(label)
        after = (example.get("probs") or {}).get(label)
        moved = (f" (original {float(before):.3f} -> {float(after):.3f})"
                 if before is not None and after is not None else "")
        return f"{test.get('checks') or f'p({label}) to move'}{moved}"
    if example.get("label") is not None:
        return str(example["label"])
    return f"same as original ({example.get('orig_pred')})"


def groups(v: VerifyOutputs, s: str) -> ReportSection:
    """A heatmap and a table per test-group test: each group's deviation from the others."""
    data, suite = v.summary, v.suite
    sec = ReportSection(f"groups-{s}", f"Suite {suite}: test groups")
    rows_all = data.get("groups") or []
    if not rows_all:
        sec.skipped = f"suite {suite!r} has no verified test-group tests"
        return sec
    labels = list(data.get("labels") or dict.fromkeys(r["label"] for r in rows_all))
    info = data.get("tests") or {}
    # Every label is a row: for a multi-label (independent sigmoid) model c(neg) != -c(pos).
    for test in dict.fromkeys(r["test"] for r in rows_all):
        rows = [r for r in rows_all if r["test"] == test and r["label"] in labels]
        gnames = list(dict.fromkeys(r["group"] for r in rows))
        keys = list(dict.fromkeys((r["model"], r["label"]) for r in rows))
        val = {(r["group"], r["model"], r["label"]): r.get("deviation") for r in rows}
        matrix = [[num(val.get((g, m, lab))) for g in gnames] for m, lab in keys]
        row_names = [f"{m}: {lab}" for m, lab in keys]
        scale = (info.get(test) or {}).get("scale")
        png = figs.group_heatmap(test, row_names, gnames, matrix, scale=scale)
        shown = f"fixed scale ±{scale:g}" if scale else "scaled to the largest deviation"
        cap = (f"Test group {test!r}: deviation of mean p(label) per group (columns) from the "
               f"other groups, one row per model and label ({shown}).")
        sec.blocks += [Figure(f"fig-groups-{s}-{slug(test)}", png, f"test-group heatmap {test}",
                              cap), Heading(test),
                       Table.of(["group", *row_names],
                                [[g, *(matrix[k][j] for k in range(len(keys)))]
                                 for j, g in enumerate(gnames)])]
    return sec


def fills(v: VerifyOutputs, s: str, models: list[str], top: int) -> ReportSection:
    """Per test, the ``top`` fills with the highest fail rate (worst model)."""
    import pandas as pd

    sec = ReportSection(f"fills-{s}", f"Suite {v.suite}: fail rate per fill")
    path = v.dir / VERIFY_FILLS.name
    if not path.is_file():
        sec.skipped = f"no {path}"
        return sec
    df = pd.read_csv(path, dtype={c: str for c in ("test", "slot", "lexicon", "value", "model")},
                     keep_default_na=False)
    if df.empty:
        sec.skipped = f"suite {v.suite!r} has no templated tests with fills"
        return sec
    models = [m for m in models if m in set(df["model"])] or list(dict.fromkeys(df["model"]))
    sec.blocks.append(Para(f"The {top} fills with the highest fail rate (worst model) per "
                           "test."))
    for test, part in df.groupby("test", sort=False):
        wide = part.pivot_table(index=["slot", "value"], columns="model", values="accuracy",
                                aggfunc="first")
        n = part.groupby(["slot", "value"])["n"].max()
        wide = wide.reindex(columns=[m for m in models if m in wide.columns])
        shown = list(wide.columns)
        wide["_min"] = wide.min(axis=1)
        wide = wide.sort_values(["_min"], kind="mergesort").head(top)
        rows = [[slot, value, int(n[(slot, value)]),
                 *[FailRate(1 - float(wide.loc[(slot, value), m])) for m in shown]]
                for slot, value in wide.index]
        header = ["slot", "value", "n", *shown]
        sec.blocks += [Heading(str(test)), Table.of(header, rows, shade=range(3, len(header)))]
    return sec
