"""How far to trust the hard subset, wired in: `synthcheck evaluate` measures the hard-subset
rule's precision on the held-out scores it computes and records it in eval.json; `discover`'s
summary and the report show it, with a warning when the reference is the weaker model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from synthcheck import load_run_config
from synthcheck._cmd_discover import format_summary
from synthcheck.cli import main

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_report import Page  # noqa: E402

# 20 held-out examples; each model's p(positive) per text. Rows 0-4 are where the models
# disagree most (task 0.9 vs reference 0.1: every metric ranks them first); rows 5-19 agree
# (p 0.8 vs 0.75 on the models' shared top label). The top 25% of 20 is rows 0-4.
P_TASK = [0.9] * 5 + [0.8] * 11 + [0.2] * 4
P_REF = [0.1] * 5 + [0.75] * 11 + [0.25] * 4
# Rows 5-19: both models right on 12 and wrong on 3 (rows 13, 14, 15: positive said, gold
# negative).
TAIL = ["positive"] * 8 + ["negative"] * 3 + ["negative"] * 4
# A stronger reference: the task model is wrong on rows 0-2 of the hard five (3/5 = 0.6
# precision), task accuracy 14/20, reference 15/20, majority baseline 10/20. A weaker one:
# wrong on rows 0-1 only (task 15/20, reference 14/20, majority 11/20).
STRONG = ["negative"] * 3 + ["positive"] * 2 + TAIL
WEAK = ["negative"] * 2 + ["positive"] * 3 + TAIL
TEXTS = [f"held out sentence number {i}" for i in range(20)]
Z = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    """The closed-form 95% Wilson interval."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * (p * (1 - p) / n + Z * Z / (4 * n * n)) ** 0.5 / (1 + Z * Z / n)
    return centre - half, centre + half


class PlantedReference:
    """Stands in for the few-shot reference: the planted p(positive) of each held-out text."""

    labels = ["negative", "positive"]

    def predict_proba(self, texts: list[str]) -> list[dict[str, float]]:
        return [{"negative": 1 - P_REF[TEXTS.index(t)], "positive": P_REF[TEXTS.index(t)]}
                for t in texts]

    def raw_logprobs(self, texts: list[str]) -> np.ndarray:
        """The raw label log-probs `evaluate --run` stores (calibration ``none`` renormalises
        them back to the planted probabilities; other texts, e.g. the content-free inputs,
        get 0.5)."""
        p = [P_REF[TEXTS.index(t)] if t in TEXTS else 0.5 for t in texts]
        return np.log(np.array([[1 - x, x] for x in p], dtype=np.float64).reshape(-1, 2))


