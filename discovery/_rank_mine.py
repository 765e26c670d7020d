"""The rank and mine stages on a run directory: the hard subset, and its n-grams.

Each job takes the run directory, the task's :class:`~synth.core.LabelSpace` and the config
sections it reads (never the whole run config), records its status and stage hash in the
run manifest, and is skipped when already complete with the same hash. Scores are read and
checked and the results computed before the manifest or a final output is touched, so bad
input leaves the run directory unchanged.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from discovery._artifacts import HARD, NGRAMS, NGRAMS_CSV, REFERENCE_SCORES, TASK_SCORES
from discovery._config import (
    MiningConfig,
    RankingConfig,
    TaskModelConfig,
)
from discovery._data import read_abstain, read_corpus, read_score_file
from discovery._judge import Judgement, JudgeRule, abstain_warning, judge
from discovery._mining import NgramMiner
from discovery._ranking import DivergenceRanker, HardSubset, divergence
from discovery._runner import JobRows, run_job
from discovery._stage_hashes import mine_stage_hash, rank_stage_hash, stage_record
from discovery._stage_state import (
    check_upstream,
)
from discovery._task_models import ranked_task_name
from synth.core import (
    DataError,
    LabelSpace,
    RunDir,
    atomic_open,
    iter_jsonl,
)


def load_scores(run_dir: str | Path, *, labels: LabelSpace, task_name: str
                ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Read the corpus and the task model ``task_name``'s and the reference's probabilities,
    aligned (columns in ``labels`` order).

    Raises:
        DataError: a scores file is missing, names unknown ids, or misses corpus ids.
    """
    run = RunDir(run_dir)
    ids, texts = read_corpus(run.path)
    task = read_score_file(TASK_SCORES.path(run.path, name=task_name), ids, labels)
    ref = read_score_file(REFERENCE_SCORES.path(run.path), ids, labels)
    return ids, texts, task, ref


@dataclass(frozen=True)
class JudgedCorpus:
    """The scored corpus and the run's one judgement of it (see :mod:`discovery._judge`).

    Attributes:
        ids, texts: every corpus sentence.
        task, reference: n x labels probabilities (the reference calibrated).
        abstain: the reference's abstain answer's probability (None without one).
        rule: the judging rule (``ranking.min_reference_margin``, the recorded
            ``reference.abstain.threshold``).
        judgement: the per-sentence verdicts.
    """

    ids: list[str]
    texts: list[str]
    task: np.ndarray
    reference: np.ndarray
    abstain: np.ndarray | None
    rule: JudgeRule
    judgement: Judgement

    def judged(self) -> JudgedCorpus:
        """The judged sentences only (what every failure count reads)."""
        keep = self.judgement.judged_indices
        j = self.judgement
        return JudgedCorpus(
            [self.ids[i] for i in keep], [self.texts[i] for i in keep], self.task[keep],
            self.reference[keep], None if self.abstain is None else self.abstain[keep],
            self.rule, Judgement(j.reason[keep], j.fails[keep], j.task_top[keep],
                                 j.reference_top[keep]))


def judge_rule(run_dir: str | Path, ranking: RankingConfig) -> JudgeRule:
    """The run's judging rule: ``ranking.min_reference_margin`` and the abstain threshold the
    score stage recorded (``scores/reference.jsonl.meta.json``; the score stage hash covers
    it, so every stage downstream of the scores is redone when it changes)."""
    import json

    meta = REFERENCE_SCORES.meta(run_dir)
    threshold = None
    if meta.is_file():
        abstain = json.loads(meta.read_text(encoding="utf-8")).get("abstain")
        if isinstance(abstain, dict) and abstain.get("threshold") is not None:
            threshold = float(abstain["threshold"])
    return JudgeRule(min_margin=ranking.min_reference_margin, abstain_threshold=threshold)


