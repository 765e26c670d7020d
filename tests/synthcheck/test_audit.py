"""The blind audit end to end from the CLI (issue 24 item 3): `annotate export --audit` draws
a seeded sample of the hard subset plus a random control, texts only and shuffled; `annotate
import --audit` takes one label per sentence; the summary, eval.json and report.html then show
the hard subset's precision on this corpus beside the held-out figure, each saying what it was
measured on. Without an audit the summary says what the held-out figure does not cover."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from discovery import NO_LABEL, write_eval_json
from synthcheck.cli import main
from tests.synthcheck.runbuilder import PATTERNS, build_run

HELD_OUT = {"hard_subset_precision": {"estimate": 0.8, "low": 0.6, "high": 0.9, "n": 40,
                                      "metric": "abs_top"},
            "hard_subset_rule": {"metric": "abs_top", "top_k": 10, "top_fraction": None,
                                 "require_disagreement": False, "held_out": 200},
            "ranked_task_model": "keyword"}


def truth(text: str) -> str:
    """The annotator: every runbuilder sentence carries its pattern's sentiment, except the
    two we call content-free for the test."""
    if text.startswith("The") and "boring" in text:
        return NO_LABEL
    for pattern, label in PATTERNS:
        if re.fullmatch(re.escape(pattern).replace(r"\{n\}", r"\w+"), text):
            return label
    raise AssertionError(text)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    run = build_run(tmp_path / "run", verify=False)
    write_eval_json(run / "eval.json", {"keyword": {"accuracy": 0.7, "macro_f1": 0.7, "n": 200}},
                    "evaluate", **HELD_OUT)
    return run


def answer(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    user = "4c1d2a7e-0000-4000-8000-000000000001"
    for i, rec in enumerate(records):
        status = "draft" if i == 0 else "submitted"  # a draft is no label
        rec["responses"] = {"label": [{"value": truth(rec["fields"]["text"]), "user_id": user,
                                       "status": status}]}
    return records


def test_audit_end_to_end(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    assert main(["annotate", "export", "--audit", "--run", str(run), "--format", "argilla",
                 "--out", str(out), "--audit-hard", "8", "--audit-control", "12",
                 "--seed", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (f"audit sample: 8 of the hard subset and 12 random others, shuffled "
                          f"(seed 3); kept in {run / 'review' / 'audit-sample.json'}")
    data = json.loads(out.read_text())
    records = data["records"]
    # Texts only: no scores, model labels, suggestions or metadata; groups mixed.
    assert all(set(r["fields"]) == {"text"} and not r["metadata"] and not r["suggestions"]
               for r in records)
    assert data["settings"]["questions"][0]["settings"]["options"][-1]["value"] == NO_LABEL
    sample = json.loads((run / "review" / "audit-sample.json").read_text())
    groups = [it["group"] for it in sample["items"]]
    assert groups.count("hard") == 8 and groups[:8] != ["hard"] * 8
    hard = [json.loads(line) for line in (run / "hard.jsonl").read_text().splitlines()]
    assert {it["id"] for it in sample["items"] if it["group"] == "hard"} == \
        {r["id"] for r in hard[:8]}
    # The same seed draws the same sample.
    again = tmp_path / "again.json"
    assert main(["annotate", "export", "--audit", "--run", str(run), "--format", "argilla",
                 "--out", str(again), "--audit-hard", "8", "--audit-control", "12",
                 "--seed", "3"]) == 0
    assert again.read_bytes() == out.read_bytes()
    capsys.readouterr()

    answered = tmp_path / "answered.json"
    answered.write_text(json.dumps(answer(records)))
    assert main(["annotate", "import", "--audit", "--run", str(run), "--format", "argilla",
                 "--in", str(answered)]) == 0
    labels = {it["id"]: truth(it["text"]) for it in sample["items"][1:]}  # [0] is a draft
    items = {it["id"]: it for it in sample["items"]}
    hard_ids = [i for i in labels if items[i]["group"] == "hard"]
    errors = sum(labels[i] not in (NO_LABEL, items[i]["task_label"]) for i in hard_ids)
    no_label = sum(labels[i] == NO_LABEL for i in hard_ids)
    from discovery._precision import _wilson

    low, high = _wilson(errors, len(hard_ids))
    line = (f"hard-subset precision on this corpus (blind audit): {errors / len(hard_ids):.2f} "
            f"[{low:.2f}, {high:.2f}], n={len(hard_ids)} ({errors} real task-model errors; "
            f"{no_label} with no label that applies), measured on blind-labelled sentences of "
            f"this run's corpus")
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (f"imported {len(labels)} audit label(s) from {answered} into "
                          f"{run / 'review' / 'audit.jsonl'}")
    assert printed[1] == line
    assert printed[-1] == f"updated {run / 'eval.json'} (corpus_audit)"
    ev = json.loads((run / "eval.json").read_text())
    audit = ev["corpus_audit"]
    assert (audit["hard"]["count"], audit["hard"]["n"]) == (errors, len(hard_ids))
    assert audit["measured_on"] == "blind-labelled sentences of this run's corpus"
    assert ev["hard_subset_precision"]["estimate"] == 0.8  # the held-out figure stays

    from synthcheck._cmd_discover import format_summary
    from synthcheck._config import RunConfig

    cfg = RunConfig.model_validate({"name": "t", "corpus": {"source": "x.txt"}})
    summary = format_summary(cfg, run, {"evaluation": ev}).splitlines()
    held = summary.index("hard-subset precision (abs_top, top 10): 0.80 [0.60, 0.90] on 40 "
                         "held-out examples (of 200)")
    at = summary.index(line)  # after the held-out figure and its caption lines
    assert held < at and all(x.startswith("  ") for x in summary[held + 1:at])
    assert not any(s.startswith("note: the held-out figure") for s in summary)
    assert main(["report", "--run", str(run)]) == 0
    html = (run / "report.html").read_text()
    md = (run / "summary.md").read_text()
    for page in (html, md):
        assert "on 40 held-out examples" in page
        assert (f"Hard-subset precision on this corpus (blind audit): "
                f"{errors / len(hard_ids):.2f}") in page
        assert "measured on blind-labelled sentences of this run&#39;s corpus" in page or \
            "measured on blind-labelled sentences of this run's corpus" in page


def test_without_an_audit_the_summary_says_what_the_held_out_figure_misses(run: Path) -> None:
    from synthcheck._cmd_discover import format_summary
    from synthcheck._config import RunConfig

    ev = json.loads((run / "eval.json").read_text())
    cfg = RunConfig.model_validate({"name": "t", "corpus": {"source": "x.txt"}})
    summary = format_summary(cfg, run, {"evaluation": ev}).splitlines()
    assert ("note: the held-out figure is measured on labelled held-out sentences, each of "
            "which carries a task label; it does not cover corpus sentences without signal. "
            "Measure the hard subset on this corpus with a blind audit: synthcheck annotate "
            "export --audit (docs/guide.md, 'A blind audit')") in summary
    assert "corpus_audit" not in ev


def test_the_notebook_way_and_its_errors(run: Path) -> None:
    from formalize import AuditLog, export_audit
    from synth.core import DataError

    with pytest.raises(DataError, match="the run has no audit sample"):
        AuditLog(run)
    export_audit(run, "label-studio", run.parent / "a.json", n_hard=4, n_control=4, seed=1)
    audit = AuditLog(run, annotator="me")
    items = audit.items()
    assert [set(it) for it in items] == [{"id", "text"}] * 8
    with pytest.raises(DataError, match=r"label 'meh' is not an audit answer .*: answer one of: "
                                        r"'negative', 'positive', 'no label applies'"):
        audit.label(items[0]["id"], "meh")
    with pytest.raises(DataError, match="sentence 'nope' is not in the audit sample"):
        audit.label("nope", "positive")
    for it in items:
        audit.label(it["id"], truth(it["text"]))
    from discovery import audited_precision

    info = audited_precision(run)
    assert info is not None and info["hard"]["n"] == 4 and info["control"]["n"] == 4
    assert info["annotators"] == ["me"]
