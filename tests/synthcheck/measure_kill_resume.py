"""Measure what a real SIGKILL costs inside occlusion and inside focus's paired rescoring
(issue 28), on a small run: a tiny random Llama as the reference, the fake generator of the
tests, a slowed keyword task model (``TOY_DELAY``) and 8-text scoring chunks.

    python -m tests.synthcheck.measure_kill_resume OUT_DIR    (from the checkout's root)

For each stage it runs `discover` uninterrupted, then again in a process that is SIGKILLed
inside the stage, then resumes it, and prints what the resumed run redid (occlusion: task
chunks scored again of all; focus: prompts generated again) and whether every output is
byte-identical to the uninterrupted run's. Not part of the test suite (it takes minutes);
``test_resume_inside_stages.py`` checks the same with an in-process kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FILES = ["slices.jsonl", "metadata.jsonl", "words.jsonl", "focus.jsonl", "findings.jsonl"]

CHILD = """
import json, sys, time
from pathlib import Path
from tests.synth.fakes import FakeBackend
import synth._generate as gen
import synth
gen.generator_backend = synth.generator_backend = lambda g: FakeBackend()
import discovery._chunks as chunks
import discovery._slice_stages as ss
import discovery._focus_stage as fs
chunks.CHUNK = 8
mode, log = {mode!r}, Path({log!r})
counts = {{"task_chunks": 0, "generated_prompts": 0}}
def save():
    log.write_text(json.dumps(counts))
real_kept = ss._kept_chunks
def kept(fn, folder, key):
    def inner(texts):
        if "-task-" in folder.name:
            counts["task_chunks"] += 1
            save()
        return fn(texts)
    return real_kept(inner, folder, key)
ss._kept_chunks = kept
real_gen = fs.generate_raw
def gen_raw(queries, *a):
    counts["generated_prompts"] += len(queries)
    save()
    return real_gen(queries, *a)
fs.generate_raw = gen_raw
if mode == "kill-focus":  # the rescoring hangs: SIGKILLed there
    def hang(*a, **k):
        print("rescoring", file=sys.stderr, flush=True)
        time.sleep(600)
    fs._score_group = hang
from synthcheck import load_run_config
from synthcheck._pipeline import discover
r = discover(load_run_config({cfg!r}), {run!r}, progress=False, log=lambda s: None)
save()
"""


def child(mode: str, cfg: Path, run: Path, log: Path, env: dict[str, str]) -> subprocess.Popen:
    script = textwrap.dedent(CHILD.format(mode=mode, log=str(log), cfg=str(cfg), run=str(run)))
    return subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def main(out: Path) -> None:
    from tests.synth.synth_fixtures import build_tiny_llama
    from tests.synthcheck import runbuilder

    out.mkdir(parents=True, exist_ok=True)
    tiny = build_tiny_llama(out / "tiny")
    (out / "docs.txt").write_text("\n".join(runbuilder.TINY_DOCS) + "\n")
    cfg = out / "c.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "kill", "corpus": {"source": str(out / "docs.txt")}, "queries": {"k": 3},
        "generator": {"model": "hf:unused", "n": 48, "shard_size": 8, "batch_size": 4,
                      "segment": {"min_words": 3, "max_words": 40}},
        "task_models": [{"name": "toy", "spec": "python:toy_models:keyword_sentiment"}],
        "reference": {"model": f"hf:{tiny}", "calibration": "contextual", "device": "cpu"},
        "ranking": {"top_fraction": 0.5}, "mining": {"min_support": 2},
        "focus": {"candidates": 4, "budget": 6},
        "slices": {"failure": "disagreement", "semantic": {"size": 4},
                   "metadata": {"min_size": 2},
                   "occlusion": {"reference_words": 3, "reference_sentences": 2}},
        "evaluation": {"size": 8, "include_reference": False}}, sort_keys=False))
    # the checkout (`tests.synth.fakes`) and tests/synthcheck (`python:toy_models`)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), str(HERE)])}
    full = out / "full"
    p = child("full", cfg, full, out / "full.json", env)
    assert p.wait() == 0, p.stderr.read() if p.stderr else ""
    whole = json.loads((out / "full.json").read_text())
    print(f"uninterrupted: {whole['task_chunks']} occlusion task chunks, "
          f"{whole['generated_prompts']} focus prompts generated")

    # occlusion: killed once it has scored some task chunks (each call sleeps TOY_DELAY)
    run = out / "occlusion"
    p = child("kill", cfg, run, out / "occ-kill.json", env)
    parts = run / "slices" / ".parts"
    while p.poll() is None and len(list(parts.glob("occlusion-task-*/chunk-*.jsonl"))) < 3:
        time.sleep(0.05)
    t_kill = time.time()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    kept = len(list(parts.glob("occlusion-task-*/chunk-*.jsonl")))
    p = child("resume", cfg, run, out / "occ-resume.json", env)
    assert p.wait() == 0, p.stderr.read() if p.stderr else ""
    total = len(list(parts.glob("occlusion-task-*/chunk-*.jsonl")))
    redone = json.loads((out / "occ-resume.json").read_text())["task_chunks"]
    same = all((run / f).read_bytes() == (full / f).read_bytes() for f in FILES)
    print(f"occlusion: SIGKILL at {time.strftime('%H:%M:%S', time.localtime(t_kill))} with "
          f"{kept} of {total} task chunks written; the resumed run scored {redone} chunk(s) "
          f"(the {total - kept} missing); outputs byte-identical: {same}")

    # focus: killed while its first group is rescored (paired), after generating
    run = out / "focus"
    p = child("kill-focus", cfg, run, out / "focus-kill.json", env)
    assert p.stderr is not None
    while p.poll() is None and "rescoring" not in p.stderr.readline():
        pass
    generated = json.loads((out / "focus-kill.json").read_text())["generated_prompts"]
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    waiting = len(list((run / "focus" / ".parts").glob("*.generated.jsonl")))
    p = child("resume", cfg, run, out / "focus-resume.json", env)
    assert p.wait() == 0, p.stderr.read() if p.stderr else ""
    again = json.loads((out / "focus-resume.json").read_text())["generated_prompts"]
    same = all((run / f).read_bytes() == (full / f).read_bytes() for f in FILES)
    print(f"focus: SIGKILL during the paired rescoring of its first group, after {generated} "
          f"of {whole['generated_prompts']} prompts generated ({waiting} candidate file(s) of "
          f"kept sentences on disk); the resumed run generated {again} prompts (those never "
          f"generated before the kill: {whole['generated_prompts'] - generated}); outputs "
          f"byte-identical: {same}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
