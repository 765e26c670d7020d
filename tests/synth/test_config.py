from __future__ import annotations

from pathlib import Path

import pytest

from synth.core import ConfigError, apply_overrides, load_config
from synthcheck import RunConfig, load_run_config

REPO = Path(__file__).resolve().parents[2]


def test_default_config_loads() -> None:
    cfg = load_run_config(REPO / "configs" / "sentiment.yaml")
    assert cfg.generator.model == "packaged:smollm2-135m-instruct"
    assert cfg.generator.sampling.top_p == 1.0 and cfg.generator.sampling.temperature == 1.0
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
