"""bench/reference.py runs in its small mode (a tiny random Llama, 24 held-out sentences per
domain): every candidate kind is scored on both domains and the output head gives the same
log-probabilities whether it runs only at the label reads or at every read position. The
numbers of a random model mean nothing; the table's shape and the head's agreement do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reference_bench_small_mode_runs_every_candidate_on_both_domains():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "reference.py"), "--small"],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    head = [s for s in lines if s.startswith("output head, tiny, 16 sentences:")]
    assert len(head) == 1
    diff = float(re.search(r"max \|d log-prob\| (\S+)$", head[0]).group(1))
    assert diff < 1e-4
    for domain, majority in (("movies", "0.500"), ("tweets", "0.583")):
        at = lines.index(f"{domain} (n=24):")
        assert lines[at + 1].split() == ["candidate", "accuracy", "abs_top", "precision",
                                         "p_wrong", "precision", "n", "CPU-s/100",
                                         "setup", "CPU-s"]
        rows = []
        for s in lines[at + 2:]:
            if not s.startswith("tiny "):
                break
            rows.append(s)
        names = [" ".join(s.split()[:2]) for s in rows]
        # every candidate of the small mode, the no-shot and labelled-shot ones included
        assert {"tiny k4", "tiny k0", "tiny k16", "tiny knn16", "tiny ens3"} <= set(names)
        assert any(n.startswith("tiny lab") for n in names), names
        for s in rows:
            assert s.split()[-3] == "5"  # the top 20% of 24 held-out sentences
        assert any(s.startswith(f"## {domain}: 24 held-out") and f"majority {majority}" in s
                   for s in lines)
