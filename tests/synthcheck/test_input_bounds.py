"""Field bounds and empty values refused when the config loads (issue 19): `synthcheck config`
refuses them as `discover` would, with one ``error:`` line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthcheck.cli import main

CONFIG = str(Path(__file__).resolve().parents[2] / "configs" / "sentiment.yaml")
LONG = " ".join(["w"] * 5000)
ALIGN = ("invalid value for 'reference.align_prefix': align_prefix must be 'auto' or a number "
         "of tokens from 0 to 4,096 (vLLM's blocks are 16 or 32 tokens); got {got} "
         "(-P reference.align_prefix={arg}, field 'reference.align_prefix'): correct the value")

CASES = {
    "focus.ngrams=['']": "invalid value for 'focus.ngrams': n-gram 0 is empty or only spaces "
                         "(''); list words or phrases (-P focus.ngrams=[''], field "
                         "'focus.ngrams'): correct the value",
    "focus.ngrams=[a, '  ']": "invalid value for 'focus.ngrams': n-gram 1 is empty or only "
                              "spaces ('  '); list words or phrases (-P focus.ngrams=[a, '  '], "
                              "field 'focus.ngrams'): correct the value",
    f"focus.ngrams=['{LONG}']": "invalid value for 'focus.ngrams': n-gram 0 has 5,000 words and "
                                "9,999 characters, more than 10 words or 200 characters (it "
                                "must fit in a generated sentence) (-P focus.ngrams=['"
                                + LONG[:85] + "..., field 'focus.ngrams'): correct the value",
    "focus.budget=1000000000000": "invalid value for 'focus': (candidates 16 + ngrams 0) x "
                                  "budget 1,000,000,000,000 x rounds 1 = 16,000,000,000,000 "
                                  "generation prompts is unreasonably large (at most "
                                  "10,000,000): it would need about 1,851,852 days of "
                                  "generation at 100 prompts/s (-P focus.budget=1000000000000, "
                                  "field 'focus'): correct the value",
    "slices.semantic.encoder=": "invalid value for 'slices.semantic.encoder': encoder must be "
                                "packaged:all-minilm-l6-v2 or hf:<local folder>; got '' (-P "
                                "slices.semantic.encoder=, field 'slices.semantic.encoder'): "
                                "correct the value",
    "slices.semantic.encoder=all-minilm": "invalid value for 'slices.semantic.encoder': encoder "
                                          "must be packaged:all-minilm-l6-v2 or hf:<local "
                                          "folder>; got 'all-minilm' (-P slices.semantic."
                                          "encoder=all-minilm, field 'slices.semantic.encoder')"
                                          ": correct the value",
    "reference.align_prefix=1000000000": ALIGN.format(got="1000000000", arg="1000000000"),
    "reference.align_prefix=x": ALIGN.format(got="'x'", arg="x"),
    "reference.align_prefix=true": ALIGN.format(got="True", arg="true"),
}


@pytest.mark.parametrize("override", list(CASES))
def test_config_refuses_out_of_bounds_values(override, capsys):
    assert main(["config", "-c", CONFIG, "-P", override]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {CASES[override]}\n" and captured.out == ""


@pytest.mark.parametrize("override", ["reference.align_prefix=4096", "reference.align_prefix=0",
                                      "focus.ngrams=['not bad', 'hardly']",
                                      "focus.budget=625000"])  # 16 x 625,000: the bound
def test_values_at_the_bounds_load(override, capsys):
    assert main(["config", "-c", CONFIG, "-P", override]) == 0
