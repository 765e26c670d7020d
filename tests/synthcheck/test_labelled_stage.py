"""The labelled stage in `discover` and `synthcheck slices`: off without labelled.data; with
it, labelled.jsonl from the rows the evaluation sample does not take, findings rows with
``data: labelled`` beside the corpus's, the summary line, the report's column, a labelled
term in the focus pool; skipped when current; a bad column is an error that changes
nothing."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent

from synthcheck import load_run_config  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402


def labelled_file(path: Path) -> Path:
    """60 reviews: the toy model reads "great" as positive, but the 12 reviews that ask
    "great?" are negative (all wrong), as are the 10 on drug "Zomig" that say "good" (all
    wrong); the other 38 it gets right."""
    rows = []
    for i in range(60):
        if i < 12:
            rows.append((f"was show {i} really great ?", "negative", "Other"))
        elif i < 22:
            rows.append((f"the good pill number {i} did nothing", "negative", "Zomig"))
        elif i % 2:
            rows.append((f"a lovely and funny evening number {i}", "positive", "Other"))
        else:
            rows.append((f"a dull and boring evening number {i}", "negative", "Other"))
    with path.open("w", newline="", encoding="utf-8") as handle:
        w = csv.writer(handle)
        w.writerow(["review", "stars", "drug"])
        w.writerows(rows)
    return path


@pytest.fixture
def cfg_path(tmp_path: Path, mini_config: Callable[..., Path]) -> Path:
    labelled_file(tmp_path / "mine.csv")
    return mini_config(
        focus={"candidates": 3, "budget": 3},
        slices={"semantic": {"size": 4},
                "metadata": {"min_size": 2}, "occlusion": {"reference_words": 3,
                                                            "reference_sentences": 2}},
        evaluation={"data": str(tmp_path / "mine.csv"), "text_field": "review",
                    "label_field": "stars", "size": 10, "include_reference": False},
        labelled={"data": "evaluation", "metadata_fields": ["drug"], "min_size": 5,
                  "semantic_size": 10},
    )


@pytest.fixture(autouse=True)
def _fake_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    runbuilder.fake_backends(monkeypatch)


quiet = runbuilder.discover_quietly


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_labelled_findings_join_the_corpus_findings(cfg_path: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    run = tmp_path / "r"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out
    meta = json.loads((run / "labelled.jsonl.meta.json").read_text())
    assert (meta["pool"], meta["evaluation_rows"], meta["rows"]) == (60, 10, 50)
    # the evaluation sample's rows are not read: every example id is a row outside it
    from discovery import EvaluationConfig, LabelledConfig, labelled_rows
    from synth.core import LabelSpace

    cfg = load_run_config(cfg_path)
    lrows = labelled_rows(LabelSpace.of(["negative", "positive"]), cfg.labelled,
                          cfg.evaluation, cfg.corpus)
    assert isinstance(cfg.evaluation, EvaluationConfig) and isinstance(cfg.labelled,
                                                                       LabelledConfig)
    labelled = rows_of(run / "labelled.jsonl")
    assert all(set(r["example_ids"]) <= set(lrows.ids) for r in labelled)
    sig = {r["name"]: r for r in labelled if r["significant"]}
    assert "drug = Zomig" in sig and sig["drug = Zomig"]["rate"] == 1.0
    assert any("?" in name for name in sig), sorted(sig)
    findings = rows_of(run / "findings.jsonl")
    data = {r["data"] for r in findings}
    assert data == {"corpus", "labelled"}
    zomig = next(r for r in findings if r["name"] == "drug = Zomig")
    assert zomig["reason"].startswith("labelled data: the task model is wrong on")
    # the summary says which data each finding came from, and what the labelled stage read
    assert "labelled data: 50 rows of " in out and "less the evaluation sample's 10" in out
    for r in findings[:10]:
        assert f"  {r['id']} {r['data']:<8} {r['kind']:<8} {r['name'][:34]:<35} " in out
    assert any(r["data"] == "labelled" for r in findings[:10])
    report = (run / "report.html").read_text()
    assert ">data</th>" in report and "Labelled data: 50 rows of " in report
    # labelled terms join the focus pool, their source recorded
    from discovery import labelled_candidate

    candidates = {labelled_candidate(r) for r in labelled if r["significant"]}
    focus = rows_of(run / "focus.jsonl")
    assert any(r["source"] == "labelled" and r["ngram"] in candidates for r in focus), \
        [(r["ngram"], r["source"]) for r in focus]


def test_labelled_stage_is_skipped_when_current_and_off_without_data(cfg_path: Path,
                                                                    tmp_path: Path) -> None:
    run = tmp_path / "r"
    first = quiet(load_run_config(cfg_path), run)
    assert first.stages["labelled"] == "ran"
    again = quiet(load_run_config(cfg_path), run)
    assert again.stages["labelled"] == "skipped (current)"
    changed = quiet(load_run_config(cfg_path, ["labelled.min_size=6"]), run)
    assert changed.stages["labelled"] == "ran" and changed.stages["findings"] == "ran"
    assert changed.stages["score"] == "skipped (current)"
    # a text property added to the metadata slices (a new version) redoes it too: its
    # metadata slices read the labelled rows
    import discovery._slices as slices_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(slices_module.METADATA, "tilde", lambda t: "~" in t)
        newer = quiet(load_run_config(cfg_path, ["labelled.min_size=6"]), run)
    assert newer.stages["labelled"] == newer.stages["metadata"] == "ran"
    with pytest.MonkeyPatch.context() as mp:  # a predicate changed: the scheme is bumped
        mp.setattr(slices_module, "METADATA_SCHEME", "text properties v0")
        bumped = quiet(load_run_config(cfg_path, ["labelled.min_size=6"]), run)
    assert bumped.stages["labelled"] == bumped.stages["metadata"] == "ran"
    off = quiet(load_run_config(cfg_path, ["labelled.data=null"]), run)
    assert off.stages["labelled"] == "off (no labelled.data)"
    assert {r["data"] for r in rows_of(run / "findings.jsonl")} == {"corpus"}


def test_slices_command_runs_it_and_a_bad_column_changes_nothing(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    quiet(load_run_config(cfg_path, ["labelled.data=null"]), run)
    capsys.readouterr()
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert main(["slices", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "labelled.metadata_fields=[condition]"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: CSV has no column 'condition' (its columns: review, stars, "
                          "drug) (")
    assert err.endswith("remove 'condition' from labelled.metadata_fields, or name one of "
                        "the file's columns\n")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    assert main(["slices", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3].startswith("labelled: ") and out[3].endswith(" s")
    assert any(" labelled " in x for x in out[5:])


def test_a_bad_labelled_column_is_refused_before_any_work(cfg_path: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    run = tmp_path / "fresh"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "labelled.metadata_fields=[condition]"]) == 2
    assert "error: CSV has no column 'condition'" in capsys.readouterr().err
    assert not run.exists() or not any(run.iterdir())
