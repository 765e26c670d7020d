"""`synthcheck discover`: stage skipping by hash, a kill during scoring, a suite edit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "synth"))

from conftest import build_tiny_llama  # noqa: E402
from fakes import FakeBackend  # noqa: E402

from synth import RunDirError  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from synthcheck._pipeline import discover  # noqa: E402

SUITE = {
    "name": "mini", "labels": ["negative", "positive"], "seed": 0,
    "tests": [
        {"name": "positive adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {NOUN} is {POS_ADJ}.", "label": "positive"},
        {"name": "negative adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {NOUN} is {NEG_ADJ}.", "label": "negative"},
    ],
}
DOCS = ["I watched this movie last night with friends and we laughed a lot at it.",
        "The worst film I have seen in years, the script is a mess and far too long.",
        "An honest and moving drama whose quiet scenes stay with you for a long time."]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def cfg_path(tmp_path: Path, tiny_dir: Path) -> Path:
    (tmp_path / "docs.txt").write_text("\n".join(DOCS) + "\n")
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    cfg = {
        "name": "mini",
        "corpus": {"source": str(tmp_path / "docs.txt")},
        "queries": {"k": 3},
        "generator": {"model": "hf:unused", "n": 24, "shard_size": 8,
                      "segment": {"min_words": 3, "max_words": 40}},
        "task_models": [{"name": "toy", "spec": "python:toy_models:keyword_sentiment"}],
        "reference": {"model": f"hf:{tiny_dir}", "calibration": "contextual", "device": "cpu"},
        "ranking": {"top_fraction": 0.5},
        "mining": {"min_support": 2},
        "evaluation": {"size": 12},
        "suite": str(tmp_path / "suite.yaml"),
        "verify": {"sample": 5},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(autouse=True)
def _fake_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    import synth._generate as gen

    monkeypatch.setattr(gen, "_build_backend", lambda cfg: FakeBackend())
    monkeypatch.syspath_prepend(str(HERE))


def outputs(run: Path) -> dict[str, bytes]:
    names = ["scores/task-toy.jsonl", "scores/reference.jsonl", "hard.jsonl", "ngrams.jsonl",
             "verify/mini/summary.csv"]
    return {n: (run / n).read_bytes() for n in names}


def test_rerun_skips_current_stages(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    first = discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert all(v == "ran" for v in first.stages.values()), first.stages
    assert (tmp_path / "r" / "report.html").is_file()
    before = outputs(tmp_path / "r")
    again = discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert {k for k, v in again.stages.items() if v == "ran"} == {"report"}
    assert outputs(tmp_path / "r") == before


def test_suite_edit_reruns_only_verify_and_report(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    suite = yaml.safe_load((tmp_path / "suite.yaml").read_text())
    suite["tests"].append({"name": "negated", "capability": "Negation", "type": "mft",
                           "template": "This {NOUN} is not {POS_ADJ}.", "label": "negative"})
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    again = discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert {k for k, v in again.stages.items() if v == "ran"} == {"verify", "report"}
    assert "negated" in (tmp_path / "r" / "verify" / "mini" / "summary.csv").read_text()


def test_run_dir_of_another_config_is_refused(cfg_path: Path, tmp_path: Path) -> None:
    discover(load_run_config(cfg_path), tmp_path / "r", progress=False, log=lambda s: None)
    before = outputs(tmp_path / "r")
    other = load_run_config(cfg_path, ["generator.sampling.seed=7"])
    with pytest.raises(RunDirError, match="run directory belongs to another config"):
        discover(other, tmp_path / "r", progress=False, log=lambda s: None)
    assert outputs(tmp_path / "r") == before


def test_kill_during_scoring_then_rerun(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    discover(cfg, tmp_path / "full", progress=False, log=lambda s: None)
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent / 'synth')!r}]
        from fakes import FakeBackend
        import synth._generate as gen
        gen._build_backend = lambda cfg: FakeBackend()
        from synthcheck import load_run_config
        from synthcheck._pipeline import discover
        discover(load_run_config({str(cfg_path)!r}), {str(tmp_path / 'killed')!r},
                 progress=False)
    """)
    env = {**os.environ, "TOY_DELAY": "30"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    manifest = tmp_path / "killed" / "manifest.json"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if manifest.is_file() and '"score"' in manifest.read_text():
            break
        time.sleep(0.05)
    time.sleep(0.5)  # inside the (slow) task model call
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stages = json.loads(manifest.read_text())["stages"]
    assert stages["generate"]["status"] == "complete"
    assert stages["score"]["status"] == "running"
    corpus = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "killed" / "corpus").iterdir()}
    result = discover(cfg, tmp_path / "killed", progress=False, log=lambda s: None)
    assert result.stages["generate"] == "skipped (current)"
    assert result.stages["score"] == "ran"
    assert {p.name: p.stat().st_mtime_ns
            for p in (tmp_path / "killed" / "corpus").iterdir()} == corpus
    assert outputs(tmp_path / "killed") == outputs(tmp_path / "full")
