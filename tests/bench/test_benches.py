"""Every script in bench/ runs in its small mode (``--small``), so none can rot unnoticed.

The scripts are found by globbing ``bench/[!_]*.py`` (a name starting with ``_`` is a helper
module, not a script): a new bench script fails here until it has a ``--small`` mode (argparse
refuses the flag otherwise). Each runs as a subprocess, exactly as a user runs it; the checks
are on its table's header and rows (``SMALL``), never on timings. A script not yet in
``SMALL`` must still exit 0 and print numbers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("[!_]*.py"))
NUM = r"[\d.,]+"

# What each script's small-mode output must contain (regular expressions, one per line).
SMALL: dict[str, list[str]] = {
    "audit_run.py": [
        r"^run .+: 80 sentences, 80 labelled blind \(.+labels\.jsonl\)$",
        rf"^every labelled +{NUM} \[{NUM}, {NUM}\] \(\d+/80\) +{NUM} \[{NUM}, {NUM}\] \(\d+/80\)$",
        rf"^random 60 +{NUM} \[{NUM}, {NUM}\] \(\d+/60\)",
        r"^depth +precision \(real task-model errors\) +no label applies +task model right$",
        rf"^ +10 +{NUM} \[{NUM}, {NUM}\] \(\d+/10\) +\d+ +\d+$",
        rf"^ +all +{NUM} \[{NUM}, {NUM}\] \(\d+/20\) +\d+ +\d+$",
        rf"^ +0\.4 +\d+ +{NUM} \[{NUM}, {NUM}\] \(\d+/\d+\)$",
        rf"^two labellers on 40 sentences: agree {NUM} \[{NUM}, {NUM}\] \(\d+/40\), "
        rf"Cohen's kappa {NUM}$",
    ],
    "compare_runs.py": [
        r"^   same\*  6247c6b51fba  6392e050221a  manifest\.json$",
        r"^    same  e2bd1dc1835a  e2bd1dc1835a  scores/task-demo\.jsonl$",
        r"^3 files, 0 differ \(same\* = equal without \['created', 'elapsed', 'git_commit', "
        r"'seconds', 'timings', 'updated', 'wall_s'\]\)$",
    ],
    "abstain.py": [
        r"^reference tiny; 24 held-out tweets of packaged:tweets3 \(\d+ neutral\); abstain "
        r"word ' neutral'; CPU [\d.]+ s$",
        r"^calibrate +threshold  neutral found +false abstain +polarity acc$",
        *[rf"^{mode} +{t} +({NUM} \[{NUM}, {NUM}\] \(\d+/\d+\)|n/a) +" for mode in ("false", "true")
          for t in ("0.3", "0.5")],
    ],
    "discovery_power.py": [
        r"^corpus: \d+ sentences \(.*\); labelled rows: 300 \(",
        r"^seed 0: planted slices \(corpus members/changed, labelled members/errors\):$",
        r"^seed 0, corpus only: \d/2 found in the top 10 \(findings\.jsonl; \d+s\)$",
        r"^seed 0, with labelled data: \d/2 found in the top 10 \(findings\.jsonl; \d+s\)$",
        r"^\| kind \| corpus only: found/planted \[95% CI\] \| with labelled data: "
        r"found/planted \[95% CI\] \|$",
        # The floor: the frequent word (flipped in at least 3 sentences) is found by both arms.
        r'^\| 0 \| word frequent "[a-z]+" \(flip\) \| \d+/\d+ \| \d+/\d+ \| yes #\d+\*? \| '
        r"yes #\d+\*? \|$",
        r"^\| Fisher per word \| \d/2 \|",
        r"^\| SliceLine alpha 0\.999 \(tuned\) \| \d/2 \|",
    ],
    "executor.py": [
        r"^kept \d+ sentences; outputs byte-identical: True$",
        r"^stage +local s +ray s +overhead s +ratio$",
        rf"^generate +{NUM} +{NUM} +-?{NUM} +{NUM}$",
        rf"^score +{NUM} +{NUM} +-?{NUM} +{NUM}$",
    ],
    "generation_modes.py": [
        r"^generation +dtype +prompts +kept +tokens +CPU-s/prompt +ratio +limit%$",
        # generator.dtype auto: bfloat16 on a CPU with native bf16 (avx512_bf16), else float32
        rf"^smollm2-label +(?:float32|bfloat16) +8 +\d+ +\d+ +{NUM} +{NUM} +{NUM}%$",
        r"^reference +sentences +CPU-s/sentence +ratio$",
        rf"^qwen-neutral +\d+ +{NUM} +{NUM}$",
        rf"^smollm2-cont +gemma-cal +{NUM} +{NUM}  \d+:\d+ +\(not labelled\)$",
        r"^audit file gen-smollm2-label\.txt: \d+ lines$",
        rf"^stand-in labels smollm2-cont: signal 1\.00 \[{NUM}, 1\.00\] \(\d+/\d+\)$",
    ],
    "generate.py": [
        r"^engine +dtype +prompts +tokens +seconds +tok/s +kept +kept/s +limit%$",
        rf"^naive loop +float32 +2 +32 +{NUM} +{NUM} +\d +{NUM} +{NUM}%$",
        rf"^HF float32 +float32 +8 +\d+ +{NUM} +{NUM} +\d +{NUM} +{NUM}%$",
        rf"^ratio \(kept sentences/s, HF default over the naive loop\): {NUM}x",
    ],
    "published_suites.py": [
        r"^file +rows +cases +suite cases +templates recovered +columns +bytes$",
        r"^test_suite_cases\.csv +15 +15 +14 4/4 \(of 6 templ groups\) +equal +equal$",
        r"^ade_capabilities\.csv +5 +- +35,250 5/5 +equal +equal$",
    ],
    "score.py": [
        r"^mining: 2000 sentences, hard 200, 1-4-grams, \d+ n-grams kept: ",
        rf"^task \(demo tf-idf\+lr\): batched {NUM} sentences/s \(200\), one call per "
        rf"sentence {NUM} sentences/s \(20\); ratio {NUM}x; max \|dp\| 0\.0e\+00$",
        r"^engine +dtype +align +sent/s +limit% +prefix tokens reused",
        rf"^naive loop +float32 +0 +{NUM} +{NUM}%",
        rf"^HF \(default\) +float32 +0 +{NUM} +{NUM}%",
        rf"^HF aligned +float32 +32 +{NUM} +{NUM}%",
        r"^padding the \d+-token prefix to \d+ \(align_prefix 32, \d+ pad tokens\)",
        rf"^ratio \(sentences/s, HF default over the naive loop\): {NUM}x$",
    ],
    "verify.py": [
        r"^ +cases +expanded +cases/s +vs first$",
        rf"^ +1,000 +1,000 +{NUM} +1\.00$",
        rf"^ +2,000 +2,000 +{NUM} +{NUM}$",
        rf"^ +5,000 +1,000 +{NUM}s +{NUM}$",
        # the two framework rows (their case counts follow the suite's sampling rules)
        rf"^ +{NUM} +{NUM} +{NUM} +{NUM} +{NUM} +{NUM} +{NUM}MB\n +{NUM} +{NUM} +{NUM} +{NUM} "
        rf"+{NUM} +{NUM} +{NUM}MB$",
    ],
}


def run_small(script: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``python bench/<script> --small`` from ``tmp``, this checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    args = [sys.executable, str(ROOT / "bench" / script), "--small"]
    if script == "discovery_power.py":  # its scratch run directories
        args += ["--work", str(tmp / "work")]
    return subprocess.run(args, cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)


def test_the_small_mode_checks_name_existing_scripts() -> None:
    assert sorted(SMALL) == [b for b in BENCHES if b in SMALL], sorted(set(SMALL) - set(BENCHES))


@pytest.mark.bench
@pytest.mark.parametrize("script", BENCHES)
def test_bench_runs_in_small_mode(script: str, tmp_path: Path) -> None:
    proc = run_small(script, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    expected = SMALL.get(script, [r"\d"])
    missing = [p for p in expected if not re.search(p, proc.stdout, re.MULTILINE)]
    assert not missing, f"not in the output: {missing}\n{proc.stdout[-4000:]}"
