"""`synthcheck discover`: stage skipping by hash, a kill during scoring, a suite edit."""

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
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent

from formalize import ReviewLog  # noqa: E402
from synth.core import RunDirError  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from synthcheck._pipeline import discover  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from synthcheck.stages import STAGE_NAMES as STAGES  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402

# A child process's path: the checkout (`tests.synth.fakes`) and tests/synthcheck
# (`python:toy_models`).
CHILD_PATH = os.pathsep.join([str(HERE.parents[1]), str(HERE)])
SUITE = {
    "name": "mini", "labels": ["negative", "positive"], "seed": 0,
    "tests": [
        {"name": "positive adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {NOUN} is {POS_ADJ}.", "label": "positive"},
        {"name": "negative adjective", "capability": "Vocabulary", "type": "mft",
         "template": "This {NOUN} is {NEG_ADJ}.", "label": "negative"},
    ],
}


@pytest.fixture
def cfg_path(tmp_path: Path, mini_config: Callable[..., Path]) -> Path:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    return mini_config(
        generator={"model": "hf:unused", "n": 24, "shard_size": 8,
                   "segment": {"min_words": 3, "max_words": 40}},
        ranking={"top_fraction": 0.5, "min_reference_margin": 0.0},
        focus={"candidates": 3, "budget": 4},  # kept small: the stage has its own tests
        evaluation={"size": 12},
        labelled={"data": "evaluation", "size": 40, "semantic": False},
        # the plug-in finding sources (discovery._enrichment; discovery._perturbation, which
        # scores its edits with the task model) run as stages of their own
        slices={"sources": ["enriched", "perturbation"]},
        suite=str(tmp_path / "suite.yaml"),
        verify={"sample": 5},
    )


@pytest.fixture(autouse=True)
def _fake_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    runbuilder.fake_backends(monkeypatch)


def outputs(run: Path) -> dict[str, bytes]:
    names = ["scores/task-toy.jsonl", "scores/reference.jsonl", "hard.jsonl", "ngrams.jsonl",
             "verify/mini/summary.csv"]
    return {n: (run / n).read_bytes() for n in names}


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root``: its bytes and modification time (the stage locks under
    ``.locks/`` record who last held them, so they are bookkeeping, not outputs)."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))
            if p.is_file() and ".locks" not in p.relative_to(root).parts}


def ran(result: Any) -> set[str]:
    return {k for k, v in result.stages.items() if v == "ran"}


