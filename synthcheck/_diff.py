"""Comparing two verify results: per-test fail-rate changes with Fisher's exact test.

Either two models (one result holding both, or two results of one model each) or two runs of
the same model(s) (two results with the same model names: each model is paired with itself).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from formalize import VERIFY_SUMMARY
from synth.core import ConfigError, DataError


@dataclass(frozen=True)
class TestChange:
    """One test's fail rate under A and under B, with Fisher's exact test of the change.

    ``p_value`` is two-sided; ``q_value`` is Benjamini-Hochberg adjusted over every row of
    the comparison. A regression is a higher fail rate under B with ``q_value < alpha``.
    """

    __test__ = False  # not a pytest test class

    test: str
    capability: str
    model_a: str
    model_b: str
    n_a: int
    failures_a: int
    n_b: int
    failures_b: int
    p_value: float
    q_value: float

    @property
    def rate_a(self) -> float:
        """Fail rate under A."""
        return self.failures_a / self.n_a if self.n_a else math.nan

    @property
    def rate_b(self) -> float:
        """Fail rate under B."""
        return self.failures_b / self.n_b if self.n_b else math.nan

    @property
    def delta(self) -> float:
        """B's fail rate minus A's (positive: B fails more)."""
        return self.rate_b - self.rate_a

    def status(self, alpha: float) -> str:
        """``regression``, ``improvement`` or ``unchanged`` (not significant at ``alpha``)."""
        if self.q_value < alpha and self.delta > 0:
            return "regression"
        if self.q_value < alpha and self.delta < 0:
            return "improvement"
        return "unchanged"


def read_verify(path: str | Path, suite: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Find and read a verify result's ``summary.json``: ``path`` is the file, a
    ``verify/<suite>/`` folder, or a run directory (with ``suite`` when it holds several).

    Raises:
        DataError: nothing verified there, several suites and no ``suite``, or a bad file.
    """
    from formalize import read_summary_json

    p = Path(path)
    if not p.exists():
        raise DataError("no such file or directory", where=str(p),
                        fix="give a verify result: a run directory, its verify/<suite>/ "
                            "folder or summary.json")
    if p.is_dir() and not (p / VERIFY_SUMMARY.name).is_file():
        found = [d.parent for d in VERIFY_SUMMARY.glob(p)]
        if suite is not None:
            found = [d for d in found if d.name == suite]
        if not found:
            raise DataError("no verify result here" + (f" for suite {suite!r}" if suite else ""),
                            where=str(p), fix="give a run directory that `synthcheck verify "
                                              "--run` wrote, its verify/<suite>/ folder, or "
                                              "its summary.json")
        if len(found) > 1:
            raise DataError(f"several verified suites ({', '.join(d.name for d in found)})",
                            where=str(p), fix="pick one with --suite NAME")
        p = found[0]
    if p.is_dir():
        p = p / VERIFY_SUMMARY.name
    if not p.is_file():
        raise DataError("no summary.json", where=str(p),
                        fix="give a verify result (run directory, verify/<suite>/ or summary.json)")
    return p, read_summary_json(p)


def _counts(data: Mapping[str, Any]) -> dict[tuple[str, str], tuple[int, int]]:
    return {(r["key"], r["model"]): (int(r["n"]), int(r["failures"]))
            for r in data.get("summary") or [] if r.get("level") == "test" and r.get("n")}


def pair_models(a: Mapping[str, Any], b: Mapping[str, Any], model_a: str | None,
                model_b: str | None, *, same: bool) -> list[tuple[str, str]]:
    """The (model under A, model under B) pairs to compare.

    Given ``model_a``/``model_b``: that pair. One result (``same``): its two models. Two
    results: models with the same name paired with themselves (two runs), else their one
    model each (two models).

    Raises:
        ConfigError: the pairing is ambiguous or names a model the result lacks.
    """
    ma, mb = list(a.get("models") or []), list(b.get("models") or [])
    fix = "name the two models with --model-a and --model-b"
    for given, have, side in ((model_a, ma, "A"), (model_b, mb, "B")):
        if given is not None and given not in have:
            raise ConfigError(f"result {side} has no model {given!r} (it has: "
                              f"{', '.join(have) or 'none'})", where=f"--model-{side.lower()}",
                              fix=fix)
    if model_a or model_b:
        if same and not (model_a and model_b):
            raise ConfigError("one result: name both models", where="--model-a/--model-b",
                              fix=fix)
        pa = model_a or (ma[0] if len(ma) == 1 else None)
        pb = model_b or (mb[0] if len(mb) == 1 else None)
        if pa is None or pb is None:
            raise ConfigError("which models to compare is ambiguous", where="--model-a/--model-b",
                              fix=fix)
        return [(pa, pb)]
    if same:
        if len(ma) != 2:
            raise ConfigError(f"one result with {len(ma)} model(s): nothing to pair",
                              where="A B", fix=f"give two results, or {fix}")
        return [(ma[0], ma[1])]
    common = [m for m in ma if m in mb]
    if common:
        return [(m, m) for m in common]
    if len(ma) == 1 and len(mb) == 1:
        return [(ma[0], mb[0])]
    raise ConfigError("the two results share no model and hold several each", where="A B",
                      fix=fix)


def compare(a: Mapping[str, Any], b: Mapping[str, Any], pairs: Sequence[tuple[str, str]]
            ) -> list[TestChange]:
    """One :class:`TestChange` per test both results scored, per model pair; regressions
    (most significant first), then the rest by p-value."""
    from scipy.stats import false_discovery_control, fisher_exact

    from formalize import summary_tests

    ca, cb = _counts(a), _counts(b)
    tests_a, tests_b = summary_tests(a), summary_tests(b)
    raw = []
    for ma, mb in pairs:
        for test, info in tests_a.items():
            if test not in tests_b or (test, ma) not in ca or (test, mb) not in cb:
                continue
            (na, fa), (nb, fb) = ca[(test, ma)], cb[(test, mb)]
            _, p = fisher_exact([[fa, na - fa], [fb, nb - fb]])
            raw.append((test, info.get("capability", ""), ma, mb, na, fa, nb, fb, float(p)))
    if not raw:
        return []
    q = false_discovery_control([r[-1] for r in raw], method="bh")
    changes = [TestChange(*r, q_value=float(qv)) for r, qv in zip(raw, q, strict=True)]
    return sorted(changes, key=lambda c: (not c.delta > 0, c.q_value, -c.delta, c.test))


def format_changes(changes: Sequence[TestChange], alpha: float) -> str:
    """A plain-text table: status, test, models, fail rates, change, p and q."""
    if not changes:
        return "no test scored in both results"
    width = max([len(c.test) for c in changes] + [4])
    head = f"{'status':11}  {'test':{width}}  {'A':>6}  {'B':>6}  {'change':>7}  {'p':>7}  {'q':>7}"
    pairs = list(dict.fromkeys((c.model_a, c.model_b) for c in changes))
    lines = [f"A = {a}, B = {b}" + (" (two runs)" if a == b else "") for a, b in pairs]
    lines.append(head + ("  models" if len(pairs) > 1 else ""))
    for c in sorted(changes, key=lambda c: ({"regression": 0, "improvement": 2}.get(
            c.status(alpha), 1), c.q_value)):
        lines.append(f"{c.status(alpha):11}  {c.test:{width}}  {100 * c.rate_a:5.1f}%  "
                     f"{100 * c.rate_b:5.1f}%  {100 * c.delta:+6.1f}%  {c.p_value:7.3g}  "
                     f"{c.q_value:7.3g}" + (f"  {c.model_a}" if len(pairs) > 1 else ""))
    return "\n".join(lines)
