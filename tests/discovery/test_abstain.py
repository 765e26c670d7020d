"""The reference's abstain answer ("no label applies"): scored as an extra word, calibrated or
not, recorded per sentence, and every stage judges by it (abstained sentences are counted
with their reason, never in the hard subset or a failure count)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from discovery import (
    AbstainConfig,
    FewShotReference,
    MiningConfig,
    RankingConfig,
    ReferenceConfig,
    Shot,
    TaskModelConfig,
    load_judged,
    mine_run,
    rank_run,
    score_run,
)
from discovery._reference import ABSTAIN_KEY
from synth.core import read_jsonl, write_jsonl
from tests.discovery.discovery_fixtures import sections

LABELS = ["negative", "positive"]
CONTENT_FREE = ("", "N/A", "[MASK]")


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class WordBackend:
    """Label log-probs by word: sentences with 'plain' read neutral; 'good' positive, 'bad'
    negative; the content-free inputs lean neutral (log 4 over the others)."""

    def __init__(self) -> None:
        self.words: list[dict[str, str]] = []

    def label_logprobs(self, prefix, texts, words, suffix="", **kw):
        self.words.append(dict(words))
        out = []
        for t in texts:
            body = t.strip()
            row = {"negative": -2.0, "positive": -2.0, ABSTAIN_KEY: -2.0}
            if body in CONTENT_FREE:
                row[ABSTAIN_KEY] = -2.0 + np.log(4.0)
            elif "plain" in body:
                row[ABSTAIN_KEY] = 0.0
            elif "good" in body:
                row["positive"] = 0.0
            elif "bad" in body:
                row["negative"] = 0.0
            out.append({w: row[w] for w in words})
        return out


def _ref(calibrate: bool, calibration: str = "contextual") -> ReferenceConfig:
    return ReferenceConfig(abstain=AbstainConfig(word=" neutral", threshold=0.5,
                                                 calibrate=calibrate),
                           calibration=calibration)


def test_the_abstain_word_is_a_last_raw_column_and_labels_ignore_it() -> None:
    backend = WordBackend()
    ref = FewShotReference(backend, _ref(calibrate=False), LABELS)
    raw = ref.raw_logprobs(["so good", "plain words"])
    assert backend.words[0] == {"negative": " negative", "positive": " positive",
                                ABSTAIN_KEY: " neutral"}
    assert raw.shape == (2, 3)
    # Uncalibrated: p(abstain) is its softmax share of the three answers.
    assert ref.abstain_proba(raw) == pytest.approx(_softmax(raw)[:, 2])
    assert ref.abstain_proba(raw)[1] == pytest.approx(1 / (1 + 2 * np.exp(-2)))
    # The labels' probabilities are calibrated over the two labels only.
    rows = ref.predict_proba(["so good"])
    assert set(rows[0]) == set(LABELS) and rows[0]["positive"] > 0.8
    # A fewshot task model built from the same config scores no abstain word.
    task = FewShotReference(WordBackend(), _ref(False), LABELS, abstain=False)
    assert task.raw_logprobs(["so good"]).shape == (1, 2)


def test_calibrating_the_abstain_answer_subtracts_the_content_free_neutral_lean() -> None:
    # The content-free inputs read neutral (odds 4:1:1): contextual calibration of the abstain
    # answer divides that out, so a plain sentence's p(abstain) drops from 0.79 to 0.48 and
    # it is no longer abstained at 0.5; uncalibrated it stays at 0.79.
    texts = ["plain words"]
    raw_plain = FewShotReference(WordBackend(), _ref(False), LABELS)
    calibrated = FewShotReference(WordBackend(), _ref(True), LABELS)
    p_raw = raw_plain.abstain_proba(raw_plain.raw_logprobs(texts))[0]
    p_cal = calibrated.abstain_proba(calibrated.raw_logprobs(texts))[0]
    assert p_raw == pytest.approx(1 / (1 + 2 * np.exp(-2)))
    odds = np.exp(2) / 4  # abstain vs each label after dividing by the content-free lean
    assert p_cal == pytest.approx(odds / (odds + 2))
    assert p_raw > 0.5 > p_cal


def test_abstain_config_errors_name_the_field_and_the_fix() -> None:
    with pytest.raises(ValidationError, match="abstain word ' positive' is also a label word"):
        ReferenceConfig(abstain=AbstainConfig(word=" positive"))
    with pytest.raises(ValidationError, match="abstain word must be a non-empty continuation"):
        AbstainConfig(word="  ")
    # A shot may show the abstain answer (its label is the word, stripped).
    cfg = ReferenceConfig(abstain=AbstainConfig(word=" neutral"),
                          shots=[Shot(text="the sky is blue.", label="neutral"),
                                 Shot(text="so good.", label="positive")])
    ref = FewShotReference(WordBackend(), cfg, LABELS)
    assert "the sky is blue.\nAnswer: neutral" in ref.prompt_for("x")
    from synth.core import ConfigError

    with pytest.raises(ConfigError, match=r"shot label 'neutral' is not a task label.*"
                                          r"use one of \['negative', 'positive'\]"):
        FewShotReference(WordBackend(), cfg.model_copy(update={"abstain": None}), LABELS)


class ToyTask:
    labels = LABELS

    def predict_proba(self, texts):
        # the task model reads every sentence as confidently positive: right on 'good',
        # wrong on 'bad', and on 'plain' no label applies
        return [{"negative": 0.1, "positive": 0.9} for _ in texts]


@pytest.fixture()
def run_dir(tmp_path):
    texts = [f"plain words number {i}" for i in range(10)] + \
        [f"so bad take {i}" for i in range(6)] + [f"so good take {i}" for i in range(4)]
    write_jsonl(tmp_path / "corpus" / "shard-00000.jsonl",
                [{"id": f"s{i:03d}", "text": t} for i, t in enumerate(texts)])
    return tmp_path


def test_score_and_rank_record_abstained_and_keep_them_out(run_dir, capsys) -> None:
    cfg = sections(task_models=[TaskModelConfig(name="toy", spec="python:unused:x")],
                   reference=_ref(calibrate=False),
                   ranking=RankingConfig(top_k=8, min_reference_margin=0.2),
                   mining=MiningConfig(min_support=2))
    ref = FewShotReference(WordBackend(), cfg.score["reference"], LABELS)
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()}, reference_scorer=ref,
              progress=False)
    rows = read_jsonl(run_dir / "scores" / "reference.jsonl")
    assert set(rows[0]) == {"id", "probs", "logprobs", "abstain", "abstain_logprob"}
    assert rows[0]["abstain"] == pytest.approx(1 / (1 + 2 * np.exp(-2)))  # 'plain'
    assert rows[15]["abstain"] < 0.2  # 'so bad'
    meta = json.loads((run_dir / "scores" / "reference.jsonl.meta.json").read_text())
    assert meta["abstain"]["word"] == " neutral" and meta["abstain"]["threshold"] == 0.5
    assert meta["abstain"]["method"] == "none"

    report = rank_run(run_dir, **cfg.rank)
    # The 10 'plain' sentences (the task model's confident 'positive' there is no error)
    # abstain; 'good' and 'bad' ones are judged; only the 6 'bad' ones fail.
    assert report["abstained"]["count"] == 10
    assert report["abstained"]["by_reason"] == {"no-label answer": 10, "low margin": 0}
    assert (report["judged"], report["failures"]) == (10, 6)
    assert report["base_rate"] == pytest.approx(0.6)
    hard = read_jsonl(run_dir / "hard.jsonl")
    assert [r["text"].startswith("so bad") for r in hard] == [True] * 6
    assert all(r["task_label"] != r["reference_label"] for r in hard)
    meta = json.loads((run_dir / "hard.jsonl.meta.json").read_text())
    assert meta["abstained"]["count"] == 10 and meta["abstained"]["share"] == 0.5
    assert "warning" not in meta  # half, not most
    mine_run(run_dir, **cfg.mine)
    # mining's background is the judged corpus: 'plain' is in no row
    assert all("plain" not in r["ngram"] for r in read_jsonl(run_dir / "ngrams.jsonl"))
    judged = load_judged(run_dir, labels=cfg.rank["labels"], task_name="toy",
                         ranking=cfg.rank["ranking"]).judged()
    assert len(judged.ids) == 10 and judged.judgement.base_rate == pytest.approx(0.6)


def _scored(run_dir, ranking: RankingConfig):  # type: ignore[no-untyped-def]
    """The stage sections, the corpus of ``run_dir`` scored by ToyTask and WordBackend."""
    cfg = sections(task_models=[TaskModelConfig(name="toy", spec="python:unused:x")],
                   reference=_ref(calibrate=False), ranking=ranking)
    ref = FewShotReference(WordBackend(), cfg.score["reference"], LABELS)
    score_run(run_dir, **cfg.score, task_scorers={"toy": ToyTask()}, reference_scorer=ref,
              progress=False)
    return cfg


def test_most_of_the_corpus_abstaining_warns_on_stderr_and_in_the_meta(run_dir, capsys) -> None:
    cfg = _scored(run_dir, RankingConfig(top_k=2, min_reference_margin=0.95))
    capsys.readouterr()
    report = rank_run(run_dir, **cfg.rank)
    assert report["abstained"]["count"] == 20
    assert report["abstained"]["by_reason"] == {"no-label answer": 10, "low margin": 10}
    err = capsys.readouterr().err
    assert err.startswith("warning: 20 of 20 sentences (100%) abstained (no-label answer 10, "
                          "low margin 10) and are left out of every failure count")
    meta = json.loads((run_dir / "hard.jsonl.meta.json").read_text())
    assert meta["warning"].startswith("20 of 20 sentences (100%) abstained")
    assert read_jsonl(run_dir / "hard.jsonl") == []


def test_an_edit_source_reads_the_abstained_sentences_too(tmp_path) -> None:
    # The punctuation invariance test needs no judge: the 10 abstained 'plain' questions are
    # in its counts, while every judged count leaves them out.
    from discovery import SlicesConfig, source_run

    texts = [f"plain words number {i}?" for i in range(10)] + \
        [f"so bad take {i}" for i in range(6)] + [f"so good take {i}" for i in range(4)]
    write_jsonl(tmp_path / "corpus" / "shard-00000.jsonl",
                [{"id": f"s{i:03d}", "text": t} for i, t in enumerate(texts)])
    cfg = _scored(tmp_path, RankingConfig(top_k=8, min_reference_margin=0.2))

    def question_reader(batch: list[str]) -> np.ndarray:  # positive only on a question
        return np.array([[0.1, 0.9] if "?" in t else [0.9, 0.1] for t in batch])

    kwargs = dict(labels=cfg.rank["labels"], slices=SlicesConfig(),
                  ranking=cfg.rank["ranking"], task_models=cfg.score["task_models"])
    with pytest.raises(ValueError, match="'perturbation' edits sentences: pass task_fn"):
        source_run(tmp_path, "perturbation", **kwargs)
    out = source_run(tmp_path, "perturbation", task_fn=question_reader, **kwargs)
    assert out["abstained"]["count"] == 10 and out["significant"] == 1
    row = read_jsonl(tmp_path / "perturbation.jsonl")[0]
    assert (row["name"], row["n"], row["failures"]) == ("question mark", 10, 10)
    assert (row["control_n"], row["control_failures"]) == (10, 0)
