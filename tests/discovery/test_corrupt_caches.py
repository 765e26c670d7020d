"""Corrupt caches and inputs (issue 28): damaged cached embeddings are ignored with a
warning naming the file and embedded again; an eval.json that is not JSON or not UTF-8 is a
clean error (report, verify --recall) or a warning (the findings printout); an encoder folder
that holds no model is refused before work."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

import discovery._embed as embed_module  # noqa: E402
from discovery import encoder_folder  # noqa: E402
from discovery._slice_stages import _embeddings  # noqa: E402
from synth.core import ModelNotAvailable, RunDir  # noqa: E402


class FakeEmbedder:
    calls: list[int] = []

    def __init__(self, spec: str, *, batch_size: int = 64) -> None:
        pass

    def embed(self, texts: list[str]) -> np.ndarray:
        FakeEmbedder.calls.append(len(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


@pytest.mark.parametrize("damage, why", [
    (lambda p: p.write_bytes(p.read_bytes()[:70]), r"it cannot be read \(ValueError"),
    (lambda p: np.save(p, np.zeros((2, 3), dtype=np.float32)),
     r"it holds an array of shape \(2, 3\), not 5 rows"),
    (lambda p: np.save(p, np.full((5, 3), np.nan, dtype=np.float32)),
     r"it holds values that are not finite numbers"),
    (lambda p: p.write_bytes(b""), r"it cannot be read \(EOFError"),
])
def test_damaged_cached_embeddings_are_embedded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        damage, why: str) -> None:  # type: ignore[no-untyped-def]
    import re

    monkeypatch.setattr(embed_module, "SentenceEmbedder", FakeEmbedder)
    FakeEmbedder.calls = []
    run = RunDir(tmp_path / "run")
    texts = ["a cat", "banana", "dog", "an apple", "sky"]
    first = _embeddings(run, texts, "hf:fake", 8, False)
    (cache,) = list((run.path / "slices" / ".parts").glob("embed-*.npy"))
    damage(cache)
    again = _embeddings(run, texts, "hf:fake", 8, False)
    err = capsys.readouterr().err
    assert np.array_equal(first, again) and FakeEmbedder.calls == [5, 5]
    assert re.search(rf"^warning: ignoring a damaged embeddings cache file: {why}.*"
                     rf"\({re.escape(str(cache))}\): its 5 sentences are embedded again$", err,
                     re.M), err
    assert np.array_equal(np.load(cache), first)  # rewritten: the next run reads it
    _embeddings(run, texts, "hf:fake", 8, False)
    assert FakeEmbedder.calls == [5, 5]


def test_an_encoder_folder_without_a_model(tmp_path: Path) -> None:
    folder = tmp_path / "enc"
    folder.mkdir()
    (folder / "notes.txt").write_text("x")
    with pytest.raises(ModelNotAvailable, match=r"^encoder folder .*enc holds no model \(no "
                                                r"config.json\) \(hf:.*enc\): give a folder a "
                                                r"transformers model was saved into"):
        encoder_folder(f"hf:{folder}")
    (folder / "config.json").write_text("{}")
    with pytest.raises(ModelNotAvailable, match=r"holds no model \(no weights\)"):
        encoder_folder(f"hf:{folder}")


@pytest.mark.parametrize("content, message", [
    (b"{not json", r"eval.json is not valid JSON: Expecting property name enclosed in double "
                   r"quotes"),
    (b'{"reports": {"m": "\xe9"}}', r"eval.json is not valid utf-8 text \(byte 0xe9 at byte "
                                    r"offset 19\)"),
])
def test_a_damaged_eval_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             content: bytes, message: str) -> None:
    from synthcheck._cmd_stage2 import _stored_distrust
    from tests.synthcheck.runbuilder import build_run
    from tests.synthcheck.test_cli_discovery import assert_user_error, cli, snapshot

    run = build_run(tmp_path / "run", verify=False)
    (run / "eval.json").write_bytes(content)
    before = snapshot(run)
    code, _, err = cli(["report", "--run", run], capsys)
    assert_user_error(code, err, message + r" \(.*eval.json\): rerun `synthcheck evaluate`")
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nlabels: [negative, positive]\nbuiltin_lexicons: false\n"
                     "tests:\n  - {name: t, capability: c, type: mft, template: 'good film',"
                     " label: positive}\n")
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--run", tmp_path / "v", "--recall", run], capsys)
    assert_user_error(code, err, r"eval.json|held-out recall")
    assert "Traceback" not in err
    assert _stored_distrust(run) == []
    assert re.search(r"^warning: " + message, capsys.readouterr().err)
    assert snapshot(run) == before

