"""One focus-cost formula: the config check and `discover`'s estimate count the same prompts
(the user's n-grams included)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from discovery import FocusConfig


def test_the_estimate_and_the_check_count_the_same_prompts(tmp_path) -> None:  # noqa: ANN001
    from synth.core import RunDir
    from synthcheck import load_run_config
    from synthcheck.stages import StageWork, stage_named

    cfg = FocusConfig(candidates=3, budget=4, rounds=2, ngrams=["plot twist"])
    assert cfg.max_prompts == (3 + 1) * 4 * 2
    path = tmp_path / "c.yaml"
    path.write_text("focus: {candidates: 3, budget: 4, rounds: 2, ngrams: [plot twist]}\n")
    stage = stage_named("focus")
    s = stage.sections(load_run_config(path))
    assert stage.work is not None
    assert stage.work(s, StageWork(RunDir(tmp_path / "r"), None))[1] == cfg.max_prompts
    with pytest.raises(ValidationError, match=r"\(candidates 1,000 \+ ngrams 1\) x budget "
                                              r"1,000 x rounds 10 = 10,010,000"):
        FocusConfig(candidates=1000, budget=1000, rounds=10, ngrams=["plot twist"])


def test_the_docs_state_the_formula_with_the_defaults_numbers() -> None:
    """docs/discovery.md, the ``focus.budget`` docstring and ``MAX_FOCUS_PROMPTS``'s state
    the default's cost with :meth:`FocusConfig.prompts`'s numbers (the stage counts what it
    sends with it: tests/synthcheck/test_focus_stage.py)."""
    import re
    from pathlib import Path

    d = FocusConfig()
    assert d.max_prompts == d.prompts(d.candidates + len(d.ngrams), d.rounds)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "discovery.md").read_text()
    text = " ".join(doc.split())
    assert ("at most (`focus.candidates` + your `focus.ngrams`) x `focus.budget` x "
            "`focus.rounds` prompts in all (`FocusConfig.max_prompts`") in text
    stated = re.search(r"The default, (\d+) x (\d+) x (\d+) = ([\d,]+) prompts", text)
    assert stated is not None
    assert [int(stated[i]) for i in (1, 2, 3)] == [d.candidates, d.budget, d.rounds]
    assert int(stated[4].replace(",", "")) == d.max_prompts
    src = " ".join((Path(__file__).resolve().parents[2] / "discovery" / "_config.py")
                   .read_text().split())
    assert f"The default ({d.candidates} x {d.budget} prompts)" in src
    assert f"(the default makes {d.max_prompts})" in src
