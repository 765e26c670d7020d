from __future__ import annotations

from pathlib import Path

import pytest

from synth.core import ConfigError, apply_overrides, load_config
from synthcheck import RunConfig, load_run_config

REPO = Path(__file__).resolve().parents[2]


def test_default_config_loads() -> None:
    cfg = load_run_config(REPO / "configs" / "sentiment.yaml")
    assert cfg.generator.model == "packaged:smollm2-135m-instruct"
    assert cfg.generator.sampling.top_p == 1.0 and cfg.generator.sampling.temperature == 0.7
    assert cfg.queries.k == 5 and cfg.corpus.source == "packaged:imdb"


def test_unknown_field_names_field_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: x\ngenerator:\n  n: 4\n  top_pp: 0.9\n")
    with pytest.raises(ConfigError, match=r"unknown field 'generator.top_pp'.*c.yaml.*line 4"):
        load_run_config(path)


def test_wrong_type_names_field(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("generator:\n  sampling:\n    top_p: lots\n")
    with pytest.raises(ConfigError, match=r"'generator.sampling.top_p'.*'lots'.*line 3"):
        load_run_config(path)


def test_out_of_range_value(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("generator:\n  sampling:\n    top_p: 1.5\n")
    with pytest.raises(ConfigError, match=r"top_p.*less than or equal to 1"):
        load_run_config(path)


def test_malformed_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: x\ngenerator:\n  n: [1, 2\n  shard_size: 3\n")
    with pytest.raises(ConfigError, match=r"malformed YAML.*c.yaml, line \d"):
        load_run_config(path)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_run_config(tmp_path / "nope.yaml")


def test_overrides_set_nested_fields(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: x\n")
    cfg = load_config(path, RunConfig, ["generator.sampling.top_p=0.95", "queries.k=7"])
    assert cfg.generator.sampling.top_p == 0.95 and cfg.queries.k == 7
    assert apply_overrides({"a": {"b": 1}}, ["a.c=[1, 2]"]) == {"a": {"b": 1, "c": [1, 2]}}


def test_bad_override(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("name: x\n")
    with pytest.raises(ConfigError, match="bad override 'seed'"):
        load_config(path, RunConfig, ["seed"])
    with pytest.raises(ConfigError, match=r"unknown field 'generator.nope'.*-P|unknown field"):
        load_config(path, RunConfig, ["generator.nope=1"])


SEED_AT = """name: s
generator:
  dtype: float32
  sampling:
    top_p: 0.9
{seed}"""
OLD_SEED = SEED_AT.format(seed="    seed: 5\n")
NEW_SEED = SEED_AT.format(seed="  seed: 5\n")
MAIN_HASH = "83ed9d17971cbc43"
"""The generation hash of ``OLD_SEED`` as main computed it while the seed was
``generator.sampling.seed`` (commit 9b51e6e): the move keeps every hash."""


def test_the_run_seed_is_the_generators_not_the_engines(tmp_path: Path) -> None:
    """``generator.seed`` is the run seed; the engine's sampling parameters have none, and
    the hash keeps the seed where it was, so a run keeps its hashes and outputs."""
    from pydantic import ValidationError

    from synth import generation_config_hash
    from synth.engines import SamplingConfig

    path = tmp_path / "c.yaml"
    path.write_text(NEW_SEED)
    cfg = load_run_config(path)
    assert cfg.generator.seed == 5
    assert "seed" not in cfg.generator.sampling.model_dump()
    assert generation_config_hash(cfg) == MAIN_HASH
    assert generation_config_hash(load_run_config(path, ["generator.seed=6"])) != MAIN_HASH
    with pytest.raises(ValidationError, match="seed"):
        SamplingConfig(seed=5)  # type: ignore[call-arg]


def test_the_former_seed_field_still_loads_with_a_warning(tmp_path: Path) -> None:
    from synth import generation_config_hash
    from synth.core import ConfigDeprecation

    path = tmp_path / "c.yaml"
    path.write_text(OLD_SEED)
    with pytest.warns(ConfigDeprecation) as caught:
        cfg = load_run_config(path)
    assert cfg.generator.seed == 5 and generation_config_hash(cfg) == MAIN_HASH
    assert [str(w.message) for w in caught] == [
        f"generator.sampling.seed is deprecated ({path}, field 'generator.sampling.seed', "
        "line 6): the run seed is now generator.seed (same value, same hashes and outputs): "
        "write `seed: 5` under generator: (-P generator.seed=5)"]
    # -P at the former place is read too, and named as the place it came from
    with pytest.warns(ConfigDeprecation, match=r"\(-P generator.sampling.seed=7, field"):
        assert load_run_config(path, ["generator.sampling.seed=7"]).generator.seed == 7


def test_the_seed_in_both_places_must_agree(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(OLD_SEED + "  seed: 5\n")
    with pytest.warns(Warning):
        assert load_run_config(path).generator.seed == 5  # the same value: read
    with pytest.raises(ConfigError, match=r"generator.sampling.seed \(5\) and generator.seed "
                       r"\(3\) are both set: .* keep generator.seed only \(-P generator.seed=3"):
        load_run_config(path, ["generator.seed=3"])


def test_the_cli_prints_the_former_seed_field_as_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from synthcheck.cli import main

    path = tmp_path / "c.yaml"
    path.write_text(OLD_SEED)
    assert main(["config", "-c", str(path)]) == 0
    assert main(["config", "-c", str(path)]) == 0  # each time a config is loaded
    err = capsys.readouterr().err.splitlines()
    assert err == [f"warning: generator.sampling.seed is deprecated ({path}, field "
                   "'generator.sampling.seed', line 6): the run seed is now generator.seed "
                   "(same value, same hashes and outputs): write `seed: 5` under generator: "
                   "(-P generator.seed=5)"] * 2
