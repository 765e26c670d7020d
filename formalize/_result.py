"""The verify result: tables (pandas DataFrames), the side-by-side text table, output files."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formalize._artifacts import (
    VERIFY_EXAMPLES,
    VERIFY_FILLS,
    VERIFY_GROUPS,
    VERIFY_SUMMARY,
    VERIFY_SUMMARY_CSV,
)
from synth.core import provenance, write_json_atomic, write_text_atomic

if TYPE_CHECKING:
    import pandas as pd

    from formalize._aggregate import Aggregates
    from formalize._suite import Suite


def _rate(failures: int, n: int) -> float:
    return failures / n if n else math.nan


@dataclass
class VerifyResult:
    """What a :class:`TemplateRunner` run measured.

    Attributes:
        summary: one row per (level, key, model) with n, failures and fail_rate; ``level`` is
            ``test``, ``capability`` or ``label`` (gold label of MFT/contrast cases).
        fills: failure counts per (test, slot, source lexicon, value, model).
        groups: test groups: mean probability per (test, model, group, label) and the
            deviation c_i = p_i - mean of the other groups' p_j.
        examples: up to ``max_examples`` failures per test and model.
        recall: the held-out per-class recall given to the runner (model, label, recall).
        cases: one row per case and model (None when ``keep_cases=False``).
    """

    suite: str
    labels: list[str]
    models: list[str]
    tests: dict[str, dict[str, str]]
    summary: pd.DataFrame
    fills: pd.DataFrame
    groups: pd.DataFrame
    examples: pd.DataFrame
    recall: pd.DataFrame
    cases: pd.DataFrame | None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, suite: Suite, models: list[str], agg: Aggregates,
              rows: list[dict[str, Any]] | None, recall: Mapping[str, Mapping[str, float]],
              *, sample: int | None, seed: int, upper_bound: int,
              sampled: Mapping[str, Any] | None = None) -> VerifyResult:
        import pandas as pd

        summary_rows = []
        for level, table in (("test", agg.by_test), ("capability", agg.by_capability),
                             ("label", agg.by_label)):
            for (key, model), c in table.items():
                summary_rows.append({"level": level, "key": key, "model": model, "n": c.n,
                                     "failures": c.failures,
                                     "fail_rate": _rate(c.failures, c.n)})
        summary = pd.DataFrame(summary_rows,
                               columns=["level", "key", "model", "n", "failures", "fail_rate"])
        fills = pd.DataFrame(
            [{"test": t, "slot": s, "lexicon": lx, "value": v, "model": m, "n": c.n,
              "failures": c.failures, "accuracy": 1 - _rate(c.failures, c.n)}
             for (t, s, lx, v, m), c in agg.by_fill.items()],
            columns=["test", "slot", "lexicon", "value", "model", "n", "failures", "accuracy"])
        groups = pd.DataFrame(group_deviations(agg.group_sum, agg.group_n, suite.labels),
                              columns=["test", "model", "group", "label", "n", "mean_prob",
                                       "deviation"])
        examples = pd.DataFrame(
            [e for kept in agg.examples.values() for e in kept],
            columns=["test", "model", "case_id", "text", "orig_text", "label", "pred",
                     "orig_pred", "probs", "orig_probs"])
        recall_df = pd.DataFrame(
            [{"model": m, "label": lab, "recall": float(r)}
             for m, per in recall.items() for lab, r in per.items()],
            columns=["model", "label", "recall"])
        meta: dict[str, Any] = {"suite": suite.name, "source": suite.source, "labels": suite.labels,
                "models": models, "sample": sample, "seed": seed, "cases": agg.n_cases,
                "texts_scored_per_model": agg.n_texts_scored, "upper_bound": upper_bound}
        if sampled:  # tests cut to verify's per-test cap: {test: {total, sampled}}
            meta["sampled"] = {name: {"total": p.total, "sampled": p.sampled}
                               for name, p in sampled.items()}
        return cls(suite=suite.name, labels=suite.labels, models=models, tests=dict(agg.tests),
                   summary=summary, fills=fills, groups=groups, examples=examples,
                   recall=recall_df, cases=pd.DataFrame(rows) if rows is not None else None,
                   meta=meta)

    def side_by_side(self) -> pd.DataFrame:
        """Return the summary with one column group per model (``<model> n``,
        ``<model> failures``, ``<model> fail_rate``), rows in suite order."""
        import pandas as pd

        if self.summary.empty:
            return pd.DataFrame(columns=["level", "key", "capability", "type"])
        wide = self.summary.pivot_table(index=["level", "key"], columns="model",
                                        values=["n", "failures", "fail_rate"], aggfunc="first")
        wide.columns = [f"{model} {stat}" for stat, model in wide.columns]
        ordered = [f"{m} {s}" for m in self.models for s in ("n", "failures", "fail_rate")]
        wide = wide[[c for c in ordered if c in wide.columns]].reset_index()
        wide.insert(2, "capability", [self.tests.get(k, {}).get("capability", "")
                                      if lv == "test" else "" for lv, k in
                                      zip(wide["level"], wide["key"], strict=True)])
        wide.insert(3, "type", [self.tests.get(k, {}).get("type", "") if lv == "test" else ""
                                for lv, k in zip(wide["level"], wide["key"], strict=True)])
        order = {"test": 0, "capability": 1, "label": 2}
        test_pos = {name: i for i, name in enumerate(self.tests)}
        wide["_o1"] = wide["level"].map(order)
        wide["_o2"] = [test_pos.get(k, 0) if lv == "test" else 0
                       for lv, k in zip(wide["level"], wide["key"], strict=True)]
        wide = wide.sort_values(["_o1", "_o2", "key"]).drop(columns=["_o1", "_o2"])
        return wide.reset_index(drop=True)

    def format_table(self) -> str:
        """Return a readable side-by-side text table: fail rate per test, capability and label
        for every model, then test-group deviations and held-out recall."""
        return format_side_by_side(self)

    def write(self, out_dir: str | Path, config_hash: str) -> list[Path]:
        """Write summary.csv, fills.csv, groups.csv, examples.jsonl and summary.json (with
        provenance) into ``out_dir`` atomically; return the paths."""
        from synth.core import write_jsonl

        out = Path(out_dir)
        paths = [out / VERIFY_SUMMARY_CSV.name, out / VERIFY_FILLS.name, out / VERIFY_GROUPS.name]
        write_text_atomic(paths[0], self.side_by_side().to_csv(index=False))
        write_text_atomic(paths[1], self.fills.to_csv(index=False))
        write_text_atomic(paths[2], self.groups.to_csv(index=False))
        ex_path = out / VERIFY_EXAMPLES.name
        write_jsonl(ex_path, _records(self.examples))
        js = out / VERIFY_SUMMARY.name
        write_json_atomic(js, {
            **provenance(config_hash), **self.meta,
            "summary": _records(self.summary), "groups": _records(self.groups),
            "recall": _records(self.recall), "tests": self.tests,
            # JSON objects are written with sorted keys: the suite's order, explicitly.
            "test_order": list(self.tests),
        })
        return [*paths, ex_path, js]

    @classmethod
    def from_summary_json(cls, data: str | Path | Mapping[str, Any]) -> VerifyResult:
        """Rebuild a result from a ``summary.json`` (a path, or its parsed object) as
        :meth:`write` wrote it: tests in suite order, summary, groups and recall (no fills,
        examples or cases, which live in other files), so :meth:`format_table` prints the
        same table as the run that wrote it.

        Raises:
            DataError: the file is not valid JSON or not an object.
        """
        import pandas as pd

        if not isinstance(data, Mapping):
            from formalize._run_outputs import read_summary_json

            data = read_summary_json(Path(data))

        def frame(key: str, columns: list[str]) -> pd.DataFrame:
            return pd.DataFrame(data.get(key) or [], columns=columns)

        return cls(
            suite=str(data.get("suite")), labels=list(data.get("labels") or []),
            models=list(data.get("models") or []), tests=summary_tests(data),
            summary=frame("summary", ["level", "key", "model", "n", "failures", "fail_rate"]),
            fills=frame("fills", []),
            groups=frame("groups", ["test", "model", "group", "label", "n", "mean_prob",
                                    "deviation"]),
            examples=frame("examples", []), recall=frame("recall", ["model", "label", "recall"]),
            cases=None, meta={"cases": data.get("cases", 0)})


def summary_tests(data: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """A ``summary.json``'s tests (name -> capability and type) in suite order: that of its
    ``test_order`` list (the ``tests`` object itself is stored with sorted keys)."""
    tests: dict[str, dict[str, str]] = dict(data.get("tests") or {})
    order = [t for t in data.get("test_order") or [] if t in tests]
    return {t: tests[t] for t in dict.fromkeys([*order, *tests])}


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in df.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in rec.items()})
    return out


def group_deviations(sums: Mapping[tuple[str, str, str, str], float],
                     counts: Mapping[tuple[str, str, str], int],
                     labels: Sequence[str]) -> list[dict[str, Any]]:
    """Per (test, model, group, label): the mean probability p_i and c_i = p_i - mean_{j!=i} p_j."""
    means: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for (test, model, group), n in counts.items():
        per = means.setdefault((test, model), {})
        per[group] = {lab: sums[(test, model, group, lab)] / n for lab in labels}
    rows = []
    for (test, model), per in means.items():
        groups = list(per)
        for group in groups:
            others = [g for g in groups if g != group]
            for lab in labels:
                p = per[group][lab]
                rest = sum(per[g][lab] for g in others) / len(others) if others else math.nan
                rows.append({"test": test, "model": model, "group": group, "label": lab,
                             "n": counts[(test, model, group)], "mean_prob": p,
                             "deviation": p - rest})
    return rows


def _scored(test_type: str) -> bool:
    """Whether tests of ``test_type`` pass or fail (a type no longer registered: yes)."""
    from formalize.types import TEST_TYPES

    return test_type not in TEST_TYPES or TEST_TYPES.get(test_type).scored


def _pct(x: float) -> str:
    return "    -" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:5.1f}%"


def format_side_by_side(result: VerifyResult) -> str:
    """Format a :class:`VerifyResult` as a plain-text table (fail rates, models side by side)."""
    models = result.models
    short = {m: f"M{i + 1}" for i, m in enumerate(models)}
    s = result.summary
    lookup = {(r.level, r.key, r.model): (r.n, r.fail_rate) for r in s.itertuples()}
    width = max([len(k) for k in result.tests] + [28])
    head = f"{'':{width}}  {'type':8} {'n':>6}  " + "  ".join(f"{short[m]:>6}" for m in models)
    lines = [f"suite {result.suite}: {result.meta.get('cases', 0):,} cases; fail rate per model"]
    lines += [f"  {short[m]} = {m}" for m in models]
    lines.append("")
    lines.append(head)

    def row(level: str, key: str, kind: str) -> str:
        n = next((lookup[(level, key, m)][0] for m in models if (level, key, m) in lookup), 0)
        cells = "  ".join(f"{_pct(lookup.get((level, key, m), (0, math.nan))[1]):>6}"
                          for m in models)
        return f"{key[:width]:{width}}  {kind:8} {n:>6}  {cells}"

    scored = {name: info for name, info in result.tests.items() if _scored(info["type"])}
    # One heading per capability (in order of first appearance), its tests in suite order
    # under it, however the suite interleaves them.
    caps = list(dict.fromkeys(i["capability"] for i in scored.values()))
    for cap in caps:
        lines.append(f"[{cap}]")
        lines += [row("test", name, info["type"]) for name, info in scored.items()
                  if info["capability"] == cap]
    if caps:
        lines += ["", "per capability"]
        lines += [row("capability", c, "") for c in caps]
    if not s[s.level == "label"].empty:
        lines += ["", "per gold label (MFT and contrast cases)"]
        lines += [row("label", lab, "") for lab in result.labels
                  if any((("label", lab, m) in lookup) for m in models)]
    if not result.recall.empty:
        lines += ["", "held-out recall per class"]
        rec = {(r.model, r.label): r.recall for r in result.recall.itertuples()}
        for lab in result.labels:
            cells = "  ".join(f"{_pct(rec.get((m, lab), math.nan)):>6}" for m in models)
            lines.append(f"{('recall ' + lab)[:width]:{width}}  {'':8} {'':>6}  {cells}")
    if not result.groups.empty:
        lines += ["", "test groups: mean p(label) per group and deviation c_i (vs. other groups)"]
        for (test, model), df in result.groups.groupby(["test", "model"], sort=False):
            lines.append(f"{test} [{short[model]}]")
            for r in df.itertuples():
                lines.append(f"  {r.group:24} {r.label:14} p={r.mean_prob:.3f}  "
                             f"c={r.deviation:+.3f}  (n={r.n})")
    return "\n".join(lines)
