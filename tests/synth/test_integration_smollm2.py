"""The real path: the packaged SmolLM2 writes ~8 sentences from packaged IMDb queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import iter_corpus, run_generation
from synth.core import read_jsonl
from synthcheck import load_run_config

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_packaged_smollm2_generates_a_seeded_corpus(tmp_path: Path) -> None:
    overrides = ["generator.n=8", "generator.shard_size=4", "generator.batch_size=8",
                 "generator.device=cpu"]
    cfg = load_run_config(REPO / "configs" / "sentiment.yaml", overrides)
    report = run_generation(cfg, tmp_path / "a", progress=False)
    assert report.complete and report.prompts == 8 and report.tokens > 0
    records = list(iter_corpus(tmp_path / "a"))
    assert 1 <= len(records) <= 8
    for rec in records:
        assert rec["text"].startswith(rec["query"])
        assert len(rec["query"].split()) == 5
        assert 6 <= len(rec["text"].split()) <= 60
    # Same config and seed, byte-identical shard.
    run_generation(cfg, tmp_path / "b", n=4, progress=False)
    assert (tmp_path / "a/corpus/shard-00000.jsonl").read_bytes() == \
        (tmp_path / "b/corpus/shard-00000.jsonl").read_bytes()
    assert read_jsonl(tmp_path / "a/corpus/shard-00000.jsonl") == [
        r for r in records if r["shard"] == 0]
    stats = json.loads((tmp_path / "a/corpus/stats.json").read_text())
    assert stats["kept"] == len(records) and stats["prompts"] == 8