def make_run(tmp_path: Path, golds: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config whose task model and reference give the planted probabilities on a labeled
    held-out file with ``golds``; returns the config's path."""
    from discovery._reference import FewShotReference

    (tmp_path / "planted_model.py").write_text(
        f"TEXTS = {TEXTS!r}\nP = {P_TASK!r}\n\n"
        "def predict(texts):\n"
        "    return [{'negative': 1 - P[TEXTS.index(t)], 'positive': P[TEXTS.index(t)]}"
        " for t in texts]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(FewShotReference, "from_config",
                        classmethod(lambda cls, *a, **k: PlantedReference()))
    held = tmp_path / "held.jsonl"
    held.write_text("".join(json.dumps({"text": t, "label": g}) + "\n"
                            for t, g in zip(TEXTS, golds, strict=True)))
    (tmp_path / "docs.txt").write_text("A first document for the corpus.\n")
    cfg = {"name": "planted", "corpus": {"source": str(tmp_path / "docs.txt")},
           "generator": {"model": "hf:unused", "n": 4},
           "task_models": [{"name": "planted", "spec": "python:planted_model:predict"}],
           "reference": {"model": "hf:unused", "calibration": "none"},
           "ranking": {"top_fraction": 0.25},
           "evaluation": {"data": str(held), "size": None}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def evaluate(tmp_path: Path, golds: list[str], monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, str, dict[str, Any]]:
    """`synthcheck evaluate --run` on the planted setting: (config, run, stdout, eval.json)."""
    cfg_path = make_run(tmp_path, golds, monkeypatch)
    run = tmp_path / "run"
    run.mkdir()
    assert main(["evaluate", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    return cfg_path, run, capsys.readouterr().out, json.loads((run / "eval.json").read_text())


def report(run: Path) -> tuple[str, str]:
    """`synthcheck report --run`: the trust section's text in report.html, and summary.md."""
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    return page.sections["trust"], (run / "summary.md").read_text(encoding="utf-8")


def test_eval_json_summary_and_report_with_a_stronger_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg_path, run, out, ev = evaluate(tmp_path, STRONG, monkeypatch, capsys)
    low, high = wilson(3, 5)
    assert low == pytest.approx(0.2307, abs=1e-3) and high == pytest.approx(0.8824, abs=1e-3)
    p = ev["hard_subset_precision"]
    assert p == {"estimate": pytest.approx(0.6), "low": pytest.approx(low),
                 "high": pytest.approx(high), "n": 5, "metric": "abs_top"}
    by = ev["hard_subset_precision_by_metric"]
    assert sorted(by) == sorted(["abs_top", "signed", "kl", "js", "tv", "p_wrong"])
    assert all(q["n"] == 5 and q["estimate"] == pytest.approx(0.6) for q in by.values())
    assert ev["majority_baseline_accuracy"] == pytest.approx(0.5)
    assert ev["reports"]["planted"]["accuracy"] == pytest.approx(0.70)
    assert ev["reports"]["reference"]["accuracy"] == pytest.approx(0.75)
    assert ev["warnings"] == [] and ev["ranked_task_model"] == "planted"
    assert ev["reliability"]["planted"]["hard_subset_precision"] == p
    assert ev["hard_subset_rule"] == {"metric": "abs_top", "top_k": None, "top_fraction": 0.25,
                                      "require_disagreement": False, "held_out": 20,
                                      "corpus_size": None, "min_margin": 0.0}
    line = "hard-subset precision (abs_top, top 25%): 0.60 [0.23, 0.88] on 5 held-out " \
           "examples (of 20)"
    assert line in out.splitlines() and "warning" not in out
    assert "    p_wrong  0.60 [0.23, 0.88]   n=5" in out.splitlines()

    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    assert summary.index(line) > summary.index("  majority     acc 0.500  (always the most "
                                               "frequent label)")
    assert not any(s.startswith("warning:") for s in summary)

    trust, md = report(run)
    assert "Hard-subset precision (abs_top, top 25%): 0.60, 95% Wilson interval [0.23, 0.88], " \
           "on 5 held-out examples" in trust
    assert "For comparison, 'planted' is wrong on 30.0% of all held-out examples." in trust
    assert "Warning" not in trust and "Warning" not in md
    for row in ("| abs_top (configured) | 0.600 | 0.231 | 0.882 | 5 |",
                "| p_wrong | 0.600 | 0.231 | 0.882 | 5 |",
                "| task model planted | 0.700 |", "| reference | 0.750 |",
                "| majority-class baseline | 0.500 |"):
        assert row in md, row
    assert md.index("## How far to trust the hard subset") < md.index("## Provenance")


def test_a_weaker_reference_warns_in_eval_json_summary_and_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg_path, run, out, ev = evaluate(tmp_path, WEAK, monkeypatch, capsys)
    low, high = wilson(2, 5)
    assert ev["hard_subset_precision"]["estimate"] == pytest.approx(0.4)
    assert ev["hard_subset_precision"]["high"] == pytest.approx(high)
    assert ev["reports"]["planted"]["accuracy"] == pytest.approx(0.75)
    assert ev["reports"]["reference"]["accuracy"] == pytest.approx(0.70)
    assert ev["majority_baseline_accuracy"] == pytest.approx(0.55)
    (warning,) = ev["warnings"]  # the precision's upper bound (0.77) is above 0.5
    assert warning.startswith("the reference is less accurate than the task model 'planted' "
                              "on held-out data (0.700 < 0.750)")
    assert "stronger reference" in warning
    assert f"warning: {warning}" in out.splitlines()

    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    at = summary.index("hard-subset precision (abs_top, top 25%): 0.40 "
                       f"[{low:.2f}, {high:.2f}] on 5 held-out examples (of 20)")
    # Warnings come first (right under the title), each once, then what to do.
    assert summary[1] == f"warning: {warning}" and summary.count(f"warning: {warning}") == 1
    assert summary[2] == (
        "warning: no finding below is confirmed, since the reference is less accurate than "
        "the task model 'planted' on held-out data (0.700 < 0.750). What to do: make the "
        "reference stronger before reading the findings (a stronger reference.model, more or "
        "better reference.shots, another reference.calibration), check it with `synthcheck "
        "evaluate`, then rerun `discover`")
    assert at > 2

    trust, md = report(run)
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "<p class=warn role=alert><strong>Warning:</strong> the reference is less accurate" \
        in html
    page = Page(html)
    assert list(page.sections)[0] == "warnings"
    assert "Warning: the reference is less accurate than the task model" in \
        page.sections["warnings"]
    assert "Warning" not in trust
    assert "> **Warning:** the reference is less accurate than the task model 'planted'" in md
    assert md.index("## Warnings") < md.index("## How far to trust the hard subset")
    assert "> **Warning:** no finding in this report is confirmed, since the reference is " \
           "less accurate than the task model 'planted' on held-out data" in md


FOCUS_ROW = {"rank": 1, "ngram": "thank you for", "failures": 29, "n": 32, "rate": 0.906,
             "rate_lo": 0.758, "rate_hi": 0.968, "base_rate": 0.39, "base_n": 400,
             "q_value": 0.00017, "confirmed": True, "rate_ratio": 2.3, "corpus_count": 21,
             "examples": []}


def plant_focus(run: Path) -> None:
    """A complete focus stage with one candidate that passes its test."""
    from synth.core import RunDir

    (run / "focus.jsonl").write_text(json.dumps(FOCUS_ROW) + "\n")
    rd = RunDir(run)
    rd.open_stage({"name": "planted"}, "focus", "planted")
    rd.complete("focus", "planted", prompts=48, seconds=1.0)


@pytest.mark.parametrize("golds, trusted", [(STRONG, True), (WEAK, False)])
def test_focus_findings_are_unconfirmed_when_the_reference_is_weaker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        golds: list[str], trusted: bool) -> None:
    cfg_path, run, _, ev = evaluate(tmp_path, golds, monkeypatch, capsys)
    plant_focus(run)
    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    at = next(i for i, s in enumerate(summary) if s.startswith("focus rounds:"))
    if trusted:
        assert summary[at] == ("focus rounds: 1 candidates, 32 new sentences from 48 prompts "
                               "in 1.0s; 1 confirmed failure pattern(s) (failure: top labels "
                               "differ; base rate 0.39):")
        assert summary[at + 1].endswith("q=0.00017")
    else:
        assert summary[at] == (
            "focus rounds: 1 candidates, 32 new sentences from 48 prompts in 1.0s; 0 "
            "confirmed: 1 pattern(s) pass the test but stay unconfirmed because the "
            "reference is less accurate than the task model 'planted' on held-out data "
            "(0.700 < 0.750) (failure: top labels differ; base rate 0.39):")
        assert summary[at + 1].endswith("q=0.00017  (unconfirmed)")
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    md = (run / "summary.md").read_text(encoding="utf-8")
    if trusted:
        assert "## Findings: confirmed failure patterns" in md
        assert "| 1 | thank you for | yes |" in md
        assert "warnings" not in page.sections
    else:
        assert "## Findings: unconfirmed failure patterns (the reference cannot be trusted)" \
            in md
        assert "| 1 | thank you for | unconfirmed |" in md
        assert "Unconfirmed: the reference is less accurate than the task model 'planted'" \
            in page.sections["findings"]
        assert list(page.sections)[0] == "warnings"
    # `synthcheck focus` reads the same verdict from the run's eval.json.
    from synthcheck._cmd_stage2 import _stored_distrust

    assert _stored_distrust(run) == ([] if trusted else [
        "the reference is less accurate than the task model 'planted' on held-out data "
        "(0.700 < 0.750)"])


def test_top_k_is_scaled_by_the_run_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # ranking.top_k=10 on a 40-sentence corpus keeps a quarter: 5 of the 20 held-out examples.
    cfg_path = make_run(tmp_path, STRONG, monkeypatch)
    run = tmp_path / "run"
    (run / "corpus").mkdir(parents=True)
    (run / "corpus" / "stats.json").write_text(json.dumps({"kept": 40}))
    assert main(["evaluate", "-c", str(cfg_path), "--run", str(run), "-q",
                 "-P", "ranking.top_k=10"]) == 0
    ev = json.loads((run / "eval.json").read_text())
    assert ev["hard_subset_rule"]["corpus_size"] == 40 and ev["hard_subset_rule"]["top_k"] == 10
    assert ev["hard_subset_precision"]["n"] == 5
    assert ev["hard_subset_precision"]["estimate"] == pytest.approx(0.6)
    assert "hard-subset precision (abs_top, top 10): 0.60 [0.23, 0.88] on 5 held-out " \
           "examples (of 20)" in capsys.readouterr().out
