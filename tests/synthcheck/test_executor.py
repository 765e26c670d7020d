"""The executors: `--executor ray` writes the same bytes as the local executor (generate,
score, a whole `discover`), and executor config errors are clear. Real Ray, started once for
the module with 2 CPUs; a tiny Llama built in the test is the generator and the reference."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

from synth.core import ConfigError, ModelNotAvailable  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from synthcheck._executors import ExecutorConfig, LocalExecutor, make_executor  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from tests.synth.synth_fixtures import build_tiny_llama  # noqa: E402

DOCS = ["I watched this movie last night with friends and we laughed a lot at it.",
        "The worst film I have seen in years, the script is a mess and far too long.",
        "An honest and moving drama whose quiet scenes stay with you for a long time.",
        "Every frame of this animated feature is a small painting and the songs are lovely."]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """Ray on this machine with 2 CPUs; workers import this checkout and the test helpers."""
    ray = pytest.importorskip("ray")
    path = os.pathsep.join([str(ROOT), str(HERE), *sys.path])
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING",
             runtime_env={"env_vars": {"PYTHONPATH": path, "HF_HUB_OFFLINE": "1"}})
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def cfg_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("executor")
    tiny = build_tiny_llama(folder / "tiny")
    (folder / "docs.txt").write_text("\n".join(DOCS) + "\n")
    cfg = {
        "name": "mini",
        "corpus": {"source": str(folder / "docs.txt")},
        "queries": {"k": 3},
        "generator": {"model": f"hf:{tiny}", "n": 20, "shard_size": 5, "batch_size": 4,
                      "device": "cpu", "sampling": {"max_new_tokens": 24},
                      "segment": {"min_words": 2, "max_words": 60}},
        # the parity toy disagrees with the tiny reference on some gibberish sentences, so
        # the run has a hard subset under the one judging rule
        "task_models": [{"name": "toy", "spec": "python:toy_models:parity_sentiment"},
                        {"name": "llm", "spec": f"fewshot:hf:{tiny}"}],
        "reference": {"model": f"hf:{tiny}", "calibration": "contextual", "device": "cpu",
                      "batch_size": 4},
        "ranking": {"top_fraction": 0.5, "min_reference_margin": 0.0},
        "mining": {"min_support": 2},
        "focus": {"candidates": 3, "budget": 4},
        "evaluation": {"size": 8},
    }
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def local_run(cfg_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference result: `discover` with the local executor."""
    run = tmp_path_factory.mktemp("local") / "r"
    assert main(["discover", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    return run


def outputs(run: Path, pattern: str) -> dict[str, bytes]:
    """Every file under ``run`` matching ``pattern``, by relative path."""
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.glob(pattern))
            if p.is_file()}


def markers(run: Path) -> dict[str, dict[str, Any]]:
    """The shard done markers without the fields that differ between any two runs."""
    out = {}
    for p in sorted(run.glob("corpus/shard-*.done.json")):
        info = json.loads(p.read_text())
        out[p.name] = {k: v for k, v in info.items() if k != "seconds"}
    return out