def load_judged(run_dir: str | Path, *, labels: LabelSpace, task_name: str,
                ranking: RankingConfig) -> JudgedCorpus:
    """:func:`load_scores` plus the reference's abstain answer and the run's judgement of
    every sentence (:func:`discovery.judge` under :func:`judge_rule`)."""
    run = RunDir(run_dir)
    ids, texts, task, ref = load_scores(run.path, labels=labels, task_name=task_name)
    abstain = read_abstain(REFERENCE_SCORES.path(run.path), ids)
    rule = judge_rule(run.path, ranking)
    return JudgedCorpus(ids, texts, task, ref, abstain, rule,
                        judge(task, ref, abstain=abstain, rule=rule))


def _ranker(ranking: RankingConfig) -> DivergenceRanker:
    r = ranking
    return DivergenceRanker(r.metric, top_k=r.top_k, top_fraction=r.top_fraction)


def rank_run(run_dir: str | Path, *, labels: LabelSpace, ranking: RankingConfig,
             task_models: Sequence[TaskModelConfig],
             config_dump: Mapping[str, Any] | None = None,
             score_hash: str | None = None) -> dict[str, Any]:
    """Rank the scored corpus by divergence and write ``hard.jsonl`` (the hard subset).

    Scores are read and checked and the hard subset is computed before the manifest or
    ``hard.jsonl`` is touched, so bad input leaves the run directory unchanged.

    Args:
        run_dir: a run directory with complete scores.
        labels: the task's labels.
        ranking: the ranking section (metric, hard-subset size, which task model).
        task_models: the configured task models (``ranking.task_model`` is one of them).
        config_dump: the resolved run config to record in the manifest.
        score_hash: the score stage hash the caller's config gives (see
            :func:`score_stage_hash`); scores made with another one are refused.

    Raises:
        DataError: the scores are missing, incomplete, or were changed after scoring.
        RunDirError: the scores were made with another config than ``score_hash``'s.
    """
    run = RunDir(run_dir)
    upstream = check_upstream(run, "score", score_hash, what="scores", command="score")

    def compute() -> JobRows:
        name = ranked_task_name(ranking, task_models)
        c = load_judged(run.path, labels=labels, task_name=name, ranking=ranking)
        ranker = _ranker(ranking).fit(c.task, c.reference, abstain=c.abstain, rule=c.rule)
        hard = HardSubset.from_ranker(ranker, c.ids, c.texts, labels.list, c.task,
                                      c.reference)
        j = c.judgement
        abstained = {**j.abstained_info(), "rule": c.rule.describe()}
        warning = abstain_warning(abstained)
        if warning is not None:
            import sys

            print(f"warning: {warning}", file=sys.stderr)
        counts = {"corpus": len(c.ids), "judged": int(j.judged.sum()), "failures": j.failures,
                  "base_rate": j.base_rate, "disagreements": int(ranker.disagree_.sum())}
        return JobRows(hard.records,
                       meta=dict(ranking=ranking.model_dump(mode="json"), task_model=name,
                                 hard=len(hard), stage="rank", abstained=abstained, **counts,
                                 **({"warning": warning} if warning else {})),
                       record=dict(hard=len(hard), abstained=abstained, **counts))

    return run_job(run.path, stage="rank", stage_hash=rank_stage_hash(ranking, upstream),
                   outputs=[HARD], compute=compute,
                   record=lambda: dict(config_dump) if config_dump is not None else
                   stage_record(labels, task_models=list(task_models), ranking=ranking))


