"""score -> rank -> mine on a small run directory, with toy models; stage hashes and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from discovery import (
    MiningConfig,
    RankingConfig,
    TaskModelConfig,
    load_scores,
    mine_run,
    rank_run,
    score_run,
)
from discovery._stage_state import output_digests
from synth.core import DataError, RunDir, read_jsonl, write_jsonl
from tests.discovery.discovery_fixtures import sections

WORDS = ["film", "story", "cast", "script", "music", "plot", "ending"]
GOOD = ["wonderful", "great", "lovely", "sharp"]
BAD = ["dull", "weak", "boring", "awful"]


def _corpus(n=40):
    texts = []
    for i in range(n):
        word = (GOOD + BAD)[i % 8]
        text = f"the {WORDS[i % 7]} is {word}"
        if i % 5 == 0:
            text += " , not bad at all"
        texts.append(text)
    return texts


def _p(t, knows):
    s = sum(w in t for w in GOOD) - sum(w in t.split() for w in BAD + ["bad"])
    if knows and "not bad at all" in t:
        s = 2
    return 1 / (1 + np.exp(-2 * s))


class ToyTask:
    labels = ["negative", "positive"]
    name = "toy"

    def __init__(self):
        self.calls = 0

    def predict_proba(self, texts):
        self.calls += len(texts)
        return [{"negative": 1 - _p(t, False), "positive": _p(t, False)} for t in texts]


class ToyReference:
    """Raw log-probs biased towards positive (content-free inputs read 'positive')."""

    def __init__(self):
        self.calls = 0

    def raw_logprobs(self, texts):
        self.calls += len(texts)
        p = np.array([_p(t, True) if t.strip() not in ("", "N/A", "[MASK]") else 0.5
                      for t in texts])
        odds = p / (1 - p) * 3.0
        q = odds / (1 + odds)
        return np.log(np.stack([1 - q, q], axis=1))


@pytest.fixture()
def run_dir(tmp_path):
    texts = _corpus()
    write_jsonl(tmp_path / "corpus" / "shard-00000.jsonl",
                [{"id": f"s{i:03d}", "text": t} for i, t in enumerate(texts)])
    return tmp_path


def _cfg(**kw):
    base = dict(task_models=[TaskModelConfig(name="toy", spec="python:unused:x")],
                ranking=RankingConfig(top_k=8), mining=MiningConfig(min_support=3))
    base.update(kw)
    return sections(**base)


def test_score_rank_mine_end_to_end(run_dir):
    cfg = _cfg()
    task, ref = ToyTask(), ToyReference()
    report = score_run(run_dir, **cfg.score, task_scorers={"toy": task},
                       reference_scorer=ref, progress=False)
    assert report["sentences"] == 40 and not report["skipped"]
    scores = read_jsonl(run_dir / "scores" / "reference.jsonl")
    assert set(scores[0]) == {"id", "probs", "logprobs"}
    meta = json.loads((run_dir / "scores" / "reference.jsonl.meta.json").read_text())
    # Contextual calibration removed the x3 odds bias fitted on the content-free inputs.
    assert meta["calibration"]["bias"]["positive"] - meta["calibration"]["bias"]["negative"] == \
        pytest.approx(np.log(3.0))
    assert scores[1]["probs"]["positive"] == pytest.approx(_p(_corpus()[1], True))
    assert {"config_hash", "version", "git_commit"} <= set(meta)

    rank = rank_run(run_dir, **cfg.rank)
    hard = read_jsonl(run_dir / "hard.jsonl")
    assert rank["hard"] == 8 and [r["rank"] for r in hard] == list(range(1, 9))
    assert all("not bad at all" in r["text"] for r in hard)
    assert {"id", "text", "divergence", "task_label", "reference_label", "task_probs",
            "reference_probs"} <= set(hard[0])

    mine = mine_run(run_dir, **cfg.mine)
    assert mine["top"][0] == "not bad at all"
    rows = read_jsonl(run_dir / "ngrams.jsonl")
    assert rows[0]["examples"][0] == hard[0]["id"]
    assert (run_dir / "ngrams.csv").read_text().startswith("ngram,")
    stages = RunDir(run_dir).read_manifest()["stages"]
    assert {s: stages[s]["status"] for s in ("score", "rank", "mine")} == {
        "score": "complete", "rank": "complete", "mine": "complete"}


def test_stages_skip_when_done_and_redo_downstream_only(run_dir):
    cfg = _cfg()
    task, ref = ToyTask(), ToyReference()
    score_run(run_dir, **cfg.score, task_scorers={"toy": task},
              reference_scorer=ref, progress=False)
    rank_run(run_dir, **cfg.rank)
    mine_run(run_dir, **cfg.mine)
    calls = (task.calls, ref.calls)
    assert score_run(run_dir, **cfg.score, task_scorers={"toy": task}, reference_scorer=ref,
                     progress=False)["skipped"]
    assert rank_run(run_dir, **cfg.rank)["skipped"] and mine_run(run_dir, **cfg.mine)["skipped"]
    cfg2 = _cfg(ranking=RankingConfig(top_k=4))
    assert score_run(run_dir, **cfg2.score, task_scorers={"toy": task}, reference_scorer=ref,
                     progress=False)["skipped"]
    assert not rank_run(run_dir, **cfg2.rank)["skipped"]
    assert not mine_run(run_dir, **cfg2.mine)["skipped"]
    assert len(read_jsonl(run_dir / "hard.jsonl")) == 4
    # Losing a final score file reuses the finished chunks: no model call.
    (run_dir / "scores" / "reference.jsonl").unlink()
    score_run(run_dir, **cfg2.score, task_scorers={"toy": task},
              reference_scorer=ref, progress=False)
    assert (task.calls, ref.calls) == calls


def test_scores_with_ids_missing_from_the_corpus(run_dir):
    cfg = _cfg()
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    path = run_dir / "scores" / "task-toy.jsonl"
    rows = read_jsonl(path)
    rows[3]["id"] = "ghost-1"
    write_jsonl(path, rows)
    # rank refuses scores changed after scoring (the digest the score stage recorded) ...
    with pytest.raises(DataError, match=r"the run's scores cannot be used: "
                                        r"scores/task-toy.jsonl was changed after the score "
                                        r"stage wrote it .*: run `synthcheck score` again"):
        rank_run(run_dir, **cfg.rank)
    # ... and the score reader itself names the ids.
    with pytest.raises(DataError, match=r"1 scored ids are missing from the corpus \(ghost-1\)"):
        load_scores(run_dir, labels=cfg.rank["labels"], task_name="toy")


def test_top_k_larger_than_corpus(run_dir):
    cfg = _cfg(ranking=RankingConfig(top_k=1000))
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    with pytest.raises(DataError, match=r"top_k \(1000\) is larger than the corpus \(40 "
                                        r"sentences\)"):
        rank_run(run_dir, **cfg.rank)
    assert not (run_dir / "hard.jsonl").exists()


def test_mining_an_empty_hard_subset(run_dir):
    cfg = _cfg()
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    rank_run(run_dir, **cfg.rank)
    write_jsonl(run_dir / "hard.jsonl", [])
    # As if rank had kept no sentence: the digest it records is that of the empty file.
    RunDir(run_dir).update_manifest(lambda m: m["stages"]["rank"]["digests"].update(
        {"hard.jsonl": output_digests(RunDir(run_dir), [run_dir / "hard.jsonl"])["hard.jsonl"]}))
    with pytest.raises(DataError, match="cannot mine an empty hard subset"):
        mine_run(run_dir, **_cfg(mining=MiningConfig(min_support=2)).mine)


@pytest.mark.parametrize(("test", "statistic"), [("g", "q_value"), ("fisher", "frequency")])
def test_mine_run_uses_the_configured_test_and_sort(run_dir, test, statistic):
    from scipy.stats import chi2_contingency, fisher_exact

    cfg = _cfg(mining=MiningConfig(min_support=2, test=test, statistic=statistic))
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    rank_run(run_dir, **cfg.rank)
    mine_run(run_dir, **cfg.mine)
    rows = read_jsonl(run_dir / "ngrams.jsonl")
    n_h, n_r = 8, 32
    for row in rows:
        y_h, y_r = row["hard_count"], row["corpus_count"] - row["hard_count"]
        table = [[y_h, n_h - y_h], [y_r, n_r - y_r]]
        want = (chi2_contingency(table, correction=False, lambda_="log-likelihood").pvalue
                if test == "g" else fisher_exact(table, alternative="greater").pvalue)
        assert row["p_value"] == pytest.approx(want, rel=1e-9, abs=1e-15)
    key = "q_value" if statistic == "q_value" else "hard_count"
    values = [r[key] for r in rows]
    assert values == sorted(values, reverse=key == "hard_count")


def test_bad_input_leaves_the_run_directory_untouched(run_dir):
    """Errors of rank and mine come before the manifest or an output is written; a scoring
    error puts the manifest back as it was."""
    cfg = _cfg()
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    rank_run(run_dir, **cfg.rank)
    mine_run(run_dir, **cfg.mine)

    def files():
        return {p: p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}

    before = files()
    with pytest.raises(DataError, match=r"top_k \(99\)"):
        rank_run(run_dir, **_cfg(ranking=RankingConfig(top_k=99)).rank)

    class Broken(ToyTask):
        def predict_proba(self, texts):
            raise DataError("the toy model broke", where="toy")

    with pytest.raises(DataError, match="the toy model broke"):
        score_run(run_dir, **_cfg(task_models=[TaskModelConfig(name="toy",
                                                              spec="python:other:x")]).score,
                  task_scorers={"toy": Broken()}, reference_scorer=ToyReference(),
                  progress=False)
    assert files() == before


def test_demo_and_fewshot_task_model_hashes_follow_what_they_depend_on():
    from discovery import EvaluationConfig, ReferenceConfig, task_model_hash

    demo = TaskModelConfig(name="d", spec="demo:sentiment")
    py = TaskModelConfig(name="d", spec="python:mod:fn")
    few = TaskModelConfig(name="d", spec="fewshot:hf:/llm")
    split = sections(evaluation=EvaluationConfig(split_seed=4)).hashes
    size = sections(evaluation=EvaluationConfig(size=7)).hashes
    prompt = sections(reference=ReferenceConfig(k=1)).hashes
    base = sections().hashes
    assert task_model_hash(demo, **split) != task_model_hash(demo, **base)
    assert task_model_hash(demo, **size) == task_model_hash(demo, **base)
    assert task_model_hash(py, **split) == task_model_hash(py, **base)
    assert task_model_hash(few, **prompt) != task_model_hash(few, **base)
    assert task_model_hash(py, **prompt) == task_model_hash(py, **base)


class ToyLLM:
    """A Backend whose label log-probs are ToyReference's (for FewShotReference)."""

    def __init__(self):
        self.calls = []

    def label_logprobs(self, prefix, texts, words, suffix=""):
        self.calls.append(len(texts))
        raw = ToyReference().raw_logprobs(list(texts))
        return [dict(zip(words, map(float, row), strict=True)) for row in raw]


