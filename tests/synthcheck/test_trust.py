"""How far to trust the hard subset, wired in: `synthcheck evaluate` measures the hard-subset
rule's precision on the held-out scores it computes, beside the task model's own error rate,
and records both and the trust decision in eval.json; `discover`'s summary and the report
show the decision, its reasons and what to do next: trust rests on the precision, not on
the reference's accuracy alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from synthcheck import load_run_config
from synthcheck._cmd_discover import format_summary
from synthcheck.cli import main

HERE = Path(__file__).resolve().parent
from tests.synthcheck.test_report import Page  # noqa: E402

# 40 held-out examples; each model's p(positive) per text. Rows 0-9 are where the models
# disagree most (task 0.9 vs reference 0.1: every metric ranks them first, the top 25% of
# 40); rows 10-19 disagree mildly (task 0.3 vs reference 0.65); rows 20-39 agree (0.8 vs
# 0.75, then 0.2 vs 0.25). On a disagreement exactly one model is right.
P_TASK = [0.9] * 10 + [0.3] * 10 + [0.8] * 10 + [0.2] * 10
P_REF = [0.1] * 10 + [0.65] * 10 + [0.75] * 10 + [0.25] * 10
AGREE = ["positive"] * 10 + ["negative"] * 10  # both right
# PRECISE: the reference is the WEAKER model (accuracy 0.70 against the task model's 0.80)
# yet the hard subset is the task model's errors: it is wrong on 8 of the hard 10 (0.80)
# and on 8 of 40 overall (0.20), none outside: trusted.
PRECISE = ["negative"] * 8 + ["positive"] * 2 + ["negative"] * 10 + AGREE
# IMPRECISE: the reference is the STRONGER model (0.80 against 0.70) yet the task model is
# wrong on only 2 of the hard 10 (0.20) against 12 of 40 overall (0.30): not trusted.
IMPRECISE = ["negative"] * 2 + ["positive"] * 8 + ["positive"] * 10 + AGREE
TEXTS = [f"held out sentence number {i}" for i in range(40)]
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
           "ranking": {"top_fraction": 0.25, "min_reference_margin": 0.0},
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


def test_a_weaker_but_precise_reference_is_trusted_by_precision_not_accuracy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg_path, run, out, ev = evaluate(tmp_path, PRECISE, monkeypatch, capsys)
    low, high = wilson(8, 10)
    p = ev["hard_subset_precision"]
    assert p == {"estimate": pytest.approx(0.8), "low": pytest.approx(low),
                 "high": pytest.approx(high), "n": 10, "count": 8, "abstained": 0,
                 "metric": "abs_top"}
    e_low, e_high = wilson(8, 40)
    assert ev["task_error_rate"] == {"estimate": pytest.approx(0.2), "low": pytest.approx(e_low),
                                     "high": pytest.approx(e_high), "n": 40, "count": 8}
    assert ev["reports"]["planted"]["accuracy"] == pytest.approx(0.80)
    assert ev["reports"]["reference"]["accuracy"] == pytest.approx(0.70)
    assert ev["warnings"] == [] and ev["ranked_task_model"] == "planted"
    assert ev["trust"]["decision"] == "trusted"
    assert ev["hard_subset_rule"]["min_margin"] == 0.0 and ev["hard_subset_rule"]["judge"] == \
        "task model's top label differs from the reference's"
    line = "hard-subset precision (abs_top, top 25%): 0.80 [0.49, 0.94] on 10 held-out " \
           "examples (of 40)"
    assert line in out.splitlines() and "warning" not in out
    assert "task model's own error rate: 0.20 [0.10, 0.35] on 40 held-out examples (what a " \
           "random sentence would give)" in out.splitlines()

    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    assert not any(s.startswith("warning:") for s in summary)
    at = summary.index("trust: findings trusted (the hard subset's precision against the "
                       "task model's own error rate)")
    assert summary[at + 1].startswith(
        "  - held-out: hard-subset precision 0.80 [0.49, 0.94], n=10 is significantly above "
        "the task model's own error rate 0.20 [0.10, 0.35], n=40 (one-sided Fisher p=")
    assert summary[at + 2].startswith("  - no blind audit of this corpus")
    assert summary[at + 3].startswith("  next: read the confirmed findings first")

    trust, md = report(run)
    assert trust.startswith("How far to trust the hard subset\nFindings are trusted: the "
                            "decision rests on the hard subset's "
                            "precision against the task model's own error rate")
    assert "Hard-subset precision (abs_top, top 25%): 0.80, 95% Wilson interval [0.49, 0.94], " \
           "on 10 held-out examples" in trust
    assert "Warning" not in trust and "Warning" not in md


def test_an_accurate_but_imprecise_reference_is_not_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg_path, run, out, ev = evaluate(tmp_path, IMPRECISE, monkeypatch, capsys)
    assert ev["hard_subset_precision"]["estimate"] == pytest.approx(0.2)
    assert ev["task_error_rate"]["estimate"] == pytest.approx(0.3)
    assert ev["reports"]["planted"]["accuracy"] == pytest.approx(0.70)
    assert ev["reports"]["reference"]["accuracy"] == pytest.approx(0.80)
    assert ev["trust"]["decision"] == "untrusted"
    (reason,) = ev["trust"]["measures"]
    assert not reason["passed"] and reason["p_value"] > 0.5

    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    why = ("held-out: hard-subset precision 0.20 [0.06, 0.51], n=10 is not significantly "
           "above the task model's own error rate 0.30 [0.18, 0.45], n=40 (one-sided Fisher "
           "p=")
    # The warning comes first (right under the title), then the decision and what to do.
    assert summary[1].startswith(f"warning: no finding below is confirmed, since {why}")
    assert summary[1].endswith("What to do: make the hard subset point at the task model's "
                               "errors before reading the findings (a stronger "
                               "reference.model, more or in-domain reference.shots, an "
                               "abstain answer in reference.abstain, a higher "
                               "ranking.min_reference_margin), check it with `synthcheck "
                               "evaluate`, then rerun `discover`")
    assert summary[2] == ("trust: findings NOT trusted (the hard subset's precision against "
                          "the task model's own error rate)")
    assert summary[3].startswith(f"  - {why}")
    assert summary[5].startswith("  next: do not act on the findings yet")

    trust, md = report(run)
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    assert list(page.sections)[0] == "warnings"
    assert "no finding in this report is confirmed, since held-out: hard-subset precision " \
           "0.20" in page.sections["warnings"]
    assert trust.startswith("How far to trust the hard subset\nFindings are NOT trusted")


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


FINDING_ROW = {"id": "f0001", "rank": 1, "kind": "focus", "name": "cars", "terms": ["cars"],
               "example_ids": [], "n": 24, "failures": 24, "rate": 1.0, "low": 0.86,
               "high": 1.0, "base_rate": 0.64, "score": 0.22, "confirmed": True,
               "reason": "r", "data": "corpus", "status": "confirmed"}


def plant_findings(run: Path) -> None:
    """A complete findings stage with one confirmed focus row."""
    from synth.core import RunDir

    (run / "findings.jsonl").write_text(json.dumps(FINDING_ROW) + "\n")
    rd = RunDir(run)
    rd.open_stage({"name": "planted"}, "findings", "planted")
    rd.complete("findings", "planted", confirmed=1, rule="top labels differ", base_rate=0.64)


@pytest.mark.parametrize("golds, trusted", [(PRECISE, True), (IMPRECISE, False)])
def test_focus_findings_are_unconfirmed_when_the_hard_subset_is_imprecise(
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
        assert summary[at].startswith(
            "focus rounds: 1 candidates, 32 new sentences from 48 prompts in 1.0s; 0 "
            "confirmed: 1 pattern(s) pass the test but stay unconfirmed because held-out: "
            "hard-subset precision 0.20")
        assert summary[at].endswith("(failure: top labels differ; base rate 0.39):")
        assert summary[at + 1].endswith("q=0.00017  (unconfirmed)")
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    md = (run / "summary.md").read_text(encoding="utf-8")
    if trusted:
        assert "## Findings: confirmed failure patterns" in md
        assert "| 1 | thank you for | yes (failure rate) |" in md
        assert "both models; 1 are confirmed: they fail" in md
        assert "warnings" not in page.sections
    else:
        assert "## Findings: unconfirmed failure patterns (the reference cannot be trusted)" \
            in md
        assert "| 1 | thank you for | unconfirmed (failure rate) |" in md
        assert "both models; 1 pass the test (unconfirmed, as said above): they fail" in md
        assert "Unconfirmed: held-out: hard-subset precision 0.20" in page.sections["findings"]
        assert list(page.sections)[0] == "warnings"
    # The findings block takes the same verdict.
    plant_findings(run)
    summary = format_summary(load_run_config(cfg_path), run,
                             {"evaluate": ev["reports"], "evaluation": ev}).splitlines()
    found = next(s for s in summary if s.startswith("findings: 1 ("))
    assert found.startswith("findings: 1 (1 confirmed on new sentences)" if trusted else
                            "findings: 1 (0 confirmed: 1 pass the test on new sentences")
    # `synthcheck focus` reads the same verdict from the run's eval.json.
    from synthcheck._cmd_stage2 import _stored_distrust

    stored = _stored_distrust(run)
    assert stored == [] if trusted else (len(stored) == 1 and stored[0].startswith(
        "held-out: hard-subset precision 0.20"))


def test_top_k_is_scaled_by_the_run_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # ranking.top_k=20 on an 80-sentence corpus keeps a quarter: 10 of the 40 held-out examples.
    cfg_path = make_run(tmp_path, PRECISE, monkeypatch)
    run = tmp_path / "run"
    (run / "corpus").mkdir(parents=True)
    (run / "corpus" / "stats.json").write_text(json.dumps({"kept": 80}))
    assert main(["evaluate", "-c", str(cfg_path), "--run", str(run), "-q",
                 "-P", "ranking.top_k=20"]) == 0
    ev = json.loads((run / "eval.json").read_text())
    assert ev["hard_subset_rule"]["corpus_size"] == 80 and ev["hard_subset_rule"]["top_k"] == 20
    assert ev["hard_subset_precision"]["n"] == 10
    assert ev["hard_subset_precision"]["estimate"] == pytest.approx(0.8)
    assert "hard-subset precision (abs_top, top 20): 0.80 [0.49, 0.94] on 10 held-out " \
           "examples (of 40)" in capsys.readouterr().out


def test_findings_are_not_called_confirmed_when_the_reference_is_not_trusted(
        tmp_path: Path) -> None:
    from synthcheck._summary import findings_lines

    run = tmp_path / "run"
    run.mkdir()
    plant_findings(run)
    trusted = findings_lines(run)
    assert trusted[0].startswith("findings: 1 (1 confirmed on new sentences); ")
    assert trusted[1].endswith("vs 0.64  confirmed")
    why = ["held-out: hard-subset precision 0.27 is not significantly above ..."]
    untrusted = findings_lines(run, distrust=why)
    assert untrusted[0].startswith(
        "findings: 1 (0 confirmed: 1 pass the test on new sentences but stay unconfirmed, "
        "the reference not being trusted); ")
    assert untrusted[1].endswith("vs 0.64  passes the test (unconfirmed)")
    assert "  confirmed" not in "\n".join(untrusted)


def test_a_finding_confirmed_by_invariance_says_so(tmp_path: Path) -> None:
    from synthcheck._summary import findings_lines

    run = tmp_path / "run"
    run.mkdir()
    plant_findings(run)
    row = {**FINDING_ROW, "failures": 20, "n": 29, "rate": 20 / 29, "base_rate": 0.07,
           "confirmed_by": "invariance", "flipped": 20}
    (run / "findings.jsonl").write_text(json.dumps(row) + "\n")
    line = findings_lines(run)[1]
    assert "20/29 = 0.69" in line and "vs 0.07" in line
    assert line.endswith("confirmed by invariance (label changes when deleted)")
    assert "flips alone" not in line  # its rate is the flips already


def test_a_slice_confirmed_by_replication_says_so(tmp_path: Path) -> None:
    from synthcheck._summary import findings_lines

    run = tmp_path / "run"
    run.mkdir()
    plant_findings(run)
    row = {**FINDING_ROW, "kind": "metadata", "name": "first person", "terms": [],
           "failures": 152, "n": 187, "rate": 152 / 187, "base_rate": 0.715,
           "confirmed_by": "replication"}
    (run / "findings.jsonl").write_text(json.dumps(row) + "\n")
    line = findings_lines(run)[1]
    assert "152/187 = 0.81" in line and "vs 0.71" in line
    assert line.endswith("confirmed by replication (fails again on new sentences)")
