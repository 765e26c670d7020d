"""Reliability of the ground floor and stage 1: seeds, strict configs, YAML limits, encodings,
the run directory's lock, shard claims, stale temp files, write errors and the cache folder."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from synth import iter_corpus, load_seed_corpus, merge_runs, run_generation
from synth._config import SeedCorpusConfig
from synth.core import (
    ConfigError,
    DataError,
    RunDir,
    RunDirError,
    cache_dir,
    derive_seed,
    load_config,
    read_jsonl,
    write_jsonl,
)
from synthcheck import load_run_config
from synthcheck._config import RunConfig
from tests.synth.fakes import FakeBackend
from tests.synth.synth_fixtures import write_config

ROOT = Path(__file__).parents[2]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def dead_pid() -> int:
    """The pid of a process of this host that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


class SeedRecorder(FakeBackend):
    def __init__(self) -> None:
        super().__init__()
        self.seeds: list[int] = []

    def generate(self, prompts, params, seeds):  # type: ignore[no-untyped-def]
        self.seeds.extend(seeds)
        return super().generate(prompts, params, seeds)


# --- 1. seeds -------------------------------------------------------------------------------

def test_neighbouring_run_seeds_use_disjoint_prompt_seeds(tmp_path: Path, corpus_file: Path
                                                           ) -> None:
    cfg_path = write_config(tmp_path / "c.yaml", corpus_file, n=64, shard_size=16)
    used = {}
    for seed in (0, 1):
        cfg = load_run_config(cfg_path, [f"generator.seed={seed}"])
        backend = SeedRecorder()
        run_generation(cfg, tmp_path / f"s{seed}", backend=backend, progress=False)
        used[seed] = backend.seeds
        assert backend.seeds == [derive_seed(seed, "prompt", i) for i in range(64)]
        records = [r for p in sorted((tmp_path / f"s{seed}" / "corpus").glob("shard-*.jsonl"))
                   for r in read_jsonl(p)]
        assert records and all(r["seed"] == derive_seed(seed, "prompt", int(r["id"][1:]))
                               for r in records)
    assert len(set(used[0])) == 64 and not set(used[0]) & set(used[1])


# --- 2. no shrinking -------------------------------------------------------------------------

def test_shrinking_a_finished_corpus_is_refused_and_changes_nothing(tmp_path: Path,
                                                                    corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file, n=10, shard_size=3))
    run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    before = snapshot(tmp_path / "r")
    for n in (9, 7, 1):
        with pytest.raises(RunDirError, match=r"holds a corpus of 10 prompts; --n = "
                                              rf"{n} would shrink it.*--n 10 or more"):
            run_generation(cfg, tmp_path / "r", n=n, resume=True, backend=FakeBackend(),
                           progress=False)
    small = load_run_config(tmp_path / "c.yaml", ["generator.n=4"])
    with pytest.raises(RunDirError, match="generator.n = 4 would shrink it"):
        run_generation(small, tmp_path / "r", resume=True, backend=FakeBackend(), progress=False)
    assert snapshot(tmp_path / "r") == before
    # growing is allowed and keeps the finished shards
    report = run_generation(cfg, tmp_path / "r", n=13, resume=True, backend=FakeBackend(),
                            progress=False)
    assert report.complete and report.shards_written == [3, 4]


def test_shards_beyond_the_corpus_are_never_read(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file, n=6, shard_size=3))
    run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    ids = [r["id"] for r in iter_corpus(tmp_path / "r")]
    stray = tmp_path / "r" / "corpus" / "shard-00007.jsonl"
    stray.write_text(json.dumps({"id": "stray", "text": "a stray shard."}) + "\n")
    assert [r["id"] for r in iter_corpus(tmp_path / "r")] == ids


# --- 3. strict configs and YAML limits -------------------------------------------------------

