from __future__ import annotations

from pathlib import Path

from synthcheck._config_reference import config_reference
from synthcheck.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_config_reference_is_current() -> None:
    text = config_reference()
    assert (REPO / "docs" / "config-reference.md").read_text() == text, (
        "docs/config-reference.md is stale: run `synthcheck config --reference "
        "> docs/config-reference.md`")
    for key in ("`generator.sampling.top_p`", "`reference.calibration`", "`ranking.metric`",
                "`mining.min_support`", "`verify.sample`", "`task_models[].spec`"):
        assert key in text


def test_config_prints_resolved_config_with_hash(capsys) -> None:  # noqa: ANN001
    assert main(["config", "-c", str(REPO / "configs/sentiment.yaml"),
                 "-P", "generator.sampling.top_p=0.9"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# config hash ") and "top_p: 0.9" in out