def mine_run(run_dir: str | Path, *, labels: LabelSpace, ranking: RankingConfig,
             mining: MiningConfig, task_models: Sequence[TaskModelConfig],
             config_dump: Mapping[str, Any] | None = None,
             rank_hash: str | None = None) -> dict[str, Any]:
    """Mine n-grams of the hard subset against the corpus; write ``ngrams.jsonl`` and
    ``ngrams.csv`` sorted by ``mining.statistic``.

    The n-grams are computed before the manifest or an output is touched, so bad input
    (an empty hard subset, unknown ids) leaves the run directory unchanged.

    Args:
        run_dir: a run directory with a current hard subset.
        labels: the task's labels.
        ranking: the ranking section (the divergence metric, which task model).
        mining: the mining section.
        task_models: the configured task models.
        config_dump: the resolved run config to record in the manifest.
        rank_hash: the rank stage hash the caller's config gives (see
            :func:`rank_stage_hash`); a hard subset ranked with another one is refused.

    Raises:
        DataError: the hard subset or the scores are missing or were changed.
        RunDirError: the hard subset was ranked with another config than ``rank_hash``'s.
    """
    run = RunDir(run_dir)
    upstream = check_upstream(run, "rank", rank_hash, what="hard subset", command="rank")
    check_upstream(run, "score", None, what="scores", command="score")
    return run_job(run.path, stage="mine", stage_hash=mine_stage_hash(mining, upstream),
                   outputs=[NGRAMS, NGRAMS_CSV],
                   compute=lambda: _mine(run, labels=labels, ranking=ranking, mining=mining,
                                         task_models=task_models),
                   record=lambda: dict(config_dump) if config_dump is not None else
                   stage_record(labels, task_models=list(task_models), ranking=ranking,
                                mining=mining))


def _mine(run: RunDir, *, labels: LabelSpace, ranking: RankingConfig, mining: MiningConfig,
          task_models: Sequence[TaskModelConfig]) -> JobRows:
    """The mine stage's job: the n-grams of the hard subset against the corpus."""
    hard_path = HARD.path(run.path)
    hard_ids = [str(r["id"]) for r in iter_jsonl(hard_path)]
    if not hard_ids:
        raise DataError("cannot mine an empty hard subset", where=str(hard_path),
                        fix="no sentence fails by the run's rule (the task model and the "
                            "reference agree on every judged sentence, or most abstain: see "
                            "abstained in hard.jsonl.meta.json); rank again with a lower "
                            "ranking.min_reference_margin or reference.abstain.threshold, or "
                            "generate a larger corpus")
    # The background is the judged corpus: an abstained sentence is in no count.
    c = load_judged(run.path, labels=labels, task_name=ranked_task_name(ranking, task_models),
                    ranking=ranking).judged()
    ids, texts = c.ids, c.texts
    div = divergence(c.task, c.reference, ranking.metric)
    disagree = c.judgement.fails
    index = {cid: i for i, cid in enumerate(ids)}
    unknown = [h for h in hard_ids if h not in index]
    if unknown:
        raise DataError(f"{len(unknown)} hard-subset ids are missing from the judged corpus "
                        f"({', '.join(unknown[:3])})", where=str(hard_path),
                        fix="rerun `synthcheck rank` on this run")
    m = mining
    miner = NgramMiner((m.ngram_min, m.ngram_max), min_support=m.min_support,
                       statistic=m.statistic, test=m.test, prior_strength=m.prior_strength,
                       stopwords=m.stopwords, drop_subsumed=m.drop_subsumed,
                       max_examples=m.max_examples)
    miner.fit(texts, [index[h] for h in hard_ids], ids=ids, divergence=div,
              disagree=disagree)
    records = miner.to_records()
    return JobRows(records,
                   meta=dict(mining=m.model_dump(mode="json"), hard=len(hard_ids),
                             corpus=len(ids), ngrams=len(records), stage="mine"),
                   record=dict(ngrams=len(records)),
                   report=dict(hard=len(hard_ids), top=[r["ngram"] for r in records[:10]]),
                   also=[lambda run_dir: _write_csv(NGRAMS_CSV.path(run_dir), records)])


def _write_csv(path: Path, records: list[dict[str, Any]]) -> None:
    if not records:
        with atomic_open(path) as handle:
            handle.write("ngram\n")
        return
    fields = list(records[0])
    with atomic_open(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for rec in records:
            row = dict(rec)
            row["examples"] = " ".join(rec.get("examples", []))
            writer.writerow(row)