def _cfg(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "pattern"), [
    ("generator:\n  n: true\n", r"'generator.n': Input should be a valid integer; got True "
                                r"\(.*c.yaml, field 'generator.n', line 2\)"),
    ("generator:\n  segment: {include_query: 1}\n", r"'generator.segment.include_query': Input "
                                                     r"should be a valid boolean; got 1"),
    ("generator:\n  sampling:\n    temperature: .inf\n",
     r"'generator.sampling.temperature': inf is not a finite number \(.*line 3\)"),
    ("generator:\n  sampling: {top_p: .nan}\n", "nan is not a finite number"),
    ("generator:\n  n: 1000000000000\n",
     r"'generator': 1,000,000,000,000 prompts in 15,625,000,000 shard\(s\) of 64 is "
     r"unreasonably large.*"
     r"400 TB of corpus and 115,741 days"),
    ("generator:\n  n: 2000\n  shard_size: 0\n", "greater than or equal to 1"),
    ("corpus: {encoding: klingon}\n", "unknown encoding 'klingon'"),
    ("generator:\n  n: '12'\n", "Input should be a valid integer; got '12'"),
])
def test_strict_config_values(tmp_path: Path, text: str, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        load_config(_cfg(tmp_path, text), RunConfig)


def test_ints_still_fill_float_fields_and_exponents_are_numbers(tmp_path: Path) -> None:
    cfg = load_config(_cfg(tmp_path, "generator:\n  sampling: {temperature: 1, top_p: 5e-1}\n"),
                      RunConfig)
    assert cfg.generator.sampling.temperature == 1.0 and cfg.generator.sampling.top_p == 0.5


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(rows) + "\n")
    assert path.stat().st_size < 600
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"expands to more than 1,000,000 nodes.*alias bomb"):
        load_config(path, RunConfig)
    assert time.perf_counter() - start < 5
    (tmp_path / "rec.yaml").write_text("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match=r"recursive anchor\) \(.*rec.yaml, line 1\)"):
        load_config(tmp_path / "rec.yaml", RunConfig)


