"""CLI of stage 2: `score`, `rank`, `mine`, `evaluate`, `train-demo`, and their bad input.

Runs are built without downloads: a 40-sentence corpus, toy task models named by
``python:discovery_fixtures:<name>`` specs, and a tiny random Llama saved as the ``hf:``
reference. Every bad-input test checks the exit status 2, the one-line
``error: <what> (<where>): <fix>`` message, and that no file of the run directory changed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

HERE = Path(__file__).resolve().parent

from synth.core import derive_seed, read_jsonl, write_jsonl  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from tests.discovery.discovery_fixtures import keyword_model, save_tiny_llama  # noqa: E402

LABELS = ["negative", "positive"]
SUBJECTS = ["the film", "the story", "the cast", "the script", "the music"]
VERDICTS = ["is great", "is dull", "is not bad at all", "is wonderful and sharp",
            "is a boring mess", "is lovely", "was weak", "is good"]
TEXTS = [f"{SUBJECTS[i % 5]} {VERDICTS[i % 8]} ." for i in range(40)]
IDS = [f"s{i:03d}" for i in range(40)]
TOKEN = re.compile(r"(?u)[\w']+")

# the configs name `python:discovery_fixtures:<model>` task models
pytestmark = pytest.mark.usefixtures("task_models_on_path")


def _deep_update(base: dict, extra: dict) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _deep_update(base[key], value)
        else:
            base[key] = value
    return base


def write_cfg(path: Path, ref_dir: Path, **sections: object) -> Path:
    cfg = {
        "name": "cli",
        "task_models": [{"name": "toy", "spec": "python:discovery_fixtures:keyword_model"}],
        "reference": {"model": f"hf:{ref_dir}", "device": "cpu", "calibration": "contextual"},
        "ranking": {"top_k": 8, "min_reference_margin": 0.0},
        "mining": {"min_support": 2, "ngram_max": 2},
        "evaluation": {"size": 40, "include_reference": False},
    }
    path.write_text(yaml.safe_dump(_deep_update(cfg, sections), sort_keys=False))
    return path


def make_run(run: Path) -> Path:
    write_jsonl(run / "corpus" / "shard-00000.jsonl",
                [{"id": i, "text": t} for i, t in zip(IDS, TEXTS, strict=True)])
    return run


def snapshot(run: Path) -> dict[str, bytes]:
    """Every file under the run directory, by relative path."""
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*"))
            if p.is_file()}


def cli(args: list[object], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_user_error(code: int, err: str, pattern: str) -> None:
    """Exit status 2 and one ``error:`` line, last on stderr (after any loading progress
    bar transformers draws), that matches ``pattern``; no traceback."""
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], err
    assert re.search(pattern, lines[-1]), err


def log_normalize(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    top = rows.max(axis=1, keepdims=True)
    return rows - top - np.log(np.exp(rows - top).sum(axis=1, keepdims=True))


@pytest.fixture(scope="module")
def tiny_ref(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-ref"))


@pytest.fixture(scope="module")
def whitespace_ref(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference whose tokenizer drops whitespace: a label word of spaces is no token."""
    return save_tiny_llama(tmp_path_factory.mktemp("ws-ref"), whitespace=True)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, tiny_ref: Path) -> Path:
    """A run scored, ranked and mined through the CLI once per module (copied per test)."""
    root = tmp_path_factory.mktemp("scored")
    run = make_run(root / "run")
    cfg = write_cfg(root / "c.yaml", tiny_ref)
    for command in ("score", "rank", "mine"):
        assert main([command, "-c", str(cfg), "--run", str(run), "-q"]) == 0
    return root


@pytest.fixture
def full_run(scored: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(scored / "run", tmp_path / "run")
    shutil.copy(scored / "c.yaml", tmp_path / "c.yaml")
    return tmp_path / "run", tmp_path / "c.yaml"


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))


# --- score, rank, mine ---


