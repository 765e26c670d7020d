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
    assert out.startswith("# generation hash (manifest.json config_hash): ")
    assert "\n# evaluate stage hash (stage_hashes.evaluate): " in out and "top_p: 0.9" in out
    # top_p changes generated text: another generation hash, the same evaluate hash.
    assert main(["config", "-c", str(REPO / "configs/sentiment.yaml")]) == 0
    other = capsys.readouterr().out
    assert other.splitlines()[0] != out.splitlines()[0]
    assert other.splitlines()[5] == out.splitlines()[5]


def test_config_run_must_be_a_run_directory(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "nope"
    assert main(["config", "-c", str(REPO / "configs/sentiment.yaml"), "--run", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: not a run directory (--run {path}): give the directory a `synthcheck "
        f"discover` or `generate` run wrote, or leave out --run\n")
