"""Read the stage outputs that stage 3 works from: the run's manifest, hard subset, mined
n-grams and corpus texts (review, propose), and a verify ``summary.json`` (the verify result).

The app's report reads a run through ``synthcheck.report.RunData``, which extends
:class:`RunOutputs` with the scores, the held-out evaluation and the verify outputs.
Every reader returns None when its input is absent; malformed input is a DataError that
names the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from discovery import HARD, NGRAMS
from synth import iter_corpus
from synth.core import DataError, RunDir, iter_jsonl


class RunOutputs:
    """Lazy, cached access to one run directory's stage outputs.

    Args:
        path: the run directory.
        require_manifest: raise RunDirError when the directory has no manifest.json; without
            it, a run without a manifest (e.g. one made by ``verify`` alone) reads as an empty
            config.

    Raises:
        RunDirError: (on construction) the manifest is required and missing, or unreadable.
    """

    def __init__(self, path: str | Path, *, require_manifest: bool = True) -> None:
        self.path = Path(path)
        rundir = RunDir(self.path)
        self.has_manifest = rundir.manifest_path.is_file()
        self.manifest: dict[str, Any] = (rundir.read_manifest()
                                         if require_manifest or self.has_manifest else {})
        self._cache: dict[str, Any] = {}

    # -- config ------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The resolved run config from the manifest (``{}`` without one)."""
        cfg = self.manifest.get("config")
        return cfg if isinstance(cfg, dict) else {}

    def section(self, name: str) -> dict[str, Any]:
        """One section of the resolved config (``{}`` when absent)."""
        sec = self.config.get(name)
        return sec if isinstance(sec, dict) else {}

    @property
    def labels(self) -> list[str]:
        """The task's labels: from the config, else from the hard subset's probabilities."""
        labels = self.section("task").get("labels")
        if labels:
            return [str(x) for x in labels]
        for rec in self.hard() or []:
            probs = rec.get("task_probs")
            if isinstance(probs, dict) and probs:
                return list(probs)
        return []

    @property
    def name(self) -> str:
        """The run's name (the config's, else the directory's)."""
        return str(self.config.get("name") or self.path.name)

    # -- files -------------------------------------------------------------------------
    def _cached(self, key: str, fn: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def hard(self) -> list[dict[str, Any]] | None:
        """The hard subset records (rank order), or None without ``hard.jsonl``."""
        path = HARD.path(self.path)
        return self._cached("hard", lambda: list(iter_jsonl(path)) if path.is_file() else None)

    def ngrams(self) -> list[dict[str, Any]] | None:
        """The mined n-grams (sorted by the mining statistic), or None without ``ngrams.jsonl``."""
        path = NGRAMS.path(self.path)
        return self._cached("ngrams",
                            lambda: list(iter_jsonl(path)) if path.is_file() else None)

    def corpus_texts(self) -> dict[str, str]:
        """Corpus id -> text, in corpus order (``{}`` without a corpus)."""
        return self._cached("corpus", lambda: {str(r["id"]): str(r["text"])
                                               for r in iter_corpus(self.path)})


def read_summary_json(path: Path, *, fix: str = "rerun `synthcheck verify`") -> dict[str, Any]:
    """Read a JSON object file (a verify ``summary.json``, ``eval.json``).

    Raises:
        DataError: the file is not UTF-8, not valid JSON or not an object.
    """
    from synth.core import read_text

    try:
        data = json.loads(read_text(path, kind=path.name))
    except DataError as exc:  # not UTF-8: names the byte offset
        raise DataError(exc.what, where=exc.where, fix=fix) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON: {exc.msg}", where=str(path),
                        fix=fix) from None
    except RecursionError:
        raise DataError(f"{path.name} is nested too deeply to be read", where=str(path),
                        fix=fix) from None
    if not isinstance(data, dict):
        raise DataError(f"{path.name} is not a JSON object", where=str(path), fix=fix)
    return data
