"""The slice stages in `discover` (semantic, metadata, occlusion, findings): run after mine,
skipped when current, redone when their section changes, forgotten when turned off,
byte-identical after a SIGKILL mid-stage; `synthcheck slices` and its error messages."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from synthcheck import load_run_config  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from synthcheck.stages import STAGE_NAMES as STAGES  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402

FILES = ["slices.jsonl", "metadata.jsonl", "words.jsonl", "focus.jsonl", "findings.jsonl"]
SCHEMA = {"id", "rank", "kind", "name", "terms", "example_ids", "n", "failures", "rate", "low",
          "high", "base_rate", "score", "confirmed", "reason"}


@pytest.fixture
def cfg_path(mini_config: Callable[..., Path]) -> Path:
    return mini_config(
        focus={"candidates": 2, "budget": 3},
        slices={"semantic": {"size": 4},
                "metadata": {"min_size": 2}, "occlusion": {"reference_words": 3,
                                                            "reference_sentences": 2}},
        evaluation={"size": 8, "include_reference": False},
    )


@pytest.fixture(autouse=True)
def _fake_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    runbuilder.fake_backends(monkeypatch)


quiet = runbuilder.discover_quietly


def outputs(run: Path) -> dict[str, bytes]:
    return {n: (run / n).read_bytes() for n in FILES}


def test_slice_stages_run_skip_and_rerun_in_discover(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    first = quiet(cfg, run)
    assert STAGES.index("mine") < STAGES.index("semantic") < STAGES.index("occlusion") \
        < STAGES.index("focus") < STAGES.index("findings") < STAGES.index("evaluate")
    assert {s: first.stages[s] for s in ("semantic", "metadata", "occlusion", "findings")} == \
        dict.fromkeys(("semantic", "metadata", "occlusion", "findings"), "ran")
    rows = [json.loads(x) for x in (run / "findings.jsonl").read_text().splitlines()]
    assert rows and all(set(r) >= SCHEMA for r in rows)
    assert [r["id"] for r in rows] == [f"f{i:04d}" for i in range(1, len(rows) + 1)]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert {r["kind"] for r in rows} <= {"ngram", "semantic", "metadata", "word", "phrase",
                                          "group", "focus"}
    assert all(len(r["example_ids"]) <= 20 and r["low"] <= r["rate"] <= r["high"]
               for r in rows)
    manifest = json.loads((run / "manifest.json").read_text())
    for stage, file in [("semantic", "slices.jsonl"), ("metadata", "metadata.jsonl"),
                        ("occlusion", "words.jsonl"), ("findings", "findings.jsonl")]:
        entry = manifest["stages"][stage]
        assert entry["status"] == "complete" and file in entry["digests"]
        meta = json.loads((run / f"{file}.meta.json").read_text())
        assert meta["config_hash"] == manifest["stage_hashes"][stage]
    again = quiet(cfg, run)
    assert all(again.stages[s] == "skipped (current)" or again.stages[s].startswith("off (")
               for s in STAGES if s not in ("verify", "labelled"))
    assert again.stages["labelled"] == "off (no labelled.data)"

    changed = quiet(load_run_config(cfg_path, ["slices.semantic.size=5"]), run)
    assert {"semantic", "findings", "report"} <= {k for k, v in changed.stages.items()
                                                 if v == "ran"}
    assert {changed.stages[s] for s in ("score", "rank", "mine", "metadata", "occlusion")} == \
        {"skipped (current)"}

    # A text property added to the metadata slices (a new version): a run made before reads
    # it, the metadata stage is redone, not reported current.
    import discovery._slices as slices_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(slices_module.METADATA, "tilde", lambda t: "~" in t)
        newer = quiet(load_run_config(cfg_path, ["slices.semantic.size=5"]), run)
    assert newer.stages["metadata"] == "ran" and newer.stages["occlusion"] == "skipped (current)"

    off = quiet(load_run_config(cfg_path, ["slices.semantic.size=5",
                                           "slices.semantic.enabled=false"]), run)
    assert off.stages["semantic"] == "off (slices.semantic.enabled: false)"
    assert "semantic" not in json.loads((run / "manifest.json").read_text())["stages"]
    assert off.stages["findings"] == "ran"  # without the semantic rows
    kinds = {json.loads(x)["kind"] for x in (run / "findings.jsonl").read_text().splitlines()}
    assert "semantic" not in kinds


def test_summary_and_report_show_the_findings(cfg_path: Path, tmp_path: Path, capsys) -> None:
    run = tmp_path / "r"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out
    first = json.loads((run / "findings.jsonl").read_text().splitlines()[0])
    assert "findings: " in out and "corpus failure: task model's top label differs from the " \
        "reference's" in out
    assert "judged: " in out and "rule: task model's top label differs" in out
    assert f"  f0001 corpus   {first['kind']:<8} {first['name'][:34]:<35} " in out
    summary = (run / "summary.md").read_text()
    assert "each a failure by the run's one rule" in summary and "Judged: " in summary
    assert "## Findings: every kind, ranked" in summary
    assert "### Focus rounds: confirmed failure patterns" in summary
    assert "| f0001 | " in summary
    # the report's reason column says where else a slice was found, as the summary does
    from synthcheck._summary import also_text
    from synthcheck.report import build_report

    rows = [json.loads(x) for x in (run / "findings.jsonl").read_text().splitlines()]
    table = next(b for s in build_report(run).sections if s.key == "findings"
                 for b in s.blocks if b.kind == "table")
    assert table.header[-1] == "reason"
    assert [r[-1].text for r in table.rows] == [f["reason"] + also_text(f)
                                               for f in rows[:len(table.rows)]]
    assert any(f.get("also") for f in rows[:len(table.rows)])

    def ranking_text() -> str:
        return next(b.text for s in build_report(run).sections if s.key == "findings"
                    for b in s.blocks if b.kind == "para" and "findings of" in b.text)

    clause = ("punctuation invariance rows count corpus sentences, abstained ones too, whose "
              "top label changes when only their punctuation changes (base rate: one other "
              "word deleted)")
    assert clause not in ranking_text()  # the fake task model ignores punctuation
    with (run / "findings.jsonl").open("a") as f:  # as if it did not
        f.write(json.dumps({**rows[-1], "kind": "perturbation", "name": "question mark"})
                + "\n")
    assert clause in ranking_text()

    # Under each of the first findings, its failing sentences from the data that found it:
    # a slice confirmed by replication, the focus rounds' new sentences (its examples); a
    # labelled row, the labelled rows; any other, its corpus sentences (example_ids).
    rep = {**rows[0], "kind": "metadata", "data": "corpus", "confirmed_by": "replication",
           "examples": ["A new sentence it fails."]}
    lab = {**rows[1], "data": "labelled", "examples": ["A labelled row it gets wrong."]}
    (run / "findings.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [rep, lab, *rows[2:]]))
    blocks = [b for s in build_report(run).sections if s.key == "findings" for b in s.blocks]
    shown = {blocks[i].text: blocks[i + 1].rows[0][0].text
             for i, b in enumerate(blocks[:-1]) if b.kind == "heading"
             and getattr(blocks[i + 1], "header", None) == ["sentence"]}
    assert shown[f"{rep['id']} {rep['name']}: failing new sentences (focus rounds)"] == \
        "A new sentence it fails."
    assert shown[f"{lab['id']} {lab['name']}: labelled rows the task model gets wrong"] == \
        "A labelled row it gets wrong."
    corpus = {json.loads(x)["id"]: json.loads(x)["text"]
              for f in sorted((run / "corpus").glob("*.jsonl"))
              for x in f.read_text().splitlines()}
    third = rows[2]
    assert third.get("example_ids") and third.get("data", "corpus") == "corpus"
    assert shown[f"{third['id']} {third['name']}: failing corpus sentences"] == \
            corpus[third["example_ids"][0]]


def test_slices_command_and_its_errors(cfg_path: Path, tmp_path: Path, capsys) -> None:
    run = tmp_path / "r"
    cfg = load_run_config(cfg_path)
    quiet(cfg, run)
    capsys.readouterr()
    assert main(["slices", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == ["semantic: up to date", "metadata: up to date", "occlusion: up to date",
                       "labelled: off", "perturbation: up to date"]
    assert out[5] == f"findings: up to date: {run / 'findings.jsonl'}"

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["slices", "--config", str(cfg_path), "--run", str(empty), "-q"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: the run has no complete scores ({empty}): run `synthcheck score` "
                   f"first\n")
    assert list(empty.iterdir()) == []

    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert main(["slices", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "slices.semantic.encoder=packaged:nope"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: unknown packaged encoder 'nope' (packaged:nope): use "
                   "packaged:all-minilm-l6-v2 or hf:<local path>\n")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


KILL = """
    import sys, time
    from pathlib import Path
    from tests.synth.fakes import FakeBackend
    import synth._generate as gen
    import synth
    gen.generator_backend = synth.generator_backend = lambda g: FakeBackend()
    import discovery._slice_stages as ss
    import discovery._embed as emb
    ss.CHUNK = 8
    stage = {stage!r}
    if stage == "semantic":  # killed between two embedding chunks
        real = emb.SentenceEmbedder.embed
        calls = []
        def embed(self, texts):
            calls.append(len(texts))
            if len(calls) == 2:
                time.sleep(60)
            return real(self, texts)
        emb.SentenceEmbedder.embed = embed
    else:  # killed after the stage opened and wrote its rows, before its meta and manifest
        import discovery._runner as runner  # the stage runner writes the meta file
        real_write = runner.write_json_atomic
        def slow(path, obj):
            if Path(path).name == ss.stage_output(stage).file + ".meta.json":
                time.sleep(60)
            return real_write(path, obj)
        runner.write_json_atomic = slow
    from synthcheck import load_run_config
    from synthcheck._pipeline import discover
    discover(load_run_config({cfg!r}), {run!r}, progress=False)