def test_rerun_skips_current_stages(cfg_path: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    first = discover(cfg, run, progress=False, log=lambda s: None)
    assert first.stages == dict.fromkeys(STAGES, "ran")
    assert first.info["report"] == run / "report.html"
    assert (run / "summary.md").is_file()
    from synthcheck.stages import STAGES as DECLARED

    # Each declaration names the files its stage wrote.
    missing = [str(p) for st in DECLARED for p in st.outputs(st.sections(cfg), run)
               if not p.is_file()]
    assert missing == []
    # Every declared run file with a row model holds rows of that model.
    from synth.core import ARTIFACTS, iter_jsonl

    checked = set()
    for a in ARTIFACTS.values():
        for path in a.glob(run) if a.row is not None else []:
            for rec in iter_jsonl(path):
                a.validate(rec)
            checked.add(a.key)
    assert checked >= {"shard", "task_scores", "reference_scores", "hard", "ngrams", "slices",
                       "metadata", "words", "focus", "findings"}
    before = snapshot(run)
    again = discover(cfg, run, progress=False, log=lambda s: None)
    assert again.stages == dict.fromkeys(STAGES, "skipped (current)")
    assert again.info["report"] == run / "report.html"
    after = snapshot(run)
    # Not a byte nor a timestamp changed, the manifest's included.
    assert after == before

    # What only the report reads: a review decision, a lost report.html, a new report format.
    ReviewLog(run).tag(hardest_id(run), "task-model error", hypothesis="negation")
    assert ran(discover(cfg, run, progress=False, log=lambda s: None)) == {"report"}
    assert "| task-model error | 1 |" in (run / "summary.md").read_text()
    assert ran(discover(cfg, run, progress=False, log=lambda s: None)) == set()
    (run / "report.html").unlink()
    assert ran(discover(cfg, run, progress=False, log=lambda s: None)) == {"report"}
    assert (run / "report.html").is_file()
    import synthcheck.report

    monkeypatch.setattr(synthcheck.report, "REPORT_FORMAT", synthcheck.report.REPORT_FORMAT + 1)
    assert ran(discover(cfg, run, progress=False, log=lambda s: None)) == {"report"}
    own = ("report.html", "summary.md", "manifest.json")
    assert {k: v for k, v in snapshot(run).items() if k not in own and k in before} == \
        {k: v for k, v in before.items() if k not in own}


def hardest_id(run: Path) -> str:
    """The id of the run's hardest sentence."""
    return str(json.loads((run / "hard.jsonl").read_text().splitlines()[0])["id"])


def test_suite_edit_reruns_only_verify_and_report(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    suite = yaml.safe_load((tmp_path / "suite.yaml").read_text())
    suite["tests"].append({"name": "negated", "capability": "Negation", "type": "mft",
                           "template": "This {NOUN} is not {POS_ADJ}.", "label": "negative"})
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    before = snapshot(tmp_path / "r")
    again = discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert again.stages == {**dict.fromkeys(STAGES, "skipped (current)"),
                            "verify": "ran", "report": "ran"}
    assert "negated" in (tmp_path / "r" / "verify" / "mini" / "summary.csv").read_text()
    assert "negated" in (tmp_path / "r" / "summary.md").read_text()
    after = snapshot(tmp_path / "r")
    changed = {k for k in before if after.get(k) != before[k]}
    assert changed == {"manifest.json", "report.html", "summary.md",
                       *(f"verify/mini/{n}" for n in ("cases.jsonl", "examples.jsonl", "fills.csv",
                                                      "groups.csv", "summary.csv",
                                                      "summary.json"))}
    third = discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert third.stages == dict.fromkeys(STAGES, "skipped (current)")


def test_run_dir_of_another_config_is_refused(cfg_path: Path, tmp_path: Path) -> None:
    discover(load_run_config(cfg_path), tmp_path / "r", progress=False, log=lambda s: None)
    before = outputs(tmp_path / "r")
    other = load_run_config(cfg_path, ["generator.seed=7"])
    with pytest.raises(RunDirError, match="run directory belongs to another config"):
        discover(other, tmp_path / "r", progress=False, log=lambda s: None)
    assert outputs(tmp_path / "r") == before


def test_kill_during_scoring_then_rerun(cfg_path: Path, tmp_path: Path) -> None:
    cfg = load_run_config(cfg_path)
    discover(cfg, tmp_path / "full", progress=False, log=lambda s: None)
    script = textwrap.dedent(f"""
        from tests.synth.fakes import FakeBackend
        import synth._generate as gen
        import synth
        gen.generator_backend = synth.generator_backend = lambda g: FakeBackend()
        from synthcheck import load_run_config
        from synthcheck._pipeline import discover
        discover(load_run_config({str(cfg_path)!r}), {str(tmp_path / 'killed')!r},
                 progress=False)
    """)
    env = {**os.environ, "TOY_DELAY": "30", "PYTHONPATH": CHILD_PATH}
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


# -- the command line ------------------------------------------------------------------------
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_cli_prints_the_summary(cfg_path: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out
    log, summary = out.split("\n\n== synthcheck discover: ", 1)
    assert [line.split("]")[0] + "]" for line in log.splitlines() if "] estimate: " not in line] \
        == [f"[{s}]" for s in STAGES for _ in range(2)]
    assert "[report] ran in " in log
    lines = summary.splitlines()
    assert lines[0] == f"mini ({run}) =="

    def at(line: str) -> int:
        assert line in lines, (line, summary)
        return lines.index(line)

    # Held-out accuracy of the task model and the reference, as evaluated.
    reports = json.loads((run / "eval.json").read_text())["reports"]
    acc = [at(f"  {name:<12} acc {rep['accuracy']:.3f}  macro-F1 {rep['macro_f1']:.3f}  "
              f"(n={rep['n']})") for name, rep in (("toy", reports["toy"]),
                                                   ("reference", reports["reference"]))]
    assert at("held-out accuracy:") < acc[0] < acc[1]
    # The hard subset's precision on the same held-out scores, as eval.json records it: the
    # configured rule (abs_top, top 50%) keeps 6 of the 12 held-out examples.
    ev = json.loads((run / "eval.json").read_text())
    p = ev["hard_subset_precision"]
    assert p["n"] == 6 and p["metric"] == "abs_top" and ev["ranked_task_model"] == "toy"
    prec = at(f"hard-subset precision (abs_top, top 50%): {p['estimate']:.2f} "
              f"[{p['low']:.2f}, {p['high']:.2f}] on 6 held-out examples (of 12)")
    assert acc[1] < prec
    by = ev["hard_subset_precision_by_metric"]
    assert set(by) == {"abs_top", "signed", "kl", "js", "tv", "p_wrong"}
    by_metric = lines.index("  precision by ranking metric:", prec)
    assert any(line.startswith(f"    signed   {by['signed']['estimate']:.2f} [")
               for line in lines[by_metric + 1:by_metric + 8])
    for w in ev["warnings"]:
        assert at(f"warning: {w}") > prec
    # Corpus size: what the corpus shards hold.
    kept = sum(len(read_jsonl(p)) for p in sorted((run / "corpus").glob("shard-*.jsonl")))
    assert kept == 24
    corpus = at(f"corpus: {kept} sentences from 24 prompts (dropped: none)")
    assert prec < corpus
    # The 10 hardest sentences, with both models' probabilities from the score files.
    hard = read_jsonl(run / "hard.jsonl")
    task = {r["id"]: r["probs"] for r in read_jsonl(run / "scores" / "task-toy.jsonl")}
    ref = {r["id"]: r["probs"] for r in read_jsonl(run / "scores" / "reference.jsonl")}
    head = at(f"hard subset: {len(hard)} sentences (each a failure by that rule); the 10 "
              f"hardest:")
    rows = []
    for rec in hard[:10]:
        t, r = task[rec["id"]], ref[rec["id"]]
        rows.append(at(f"  {rec['rank']:>3}. div {rec['divergence']:.2f}  task [neg="
                       f"{t['negative']:.2f} pos={t['positive']:.2f}]  ref [neg="
                       f"{r['negative']:.2f} pos={r['positive']:.2f}]"))
        assert lines[rows[-1] + 1] == f"       {rec['text']}"
    assert corpus < head < rows[0] and rows == sorted(rows) and len(hard) > 10
    assert f"div {hard[10]['divergence']:.2f}" not in "\n".join(lines[rows[-1] + 2:])
    # The top n-grams with their statistics.
    ngrams = read_jsonl(run / "ngrams.jsonl")
    top = at(f"top {min(15, len(ngrams))} n-grams (hard vs corpus, by z):")
    for i, g in enumerate(ngrams[:15]):
        row = lines[top + 2 + i]
        assert row.startswith(f"  {g['ngram'][:27]:<28}{g['hard_count']:>6}{g['corpus_count']:>8}"
                              f"{g['log_odds']:>10.2f}{g['z']:>7.2f}"), row
    # The per-template table, with the fail rates the suite measured.
    verify = json.loads((run / "verify" / "mini" / "summary.json").read_text())
    table = at("per-template results:")
    assert lines[table + 1].startswith(f"suite mini: {verify['cases']} cases")
    for r in verify["summary"]:
        if r["level"] == "test":
            assert any(line.startswith(r["key"]) and f"{100 * r['fail_rate']:5.1f}%" in line
                       for line in lines[table:]), r
    # The report's path, last.
    assert lines[-1] == f"report: {run / 'report.html'}"
    assert (run / "report.html").is_file() and top < table < len(lines) - 1

    # A rerun skips every stage and prints the same summary (the stored verify table).
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    log2, summary2 = capsys.readouterr().out.split("\n\n== synthcheck discover: ", 1)
    assert all(f"[{s}] skipped (current)" in log2 for s in STAGES)
    assert summary2 == summary


def test_cli_exits_1_on_the_suites_gates_as_verify_does(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A test failing at 100% with max_fail_rate 0.3 in the suite: discover exits 1 like
    # verify, names the test, and does so again when every stage is skipped as current.
    suite = {**SUITE, "tests": [*SUITE["tests"], {
        "name": "negated praise", "capability": "Negation", "type": "mft",
        "template": "This {NOUN} is not good.", "label": "negative", "max_fail_rate": 0.3}]}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    run = tmp_path / "r"
    for _ in range(2):
        assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 1
        out, err = capsys.readouterr()
        assert "== synthcheck discover: mini" in out
        assert err.splitlines()[-2:] == [
            "gate exceeded: negated praise [toy] fail rate 1.000 > 0.3",
            "1 gate(s) exceeded: exit status 1 (as 'synthcheck verify')"]
    assert main(["verify", "--config", str(cfg_path), "--run", str(run), "-q"]) == 1
    # The flag gates the tests without their own max_fail_rate (none fails at 100% here).
    code = main(["discover", "--config", str(cfg_path), "--run", str(run), "-q",
                 "--max-fail-rate", "1"])
    assert code == 1 and "gate exceeded: negated praise [toy]" in capsys.readouterr().err


def test_long_stages_print_an_estimate_from_a_measured_rate(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Before the first measurement: the reference machine's rates, said so; each stage that
    # ran records its rate, and the next run's estimate uses it.
    import synthcheck._estimate as estimate
    from synthcheck._estimate import REFERENCE_RATES

    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    assert estimate.MIN_WORK == 100  # a 24-prompt run is too small to record: made small
    monkeypatch.setattr(estimate, "MIN_WORK", 1)
    monkeypatch.setattr(estimate, "MIN_SECONDS", 0.0)  # tiny stages can end within a second
    assert main(["discover", "--config", str(cfg_path), "--run", str(tmp_path / "a"),
                 "-q"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if "] estimate: " in x]
    rate = REFERENCE_RATES["generate"][0]
    assert lines[0].startswith("[generate] estimate: 24 prompts at ")
    assert (f"; rate {rate:.1f} prompt/s (the default run's rate on a 2-core reference "
            "machine; this machine's own is recorded after this run), scaled by the load now, "
            ) in lines[0], lines[0]
    assert [x.split("]")[0] for x in lines] == ["[generate", "[score", "[focus"]
    rates = json.loads((tmp_path / "cache" / "rates.json").read_text())
    measured = {k: v for k, v in rates.items() if v["seconds"] > 0}
    assert measured and all(v["rate"] == round(v["work"] / v["seconds"], 3)
                            for v in measured.values())
    assert main(["discover", "--config", str(cfg_path), "--run", str(tmp_path / "b"),
                 "-q"]) == 0
    again = [x for x in capsys.readouterr().out.splitlines() if "] estimate: " in x]
    for key, rec in measured.items():
        stage = key.split("|")[0]
        line = next(x for x in again if x.startswith(f"[{stage}]"))
        assert f"rate {rec['rate']:.1f} {rec['unit']}/s (measured on this machine " \
               f"{rec['measured'][:10]} at a load of {rec['load']:.1f})" in line, line
    # A rerun in the same run directory has nothing left to do: no estimate.
    assert main(["discover", "--config", str(cfg_path), "--run", str(tmp_path / "b"),
                 "-q"]) == 0
    assert "] estimate: " not in capsys.readouterr().out


def test_cli_run_dir_of_another_config_is_refused(cfg_path: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    assert main(["discover", "-c", str(cfg_path), "--run", str(run), "-q"]) == 0
    capsys.readouterr()
    before = snapshot(run)
    code = main(["discover", "-c", str(cfg_path), "-P", "generator.seed=7",
                 "--run", str(run), "-q"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: run directory belongs to another config (generation hash ")
    assert err.endswith(f"({run}): use a new --run directory, or restore the config it was "
                        "made with\n")
    assert "Traceback" not in err and "== synthcheck discover" not in out
    assert snapshot(run) == before  # every file: same bytes, same modification time


def test_verify_and_evaluate_cli_into_the_run_make_discover_redo_them(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `synthcheck verify --run` and `evaluate --run` rewrite the files discover caches its
    # stages in, without the manifest: discover must not take them for its own.
    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    discover(cfg, run, progress=False, log=lambda s: None)
    summary = run / "verify" / "mini" / "summary.json"
    spec = "python:toy_models:keyword_sentiment"
    assert main(["verify", "--suite", str(tmp_path / "suite.yaml"), "--model", spec,
                 "--run", str(run), "--sample", "2"]) == 0
    assert json.loads(summary.read_text())["models"] == [spec]
    assert main(["evaluate", "-c", str(cfg_path), "--run", str(run), "--no-reference",
                 "-q"]) == 0
    assert "reference" not in json.loads((run / "eval.json").read_text())["reports"]
    capsys.readouterr()
    again = discover(cfg, run, progress=False, log=lambda s: None)
    # Both are redone, to the same bytes as before: the report (made then) is current.
    assert ran(again) == {"evaluate", "verify"}
    assert json.loads(summary.read_text())["models"] == ["toy"]
    assert again.info["verify"].models == ["toy"]
    assert set(json.loads((run / "eval.json").read_text())["reports"]) == {"toy", "reference"}
    assert ran(discover(cfg, run, progress=False, log=lambda s: None)) == set()


def test_summary_json_keeps_the_suite_order(cfg_path: Path, tmp_path: Path) -> None:
    from formalize import VerifyResult

    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    first = discover(cfg, run, progress=False, log=lambda s: None)
    path = run / "verify" / "mini" / "summary.json"
    order = ["positive adjective", "negative adjective"]  # not sorted
    assert json.loads(path.read_text())["test_order"] == order
    stored = VerifyResult.from_summary_json(path)
    assert list(stored.tests) == order
    assert stored.format_table() == first.info["verify"].format_table()


def test_config_command_prints_the_hashes_a_run_records(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    discover(load_run_config(cfg_path), run, progress=False, log=lambda s: None)
    manifest = json.loads((run / "manifest.json").read_text())
    assert main(["config", "-c", str(cfg_path), "--run", str(run)]) == 0
    head = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    stages = manifest["stage_hashes"]
    assert head == [
        f"# generation hash (manifest.json config_hash): {manifest['config_hash']}",
        *(f"# {s} stage hash (stage_hashes.{s}): {stages[s]}" for s in STAGES[1:])]
    # Without --run, the hashes that need the corpus say so.
    assert main(["config", "-c", str(cfg_path)]) == 0
    head = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert head[1] == ("# score stage hash (stage_hashes.score): needs a run's corpus "
                       "(pass --run DIR)")
    assert head[STAGES.index("evaluate")] == \
        f"# evaluate stage hash (stage_hashes.evaluate): {stages['evaluate']}"


def test_fewshot_task_model_with_batch_calibration_and_a_suite_is_refused_first(
        cfg_path: Path, tmp_path: Path) -> None:
    from synth.core import ConfigError

    data = yaml.safe_load(cfg_path.read_text())
    data["reference"]["calibration"] = "batch"
    data["task_models"][0]["spec"] = f"fewshot:{data['reference']['model']}"
    cfg_path.write_text(yaml.safe_dump(data, sort_keys=False))
    cfg = load_run_config(cfg_path)
    with pytest.raises(ConfigError, match=r"toy use the reference prompt with batch calibration"):
        discover(cfg, tmp_path / "r", progress=False, log=lambda s: None)
    assert not (tmp_path / "r").exists()  # refused before any stage ran


# -- a task model file retrained in place (issue 19) ------------------------------------------
def _dump_skops(path: Path, flip: bool) -> None:
    import skops.io as sio
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts, labels = ["good great best", "bad worst"], ["positive", "negative"]
    if flip:  # model B: the same features, every label the other way round
        labels = labels[::-1]
    sio.dump(make_pipeline(CountVectorizer(), LogisticRegression()).fit(texts, labels), path)


def test_a_task_model_file_retrained_in_place_is_never_current(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "mine" / "model.skops"
    model.parent.mkdir()
    _dump_skops(model, flip=False)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["task_models"] = [{"name": "toy", "spec": f"sklearn:{model}"}]
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run = tmp_path / "r"

    def discover_cli() -> tuple[str, str]:
        assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
        out = capsys.readouterr().out
        acc = [line for line in out.splitlines() if line.startswith("  toy ")]
        assert len(acc) == 1, out
        return out, acc[0]

    def stage_hashes() -> dict[str, str]:  # `synthcheck config --run`'s stage hashes
        assert main(["config", "--config", str(cfg_path), "--run", str(run)]) == 0
        return {line.split()[1]: line.rsplit(" ", 1)[1]
                for line in capsys.readouterr().out.splitlines()
                if " stage hash (stage_hashes." in line}

    _, acc_a = discover_cli()
    hashes_a = stage_hashes()
    _dump_skops(model, flip=True)  # retrained in place: same path, new bytes
    hashes_b = stage_hashes()
    changed = [k for k in hashes_a if hashes_a[k] != hashes_b[k]]
    # Every stage from score on (the report's hash reads the manifest: it changes on rerun).
    assert changed == [k for k in hashes_a if k != "report"]
    assert changed[0] == "score" and {"focus", "evaluate", "verify"} <= set(changed)
    out, acc_b = discover_cli()
    for stage in ("score", "focus", "evaluate", "verify"):
        assert f"[{stage}] ran in " in out, out
    assert (acc_a[:24], acc_b[:24]) == ("  toy          acc 0.583", "  toy          acc 0.417")
    reports = json.loads((run / "eval.json").read_text())["reports"]
    assert acc_b.startswith(f"  toy          acc {reports['toy']['accuracy']:.3f}")


def test_two_discovers_on_one_directory_do_each_stage_once(cfg_path: Path,
                                                           tmp_path: Path) -> None:
    """Issue 19: the second `discover` waits for the first's stage, then finds it current
    (both used to redo score, focus, evaluate and verify)."""
    script = textwrap.dedent(f"""
        import json, sys
        from tests.synth.fakes import FakeBackend
        import synth._generate as gen
        import synth
        gen.generator_backend = synth.generator_backend = lambda g: FakeBackend()
        from synthcheck import load_run_config
        from synthcheck._pipeline import discover
        r = discover(load_run_config({str(cfg_path)!r}), {str(tmp_path / 'r')!r},
                     progress=False, log=lambda s: print(s, file=sys.stderr))
        print(json.dumps(r.stages))
    """)
    # each task-model call is slow: the runs overlap
    env = {**os.environ, "TOY_DELAY": "0.3", "PYTHONPATH": CHILD_PATH}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    stages = [json.loads(out.splitlines()[-1]) for out, _ in results]
    for name in ("score", "rank", "mine", "focus", "evaluate", "verify"):
        assert sorted(s[name] for s in stages) == ["ran", "skipped (current)"], (name, stages)
    assert any("waiting for another process's" in err for _, err in results)


def test_a_locks_path_that_is_a_file_is_refused_before_any_work(
        cfg_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / ".locks").write_text("not a folder")
    before = snapshot(run)
    assert main(["discover", "-c", str(cfg_path), "--run", str(run), "-q",
                 "--lock-timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: cannot lock: .locks is a file, not a folder ({run / '.locks'}): "
                   "remove it (synthcheck keeps its stage locks in .locks/; it is made "
                   "again)\n")
    assert snapshot(run) == before  # not even a corpus shard
    with pytest.raises(SystemExit) as exit_info:
        main(["discover", "-c", str(cfg_path), "--run", str(run), "--lock-timeout", "abc"])
    assert exit_info.value.code == 2
    assert "argument --lock-timeout: must be a number of seconds, got 'abc'" in \
        capsys.readouterr().err