@pytest.mark.parametrize("calibration", ["batch", "contextual"])
def test_fewshot_task_model_calibration_does_not_depend_on_chunking(tmp_path, monkeypatch,
                                                                    calibration):
    import discovery._chunks as stages
    from discovery import FewShotReference, ReferenceConfig
    from discovery._calibration import fit_calibration

    texts = _corpus()
    cfg = _cfg(task_models=[TaskModelConfig(name="few", spec="fewshot:hf:/llm")],
               reference=ReferenceConfig(calibration=calibration))
    results, llms = [], []
    for chunk in (2, 64):
        run = tmp_path / f"chunk-{chunk}"
        write_jsonl(run / "corpus" / "shard-00000.jsonl",
                    [{"id": f"s{i:03d}", "text": t} for i, t in enumerate(texts)])
        monkeypatch.setattr(stages, "CHUNK", chunk)
        llm = ToyLLM()
        few = FewShotReference(llm, cfg.reference, cfg.labels.list, name="few")
        score_run(run, **cfg.score, task_scorers={"few": few},
                  reference_scorer=ToyReference(), progress=False)
        results.append(read_jsonl(run / "scores" / "task-few.jsonl"))
        llms.append(llm)
    assert llms[0].calls.count(2) == 20 and 40 in llms[1].calls  # really chunked differently
    assert results[0] == results[1]
    # Batch calibration is fitted on the whole corpus at once, as for the reference.
    ref = FewShotReference(ToyLLM(), cfg.reference, cfg.labels.list)
    raw = ref.raw_logprobs(texts)
    cal = fit_calibration(calibration, "logprob", 2, corpus=raw,
                          content_free=lambda: ref.raw_logprobs(cfg.reference.content_free))
    want = cal.predict_proba(raw)
    got = np.array([[r["probs"]["negative"], r["probs"]["positive"]] for r in results[0]])
    assert np.allclose(got, want, atol=1e-12)
    meta = json.loads((tmp_path / "chunk-2" / "scores" / "task-few.jsonl.meta.json").read_text())
    assert meta["calibration"]["method"] == calibration


