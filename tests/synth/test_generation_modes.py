"""Generation modes: label-conditioned prompts, the quality filter, chat answers, and the
packaged model joined from sha256-pinned chunks."""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path

import pytest

from synth import SegmentConfig, SentenceFilter, iter_corpus, run_generation
from synth._generate import chat_answer, prompt_condition
from synth._segment import garble_reason
from synth.core import ConfigError
from synth.engines._models import PackagedModel, join_parts
from synthcheck import load_run_config
from tests.synth.fakes import FakeBackend
from tests.synth.synth_fixtures import write_config

LABELLED = {"style": "chat", "labels": ["negative", "positive"],
            "template": "Write one {label} sentence that uses: {query}"}


def test_label_conditioned_prompts_are_seeded_recorded_and_shard_independent(
        tmp_path: Path, corpus_file: Path) -> None:
    cfg = load_run_config(write_config(tmp_path / "c.yaml", corpus_file, n=40, prompt=LABELLED))
    fake = FakeBackend()
    run_generation(cfg, tmp_path / "a", backend=fake, progress=False)
    prompts = [p for call in fake.calls for p in call]
    asked = Counter("negative" if " negative " in p else "positive" for p in prompts)
    assert asked["negative"] + asked["positive"] == 40 and min(asked.values()) >= 10
    assert all("{label}" not in p and p.startswith("<|user|>Write one ") for p in prompts)
    records = list(iter_corpus(tmp_path / "a"))
    assert records and all(r["condition"] in ("negative", "positive") for r in records)
    # the draw depends on the prompt's index alone: another shard size, the same conditions
    other = load_run_config(tmp_path / "c.yaml", ["generator.shard_size=7"])
    assert [prompt_condition(other, i) for i in range(40)] == \
        [prompt_condition(cfg, i) for i in range(40)]
    seed1 = load_run_config(tmp_path / "c.yaml", ["generator.seed=1"])
    assert [prompt_condition(seed1, i) for i in range(40)] != \
        [prompt_condition(cfg, i) for i in range(40)]
    run_generation(other, tmp_path / "b", backend=FakeBackend(), progress=False)
    assert [r["condition"] for r in iter_corpus(tmp_path / "b")] == \
        [r["condition"] for r in records]


def test_label_and_template_must_agree(tmp_path: Path, corpus_file: Path) -> None:
    path = write_config(tmp_path / "c.yaml", corpus_file,
                        prompt={"style": "chat", "template": "Write {label}: {query}"})
    with pytest.raises(ConfigError, match=r"generator\.prompt.*'\{label\}' but prompt\.labels "
                                          r"is empty"):
        load_run_config(path)
    path = write_config(tmp_path / "d.yaml", corpus_file,
                        prompt={"template": "{query}", "labels": ["negative"]})
    with pytest.raises(ConfigError, match=r"prompt\.labels is set but the template has no"):
        load_run_config(path)


def test_garbled_sentences_are_named() -> None:
    assert garble_reason("The acting was superb and I loved every minute of it.") is None
    assert garble_reason("It's a well-made, heart-warming film, truly.") is None
    assert garble_reason("<start_of_image> the plot <start_of_image> <b> ok") == "few_words"
    assert garble_reason("a 12 34 56 78 90 11 foo bar") == "few_words"
    assert garble_reason("see http://example.com for the full review now") == "markup"
    assert garble_reason("the x = y and so it goes on and on") == "markup"
    assert garble_reason("I I I think this film was fine overall") == "repeat"
    assert garble_reason("Sure! Here is a sentence about the film.") == "preamble"
    assert garble_reason("Here's a positive sentence from a movie review: great.") == "preamble"


def test_filter_drops_garbled_and_near_duplicates_and_counts_them() -> None:
    keep = SentenceFilter(SegmentConfig(min_words=3, drop_garbled=True, near_duplicate=0.7))
    assert keep("The acting was superb and the music lovely.")
    assert not keep("The acting was superb and the music was lovely.")  # near duplicate
    assert not keep("Sure, here is one sentence for you.")
    assert keep("A dull film with a plot full of holes.")
    assert keep.drop_counts == {"near_duplicate": 1, "garbled": 1}
    # off by default: only exact duplicates go
    plain = SentenceFilter(SegmentConfig(min_words=3))
    assert plain("Sure, here is one sentence for you.")
    assert plain("The acting was superb and the music was lovely.")
    assert plain("The acting was superb and the music lovely.")


def test_chat_answers_lose_their_quotes() -> None:
    assert chat_answer('"The film is a delight."') == "The film is a delight."
    assert chat_answer('“A mess from start to end.” It was.') == \
        "A mess from start to end. It was."
    assert chat_answer("No quotes here.") == "No quotes here."


def _parts_module(tmp_path: Path, name: str, data: bytes) -> str:
    pkg = tmp_path / name
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "part.bin").write_bytes(data)
    return name


def test_join_parts_checks_every_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    mods = [_parts_module(tmp_path, f"fake_chunk_part{i}", c) for i, c in enumerate(chunks)]
    for m in mods:
        sys.modules.pop(m, None)
    parts = tuple((m, "data/part.bin", hashlib.sha256(c).hexdigest())
                  for m, c in zip(mods, chunks, strict=True))
    entry = PackagedModel(name="fake", module=mods[0], filename="fake.gguf",
                          install="pip install fake", description="", parts=parts)
    target = join_parts(entry, tmp_path / "out" / "fake.gguf")
    assert target.read_bytes() == b"".join(chunks)
    bad = PackagedModel(name="fake", module=mods[0], filename="bad.gguf",
                        install="pip install fake", description="",
                        parts=(*parts[:2], (mods[2], "data/part.bin", "0" * 64)))
    with pytest.raises(Exception, match=r"chunk .*part\.bin of packaged model 'fake' has "
                                        r"sha256 [0-9a-f]{64}, not the pinned 0{64}"):
        join_parts(bad, tmp_path / "out" / "bad.gguf")
    assert not any(p.name.startswith(".bad") or p.name == "bad.gguf"
                   for p in (tmp_path / "out").iterdir())
    missing = PackagedModel(name="fake", module=mods[0], filename="m.gguf",
                            install="pip install fake-parts==1", description="",
                            parts=(*parts, ("no_such_chunk_module", "data/part.bin", "0" * 64)))
    with pytest.raises(Exception, match=r"incomplete.*no_such_chunk_module.*pip install "
                                        r"fake-parts==1"):
        join_parts(missing, tmp_path / "out" / "m.gguf")
