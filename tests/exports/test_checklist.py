"""CheckList 0.0.11 builds its own TestSuite from `export --format checklist` (with
formalize/formats/checklist_build.py, which needs nothing but CheckList), saves it with its own
`TestSuite.save`, loads it with `TestSuite.from_file`, runs a model on it, and fails the same
cases synthcheck's runner fails: MFT gold labels, INV with and without tolerance, DIR with its
direction and minimum move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formalize import Suite, TemplateRunner
from formalize.formats.checklist import BUILDER
from synthcheck.cli import main
from tests.exports.conftest import run_tool

pytestmark = pytest.mark.exports

# One model, as source, run by both: p(positive) from keywords, and text length nudges it.
MODEL = r'''
def probs(text):
    words = text.lower().replace(".", " ").replace(",", " ").split()
    p = 0.5 + 0.3 * sum(w in ("good", "great", "fine") for w in words) \
        - 0.3 * sum(w in ("bad", "awful", "not") for w in words) + 0.004 * (len(text) % 10)
    p = min(0.99, max(0.01, p))
    return {"negative": 1 - p, "positive": p}
'''

RUN = MODEL + r'''
import json, sys, runpy
import numpy as np
builder = runpy.run_path(sys.argv[1])
suite = builder["build_suite"](sys.argv[2])
suite.save(sys.argv[3])
from checklist.test_suite import TestSuite
import checklist
loaded = TestSuite.from_file(sys.argv[3])
def predict(texts):
    p = np.array([[probs(t)["negative"], probs(t)["positive"]] for t in texts])
    return p.argmax(1), p
loaded.run(predict, overwrite=True)
out = {}
for name, test in loaded.tests.items():
    fails = test.fail_idxs()
    out[name] = {"type": type(test).__name__, "n": len(test.data),
                 "failed": sorted(int(i) for i in fails)}
print(json.dumps(out))
'''

TEXTS = ["A good movie.", "The movie.", "A movie here.", "The show was long.", "A film.",
         "An album!", "Some book", "The film is here.", "It is a show.", "What a movie",
         "This is a book.", "Not a great book, sadly."]
SUITE = {"name": "toy", "labels": ["negative", "positive"], "builtin_lexicons": False,
         "lexicons": {"n": ["movie", "book", "show"], "a": ["good", "great", "fine", "bad"]},
         "tests": [
    {"name": "adjectives", "type": "mft", "capability": "Vocabulary",
     "template": "The {n} was {a}.", "label": "positive"},
    {"name": "typos strict", "type": "inv", "capability": "Robustness",
     "texts": TEXTS, "perturb": [{"name": "nonsense", "length": 3}], "variants": 2},
    {"name": "typos loose", "type": "inv", "capability": "Robustness", "tolerance": 0.1,
     "texts": TEXTS,
     "perturb": [{"name": "nonsense", "length": 3}], "variants": 2},
    {"name": "praise added", "type": "dir", "capability": "Vocabulary", "label": "positive",
     "direction": "up", "texts": TEXTS, "perturb": [{"name": "nonsense", "length": 4}]},
    {"name": "praise added, moves 0.03", "type": "dir", "capability": "Vocabulary",
     "label": "positive", "direction": "up", "min_delta": 0.03, "texts": TEXTS,
     "perturb": [{"name": "nonsense", "length": 4}]},
]}


class Scorer:
    labels = ["negative", "positive"]
    name = "keyword"

    def __init__(self) -> None:
        scope: dict = {}
        exec(MODEL, scope)  # the same model source the CheckList side runs
        self.probs = scope["probs"]

    def predict_proba(self, texts: list[str]) -> list[dict[str, float]]:
        return [self.probs(t) for t in texts]


def test_checklist_loads_and_fails_what_synthcheck_fails(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    out = tmp_path / "suite.checklist.json"
    assert main(["export", "--suite", str(path), "--format", "checklist", "--out", str(out)]) == 0
    got = run_tool(RUN, BUILDER, out, tmp_path / "suite.pkl")
    assert (tmp_path / "suite.pkl").is_file()
    assert {k: v["type"] for k, v in got.items()} == {
        "adjectives": "MFT", "typos strict": "INV", "typos loose": "INV",
        "praise added": "DIR", "praise added, moves 0.03": "DIR"}
    # synthcheck's own verdicts on the same model; CheckList's unit is an original with its
    # variants (INV/DIR), which fails when any variant fails.
    cases = TemplateRunner().run(Suite.from_dict(SUITE), [Scorer()]).cases
    description = json.loads(out.read_text())
    for test in description["tests"]:
        rows = cases[cases.test == test["name"]]
        if test["type"] == "MFT":
            failed = [i for i, text in enumerate(test["data"])
                      if not rows[rows.text == text].passed.iloc[0]]
        else:
            failed = [i for i, group in enumerate(test["data"])
                      if not rows[rows.orig_text == group[0]].passed.all()]
        assert got[test["name"]]["failed"] == failed, test["name"]
        assert got[test["name"]]["n"] == len(test["data"])
    # The tolerance and the minimum move matter: each pair differs.
    assert got["typos strict"]["failed"] != got["typos loose"]["failed"]
    assert got["praise added"]["failed"] != got["praise added, moves 0.03"]["failed"]
