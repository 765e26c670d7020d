"""The demo task model: TF-IDF + logistic regression trained on Rotten Tomatoes sentences."""

from __future__ import annotations

from pathlib import Path

from synth import write_json_atomic

DEMO_TASKS = {"sentiment": "demo-sentiment-tfidf-lr.skops"}


def demo_model_path(task: str = "sentiment") -> Path:
    """Where the demo model for ``task`` lives in the cache folder."""
    from synth import cache_dir

    return cache_dir() / DEMO_TASKS[task]


def train_demo_model(out: str | Path | None = None, *, seed: int = 0,
                     holdout_fraction: float = 0.2) -> Path:
    """Train the demo sentiment model on the seeded Rotten Tomatoes train split; save it.

    The split is the one ``evaluate`` holds out from (same ``seed`` and
    ``holdout_fraction``), so evaluation never sees a training sentence. Labels are the
    names ``negative``/``positive``. Saved with skops (no pickle), plus ``<out>.meta.json``.

    Returns:
        The path of the ``.skops`` file.
    """
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from discovery._data import rotten_tomatoes_split
    from synth import atomic_open, provenance

    path = Path(out) if out is not None else demo_model_path("sentiment")
    train, _ = rotten_tomatoes_split(seed=seed, holdout_fraction=holdout_fraction)
    pipe = Pipeline([
        ("tfidf", TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True,
                                  token_pattern=r"(?u)[\w']+")),
        ("lr", LogisticRegression(C=4.0, max_iter=1000)),
    ])
    pipe.fit(train.texts, train.labels)
    with atomic_open(path, "wb") as handle:
        handle.write(sio.dumps(pipe))
    write_json_atomic(path.with_name(path.name + ".meta.json"), {
        "model": "tfidf+logistic-regression", "data": "packaged:rotten_tomatoes (train split)",
        "split_seed": seed, "holdout_fraction": holdout_fraction, "n_train": len(train),
        **provenance("demo"),
    })
    return path


def ensure_demo_model(task: str = "sentiment") -> Path:
    """Return the cached demo model's path, training it first if it is missing."""
    path = demo_model_path(task)
    if not path.is_file():
        train_demo_model(path)
    return path
