"""Checks of task models before any work: model files (``.skops``, never pickle), LLM specs
and the probabilities a model returns (a task-model spec's own check is its kind's, see
:mod:`discovery._kinds`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from synth.core import ConfigError, DataError, ModelNotAvailable

SKOPS_FIX = ("save the fitted model with skops: `import skops.io as sio; "
             "sio.dump(model, 'model.skops')`, then use spec sklearn:model.skops")
PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle", ".sav")


def check_skops_file(path: Path, where: str) -> None:
    """Refuse what is not a ``.skops`` archive before skops reads it: a missing file, a
    joblib/pickle file (loading one runs arbitrary code, so it is never loaded), a file that
    is not a zip archive, an archive without skops' ``schema.json``.

    Raises:
        DataError: naming the file and how to save a model with ``skops.io.dump``.
    """
    import zipfile

    if path.is_dir():
        raise DataError("expected a .skops file but this is a directory", where=where,
                        fix="give the path of the .skops file")
    if not path.is_file():
        raise DataError("skops file not found", where=where, fix="check the path")
    try:
        head = path.open("rb").read(2)
    except OSError as exc:
        raise DataError(f"cannot read the skops file: {exc.strerror}", where=where,
                        fix="check the file's permissions") from None
    if path.suffix.lower() in PICKLE_SUFFIXES or head[:1] == b"\x80":
        skops = path.with_suffix(".skops")
        raise DataError(
            "joblib and pickle files are refused for safety: loading one runs arbitrary code "
            f"({path.suffix} files are pickles; synthcheck loads scikit-learn models only "
            "from .skops files)", where=where,
            fix="convert it once where you trust the file: python -c \"import joblib, "
                f"skops.io as sio; sio.dump(joblib.load('{path}'), '{skops}')\", then use "
                f"sklearn:{skops}; or, with the fitted model in memory, {SKOPS_FIX}")
    if not zipfile.is_zipfile(path):
        raise DataError("not a skops file (not a zip archive)", where=where, fix=SKOPS_FIX)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(f"not a readable skops file ({exc})", where=where,
                        fix=SKOPS_FIX) from None
    if "schema.json" not in names:
        raise DataError("not a skops file: the zip archive " + (
            "is empty" if not names else "has no schema.json"), where=where, fix=SKOPS_FIX)




PROB_TOLERANCE = 1e-3
"""How far a row of task-model probabilities may sum from 1."""


def check_probability_rows(probs: np.ndarray, names: Sequence[str], where: str,
                           fix: str) -> np.ndarray:
    """Return ``probs`` (rows of a model's class probabilities, columns ``names``) as
    float64, or refuse a row that is not finite, leaves [0, 1] or does not sum to 1 within
    :data:`PROB_TOLERANCE`.

    Raises:
        DataError: naming the first bad row (its index in the call) and what is wrong.
    """
    arr = np.asarray(probs, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise DataError(f"the model returned probabilities of shape {arr.shape}, expected "
                        f"(texts, {len(names)}) for classes {list(names)}", where=where, fix=fix)
    if not len(arr):
        return arr
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"the model returned a probability that is not a finite number for "
                        f"text {i}: {_row(arr[i], names)}", where=where, fix=fix)
    bad = ((arr < 0) | (arr > 1)).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"the model returned a probability outside [0, 1] for text {i}: "
                        f"{_row(arr[i], names)}", where=where, fix=fix)
    sums = arr.sum(axis=1)
    bad = np.abs(sums - 1.0) > PROB_TOLERANCE
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"the model's probabilities for text {i} sum to {sums[i]:.6g}, not 1 "
                        f"(within {PROB_TOLERANCE:g}): {_row(arr[i], names)}", where=where,
                        fix=fix)
    return arr


def _row(row: np.ndarray, names: Sequence[str]) -> str:
    return "{" + ", ".join(f"{n}: {v:.6g}" for n, v in zip(names, row, strict=True)) + "}"


def check_llm_spec(spec: str, where: str) -> None:
    """Check that an LLM spec (the reference's, a ``fewshot:`` task model's) resolves,
    without loading it: a known engine spec scheme, an installed packaged model, an
    existing ``hf:`` folder holding ``config.json`` (a hub id is left to the loader).

    Raises:
        ConfigError / ModelNotAvailable: naming ``where`` (the config field).
    """
    from synth.engines import packaged_gguf_path, resolve_model_path, split_spec

    try:
        scheme, rest = split_spec(spec)
        if scheme == "packaged":
            packaged_gguf_path(rest)
            return
        path = resolve_model_path(spec)
    except (ConfigError, ModelNotAvailable) as exc:
        raise type(exc)(exc.what, where=f"{where}: {spec}", fix=exc.fix) from None
    if isinstance(path, Path) and not (path / "config.json").is_file():
        raise ModelNotAvailable("the model folder has no config.json (not a transformers "
                                "model folder)", where=f"{where}: {path}",
                                fix="give the folder that save_pretrained wrote")
