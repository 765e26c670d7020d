"""RunDir's stage bookkeeping: stage hashes, current stages and outputs, completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import has_corpus
from synth.core import RunDir, RunDirError, provenance, write_json_atomic


def opened(tmp_path: Path) -> RunDir:
    run = RunDir(tmp_path / "run")
    run.open({"name": "x"}, "cfg0", stage="generate")
    run.commit()
    return run


def test_stage_hash_and_is_current_without_a_manifest(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "none")
    assert run.stage_hash("score") is None
    assert not run.is_current("score", "h")
    assert run.current_output("score", "h", tmp_path / "x.json") is None


def test_is_current_needs_the_hash_and_a_complete_status(tmp_path: Path) -> None:
    run = opened(tmp_path)
    assert run.stage_hash("generate") == "cfg0"
    assert not run.is_current("generate", "cfg0")  # opened, not complete
    run.set_stage("generate", "running", prompts=10)
    assert not run.is_current("generate", "cfg0")
    run.complete("generate", "cfg0", prompts=10)
    assert run.is_current("generate", "cfg0")
    assert run.is_current("generate", "cfg0", prompts=10)
    assert not run.is_current("generate", "cfg0", prompts=9)
    assert not run.is_current("generate", "other")


def test_complete_records_hash_and_info_and_writes_only_on_change(tmp_path: Path) -> None:
    run = opened(tmp_path)
    run.complete("verify", "v1", suite="s", stage_hash="v1")
    manifest = run.read_manifest()
    assert manifest["stage_hashes"]["verify"] == "v1"
    assert manifest["stages"]["verify"] == {"status": "complete", "suite": "s", "stage_hash": "v1"}
    before = run.manifest_path.stat().st_mtime_ns
    data = run.manifest_path.read_bytes()
    run.manifest_path.touch()
    touched = run.manifest_path.stat().st_mtime_ns
    assert touched >= before
    run.complete("verify", "v1", suite="s", stage_hash="v1")
    assert run.manifest_path.stat().st_mtime_ns == touched
    assert run.manifest_path.read_bytes() == data
    run.complete("verify", "v2", suite="s", stage_hash="v2")
    assert run.stage_hash("verify") == "v2"


def test_complete_refuses_a_directory_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="no manifest.json"):
        RunDir(tmp_path / "none").complete("report", "h")


def test_current_output_checks_the_files_own_hash(tmp_path: Path) -> None:
    run = opened(tmp_path)
    path = run.path / "eval.json"
    write_json_atomic(path, {"reports": {}, **provenance("e1")})
    assert run.current_output("evaluate", "e1", path) is None  # manifest: not complete
    run.complete("evaluate", "e1", models=[])
    assert run.current_output("evaluate", "e1", path) == {"reports": {}, **provenance("e1")}
    write_json_atomic(path, {"reports": {}, **provenance("other")})  # rewritten elsewhere
    assert run.current_output("evaluate", "e1", path) is None
    path.write_text("{not json", encoding="utf-8")
    assert run.current_output("evaluate", "e1", path) is None
    path.write_text("[]", encoding="utf-8")
    assert run.current_output("evaluate", "e1", path) is None
    path.unlink()
    assert run.current_output("evaluate", "e1", path) is None


def test_open_refuses_another_hash_open_stage_replaces_it(tmp_path: Path) -> None:
    run = opened(tmp_path)
    run.open({"name": "x"}, "cfg0", stage="rank", stage_hash="r1")
    run.complete("rank", "r1", hard=3)
    with pytest.raises(RunDirError, match="another config"):
        run.open({"name": "x"}, "cfg0", stage="rank", stage_hash="r2")
    run.open_stage({"name": "y"}, "rank", "r2")
    manifest = run.commit()
    assert manifest == run.read_manifest()
    assert manifest["stage_hashes"]["rank"] == "r2"
    assert "rank" not in manifest["stages"]  # the old hash's status is forgotten
    assert manifest["config_hash"] == "cfg0"  # the run keeps its config hash
    assert manifest["config"] == {"name": "y"}


def test_open_stage_on_a_new_directory_takes_the_stage_hash(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "new")
    run.open_stage({"name": "x"}, "score", "s1")
    assert not run.path.exists()  # nothing is written before the stage does work
    run.commit()
    manifest = run.read_manifest()
    assert manifest["config_hash"] == "s1" and manifest["stage_hashes"] == {"score": "s1"}
    data = run.manifest_path.read_bytes()
    run.open_stage({"name": "x"}, "score", "s1")  # unchanged: not rewritten
    run.commit()
    assert run.manifest_path.read_bytes() == data
    assert json.loads(data)["stages"] == {}


def test_has_corpus(tmp_path: Path) -> None:
    assert not has_corpus(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "stats.json").write_text("{}", encoding="utf-8")
    assert not has_corpus(tmp_path)
    (tmp_path / "corpus" / "shard-00000.jsonl").write_text("", encoding="utf-8")
    assert has_corpus(tmp_path) and has_corpus(str(tmp_path))
