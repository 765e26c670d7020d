"""The generation job: determinism, resumption after SIGKILL, array-job shards and merge."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from synth import iter_corpus, merge_runs, run_generation
from synth.core import RunDirError, read_jsonl
from synthcheck import load_run_config
from tests.synth.fakes import FakeBackend
from tests.synth.synth_fixtures import write_config

ROOT = Path(__file__).resolve().parents[2]  # the checkout, for child processes


def corpus_bytes(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "corpus").glob("shard-*.jsonl"))}


def test_same_seed_same_bytes_other_seed_other_text(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    run_generation(cfg, tmp_path / "a", backend=FakeBackend(), progress=False)
    run_generation(cfg, tmp_path / "b", backend=FakeBackend(), progress=False)
    assert corpus_bytes(tmp_path / "a") == corpus_bytes(tmp_path / "b")
    assert len(corpus_bytes(tmp_path / "a")) == 4  # 10 prompts in shards of 3
    other = load_run_config(tmp_path / "c.yaml", ["generator.seed=1"])
    run_generation(other, tmp_path / "c", backend=FakeBackend(), progress=False)
    texts = {r["text"] for r in iter_corpus(tmp_path / "a")}
    assert texts != {r["text"] for r in iter_corpus(tmp_path / "c")}


def test_records_and_manifest(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    report = run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    assert report.complete and report.prompts == 10
    rec = read_jsonl(tmp_path / "r" / "corpus" / "shard-00001.jsonl")[0]
    assert set(rec) == {"id", "text", "query", "raw", "shard", "seed"}
    assert rec["shard"] == 1 and rec["id"].startswith("q") and rec["text"].endswith(".")
    assert rec["text"].startswith(rec["query"])
    manifest = (tmp_path / "r" / "manifest.json").read_text()
    for key in ('"config_hash"', '"git_commit"', '"version"', '"complete"'):
        assert key in manifest
    ids = [r["id"] for r in iter_corpus(tmp_path / "r")]
    assert len(ids) == len(set(ids)) <= report.kept


def test_real_tiny_model_is_deterministic(tmp_path: Path, corpus_file: Path, tiny_llama_dir: Path
                                          ) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file,
                                       model=f"hf:{tiny_llama_dir}", n=6,
                                       sampling={"max_new_tokens": 12}))
    run_generation(cfg, tmp_path / "a", progress=False)
    run_generation(cfg, tmp_path / "b", progress=False)
    assert corpus_bytes(tmp_path / "a") == corpus_bytes(tmp_path / "b")


def test_batch_size_and_n_stay_out_of_the_hash(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    run_generation(cfg, tmp_path / "r", n=4, backend=FakeBackend(), progress=False)
    bigger = load_run_config(tmp_path / "c.yaml", ["generator.batch_size=1"])
    report = run_generation(bigger, tmp_path / "r", n=10, resume=True, backend=FakeBackend(),
                            progress=False)
    # Shard 0 (3 prompts) was done; shard 1 had 1 prompt of 3 and is redone.
    assert report.shards_skipped == [0] and report.shards_written == [1, 2, 3]
    run_generation(cfg, tmp_path / "full", backend=FakeBackend(), progress=False)
    assert corpus_bytes(tmp_path / "r") == corpus_bytes(tmp_path / "full")


def test_resume_refuses_changed_config_and_keeps_files(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    before = corpus_bytes(tmp_path / "r")
    changed = load_run_config(tmp_path / "c.yaml", ["generator.sampling.top_p=0.5"])
    with pytest.raises(RunDirError, match=r"belongs to another config.*--resume refused"):
        run_generation(changed, tmp_path / "r", resume=True, backend=FakeBackend())
    with pytest.raises(RunDirError, match="already holds 4 finished shard"):
        run_generation(cfg, tmp_path / "r", backend=FakeBackend())
    assert corpus_bytes(tmp_path / "r") == before


def test_array_job_shards_and_merge_equal_one_run(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    run_generation(cfg, tmp_path / "full", backend=FakeBackend(), progress=False)
    r0 = run_generation(cfg, tmp_path / "p0", shard=(0, 2), backend=FakeBackend(), progress=False)
    r1 = run_generation(cfg, tmp_path / "p1", shard=(1, 2), backend=FakeBackend(), progress=False)
    assert r0.shards_written == [0, 2] and r1.shards_written == [1, 3] and not r0.complete
    with pytest.raises(RunDirError, match=r"2 shard\(s\) missing after merge: 1, 3"):
        merge_runs(cfg, tmp_path / "m0", [tmp_path / "p0"])
    stats = merge_runs(cfg, tmp_path / "m", [tmp_path / "p0", tmp_path / "p1"])
    assert corpus_bytes(tmp_path / "m") == corpus_bytes(tmp_path / "full")
    assert stats["prompts"] == 10
    ids = [r["id"] for r in iter_corpus(tmp_path / "m")]
    assert ids == [r["id"] for r in iter_corpus(tmp_path / "full")] and len(ids) == len(set(ids))


def test_sigkill_then_resume_is_byte_identical(tmp_path: Path, corpus_file: Path) -> None:
    cfg_path = write_config(tmp_path / "c.yaml", corpus_file, n=30)
    cfg = load_run_config(cfg_path)
    run_generation(cfg, tmp_path / "full", backend=FakeBackend(), progress=False)
    script = textwrap.dedent(f"""
        from tests.synth.fakes import FakeBackend
        from synth import run_generation
        from synthcheck import load_run_config
        cfg = load_run_config({str(cfg_path)!r})
        run_generation(cfg, {str(tmp_path / 'killed')!r}, backend=FakeBackend(delay=0.3),
                       progress=False, resume=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script],
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    marker = tmp_path / "killed" / "corpus" / "shard-00002.done.json"
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = sorted((tmp_path / "killed" / "corpus").glob("*.done.json"))
    assert 3 <= len(done) < 10, "killed after some shards and before the end"
    report = run_generation(cfg, tmp_path / "killed", resume=True, backend=FakeBackend(),
                            progress=False)
    assert report.shards_skipped and report.complete
    assert not list((tmp_path / "killed" / "corpus").glob(".*.tmp"))  # stale temp files removed
    assert corpus_bytes(tmp_path / "killed") == corpus_bytes(tmp_path / "full")
    ids = [r["id"] for r in iter_corpus(tmp_path / "killed")]
    assert len(ids) == len(set(ids))
    assert ids == [r["id"] for r in iter_corpus(tmp_path / "full")]