def test_binary_config_and_directory_are_named(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"generator:\n  model: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"YAML file is not valid utf-8 text \(byte 0xe9 at "
                                          r"byte offset 23\) \(.*c.yaml\)"):
        load_config(path, RunConfig)
    with pytest.raises(ConfigError, match="expected a YAML file but this is a directory"):
        load_config(tmp_path, RunConfig)


def test_overrides_are_blamed_on_the_command_line_and_index_lists(tmp_path: Path) -> None:
    path = _cfg(tmp_path, """\
        task_models:
          - {name: a, spec: "demo:sentiment"}
        generator:
          n: 8
        """)
    with pytest.raises(ConfigError, match=r"\(-P generator.n=x, field 'generator.n'\)") as info:
        load_config(path, RunConfig, ["generator.n=x"])
    assert "line" not in str(info.value)
    cfg = load_config(path, RunConfig, ["task_models.0.spec=demo:other"])
    assert cfg.task_models[0].spec == "demo:other"
    with pytest.raises(ConfigError, match=r"index '3' is not an item of a list of 1 "
                                          r"\(-P task_models.3.spec=x\)"):
        load_config(path, RunConfig, ["task_models.3.spec=x"])
    with pytest.raises(ConfigError, match=r"indexes item 0 of 'reference.shots', which the "
                                          r"config does not hold as a list"):
        load_config(path, RunConfig, ["reference.shots.0.text=x"])


def test_seed_corpus_encoding(tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_bytes("Un film très réussi et très drôle du début à la fin.\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"seed corpus is not valid utf-8 text \(byte 0xe8 at "
                                        r"byte offset 10\).*set corpus.encoding to its encoding"):
        load_seed_corpus(SeedCorpusConfig(source=str(path)))
    docs = load_seed_corpus(SeedCorpusConfig(source=str(path), encoding="latin-1"))
    assert docs[0].text.startswith("Un film très réussi")
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text('{"text": "fine text here"}\n{"text": null}\n')
    with pytest.raises(DataError, match=r"field 'text' is null, not a string.*line 2"):
        load_seed_corpus(SeedCorpusConfig(source=str(jsonl)))


def test_binary_records_and_manifest_are_named(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(DataError, match=r"not valid utf-8 text \(byte 0xff at byte offset 16\) "
                                        r"\(.*x.jsonl, line 2\)"):
        read_jsonl(path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_bytes(b"\x00\x9f\x92\x96")
    with pytest.raises(RunDirError, match=r"manifest.json is not valid utf-8 text \(byte 0x9f "
                                          r"at byte offset 1\)"):
        RunDir(run).read_manifest()


# --- 4. locking and claims -------------------------------------------------------------------

def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_two_processes_times_200_stage_writes_keep_all_400(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    run.open({"x": 1}, "h0", stage="generate")
    run.commit()
    script = textwrap.dedent(f"""
        import sys
        from synth.core import RunDir
        run = RunDir({str(run.path)!r})
        for i in range(200):
            run.set_stage(f"p{{sys.argv[1]}}-{{i}}", "running", i=i)
            run.complete(f"p{{sys.argv[1]}}-{{i}}", "h", i=i)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(k)], env=_env())
             for k in range(2)]
    assert [p.wait() for p in procs] == [0, 0]
    manifest = run.read_manifest()
    assert len(manifest["stages"]) == 400 and len(manifest["stage_hashes"]) == 401
    assert all(e["status"] == "complete" for e in manifest["stages"].values())


def test_four_shard_processes_at_once_match_one_run(tmp_path: Path, corpus_file: Path,
                                                    tiny_llama_dir: Path) -> None:
    cfg_path = write_config(tmp_path / "c.yaml", corpus_file, model=f"hf:{tiny_llama_dir}",
                            n=16, shard_size=2, device="cpu",
                            sampling={"max_new_tokens": 10})
    run_generation(load_run_config(cfg_path), tmp_path / "one", progress=False)
    cmd = [sys.executable, "-m", "synthcheck.cli", "generate", "-c", str(cfg_path),
           "--run", str(tmp_path / "shared"), "--resume", "-q", "--show", "0"]
    procs = [subprocess.Popen(cmd + ["--shard", f"{i}/4"], env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    written = [int(out.split("shards written ")[1].split(",")[0]) for out, _ in outs]
    assert written == [2, 2, 2, 2]  # 8 shards, none generated twice
    assert snapshot(tmp_path / "shared" / "corpus") .keys() == \
        snapshot(tmp_path / "one" / "corpus").keys()
    for name in (f"shard-{s:05d}.jsonl" for s in range(8)):
        assert (tmp_path / "shared" / "corpus" / name).read_bytes() == \
            (tmp_path / "one" / "corpus" / name).read_bytes()
    manifest = RunDir(tmp_path / "shared").read_manifest()
    assert manifest["stages"]["generate"]["status"] == "complete"
    assert manifest["stages"]["generate"]["shards"] == 8
    stats = json.loads((tmp_path / "shared" / "corpus" / "stats.json").read_text())
    assert stats == {**json.loads((tmp_path / "one" / "corpus" / "stats.json").read_text()),
                     "git_commit": stats["git_commit"]}
    assert not (tmp_path / "shared" / "corpus" / ".claims").exists()


def test_plain_concurrent_generates_claim_disjoint_shards(tmp_path: Path, corpus_file: Path
                                                          ) -> None:
    cfg_path = write_config(tmp_path / "c.yaml", corpus_file, n=24, shard_size=2)
    run_generation(load_run_config(cfg_path), tmp_path / "one", backend=FakeBackend(),
                   progress=False)
    script = textwrap.dedent(f"""
        from tests.synth.fakes import FakeBackend
        from synth import run_generation
        from synthcheck import load_run_config
        cfg = load_run_config({str(cfg_path)!r})
        report = run_generation(cfg, {str(tmp_path / 'shared')!r},
                                backend=FakeBackend(delay=0.1), progress=False, resume=True)
        print(",".join(map(str, report.shards_written)), report.complete)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], env=_env(), text=True,
                              stdout=subprocess.PIPE) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    shards = [int(s) for out in outs for s in out[0].split(",") if s]
    assert sorted(shards) == list(range(12))  # every shard written exactly once
    assert all(out[1] == "True" for out in outs)  # each waited for the others: complete
    for name in (f"shard-{s:05d}.jsonl" for s in range(12)):
        assert (tmp_path / "shared" / "corpus" / name).read_bytes() == \
            (tmp_path / "one" / "corpus" / name).read_bytes()


def test_a_dead_writers_claim_is_taken_over_a_live_one_waited_for(tmp_path: Path,
                                                                  corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file, n=6, shard_size=3))
    claims = tmp_path / "r" / "corpus" / ".claims"
    claims.mkdir(parents=True)
    (claims / "shard-00000.claim").write_text(f"{dead_pid()}@{socket.gethostname()}\n")
    report = run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    assert report.shards_written == [0, 1] and report.complete
    assert not claims.exists()


# --- 5. rejected commands, stale temp files, merge -------------------------------------------

def test_open_records_the_config_only_with_work(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    run.open({"v": 1}, "h1", stage="generate")
    run.complete("generate", "h1", prompts=3)
    before = run.manifest_path.read_bytes()
    run.open({"v": 1, "batch_size": 64}, "h1", stage="generate")  # nothing done with it
    run.open_stage({"v": 2}, "score", "s1")  # a rejected command stops here
    assert run.manifest_path.read_bytes() == before
    run.complete("score", "s1")
    assert run.read_manifest()["config"] == {"v": 2}


def test_rejected_generate_leaves_every_byte(tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file, n=6, shard_size=3))
    run_generation(cfg, tmp_path / "r", backend=FakeBackend(), progress=False)
    before = snapshot(tmp_path / "r")
    # nothing to do with another runtime setting: the manifest's config stays
    other = load_run_config(tmp_path / "c.yaml", ["generator.batch_size=7"])
    run_generation(other, tmp_path / "r", resume=True, backend=FakeBackend(), progress=False)
    assert snapshot(tmp_path / "r") == before


def test_stale_temp_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    (run.path / "verify" / "s").mkdir(parents=True)
    host = socket.gethostname()
    dead = run.path / "verify" / "s" / f".cases.jsonl.~{dead_pid()}@{host}~abc.tmp"
    live = run.path / "verify" / "s" / f".cases.jsonl.~{os.getpid()}@{host}~def.tmp"
    old = run.path / ".manifest.json.xyz.tmp"  # an older version's name: removed after an hour
    young = run.path / ".stats.json.xyz.tmp"
    for path in (dead, live, old, young):
        path.write_text("partial")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    run.open({"x": 1}, "h", stage="verify")
    assert not dead.exists() and not old.exists() and live.exists() and young.exists()


def test_merge_finishes_a_copy_killed_between_shard_and_marker(tmp_path: Path,
                                                               corpus_file: Path) -> None:
    cfg_path = write_config(tmp_path / "c.yaml", corpus_file, n=6, shard_size=3)
    cfg = load_run_config(cfg_path)
    run_generation(cfg, tmp_path / "p", backend=FakeBackend(), progress=False)
    out = tmp_path / "m" / "corpus"
    out.mkdir(parents=True)
    shard = "shard-00000.jsonl"
    (out / shard).write_bytes((tmp_path / "p" / "corpus" / shard).read_bytes())
    stats = merge_runs(cfg, tmp_path / "m", [tmp_path / "p"])
    assert stats["shards"] == 2
    assert snapshot(tmp_path / "m" / "corpus").keys() == snapshot(tmp_path / "p" /
                                                                 "corpus").keys()
    assert not list((tmp_path / "m").rglob("*.tmp"))


# --- 6. environment --------------------------------------------------------------------------

def test_write_errors_name_the_path_and_keep_the_old_file(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.jsonl"
    write_jsonl(path, [{"a": 1}])

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DataError, match=r"cannot write: the disk is full \(.*x.jsonl\): free "
                                        r"disk space"):
        write_jsonl(path, [{"a": 2}])
    assert read_jsonl(path) == [{"a": 1}] and not list(tmp_path.glob(".*.tmp"))


def test_run_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(RunDirError, match=r"the run path is a file, not a directory"):
        RunDir(tmp_path / "f")


def test_cache_folder_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "file"))
    with pytest.raises(ConfigError, match=r"cache folder is a file, not a folder "
                                          r"\(\$SYNTHCHECK_CACHE="):
        cache_dir()
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "ro"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root ignores permissions
    with pytest.raises(ConfigError, match="the cache folder is not writable"):
        cache_dir()
    monkeypatch.undo()
    monkeypatch.delenv("SYNTHCHECK_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    with pytest.raises(ConfigError, match=r"home folder does not exist \(\$HOME="):
        cache_dir()
    assert not (tmp_path / "nonexistent").exists()
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache" and (tmp_path / "cache").is_dir()


def test_a_long_list_is_not_called_an_alias_bomb() -> None:
    """Issue 19: a lexicon of 1,000,000 values written out was called an "alias bomb"."""
    import yaml

    from synth.core._config import _expanded_size

    node = yaml.compose("name: big\nlexicons:\n  THING: [a, b, c, d, e, f, g, h, i, j, k]\n")
    with pytest.raises(ConfigError) as info:
        _expanded_size(node, "s.yaml", limit=10)
    assert info.value.format() == (
        "YAML document holds more than 10 values (the list here has 11 items) "
        "(s.yaml, line 3): keep long lists of values in a text file, one value a line (a "
        "suite lexicon reads one with 'file: values.txt'), or split the document")
    bomb = yaml.compose("a: &a [x, x, x]\nb: [*a, *a, *a]\n")
    with pytest.raises(ConfigError, match=r"expands to more than 10 nodes through its aliases"):
        _expanded_size(bomb, "s.yaml", limit=10)