def test_batch_calibrated_fewshot_scorer_refuses_piecewise_texts():
    from discovery import FewShotReference, ReferenceConfig
    from synth.core import ConfigError

    few = FewShotReference(ToyLLM(), ReferenceConfig(calibration="batch"),
                           ["negative", "positive"], name="few")
    texts = _corpus(10)
    with pytest.raises(ConfigError, match=r"few: batch calibration is fitted on the whole set "
                                          r"of texts being scored, but these texts come piece "
                                          r"by piece"):
        few.predict_proba(texts[:2])
    # Calibrating on a whole set: the result is the set's, however it is split for the LLM.
    whole = few.predict_proba_set(texts)
    assert few.calibrator is None  # nothing kept that a later call would depend on
    few.fit_calibration(few.raw_logprobs(texts))
    for got, want in zip(few.predict_proba(texts[:2]), whole[:2], strict=True):
        assert got == pytest.approx(want)


def test_mine_run_does_not_build_a_ranker(run_dir, monkeypatch):
    import discovery._rank_mine as stages
    from discovery._ranking import divergence

    cfg = _cfg()
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()},
              reference_scorer=ToyReference(),
              progress=False)
    rank_run(run_dir, **cfg.rank)

    def no_ranker(ranking):
        raise AssertionError("mine_run must not build (and reconfigure) a ranker")

    monkeypatch.setattr(stages, "_ranker", no_ranker)
    mine_run(run_dir, **cfg.mine)
    rows = {r["ngram"]: r for r in read_jsonl(run_dir / "ngrams.jsonl")}
    # Its divergences are the whole corpus' (not only the top_k=8 hard subset's).
    _, texts, task, ref = stages.load_scores(run_dir, labels=cfg.labels, task_name="toy")
    div = divergence(task, ref, cfg.ranking.metric)
    assert len(div) == 40
    assert "not bad at all" in rows
