"""The one stage runner (``discovery/_runner.py``): :class:`StageJob`'s protocol (skip if
current, open, meta file, completion with digests, the manifest put back on failure), and
the grep that keeps every stage on it: no module outside the runner calls
``RunDir.open_stage``, ``RunDir.complete`` or ``RunDir.set_stage``.

``python -m tests.discovery.test_runner [ROOT]`` (from the checkout) prints the hand-rolled
calls found under ROOT (default: this checkout), one per line, then their count.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from discovery import StageJob
from synth.core import DataError, RunDir, provenance

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("synth", "discovery", "formalize", "synthcheck")
RUNNER = "discovery/_runner.py"
ALLOWED = {
    # RunDir itself (the definitions, and complete/set_stage calling each other).
    "synth/core/_rundir.py",
    # Stage 1's generation: shards are claimed by several processes, it opens with
    # `RunDir.open` (refusing another config, not replacing it), and `synth` sits below
    # `discovery`, so it cannot import the runner.
    "synth/_generate.py",
    "synth/_corpus_files.py",
}
"""Files besides the runner that may call the manifest's stage methods, and why."""


def _hand_rolled(call: ast.Call) -> str | None:
    """The stage method a call makes on a RunDir by hand, or None. ``RunDir.complete`` takes
    its stage and hash positionally (positional-only), which tells it from
    :meth:`StageJob.complete` (keywords only); ``open_stage`` and ``set_stage`` are
    RunDir's alone."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return None
    if f.attr in ("open_stage", "set_stage"):
        return f.attr
    if f.attr == "complete" and len(call.args) >= 2:
        return f.attr
    return None


def hand_rolled_calls(root: Path) -> Iterator[str]:
    """``path:line: method`` for each stage-protocol call on a RunDir outside the runner
    under ``root``'s packages."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == RUNNER or rel in ALLOWED:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and (name := _hand_rolled(node)):
                    yield f"{rel}:{node.lineno}: {name}"


def test_no_stage_protocol_outside_the_runner() -> None:
    assert list(hand_rolled_calls(REPO)) == []


def test_the_grep_finds_a_hand_rolled_stage(tmp_path: Path) -> None:
    """What the grep above would report (so it can fail): each of the three calls, in any
    package, and not a StageJob's ``complete``."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "discovery" / "_mine.py").write_text(
        "def f(run, h, job):\n"
        "    run.open_stage({}, 'mine', h)\n"
        "    run.set_stage('mine', 'running')\n"
        "    run.complete('mine', h, stage_hash=h)\n"
        "    job.complete(n=1)\n")
    (tmp_path / "synthcheck" / "x.py").write_text("ctx.run.complete('verify', h)\n")
    (tmp_path / "discovery" / "_runner.py").write_text("run.complete('x', h)\n")
    assert list(hand_rolled_calls(tmp_path)) == [
        "discovery/_mine.py:2: open_stage", "discovery/_mine.py:3: set_stage",
        "discovery/_mine.py:4: complete", "synthcheck/x.py:1: complete"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _write(job: StageJob, out: Path, text: str) -> None:
    with job.open({"x": {"k": 1}}):
        out.write_text(text)
        job.write_meta(out, rows=1)
    job.complete(rows=1)


def test_stage_job_records_what_it_wrote_and_skips_when_current(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    job = StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out])
    assert not job.current()
    _write(job, out, '{"id": 1}\n')
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"] == {"x": {"k": 1}}
    assert manifest["stage_hashes"] == {"x": "h1"}
    assert manifest["stages"]["x"] == {"status": "complete", "stage_hash": "h1", "rows": 1,
                                       "digests": {"x.jsonl": _digest(out)}}
    meta = json.loads((tmp_path / "x.jsonl.meta.json").read_text())
    assert meta == {**provenance("h1"), "rows": 1}
    assert StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out]).current()
    assert StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out]).current(rows=1)
    assert not StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out]).current(rows=2)
    assert not StageJob(tmp_path, stage="x", stage_hash="h2", outputs=[out]).current()
    assert job.skipped(n=3) == {"skipped": True, "stage_hash": "h1", "n": 3}
    out.write_text('{"id": 2}\n')  # changed after the stage wrote it: not current
    assert not StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out]).current()
    # a new hash replaces the old one (the stage is redone)
    _write(StageJob(tmp_path, stage="x", stage_hash="h2", outputs=[out]), out, "{}\n")
    assert RunDir(tmp_path).stage_hash("x") == "h2"


@pytest.mark.parametrize("error, kept", [(DataError("bad", where="w", fix="f"), False),
                                         (MemoryError(), True)])
def test_a_failed_job_puts_the_manifest_back(tmp_path: Path, error: Exception,
                                             kept: bool) -> None:
    """``running`` marks the stage in the manifest while it works; an error puts the
    manifest back byte for byte. Bad input also removes the files the job added under
    ``undo_under``; another error keeps them for a rerun to resume from."""
    out = tmp_path / "x.jsonl"
    _write(StageJob(tmp_path, stage="x", stage_hash="h1", outputs=[out]), out, "{}\n")
    before = (tmp_path / "manifest.json").read_bytes()
    parts = tmp_path / "parts"
    job = StageJob(tmp_path, stage="x", stage_hash="h2", outputs=[out])
    with pytest.raises(type(error)), job.open({"x": 2}, running=True, undo_under=parts):
        assert RunDir(tmp_path).stage_status("x") == {"status": "running", "stage_hash": "h2"}
        parts.mkdir()
        (parts / "chunk-0.jsonl").write_text("{}\n")
        raise error
    assert (tmp_path / "manifest.json").read_bytes() == before
    assert (parts / "chunk-0.jsonl").is_file() is kept
    assert parts.is_dir() is kept


if __name__ == "__main__":
    found = list(hand_rolled_calls(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO))
    print("\n".join(found))
    print(len(found))
