"""AdaTest 0.3.5 loads `export --format adatest` (pass and fail rows) as its TestTree, and its
per-topic labeling model, fitted on that tree, flags wrong outputs on new cases of the same
topics; fitted on pass rows alone (the old export) it learns "everything passes" and flags
none. AdaTest's default embedder is a sentence-transformer from a hub, which cannot be
fetched here: a hashing character n-gram embedder stands in (set as
``adatest.text_embedding_model``, AdaTest's own hook).

Read with care: AdaTest 0.3.5's fitted model (``CVModel``) returns the probability of its
``classes_[1]``, which is ``pass``, while AdaTest's scorer reads the value as the probability
of failing (its constant model does return that). The test reads each as what it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthcheck.cli import main
from tests.exports.conftest import ROOT, run_tool

pytestmark = pytest.mark.exports

FIT = r'''
import json, os, sys
os.environ["XDG_CACHE_HOME"] = sys.argv[3]
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import HashingVectorizer
import adatest
from adatest._topic_model import TopicLabelingModel

class Hashing:
    name = "hashing-char-2-4"
    def __init__(self):
        self.v = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 4), n_features=4096)
    def __call__(self, texts):
        return self.v.transform(texts).toarray()

adatest.text_embedding_model = Hashing()
tree = adatest.TestTree(sys.argv[1])
new = pd.read_csv(sys.argv[2], index_col=0, keep_default_na=False)
labels = ["negative", "positive"]
t = tree._tests
out = {"rows": len(t), "pass": int((t.label == "pass").sum()),
       "fail": int((t.label == "fail").sum())}
for name, frame in (("both", t), ("pass only", t[t.label != "fail"])):
    tree._tests = frame
    res = {}
    for topic, rows in new[new.label == "pass"].groupby("topic"):
        model = TopicLabelingModel(topic, tree)
        one = "one label" if rows.output.nunique() == 1 else "mixed labels"
        r = res.setdefault(one, {"cases": 0, "wrong outputs flagged": 0,
                                 "right outputs passed": 0})
        # ConstantModel returns p(fail); CVModel returns the decision for its classes_[1],
        # which is "pass" (sorted ["fail", "pass"]): read each as what it is.
        cv = hasattr(model.model, "inner_model")
        if cv:
            assert list(model.model.inner_model.classes_) == ["fail", "pass"]
        def p_fail(text, output):
            p = float(model(text, output))
            return 1 - p if cv else p
        for text, gold in zip(rows.input, rows.output):
            wrong = labels[1 - labels.index(gold)]
            r["wrong outputs flagged"] += int(p_fail(text, wrong) > 0.5)
            r["right outputs passed"] += int(p_fail(text, gold) <= 0.5)
            r["cases"] += 1
    out[name] = res
print(json.dumps(out))
'''


def test_adatest_flags_the_failures_it_is_given(tmp_path: Path) -> None:
    suite = ROOT / "configs" / "suites" / "sentiment.yaml"
    tree, new = tmp_path / "tree.csv", tmp_path / "new.csv"
    base = ["export", "--suite", str(suite), "--format", "adatest", "--sample", "20"]
    assert main([*base, "--out", str(tree), "--seed", "1"]) == 0
    assert main([*base, "--out", str(new), "--seed", "2"]) == 0  # other fills, same topics
    got = run_tool(FIT, tree, new, tmp_path / "cache", timeout=600)
    assert got["pass"] == got["fail"] > 0  # two labels: one wrong output per case
    print(got)
    both, only = got["both"], got["pass only"]
    for kind in only:
        assert only[kind]["wrong outputs flagged"] == 0  # "everything passes"
    # A topic whose cases share one gold label: the model separates right from wrong.
    one = both["one label"]
    assert one["wrong outputs flagged"] == one["right outputs passed"] == one["cases"]
