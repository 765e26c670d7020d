"""Stage 2 (SynthTest_hard): task-model and reference scoring, divergence ranking, n-gram mining."""

from discovery._calibration import Calibrator
from discovery._config import (
    EvaluationConfig,
    FocusConfig,
    MiningConfig,
    RankingConfig,
    ReferenceConfig,
    Shot,
    TaskModelConfig,
)
from discovery._data import (
    LabeledSet,
    read_corpus,
    read_labeled_file,
    read_score_file,
    rotten_tomatoes_split,
)
from discovery._demo import check_split, ensure_demo_model, train_demo_model
from discovery._domain import DomainCheck, shot_domain_check
from discovery._evaluate import (
    HeldOutScores,
    classification_report,
    describe_sample,
    evaluate,
    evaluate_held_out,
    format_reports,
    load_evaluation_set,
    recall_by_model,
    write_eval_json,
)
from discovery._focus_stage import (
    FocusBase,
    FocusModels,
    focus_hash,
    focus_run,
    focus_stage_hash,
    reference_calibrator,
    run_focus_rounds,
)
from discovery._kinds import (
    TASK_MODEL_KINDS,
    TaskModelKind,
    check_task_model,
    is_few_shot,
    load_task_scorer,
    task_model_availability,
    task_model_kind,
)
from discovery._mining import SORT_KEYS, TOKEN_PATTERN, NgramMiner
from discovery._model_checks import check_probability_rows
from discovery._precision import describe_rule, format_reliability, held_out_reliability
from discovery._protocols import TaskScorer
from discovery._rank_mine import load_scores, mine_run, rank_run
from discovery._ranking import METRICS, DivergenceRanker, HardSubset, divergence
from discovery._reference import FewShotReference
from discovery._score_job import score_run
from discovery._scorers import (
    CallableScorer,
    HFClassifierScorer,
    LabelMapper,
    SklearnScorer,
)
from discovery._stage_checks import check_stage2
from discovery._stage_hashes import (
    corpus_fingerprint,
    expected_score_hash,
    mine_stage_hash,
    rank_stage_hash,
    raw_reference_hash,
    raw_task_model_hash,
    reference_hash,
    score_stage_hash,
    stage_record,
    task_model_hash,
    task_model_hashes,
)
from discovery._task_models import build_task_scorers, ranked_task_model, ranked_task_name

__all__ = [
    "Calibrator",
    "CallableScorer",
    "DivergenceRanker",
    "DomainCheck",
    "EvaluationConfig",
    "FewShotReference",
    "FocusBase",
    "FocusConfig",
    "FocusModels",
    "HFClassifierScorer",
    "HardSubset",
    "HeldOutScores",
    "LabelMapper",
    "LabeledSet",
    "METRICS",
    "MiningConfig",
    "NgramMiner",
    "RankingConfig",
    "ReferenceConfig",
    "SORT_KEYS",
    "Shot",
    "SklearnScorer",
    "TOKEN_PATTERN",
    "TASK_MODEL_KINDS",
    "TaskModelConfig",
    "TaskModelKind",
    "TaskScorer",
    "build_task_scorers",
    "check_probability_rows",
    "check_task_model",
    "check_stage2",
    "corpus_fingerprint",
    "expected_score_hash",
    "check_split",
    "classification_report",
    "describe_rule",
    "describe_sample",
    "divergence",
    "ensure_demo_model",
    "evaluate",
    "evaluate_held_out",
    "focus_hash",
    "focus_run",
    "focus_stage_hash",
    "format_reliability",
    "format_reports",
    "held_out_reliability",
    "is_few_shot",
    "load_evaluation_set",
    "load_scores",
    "load_task_scorer",
    "mine_run",
    "mine_stage_hash",
    "rank_run",
    "rank_stage_hash",
    "ranked_task_model",
    "ranked_task_name",
    "read_corpus",
    "reference_calibrator",
    "read_labeled_file",
    "raw_reference_hash",
    "raw_task_model_hash",
    "read_score_file",
    "recall_by_model",
    "reference_hash",
    "rotten_tomatoes_split",
    "run_focus_rounds",
    "score_run",
    "score_stage_hash",
    "shot_domain_check",
    "stage_record",
    "task_model_availability",
    "task_model_kind",
    "task_model_hash",
    "task_model_hashes",
    "train_demo_model",
    "write_eval_json",
]