def test_score_writes_task_and_calibrated_reference_scores(tiny_ref: Path, tmp_path: Path,
                                                           capsys) -> None:
    run = make_run(tmp_path / "run")
    cfg = write_cfg(tmp_path / "c.yaml", tiny_ref)
    code, out, _ = cli(["score", "-c", cfg, "--run", run, "-q"], capsys)
    assert code == 0 and "scored 40 sentences" in out and str(run / "scores") in out
    task = read_jsonl(run / "scores" / "task-toy.jsonl")
    assert [r["id"] for r in task] == IDS
    for rec, want in zip(task, keyword_model(TEXTS), strict=True):
        assert rec["probs"] == pytest.approx(want)
    ref = read_jsonl(run / "scores" / "reference.jsonl")
    assert [r["id"] for r in ref] == IDS
    meta = json.loads((run / "scores" / "reference.jsonl.meta.json").read_text())
    assert meta["calibration"]["method"] == "contextual"
    bias = np.array([meta["calibration"]["bias"][lab] for lab in LABELS])
    raw = np.array([[r["logprobs"][lab] for lab in LABELS] for r in ref])
    probs = np.array([[r["probs"][lab] for lab in LABELS] for r in ref])
    assert np.all(raw < 0)  # log-probabilities of the label words
    assert probs == pytest.approx(np.exp(log_normalize(log_normalize(raw) - bias)))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stages"]["score"]["status"] == "complete"
    before = snapshot(run)
    code, out, _ = cli(["score", "-c", cfg, "--run", run, "-q"], capsys)
    assert code == 0 and "scores are up to date (40 sentences)" in out
    assert snapshot(run) == before


def test_rank_keeps_the_most_divergent_sentences(full_run, capsys) -> None:
    run, cfg = full_run
    code, out, _ = cli(["rank", "-c", cfg, "--run", run, "--top-k", 5, "--show", 3], capsys)
    assert code == 0 and "hard subset: 5 of 40 sentences" in out
    task = np.array([[r["probs"][lab] for lab in LABELS]
                     for r in read_jsonl(run / "scores" / "task-toy.jsonl")])
    ref = np.array([[r["probs"][lab] for lab in LABELS]
                    for r in read_jsonl(run / "scores" / "reference.jsonl")])
    top = task.argmax(axis=1)
    div = np.abs(task[np.arange(40), top] - ref[np.arange(40), top])  # abs_top, the default
    fails = top != ref.argmax(axis=1)  # only failures (top labels differ) are hard
    assert fails.sum() >= 5
    hard = read_jsonl(run / "hard.jsonl")
    assert [r["rank"] for r in hard] == [1, 2, 3, 4, 5]
    assert [r["divergence"] for r in hard] == pytest.approx(sorted(div[fails], reverse=True)[:5])
    assert all(r["task_label"] != r["reference_label"] for r in hard)
    for rec in hard:
        i = IDS.index(rec["id"])
        assert rec["text"] == TEXTS[i] and rec["divergence"] == pytest.approx(div[i])
        assert rec["task_label"] == LABELS[top[i]]
    shown = [line for line in out.splitlines() if line.startswith("     ")]
    assert len(shown) == 3 and hard[0]["text"] in shown[0]


@pytest.mark.parametrize(("statistic", "column", "ascending"), [
    ("z", "z", False), ("log_odds", "log_odds", False), ("frequency", "hard_count", False),
    ("q_value", "q_value", True), ("disagreement", "disagreement_rate", False),
    ("divergence", "mean_divergence", False),
])
def test_mine_sorts_by_the_chosen_statistic(full_run, capsys, statistic, column,
                                            ascending) -> None:
    run, cfg = full_run
    code, out, _ = cli(["mine", "-c", cfg, "--run", run, "-P", f"mining.statistic={statistic}",
                        "--show", 4], capsys)
    assert code == 0
    # z is the config's own statistic: the module's `mine` already wrote that table.
    assert ("n-grams are up to date" if statistic == "z" else f"(sorted by {statistic})") in out
    rows = read_jsonl(run / "ngrams.jsonl")
    assert rows, "the toy run mines some n-grams"
    keys = [r[column] for r in rows]
    assert keys == sorted(keys, reverse=not ascending)
    # Counts are sentences that contain the n-gram, in the hard subset and the corpus.
    hard_texts = [r["text"] for r in read_jsonl(run / "hard.jsonl")]
    for row in rows:
        def has(text: str, gram: str = row["ngram"]) -> bool:
            return f" {gram} " in " " + " ".join(TOKEN.findall(text.lower())) + " "
        assert row["hard_count"] == sum(map(has, hard_texts))
        assert row["corpus_count"] == sum(map(has, TEXTS))
    csv_lines = (run / "ngrams.csv").read_text().splitlines()
    assert csv_lines[0].startswith("ngram,") and len(csv_lines) == len(rows) + 1
    assert [line.split(",")[0] for line in csv_lines[1:]] == [r["ngram"] for r in rows]
    assert len(out.splitlines()) == 2 + min(4, len(rows))