def test_generate_and_score_with_ray_are_byte_identical(
        ray_cluster: Any, cfg_path: Path, local_run: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The workers hold the models, not this process: it never loads one.
    import discovery._chunks
    import discovery._reference
    import synth.engines._registry

    def no_local_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the driver loaded a model")
    # What loads the generator (patched here only: the workers' copy of the module is not,
    # and the setup they receive names synth._generate.generator_backend by reference).
    monkeypatch.setattr(synth.engines._registry, "make_backend", no_local_model)
    monkeypatch.setattr(discovery._chunks, "build_task_scorers", no_local_model)
    monkeypatch.setattr(discovery._reference.FewShotReference, "from_config", no_local_model)

    run = tmp_path / "r"
    args = ["-c", str(cfg_path), "--run", str(run), "-q", "--executor", "ray"]
    assert main(["generate", *args, "--show", "0"]) == 0
    corpus = outputs(run, "corpus/shard-*.jsonl")
    assert len(corpus) == 4 and sum(c.count(b"\n") for c in corpus.values()) > 0
    assert corpus == outputs(local_run, "corpus/shard-*.jsonl")
    assert markers(run) == markers(local_run)
    assert outputs(run, "corpus/stats.json") == outputs(local_run, "corpus/stats.json")

    assert main(["score", *args]) == 0
    scores = outputs(run, "scores/*.jsonl")
    assert set(scores) == {"scores/task-toy.jsonl", "scores/task-llm.jsonl",
                           "scores/reference.jsonl"}
    assert scores == outputs(local_run, "scores/*.jsonl")
    # Every resumable chunk and the cached content-free log-probs are the same bytes too
    # (the local run's evaluate stage also kept its held-out raw log-probs there).
    local_parts = {k: v for k, v in outputs(local_run, "scores/.parts/**/*").items()
                   if "/heldout-" not in k}
    assert outputs(run, "scores/.parts/**/*") == local_parts


def test_discover_with_ray_end_to_end(ray_cluster: Any, cfg_path: Path, local_run: Path,
                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    run = tmp_path / "r"
    assert main(["discover", "-c", str(cfg_path), "--run", str(run), "-q",
                 "--executor", "ray"]) == 0
    assert "== synthcheck discover: mini" in capsys.readouterr().out
    manifest = json.loads((run / "manifest.json").read_text())
    assert {s: manifest["stages"][s]["status"] for s in ("generate", "score", "rank", "mine")} \
        == dict.fromkeys(("generate", "score", "rank", "mine"), "complete")
    for name in ("hard.jsonl", "ngrams.jsonl", "ngrams.csv", "scores/reference.jsonl",
                 "corpus/shard-00003.jsonl"):
        assert (run / name).read_bytes() == (local_run / name).read_bytes(), name
    # The executor is a runtime field: the same stage hashes as the local run's.
    local = json.loads((local_run / "manifest.json").read_text())
    assert {s: v.get("stage_hash") for s, v in manifest["stages"].items()} == \
        {s: v.get("stage_hash") for s, v in local["stages"].items()}
    assert manifest["config"]["executor"]["kind"] == "ray"


def test_a_model_error_in_a_ray_worker_is_the_users_error(
        ray_cluster: Any, cfg_path: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    code = main(["generate", "-c", str(cfg_path), "--run", str(run), "-q", "--executor", "ray",
                 "-P", "generator.model=hf:/nonexistent/model"])
    assert code == 2
    assert "error: model folder not found: /nonexistent/model" in capsys.readouterr().err
    assert not run.exists()  # refused before anything was written


def test_num_workers_beyond_the_cluster_is_refused(ray_cluster: Any) -> None:
    with make_executor(ExecutorConfig(kind="ray", num_workers=3)) as executor, \
            pytest.raises(ConfigError, match=r"num_workers = 3 does not fit the Ray cluster "
                                             r"\(2 CPUs"):
        executor.start("k", dict)
    with make_executor(ExecutorConfig(kind="ray", cpus_per_worker=2)) as executor:
        executor.start("k", dict)
        assert executor.workers() == 1  # type: ignore[attr-defined]
    assert ray_cluster.is_initialized()  # a Ray started by someone else is left running


def test_unknown_executor_kind(cfg_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"executor\.kind.*unknown executor 'rey': "
                                          r"did you mean 'ray'"):
        load_run_config(cfg_path, ["executor.kind=rey"])


def test_ray_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ModelNotAvailable, match=r"needs Ray, which is not installed "
                                                r"\(executor\.kind\): pip install "
                                                r"\"synthcheck\[ray\]\""):
        make_executor(ExecutorConfig(kind="ray"))


def test_an_unreachable_ray_address_is_refused_in_seconds() -> None:
    """Issue 19: a Ray address nothing answers on took Ray 23 s of retries to refuse."""
    import socket
    import time

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        make_executor(ExecutorConfig(kind="ray", address=f"127.0.0.1:{port}"))
    assert time.perf_counter() - start < 5
    assert info.value.format() == (
        f"cannot reach the Ray cluster at '127.0.0.1:{port}' (Connection refused within 3 s) "
        f"(executor.address): start it (`ray start --head` on its head node), check the host "
        f"and port, or leave executor.address empty to start Ray here")


def test_local_executor_keeps_one_state_and_pulls_lazily() -> None:
    built: list[str] = []
    pulled: list[int] = []

    def items() -> Iterator[int]:
        for i in range(3):
            pulled.append(i)
            yield i

    ex = LocalExecutor()
    results = ex.map("a", lambda: built.append("a") or 10, lambda s, i: s + i, items())
    assert next(results) == (0, 10) and pulled == [0]  # the next unit is not claimed yet
    assert list(results) == [(1, 11), (2, 12)]
    assert list(ex.map("a", lambda: built.append("a") or 10, lambda s, i: s, [5])) == [(5, 10)]
    assert list(ex.map("b", lambda: built.append("b") or 1, lambda s, i: s, [5])) == [(5, 1)]
    assert built == ["a", "b"]
