"""A reference built from the user's data: few-shot demonstrations drawn from the labelled
rows (``reference.shots_from``), stratified by label, never from the evaluation sample."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from discovery._config import EvaluationConfig, LabelledConfig, ReferenceConfig, Shot
from discovery._data import LabeledSet
from synth.core import DataError, LabelSpace, derive_seed

if TYPE_CHECKING:
    from synth import SeedCorpusConfig

SHOTS_KEY = "reference-shots"


def draw_shots(data: LabeledSet, labels: Sequence[str], k: int, seed: int, *,
               max_words: int = 60) -> list[Shot]:
    """``k`` shots from ``data``, stratified: each label gets ``k // len(labels)`` (the first
    labels one more each while ``k`` is not used up, at least one each), drawn at random
    (``derive_seed(seed, "reference-shots")``) among its rows of 3 to ``max_words`` words
    on one line; a label with too few such rows gets its shortest rows. The shots
    interleave the labels (label 1, label 2, ..., label 1, ...), so no label is always last.

    Raises:
        DataError: a label has no row at all.
    """
    n_labels = len(labels)
    quota = {lab: max(1, k // n_labels + (i < k % n_labels)) for i, lab in enumerate(labels)}
    rng = np.random.default_rng(derive_seed(seed, SHOTS_KEY))
    picks: dict[str, list[str]] = {}
    for lab in labels:
        rows = [t.strip() for t, g in zip(data.texts, data.labels, strict=True) if g == lab]
        if not rows:
            raise DataError(f"the labelled data has no {lab!r} row to draw a shot from",
                            where="reference.shots_from",
                            fix="label some rows so, or write reference.shots yourself")
        fit = sorted({t for t in rows if 3 <= len(t.split()) <= max_words and "\n" not in t})
        if len(fit) >= quota[lab]:
            chosen = [fit[i] for i in rng.choice(len(fit), quota[lab], replace=False)]
        else:
            chosen = sorted(set(rows), key=lambda t: (len(t.split()), t))[:quota[lab]]
        picks[lab] = chosen
    out = []
    for i in range(max(len(v) for v in picks.values())):
        out += [Shot(text=picks[lab][i], label=lab) for lab in labels if i < len(picks[lab])]
    return out


def shots_from_labelled(reference: ReferenceConfig, labels: LabelSpace,
                        labelled: LabelledConfig, evaluation: EvaluationConfig,
                        corpus: SeedCorpusConfig | None = None) -> ReferenceConfig:
    """``reference`` with its ``shots`` drawn by ``reference.shots_from`` (:func:`draw_shots`)
    from the rows the labelled finders read (:func:`discovery.labelled_rows`: the
    ``labelled`` section's data, or the evaluation data's when it names none, always without
    the evaluation sample's rows); unchanged without ``shots_from``."""
    from discovery._labelled_stage import labelled_rows

    spec = reference.shots_from
    if spec is None:
        return reference
    source = labelled if labelled.data is not None else labelled.model_copy(
        update={"data": "evaluation", "size": None})
    rows = labelled_rows(labels, source, evaluation, corpus)
    shots = draw_shots(rows.data, labels.list, spec.k, spec.seed, max_words=spec.max_words)
    return reference.model_copy(update={"shots": shots, "k": None})