def test_stages_report_up_to_date(full_run, capsys) -> None:
    run, cfg = full_run
    before = snapshot(run)
    assert cli(["rank", "-c", cfg, "--run", run], capsys)[1].startswith(
        "hard subset is up to date")
    assert cli(["mine", "-c", cfg, "--run", run], capsys)[1].startswith(
        "n-grams are up to date")
    assert snapshot(run) == before


# --- bad input: exit 2, a clear message, the run directory untouched ---


def _sklearn_file(path: Path, classes: list[object], *, untrusted: bool = False) -> Path:
    import skops.io as sio
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    steps = [CountVectorizer(), LogisticRegression()]
    if untrusted:
        steps.insert(0, FunctionTransformer(_identity))
    pipe = make_pipeline(*steps).fit(["great fun", "lovely film", "dull mess", "boring film"],
                                     [classes[1], classes[1], classes[0], classes[0]])
    sio.dump(pipe, path)
    return path


def _identity(texts):
    return texts


@pytest.mark.parametrize("kind", ["python", "sklearn"])
def test_task_model_labels_that_do_not_match(full_run, tiny_ref, tmp_path, capsys,
                                             kind) -> None:
    run, _ = full_run
    if kind == "python":  # found on the first batch the model scores
        spec, got = "python:discovery_fixtures:wrong_labels_model", r"\['pos', 'neg'\]"
        fix = r"add label_map to the task model's config, e\.g\. label_map: \{pos: negative"
    else:  # found when the model is loaded
        spec = f"sklearn:{_sklearn_file(tmp_path / 'm.skops', [0, 1])}"
        got, fix = r"\['0', '1'\]", r"add label_map .*\{0: negative, 1: positive\}"
    cfg = write_cfg(tmp_path / "bad.yaml", tiny_ref,
                    task_models=[{"name": "toy", "spec": spec}])
    before = snapshot(run)
    code, _, err = cli(["score", "-c", cfg, "--run", run, "-q"], capsys)
    assert_user_error(code, err, rf"^error: task model labels {got} do not match the task's "
                                 rf"labels \['negative', 'positive'\] \({re.escape(spec)}\): "
                                 rf"{fix}")
    assert snapshot(run) == before


@pytest.mark.parametrize("word", ["", "   "])
def test_label_words_that_tokenize_to_nothing(full_run, whitespace_ref, tmp_path, capsys,
                                              word) -> None:
    run, _ = full_run
    # "" is refused from the config alone; "   " by the reference's own tokenizer (this one
    # drops whitespace), once its model is loaded and the task model's scores are done.
    cfg = write_cfg(tmp_path / "bad.yaml", whitespace_ref,
                    reference={"label_words": {"negative": word, "positive": " positive"}})
    before = snapshot(run)
    code, _, err = cli(["score", "-c", cfg, "--run", run, "-q"], capsys)
    assert_user_error(code, err, rf"^error: label word '{word}' of label 'negative' tokenizes "
                                 r"to nothing \(reference\.label_words\): use a non-empty "
                                 r"continuation such as ' positive'")
    assert snapshot(run) == before


def test_scores_with_ids_missing_from_the_corpus(full_run, capsys) -> None:
    run, cfg = full_run
    path = run / "scores" / "task-toy.jsonl"
    rows = read_jsonl(path)
    rows[3]["id"] = "ghost-1"
    write_jsonl(path, rows)
    before = snapshot(run)
    code, _, err = cli(["rank", "-c", cfg, "--run", run, "--top-k", 5], capsys)
    # The score stage recorded each file's digest: a file changed since is refused (the
    # score reader's own message for the ids is checked in tests/discovery/test_stages.py).
    assert_user_error(code, err, r"^error: the run's scores cannot be used: "
                                 r"scores/task-toy.jsonl was changed after the score stage "
                                 r"wrote it \(.*\): run `synthcheck score` again")
    assert snapshot(run) == before


def test_corpus_ids_missing_from_a_scores_file(full_run, capsys) -> None:
    run, cfg = full_run
    path = run / "scores" / "reference.jsonl"
    rows = read_jsonl(path)
    write_jsonl(path, rows[:7] + rows[8:])
    before = snapshot(run)
    code, _, err = cli(["rank", "-c", cfg, "--run", run, "--top-k", 5], capsys)
    assert_user_error(code, err, r"^error: the run's scores cannot be used: "
                                 r"scores/reference.jsonl was changed after the score stage "
                                 r"wrote it \(.*\): run `synthcheck score` again")
    assert snapshot(run) == before
    # Scoring again rescores (from the cached chunks) and rank then runs.
    assert cli(["score", "-c", cfg, "--run", run, "-q"], capsys)[0] == 0
    assert cli(["rank", "-c", cfg, "--run", run, "--top-k", 5], capsys)[0] == 0


