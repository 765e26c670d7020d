"""Stage 2 (SynthTest_hard): task-model and reference scoring, divergence ranking, n-gram mining."""

from discovery._calibration import Calibrator
from discovery._config import (
    EvaluationConfig,
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
from discovery._evaluate import (
    classification_report,
    evaluate,
    format_reports,
    load_evaluation_set,
    recall_by_model,
    write_eval_json,
)
from discovery._mining import SORT_KEYS, TOKEN_PATTERN, NgramMiner
from discovery._protocols import TaskScorer
from discovery._ranking import DivergenceRanker, HardSubset, divergence
from discovery._reference import FewShotReference
from discovery._scorers import (
    CallableScorer,
    HFClassifierScorer,
    LabelMapper,
    SklearnScorer,
    load_task_scorer,
    task_model_availability,
)
from discovery._stages import (
    build_task_scorers,
    load_scores,
    mine_run,
    mine_stage_hash,
    rank_run,
    rank_stage_hash,
    ranked_task_model,
    ranked_task_name,
    reference_hash,
    score_run,
    score_stage_hash,
    stage_record,
    task_model_hash,
    task_model_hashes,
)

__all__ = [
    "Calibrator",
    "CallableScorer",
    "DivergenceRanker",
    "EvaluationConfig",
    "FewShotReference",
    "HFClassifierScorer",
    "HardSubset",
    "LabelMapper",
    "LabeledSet",
    "MiningConfig",
    "NgramMiner",
    "RankingConfig",
    "ReferenceConfig",
    "SORT_KEYS",
    "Shot",
    "SklearnScorer",
    "TOKEN_PATTERN",
    "TaskModelConfig",
    "TaskScorer",
    "build_task_scorers",
    "check_split",
    "classification_report",
    "divergence",
    "ensure_demo_model",
    "evaluate",
    "format_reports",
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
    "read_labeled_file",
    "read_score_file",
    "recall_by_model",
    "reference_hash",
    "rotten_tomatoes_split",
    "score_run",
    "score_stage_hash",
    "stage_record",
    "task_model_availability",
    "task_model_hash",
    "task_model_hashes",
    "train_demo_model",
    "write_eval_json",
]
