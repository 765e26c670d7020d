"""Resume inside occlusion and focus (issue 28): occlusion keeps its scored chunks across a
kill (a kill at +90 s once reran all 365 s), and focus keeps its generated sentences across a
kill during the paired rescoring. The kill is injected in-process (an exception after N
chunks, or in the rescoring); the resumed run redoes only what was lost, and every output is
byte-identical to an uninterrupted run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

import discovery._chunks as chunks  # noqa: E402
import discovery._focus_stage as focus_stage  # noqa: E402
import discovery._slice_stages as slice_stages  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from tests.synthcheck.test_slice_stages import _fake_generator, cfg_path, outputs, quiet  # noqa: E402,F401


class Killed(Exception):
    """The in-process kill."""


def test_a_killed_occlusion_redoes_only_the_chunk_it_was_in(
        cfg_path: Path, tmp_path: Path,  # noqa: F811 - the fixture imported above
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "CHUNK", 8)  # many deletion chunks on a tiny corpus
    cfg = load_run_config(cfg_path)
    quiet(cfg, tmp_path / "full")
    real = slice_stages._kept_chunks
    calls: list[str] = []
    kill_at: list[int] = [3]  # the task side's 3rd chunk raises (then no more kills)

    def counted(fn: Any, folder: Path, key: str) -> Any:
        side = "task" if "-task-" in folder.name else "reference"

        def inner(texts: list[str]) -> np.ndarray:
            calls.append(side)
            if side == "task" and kill_at and calls.count("task") == kill_at[0]:
                kill_at.clear()
                raise Killed
            return fn(texts)

        return real(inner, folder, key)

    monkeypatch.setattr(slice_stages, "_kept_chunks", counted)
    with pytest.raises(Killed):
        quiet(cfg, tmp_path / "killed")
    assert calls == ["task"] * 3  # two chunks scored and kept, the third one killed
    parts = tmp_path / "killed" / "slices" / ".parts"
    assert len(list(parts.glob("occlusion-task-*/chunk-*.jsonl"))) == 2
    calls.clear()
    result = quiet(cfg, tmp_path / "killed")
    assert result.stages["occlusion"] == "ran"
    total = len(list(parts.glob("occlusion-task-*/chunk-*.jsonl")))
    assert total > 3 and calls.count("task") == total - 2  # only the lost chunks redone
    assert outputs(tmp_path / "killed") == outputs(tmp_path / "full")


def test_a_kill_during_focus_rescoring_keeps_the_generated_sentences(
        cfg_path: Path, tmp_path: Path,  # noqa: F811 - the fixture imported above
        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_run_config(cfg_path)
    assert cfg.focus.paired
    quiet(cfg, tmp_path / "full")
    generated: list[int] = []
    real_generate, real_score = focus_stage.generate_raw, focus_stage._score_group

    def counting_generate(queries: Any, *args: Any) -> Any:
        generated.append(len(queries))
        return real_generate(queries, *args)

    def killed_score(*args: Any, **kwargs: Any) -> None:
        raise Killed

    monkeypatch.setattr(focus_stage, "generate_raw", counting_generate)
    monkeypatch.setattr(focus_stage, "_score_group", killed_score)
    with pytest.raises(Killed):
        quiet(cfg, tmp_path / "killed")
    first = sum(generated)
    assert first > 0
    kept = list((tmp_path / "killed" / "focus" / ".parts").glob("*.generated.jsonl"))
    assert kept  # the generated sentences outlived the kill
    generated.clear()
    monkeypatch.setattr(focus_stage, "_score_group", real_score)
    result = quiet(cfg, tmp_path / "killed")
    assert result.stages["focus"] == "ran"
    assert generated == []  # nothing generated again: the group was only rescored
    assert not list((tmp_path / "killed" / "focus" / ".parts").glob("*.generated.jsonl"))
    assert outputs(tmp_path / "killed") == outputs(tmp_path / "full")