def test_top_k_larger_than_the_corpus(full_run, capsys) -> None:
    run, cfg = full_run
    before = snapshot(run)
    code, _, err = cli(["rank", "-c", cfg, "--run", run, "--top-k", 1000], capsys)
    assert_user_error(code, err, r"^error: top_k \(1000\) is larger than the corpus "
                                 r"\(40 sentences\) \(ranking\.top_k\): lower ranking\.top_k")
    assert snapshot(run) == before


def test_mining_an_empty_hard_subset(tiny_ref, tmp_path, capsys) -> None:
    # The task model is the reference itself (same prompt, same LLM): the top labels always
    # agree, so no sentence fails and the hard subset (failures only) is empty.
    run = make_run(tmp_path / "run")
    cfg = write_cfg(tmp_path / "c.yaml", tiny_ref,
                    task_models=[{"name": "twin", "spec": f"fewshot:hf:{tiny_ref}"}],
                    ranking={"min_reference_margin": 0.0})
    assert cli(["score", "-c", cfg, "--run", run, "-q"], capsys)[0] == 0
    code, out, _ = cli(["rank", "-c", cfg, "--run", run], capsys)
    assert code == 0
    assert "hard subset: 0 of 40 sentences (0 top-label disagreements" in out
    assert "note: the hard subset is empty" in out
    assert read_jsonl(run / "hard.jsonl") == []
    before = snapshot(run)
    code, _, err = cli(["mine", "-c", cfg, "--run", run], capsys)
    hard = re.escape(str(run / "hard.jsonl"))
    assert_user_error(code, err, rf"^error: cannot mine an empty hard subset \({hard}\): no "
                                 r"sentence fails by the run's rule \(the task model and the "
                                 r"reference agree on every judged sentence, or most abstain: "
                                 r"see abstained in hard\.jsonl\.meta\.json\); rank again "
                                 r"with a lower ranking\.min_reference_margin or "
                                 r"reference\.abstain\.threshold, or generate a larger corpus")
    assert snapshot(run) == before


def test_skops_file_with_untrusted_types_is_refused_not_loaded(full_run, tiny_ref, tmp_path,
                                                               monkeypatch, capsys) -> None:
    import skops.io as sio

    run, _ = full_run
    evil = _sklearn_file(tmp_path / "evil.skops", LABELS, untrusted=True)
    loaded: list[object] = []
    monkeypatch.setattr(sio, "load", lambda *a, **k: loaded.append(a))
    cfg = write_cfg(tmp_path / "bad.yaml", tiny_ref,
                    task_models=[{"name": "toy", "spec": f"sklearn:{evil}"}])
    before = snapshot(run)
    code, _, err = cli(["score", "-c", cfg, "--run", run, "-q"], capsys)
    assert_user_error(code, err, r"^error: refusing to load untrusted types \[.*_identity.*\]: "
                                 r".*_identity is _identity from .*, third-party code synthcheck "
                                 r"cannot check: trust it only if you know what it does "
                                 rf"\(sklearn:{re.escape(str(evil))}\): if you trust this "
                                 r"file, list these types under the task model's trusted_types")
    assert not loaded
    assert snapshot(run) == before


# --- evaluate and train-demo ---

GOLD = [("the film is great .", "positive"), ("the cast is dull .", "negative"),
        ("the story is not bad at all .", "positive"), ("a lovely script .", 1),
        ("the music is a boring mess .", 0), ("good grief , what a great mess .", "negative")]


