"""Stage locks that say who holds them (issue 28): pid, host and start time recorded; a
waiting process says who it waits for, again every heartbeat interval, and gives up after
--lock-timeout naming the holder (a holder stopped with SIGSTOP is named as stopped); the
record of a holder that is gone is taken over; lock paths that cannot be locks are clean
errors."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from synth.core import RunDir, RunDirError

ROOT = Path(__file__).resolve().parents[3]


def test_the_holder_is_recorded_and_cleared(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    lock = run.path / ".locks" / "score.lock"
    with run.stage_lock("score"):
        holder = json.loads(lock.read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        assert holder["started"].endswith("+00:00")
    assert lock.read_text() == ""


def test_a_gone_holders_record_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    run = RunDir(tmp_path / "run")
    lock = run.path / ".locks" / "score.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": pid, "host": socket.gethostname(),
                                "started": "2026-01-01T00:00:00+00:00"}))
    waits: list[str] = []
    with run.stage_lock("score", on_wait=waits.append, timeout=0):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert waits == []


@pytest.fixture()
def stopped_holder(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A process that holds the score lock of ``tmp_path/run`` and is then SIGSTOPped."""
    script = textwrap.dedent(f"""
        import time
        from synth.core import RunDir
        with RunDir({str(tmp_path / 'run')!r}).stage_lock("score"):
            print("held", flush=True)
            time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10  # the stop is delivered asynchronously
        while time.monotonic() < deadline and Path(f"/proc/{proc.pid}/stat").read_text(
                ).rsplit(")", 1)[-1].split()[0] not in ("T", "t"):
            time.sleep(0.02)
        yield proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait()


def test_a_stopped_holder_is_named_every_interval_and_the_timeout_ends_the_wait(
        tmp_path: Path, stopped_holder: subprocess.Popen[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTHCHECK_HEARTBEAT", "1")
    run = RunDir(tmp_path / "run")
    waits: list[str] = []
    pid = stopped_holder.pid
    t0 = time.monotonic()
    with pytest.raises(RunDirError) as info:
        with run.stage_lock("score", on_wait=waits.append, timeout=2.5):
            pytest.fail("the lock of a stopped holder was taken")
    assert 2.5 <= time.monotonic() - t0 < 10
    host = socket.gethostname()
    assert len(waits) >= 2, waits  # at once, then every interval: never a silent wait
    assert waits[0].startswith(f"waiting for another process's score stage on this run "
                               f"directory, held by pid {pid} on host {host} since ")
    assert f", stopped (Ctrl-Z or SIGSTOP): resume it with `kill -CONT {pid}`" in waits[0]
    msg = info.value.format()
    assert msg.startswith(f"gave up waiting for another process's score stage on this run "
                          f"directory: it is held by pid {pid} on host {host} since ")
    assert msg.endswith(f"(--lock-timeout 2.5) ({run.path / '.locks' / 'score.lock'}): wait "
                        "for that process to finish (a larger --lock-timeout), or end it; a "
                        "lock of a process that is gone is taken over")


@pytest.mark.parametrize("make, message", [
    (lambda run: (run / ".locks").write_text("x"),
     r"cannot lock: .locks is a file, not a folder \(.*/run/.locks\): remove it"),
    (lambda run: (run / ".locks" / "score.lock").mkdir(parents=True),
     r"cannot lock: the lock file is a directory, not a file \(.*score.lock\): remove it"),
    (lambda run: ((run / ".locks").mkdir(), (run / ".locks" / "score.lock").symlink_to(
        run / "manifest.json")),
     r"cannot lock: the lock file is a symbolic link \(.*score.lock\): remove it"),
])
def test_lock_paths_that_cannot_be_locks(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    make(run)
    with pytest.raises(RunDirError, match=message):
        RunDir(run).check_locks(["score"])
    with pytest.raises(RunDirError, match=message):
        with RunDir(run).stage_lock("score"):
            pass
    assert (run / "manifest.json").read_text() == "{}"  # a symlinked lock never wrote through


def test_the_run_lock_a_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / ".lock").mkdir(parents=True)
    message = r"cannot lock: the lock file is a directory, not a file \(.*run/.lock\)"
    with pytest.raises(RunDirError, match=message):
        RunDir(run).check_locks([])
    with pytest.raises(RunDirError, match=message):
        with RunDir(run).lock():
            pass
