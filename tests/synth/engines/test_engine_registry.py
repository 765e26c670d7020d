"""Engines are a registry in practice: a config names any registered engine (no fixed list),
an unknown name gets "did you mean", and a new engine is one class plus one ``register``
line, proven by a fake engine that `synthcheck generate` runs end to end."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from synth.core import ConfigError
from synth.engines import ENGINES, Generation, SamplingConfig
from synthcheck import load_run_config
from synthcheck.cli import main

WORDS = ["plot", "cast", "film", "scene", "ending", "music", "pace"]


class RandomWordsEngine:
    """A fake engine: each prompt's continuation drawn from ``random.Random(seed)``."""

    name = "randomwords"
    built: list[dict[str, Any]] = []

    @classmethod
    def from_spec(cls, spec: str, *, device: str, dtype: str, batch_size: int,
                  **kwargs: Any) -> RandomWordsEngine:
        cls.built.append({"spec": spec, **kwargs})
        return cls()

    def render_chat(self, user: str, system: str | None = None) -> str:
        return f"<user>{user}<assistant>"

    def generate(self, prompts: Sequence[str], params: SamplingConfig, seeds: Sequence[int]
                 ) -> list[Generation]:
        out = []
        for seed in seeds:
            rng = random.Random(seed)
            words = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
            out.append(Generation(" The " + " ".join(words) + ". More", len(words) + 3))
        return out

    def label_logprobs(self, prefix: str, texts: Sequence[str],
                       label_continuations: Any, suffix: str = "", *, align: Any = None
                       ) -> list[dict[str, float]]:  # pragma: no cover - generation only
        raise NotImplementedError


@pytest.fixture
def fake_engine() -> Iterator[type[RandomWordsEngine]]:
    ENGINES.register("randomwords", f"{__name__}:RandomWordsEngine")  # the one line
    RandomWordsEngine.built.clear()
    yield RandomWordsEngine
    ENGINES.unregister("randomwords")


def config(tmp_path: Path, backend: str) -> Path:
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(f"The film number {i} had a plot and a cast and an ending."
                              for i in range(12)) + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({
        "name": "t", "corpus": {"source": str(docs)}, "queries": {"k": 3},
        "generator": {"model": "hf:unused", "backend": backend, "n": 6, "shard_size": 3,
                      "segment": {"min_words": 3, "max_words": 40}}}))
    return path


def test_a_registered_engine_runs_generation_from_the_cli(
        tmp_path: Path, fake_engine: type[RandomWordsEngine],
        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    assert main(["generate", "--config", str(config(tmp_path, "randomwords")),
                 "--run", str(run), "-q"]) == 0
    rows = [yaml.safe_load(x) for p in sorted((run / "corpus").glob("shard-*.jsonl"))
            for x in p.read_text().splitlines()]
    assert rows and all(r["text"].startswith("The ") for r in rows)
    # no sentence-end check: the engine's entry does not offer one (hf's does)
    assert fake_engine.built == [{"spec": "hf:unused"}]
    assert ENGINES.caps("hf").sentence_done and not ENGINES.caps("randomwords").sentence_done


def test_an_unknown_engine_says_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"generator\.backend.*unknown engine 'vlm': did "
                                          r"you mean 'vllm'\? \(choices: hf, vllm\)"):
        load_run_config(config(tmp_path, "vlm"))
    with pytest.raises(ConfigError, match=r"unknown engine 'hff' \(reference.backend\): did "
                                          r"you mean 'hf'"):
        ENGINES.check("hff", where="reference.backend")


def test_vllm_capabilities_live_on_its_entry() -> None:
    from discovery import ReferenceConfig

    assert ReferenceConfig(backend="vllm").prefix_alignment == ENGINES.caps("vllm").prefix_align
    assert ReferenceConfig(backend="hf").prefix_alignment == 0
    assert ENGINES.caps("vllm").requires == "vllm"