def test_evaluate_on_a_labeled_file_into_the_run(full_run, tmp_path, capsys) -> None:
    run, cfg = full_run
    gold = tmp_path / "gold.jsonl"
    write_jsonl(gold, [{"text": t, "label": lab} for t, lab in GOLD])
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["stage_hashes"]["evaluate"] = "0123456789abcdef"  # as `discover` leaves it
    manifest["stages"]["evaluate"] = {"status": "complete"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = cli(["evaluate", "-c", cfg, "--data", gold, "--run", run, "-q"], capsys)
    assert code == 0
    # keyword_model reads "not bad at all" as negative and "good grief ... great mess" as
    # positive: 4 of 6 right, and 2 of 3 right on either side.
    table = {line.split()[0]: line.split() for line in out.splitlines()[1:-1]}
    assert table["toy"][1:3] == ["6", "0.667"]
    saved = json.loads((run / "eval.json").read_text())
    assert saved["data"] == str(gold)
    rep = saved["reports"]["toy"]
    assert rep["n"] == 6 and rep["accuracy"] == pytest.approx(4 / 6)
    for lab in LABELS:
        assert rep["per_class"][lab] == pytest.approx(
            {"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "support": 3})
    assert "reference" not in saved["reports"]  # evaluation.include_reference: false
    # eval.json records the hash "evaluate", never discover's stage hash (which the manifest
    # keeps): a later `discover` sees the difference and redoes its own evaluation.
    assert saved["config_hash"] == "evaluate"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stage_hashes"]["evaluate"] == "0123456789abcdef"


def test_evaluate_the_reference_and_size(full_run, tmp_path, capsys) -> None:
    from discovery import FewShotReference
    from synthcheck import load_run_config

    run, cfg = full_run
    gold = tmp_path / "gold.csv"
    gold.write_text("text,label\n" + "".join(f'"{t}",{lab}\n' for t, lab in GOLD))
    code, out, _ = cli(["evaluate", "-c", cfg, "--data", gold, "--size", 4, "-q",
                        "-P", "evaluation.include_reference=true"], capsys)
    assert code == 0 and not (run / "eval.json").exists()
    lines = out.splitlines()
    # The table, then the hard subset's precision measured on the same 4 held-out examples.
    end = next(i for i, line in enumerate(lines) if line.startswith("hard-subset precision ("))
    assert lines[end].endswith(" held-out examples (of 4)")
    rows = {line.split()[0]: line.split() for line in lines[1:end]}
    assert set(rows) == {"toy", "reference"} and rows["reference"][1] == "4"
    config = load_run_config(cfg)
    ref = FewShotReference.from_config(config.reference, LABELS)
    # --size 4 is a stratified sample of the 6 rows (3 per label): 2 per label.
    from discovery import LabeledSet

    full = LabeledSet([t for t, _ in GOLD], ["positive", "negative", "positive", "positive",
                                              "negative", "negative"])
    sample = full.stratified_sample(4, derive_seed(0, "evaluation-sample"))
    assert sample.counts() == {"positive": 2, "negative": 2}
    preds = [max(LABELS, key=p.__getitem__) for p in ref.predict_proba(sample.texts)]
    golds = sample.labels
    acc = np.mean([p == g for p, g in zip(preds, golds, strict=True)])
    assert float(rows["reference"][2]) == pytest.approx(acc, abs=5e-4)


def test_evaluate_unknown_gold_label(full_run, tmp_path, capsys) -> None:
    run, cfg = full_run
    gold = tmp_path / "gold.csv"
    gold.write_text("text,label\ngood,positive\nbad,meh\n")
    before = snapshot(run)
    code, _, err = cli(["evaluate", "-c", cfg, "--data", gold, "--run", run], capsys)
    assert_user_error(code, err, rf"^error: unknown label 'meh' \({re.escape(str(gold))}, "
                                 r"row 2\): use one of \['negative', 'positive'\]")
    assert snapshot(run) == before


def test_train_demo_then_evaluate_on_the_held_out_split(tiny_ref, tmp_path, monkeypatch,
                                                        capsys) -> None:
    import discovery._demo as demo
    from discovery import EvaluationConfig, load_task_scorer, rotten_tomatoes_split
    from synth.core import cache_dir

    code, out, _ = cli(["train-demo", "--split-seed", 3, "--holdout-fraction", 0.25,
                        "--limit", 400], capsys)
    path = cache_dir() / "demo-sentiment-tfidf-lr-split3-holdout0.25.skops"
    assert code == 0 and out.strip() == f"demo model saved: {path}"
    meta = json.loads(path.with_name(path.name + ".meta.json").read_text())
    assert (meta["split_seed"], meta["holdout_fraction"], meta["n_train"]) == (3, 0.25, 400)
    # The default split's file is another one: training split 3 did not overwrite it.
    assert not (cache_dir() / "demo-sentiment-tfidf-lr-split0-holdout0.2.skops").exists()

    def no_training(*a, **k):
        raise AssertionError("the demo model of this split is already trained")

    monkeypatch.setattr(demo, "train_demo_model", no_training)
    cfg = write_cfg(tmp_path / "c.yaml", tiny_ref,
                    task_models=[{"name": "demo", "spec": "demo:sentiment"}],
                    evaluation={"split_seed": 3, "holdout_fraction": 0.25, "size": 30})
    code, out, _ = cli(["evaluate", "-c", cfg, "-q"], capsys)
    assert code == 0
    row = out.splitlines()[1].split()
    ev = EvaluationConfig(split_seed=3, holdout_fraction=0.25)
    train, held = rotten_tomatoes_split(seed=3, holdout_fraction=0.25)
    held = held.stratified_sample(30, derive_seed(3, "evaluation-sample"))  # evaluation.size
    assert not set(held.texts) & set(train.texts)
    scorer = load_task_scorer("demo:sentiment", LABELS, evaluation=ev)
    preds = [max(LABELS, key=p.__getitem__) for p in scorer.predict_proba(held.texts)]
    acc = np.mean([p == g for p, g in zip(preds, held.labels, strict=True)])
    assert row[:2] == ["demo", "30"] and float(row[2]) == pytest.approx(acc, abs=5e-4)


def test_train_demo_to_a_file_and_bad_arguments(tmp_path, capsys) -> None:
    out_path = tmp_path / "models" / "m.skops"
    code, out, _ = cli(["train-demo", "--out", out_path, "--split-seed", 1, "--limit", 200], capsys)
    assert code == 0 and out.strip() == f"demo model saved: {out_path}"
    meta = json.loads(out_path.with_name("m.skops.meta.json").read_text())
    assert (meta["split_seed"], meta["holdout_fraction"], meta["n_train"]) == (1, 0.2, 200)
    from discovery import load_task_scorer

    scorer = load_task_scorer(f"sklearn:{out_path}", LABELS)
    assert sum(scorer.predict_proba(["a great film"])[0].values()) == pytest.approx(1.0)
    code, _, err = cli(["train-demo", "--holdout-fraction", 1.5], capsys)
    assert_user_error(code, err, r"^error: held-out fraction must be in \(0, 1\), got 1\.5 "
                                 r"\(--holdout-fraction\)")
    code, _, err = cli(["train-demo", "--limit", 1, "--out", tmp_path / "x.skops"], capsys)
    assert_user_error(code, err, r"^error: limit must be at least 2 sentences, got 1 "
                                 r"\(--limit\)")
    assert not (tmp_path / "x.skops").exists()


def test_rank_before_score_is_an_error_with_exit_2(tmp_path, capsys):
    run_dir = tmp_path / "run"
    write_jsonl(run_dir / "corpus" / "shard-00000.jsonl", [{"id": "s0", "text": "a film"}])
    cfg = tmp_path / "c.yaml"
    cfg.write_text("ranking:\n  top_k: 3\n")
    assert main(["rank", "--config", str(cfg), "--run", str(run_dir)]) == 2
    assert "error: the run has no complete scores" in capsys.readouterr().err


def test_config_typo_names_the_field(tmp_path):
    from synth.core import ConfigError
    from synthcheck import load_run_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text("ranking:\n  top_kk: 3\n")
    with pytest.raises(ConfigError, match=r"unknown field 'ranking.top_kk'.*line 2"):
        load_run_config(cfg)


def test_flags_become_overrides_one_way(tmp_path):
    import argparse

    from synthcheck._cli_common import flag_overrides, load_args_config

    args = argparse.Namespace(top_k=3, size=None, no_reference=True, config=None,
                              overrides=["ranking.top_k=9", "evaluation.size=40"])
    flags = {"top_k": "ranking.top_k", "size": "evaluation.size",
             "no_reference": ("evaluation.include_reference", False)}
    assert flag_overrides(args, flags) == ["ranking.top_k=3",
                                           "evaluation.include_reference=false"]
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text("name: t\n")
    args.config = str(cfg_path)
    cfg = load_args_config(args, flags)
    # A flag wins over a -P of the same key; a -P without a flag stays.
    assert cfg.ranking.top_k == 3 and cfg.evaluation.size == 40
    assert cfg.evaluation.include_reference is False


def test_mine_with_too_few_hard_sentences_says_to_lower_min_support(full_run, capsys) -> None:
    run, cfg = full_run
    code, out, _ = cli(["mine", "-c", cfg, "--run", run, "-P", "mining.min_support=10000"],
                       capsys)
    assert code == 0
    assert "no n-gram occurs in at least mining.min_support=10000 hard sentences" in out
    assert "-P mining.min_support=9999" in out and "ngram " not in out