def test_chat_style_prompts_go_through_the_chat_template(tmp_path: Path, corpus_file: Path
                                                         ) -> None:
    cfg = load_run_config(write_config(
        tmp_path / "c.yaml", corpus_file, n=3,
        prompt={"style": "chat", "template": "Write one review sentence starting: {query}",
                "system": "You are a film critic."}))
    backend = FakeBackend()
    run_generation(cfg, tmp_path / "r", backend=backend, progress=False)
    prompts = backend.calls[0]
    assert all(p.startswith("<|user|>Write one review sentence starting: ") for p in prompts)
    for rec in iter_corpus(tmp_path / "r"):
        assert not rec["text"].startswith(rec["query"])  # chat output stands alone
        assert rec["text"] == rec["raw"].strip().split(". ")[0] + "."


def test_shard_size_is_in_the_hash(tmp_path: Path, corpus_file: Path) -> None:
    """Shard size decides which file (and "shard" field) a prompt lands in: part of the hash."""
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file))
    run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    before = corpus_bytes(tmp_path / "r")
    other = load_run_config(tmp_path / "c.yaml", ["generator.shard_size=2"])
    with pytest.raises(RunDirError, match="belongs to another config"):
        run_generation(other, tmp_path / "r", resume=True, backend=FakeBackend())
    assert corpus_bytes(tmp_path / "r") == before


class CuttingBackend(FakeBackend):
    """Every third prompt runs into the token limit mid-sentence (the rest end a sentence)."""

    def generate(self, prompts, params, seeds):  # type: ignore[no-untyped-def]
        from synth.engines import Generation

        out = super().generate(prompts, params, seeds)
        return [Generation(" and the story of a family which could be", params.max_new_tokens)
                if seed % 3 == 0 else g for seed, g in zip(seeds, out, strict=True)]


@pytest.mark.parametrize("drop", [True, False])
def test_rows_cut_by_the_token_limit_are_dropped_as_truncated(tmp_path: Path, corpus_file: Path,
                                                              drop: bool) -> None:
    import json

    cfg = load_run_config(write_config(
        tmp_path / "c.yaml", corpus_file,
        segment={"min_words": 3, "max_words": 40, "drop_truncated": drop}))
    backend = CuttingBackend()
    report = run_generation(cfg, tmp_path / "r", backend=backend, progress=False)
    seeds = [r["seed"] for r in iter_corpus(tmp_path / "r")]
    cut = sum(1 for call in backend.calls for _ in call)  # prompts generated
    stats = json.loads((tmp_path / "r" / "corpus" / "stats.json").read_text())
    texts = [r["text"] for r in iter_corpus(tmp_path / "r")]
    if drop:
        assert all(s % 3 for s in seeds)
        assert not any(t.endswith("which could be") for t in texts)
        assert stats["dropped"].get("truncated", 0) == report.dropped["truncated"] > 0
        assert stats["kept"] + sum(stats["dropped"].values()) == cut == 10
    else:
        assert "truncated" not in stats["dropped"]
        assert any(t.endswith("which could be") for t in texts)


def test_generator_backend_takes_the_generator_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """Focus rounds build their backend from the generator section alone (they hold no
    Stage1Config): the engine, device, dtype and batch size all come from it."""
    import synth.engines._registry as registry
    from synth import GeneratorConfig, generator_backend

    calls: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(registry, "make_backend",
                        lambda model, **kw: calls.append((model, kw)) or "backend")
    gen = GeneratorConfig(model="hf:some/model", device="cpu", dtype="float32", batch_size=7)
    assert generator_backend(gen) == "backend"
    [(model, kw)] = calls
    assert (model, kw["backend"], kw["device"], kw["dtype"], kw["batch_size"]) == (
        "hf:some/model", "hf", "cpu", "float32", 7)
    assert callable(kw["sentence_done"])
