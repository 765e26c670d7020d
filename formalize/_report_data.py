"""Read a run directory's outputs for the report and the review notebook.

Every reader returns None when its input is absent (the report skips that section with a
note); malformed input is a DataError that names the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth import has_corpus, iter_corpus
from synth.core import DataError, RunDir, iter_jsonl


@dataclass
class ScoreTable:
    """Task-model and reference probabilities aligned by corpus id (rows in corpus order)."""

    ids: list[str]
    labels: list[str]
    task_name: str
    task: Any  # numpy array, ids x labels
    reference: Any  # numpy array, ids x labels


@dataclass
class RunData:
    """Lazy, cached access to one run directory's files.

    Raises:
        RunDirError: (on construction) the directory has no readable manifest.json.
    """

    path: Path
    manifest: dict[str, Any] = field(init=False)
    _cache: dict[str, Any] = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.manifest = RunDir(self.path).read_manifest()

    # -- config ------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
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
        return str(self.config.get("name") or self.path.name)

    def task_model_names(self) -> list[str]:
        """Names of the task models with a scores file, the ranked one first."""
        names = [p.name[len("task-"):-len(".jsonl")]
                 for p in sorted((self.path / "scores").glob("task-*.jsonl"))]
        want = self.section("ranking").get("task_model")
        configured = [str(t.get("name")) for t in self.config.get("task_models") or []
                      if isinstance(t, dict)]
        first = want or (configured[0] if configured else None)
        if first in names:
            names.remove(first)
            names.insert(0, first)
        return names

    # -- files -------------------------------------------------------------------------
    def _cached(self, key: str, fn: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def hard(self) -> list[dict[str, Any]] | None:
        """The hard subset records (rank order), or None without ``hard.jsonl``."""
        path = self.path / "hard.jsonl"
        return self._cached("hard", lambda: list(iter_jsonl(path)) if path.is_file() else None)

    def ngrams(self) -> list[dict[str, Any]] | None:
        """The mined n-grams (sorted by the mining statistic), or None without ``ngrams.jsonl``."""
        path = self.path / "ngrams.jsonl"
        return self._cached("ngrams",
                            lambda: list(iter_jsonl(path)) if path.is_file() else None)

    def corpus_size(self) -> int | None:
        """Sentences in the corpus (from ``corpus/stats.json``, else counted), or None
        without a corpus."""
        def count() -> int | None:
            stats = self.path / "corpus" / "stats.json"
            if stats.is_file():
                try:
                    kept = json.loads(stats.read_text(encoding="utf-8")).get("kept")
                except (json.JSONDecodeError, AttributeError):
                    kept = None
                if isinstance(kept, int):
                    return kept
            if not has_corpus(self.path):
                return None
            return len(self.corpus_texts())

        return self._cached("corpus_size", count)

    def evaluation(self) -> dict[str, dict[str, Any]] | None:
        """Held-out evaluation per model (``eval.json``'s reports), or None without it.

        Raises:
            DataError: eval.json is not valid JSON or has no ``reports`` object.
        """
        path = self.path / "eval.json"

        def read() -> dict[str, dict[str, Any]] | None:
            if not path.is_file():
                return None
            data = read_summary_json(path, fix="rerun `synthcheck evaluate` (or `discover`)")
            reports = data.get("reports")
            if not isinstance(reports, dict):
                raise DataError("eval.json has no 'reports' object", where=str(path),
                                fix="rerun `synthcheck evaluate` (or `discover`)")
            return reports

        return self._cached("evaluation", read)

    def corpus_texts(self) -> dict[str, str]:
        """Corpus id -> text (``{}`` without a corpus)."""
        return self._cached("corpus", lambda: {str(r["id"]): str(r["text"])
                                               for r in iter_corpus(self.path)})

    def scores(self) -> ScoreTable | None:
        """The ranked task model's and the reference's probabilities on the ids both scored,
        or None when either file is absent."""
        return self._cached("scores", self._read_scores)

    def _read_scores(self) -> ScoreTable | None:
        import numpy as np

        names = self.task_model_names()
        ref_path = self.path / "scores" / "reference.jsonl"
        if not names or not ref_path.is_file():
            return None
        task = _read_probs(self.path / "scores" / f"task-{names[0]}.jsonl")
        ref = _read_probs(ref_path)
        labels = self.labels or list(next(iter(task.values()), {}))
        ids = [i for i in task if i in ref]
        return ScoreTable(
            ids=ids, labels=labels, task_name=names[0],
            task=np.array([[task[i].get(lab, np.nan) for lab in labels] for i in ids],
                          dtype=np.float64).reshape(len(ids), len(labels)),
            reference=np.array([[ref[i].get(lab, np.nan) for lab in labels] for i in ids],
                               dtype=np.float64).reshape(len(ids), len(labels)))

    def verify_dirs(self) -> list[Path]:
        """``verify/<suite>/`` directories that hold a ``summary.json``."""
        return sorted(p.parent for p in (self.path / "verify").glob("*/summary.json"))


def _read_probs(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for lineno, rec in enumerate(iter_jsonl(path), start=1):
        probs = rec.get("probs")
        if "id" not in rec or not isinstance(probs, dict):
            raise DataError("score record lacks 'id' or 'probs'", where=f"{path}, record {lineno}",
                            fix="rerun `synthcheck score` on this run")
        out[str(rec["id"])] = {str(k): float(v) for k, v in probs.items()}
    return out


def read_summary_json(path: Path, *, fix: str = "rerun `synthcheck verify`") -> dict[str, Any]:
    """Read a JSON object file (a verify ``summary.json``, ``eval.json``).

    Raises:
        DataError: the file is not valid JSON or not an object.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON: {exc.msg}", where=str(path),
                        fix=fix) from None
    if not isinstance(data, dict):
        raise DataError(f"{path.name} is not a JSON object", where=str(path), fix=fix)
    return data

