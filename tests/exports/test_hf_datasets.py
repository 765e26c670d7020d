"""Hugging Face `datasets` 5.2 reads a real suite's cases from `export --format hf`: the
repo's sentiment suite, whose first 44,956 cases have no original text, base or
perturbation and whose last ones do (as native-cases JSON Lines, `load_dataset("json")`
fails on it: "Couldn't cast array of type string to null")."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthcheck.cli import main
from tests.exports.conftest import ROOT, run_tool

pytestmark = pytest.mark.exports

LOAD = r'''
import json, sys
import datasets
datasets.disable_progress_bars()
d = datasets.load_dataset("parquet", data_files=sys.argv[1], split="train",
                          cache_dir=sys.argv[2])
late = d[len(d) - 1]
print(json.dumps({"version": datasets.__version__, "rows": d.num_rows,
                  "columns": d.column_names, "orig_text": str(d.features["orig_text"]),
                  "first_orig": d[0]["orig_text"], "last_orig": late["orig_text"],
                  "last_perturbation": late["perturbation"], "fills": d[0]["fills"]}))
'''


def test_a_real_suite_loads_in_datasets(tmp_path: Path) -> None:
    out = tmp_path / "cases.parquet"
    assert main(["export", "--suite", str(ROOT / "configs" / "suites" / "sentiment.yaml"),
                 "--format", "hf", "--out", str(out)]) == 0
    got = run_tool(LOAD, out, tmp_path / "cache")
    assert got["version"] == "5.2.0" and got["rows"] == 46_437
    assert got["columns"] == ["test", "capability", "type", "case_id", "text", "label", "fills",
                              "orig_text", "group", "base_id", "template", "perturbation",
                              "meta", "pair"]
    assert got["orig_text"] == "Value('string')" and got["first_orig"] is None
    assert got["last_orig"] and got["last_perturbation"]
    assert got["fills"] == [{"slot": "NOUN", "lexicon": "NOUN", "value": "movie"},
                            {"slot": "POS_ADJ", "lexicon": "POS_ADJ", "value": "good"}]