"""


@pytest.mark.parametrize("stage", ["semantic", "metadata", "occlusion", "findings"])
def test_sigkill_mid_stage_then_rerun_is_byte_identical(cfg_path: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        stage: str) -> None:
    import discovery._slice_stages as ss

    monkeypatch.setattr(ss, "CHUNK", 8)  # several embedding chunks, as in the killed run
    cfg = load_run_config(cfg_path)
    quiet(cfg, tmp_path / "full")
    killed = tmp_path / "killed"
    script = textwrap.dedent(KILL.format(stage=stage, cfg=str(cfg_path), run=str(killed)))
    log = tmp_path / "killed.log"
    with log.open("w") as handle:
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL,
                                stderr=handle, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                    [str(HERE.parents[1]), str(HERE)])})
    manifest = killed / "manifest.json"
    parts = killed / "slices" / ".parts"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if stage == "semantic":
            if parts.is_dir() and any(parts.glob("*.npy")):
                break
        elif ss.stage_output(stage).path(killed).is_file():  # its rows written, its meta pending
            break
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None, log.read_text()[-3000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    entry = json.loads(manifest.read_text())["stages"].get(stage, {})
    assert entry.get("status") != "complete"
    kept = {p.name: p.stat().st_mtime_ns for p in parts.glob("*.npy")} \
        if stage == "semantic" else {}
    if stage == "semantic":
        assert len(kept) == 1  # one chunk embedded before the kill
    result = quiet(cfg, killed)
    assert result.stages[stage] == "ran"
    assert outputs(killed) == outputs(tmp_path / "full")
    if stage == "semantic":  # the chunk embedded before the kill was reused
        assert {n: (parts / n).stat().st_mtime_ns for n in kept} == kept


def test_discover_refuses_a_missing_encoder_before_generating(cfg_path: Path, tmp_path: Path,
                                                              capsys) -> None:
    run = tmp_path / "r"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "slices.semantic.encoder=hf:/nonexistent/encoder"]) == 2
    assert capsys.readouterr().err == (
        "error: encoder folder /nonexistent/encoder does not exist (hf:/nonexistent/encoder): "
        "give a local transformers model folder\n")
    assert not run.exists()
