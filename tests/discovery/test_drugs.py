"""The shipped 3-class drug-review config: it loads, its checks pass, its shots come from the
labelled rows (never the evaluation sample), and its demo model beats the majority class on
the evaluation sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from discovery import load_evaluation_set, load_task_scorer, train_demo_model
from discovery._precision import majority_accuracy
from synthcheck import load_run_config
from synthcheck._pipeline import check_before_work

ROOT = Path(__file__).resolve().parents[2]


def test_drugs_config_draws_its_shots_from_the_labelled_rows() -> None:
    cfg = load_run_config(ROOT / "configs" / "drugs.yaml")
    assert cfg.task.labels == ["negative", "neutral", "positive"]
    check_before_work(cfg)
    shots = cfg.reference.shots
    assert [s.label for s in shots] == ["negative", "neutral", "positive"] * 2
    held = load_evaluation_set(cfg.task.label_space, cfg.evaluation)
    assert len(held) == 180
    assert not {s.text for s in shots} & set(held.texts)
    assert all(3 <= len(s.text.split()) <= 60 for s in shots)


def test_demo_drugs_model_beats_the_majority_class(tmp_path: Path) -> None:
    cfg = load_run_config(ROOT / "configs" / "drugs.yaml")
    path = train_demo_model(tmp_path / "drugs.skops", task="drugs")
    labels = cfg.task.labels
    model = load_task_scorer(f"sklearn:{path}", labels)
    held = load_evaluation_set(cfg.task.label_space, cfg.evaluation)
    probs = model.predict_proba(held.texts)
    pred = [labels[int(np.argmax([p[lab] for lab in labels]))] for p in probs]
    accuracy = float(np.mean([a == b for a, b in zip(pred, held.labels, strict=True)]))
    assert accuracy > majority_accuracy(held.labels) + 0.03
