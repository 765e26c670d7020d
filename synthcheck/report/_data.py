"""RunData: everything the report shows, read from one run directory.

Any run directory works, also one without a manifest (a run made by ``verify`` alone): every
reader returns None (or an empty list) when its input is absent, and the report skips that
section with a note. Malformed input is a DataError that names the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discovery import (  # read_score_file: the one score reader (stage 2's)
    EVAL,
    HARD,
    NGRAMS,
    REFERENCE_SCORES,
    TASK_SCORES,
    read_score_file,
)
from formalize import (
    DECISIONS_FILE,
    VERIFY_CASES,
    VERIFY_EXAMPLES,
    VERIFY_SUMMARY,
    RunOutputs,
    read_summary_json,
)
from synth import CORPUS_STATS, has_corpus
from synth.core import MANIFEST, DataError, RunDirError, iter_jsonl

# What each input is called in the report's "not in this run" note, and how it is found.
INPUTS = {
    MANIFEST.name: lambda d: MANIFEST.exists(d.path),
    "corpus": lambda d: has_corpus(d.path),
    "scores": lambda d: bool(d.task_model_names()) and REFERENCE_SCORES.exists(d.path),
    HARD.name: lambda d: HARD.exists(d.path),
    NGRAMS.name: lambda d: NGRAMS.exists(d.path),
    EVAL.name: lambda d: EVAL.exists(d.path),
    "review decisions": lambda d: DECISIONS_FILE.exists(d.path),
    "verify outputs": lambda d: bool(d.verify_dirs()),
}


@dataclass
class ScoreTable:
    """Task-model and reference probabilities aligned by corpus id (rows in corpus order)."""

    ids: list[str]
    labels: list[str]
    task_name: str
    task: Any  # numpy array, ids x labels
    reference: Any  # numpy array, ids x labels


@dataclass(frozen=True)
class VerifyOutputs:
    """One verified suite's files: ``verify/<suite>/`` with its parsed ``summary.json``."""

    dir: Path
    summary: dict[str, Any]

    @property
    def suite(self) -> str:
        """The suite's name (the directory's when summary.json has none)."""
        return str(self.summary.get("suite") or self.dir.name)

    def failing_examples(self) -> list[dict[str, Any]] | None:
        """The failures verify kept (``examples.jsonl``), each with its case's ``fills``
        (from ``cases.jsonl``, ``[]`` when not found), or None without ``examples.jsonl``."""
        path = self.dir / VERIFY_EXAMPLES.name
        if not path.is_file():
            return None
        examples = list(iter_jsonl(path))
        wanted = {(str(e.get("case_id")), str(e.get("model"))) for e in examples}
        fills: dict[tuple[str, str], list[dict[str, Any]]] = {}
        cases = self.dir / VERIFY_CASES.name
        if wanted and cases.is_file():
            for rec in iter_jsonl(cases):
                key = (str(rec.get("case_id")), str(rec.get("model")))
                if key in wanted:
                    fills[key] = list(rec.get("fills") or [])
        return [{**e, "fills": fills.get((str(e.get("case_id")), str(e.get("model"))), [])}
                for e in examples]


class RunData(RunOutputs):
    """Lazy, cached access to everything a report shows from one run directory.

    Extends stage 3's :class:`formalize.RunOutputs` (manifest, hard subset, n-grams, corpus)
    with the scores, the held-out evaluation and the verify outputs. The manifest is optional.

    Raises:
        RunDirError: (on construction) the directory does not exist, or its manifest.json is
            unreadable.
    """

    def __init__(self, path: str | Path) -> None:
        if Path(path).exists() and not Path(path).is_dir():
            raise RunDirError("the run path is a file, not a directory", where=str(path),
                              fix="pass the directory `discover`, `generate` or `verify` "
                                  "wrote (--run DIR)")
        if not Path(path).is_dir():
            raise RunDirError("the run directory does not exist", where=str(path),
                              fix="pass the directory `discover`, `generate` or `verify` "
                                  "wrote (--run DIR)")
        super().__init__(path, require_manifest=False)

    def missing_inputs(self) -> list[str]:
        """The report's inputs that this run directory lacks, in pipeline order."""
        return [name for name, present in INPUTS.items() if not present(self)]

    def task_model_names(self) -> list[str]:
        """Names of the task models with a scores file, the ranked one first."""
        names = [TASK_SCORES.field(p) for p in TASK_SCORES.glob(self.path)]
        want = self.section("ranking").get("task_model")
        configured = [str(t.get("name")) for t in self.config.get("task_models") or []
                      if isinstance(t, dict)]
        first = want or (configured[0] if configured else None)
        if first in names:
            names.remove(first)
            names.insert(0, first)
        return names

    def corpus_size(self) -> int | None:
        """Sentences in the corpus (from ``corpus/stats.json``, else counted), or None
        without a corpus."""
        def count() -> int | None:
            stats = CORPUS_STATS.path(self.path)
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

    def eval_json(self) -> dict[str, Any] | None:
        """The whole ``eval.json`` (reports, and the hard subset's precision when the
        reference was evaluated), or None without it.

        Raises:
            DataError: eval.json is not valid JSON or has no ``reports`` object.
        """
        path = EVAL.path(self.path)

        def read() -> dict[str, Any] | None:
            if not path.is_file():
                return None
            data = read_summary_json(path, fix="rerun `synthcheck evaluate` (or `discover`)")
            if not isinstance(data.get("reports"), dict):
                raise DataError("eval.json has no 'reports' object", where=str(path),
                                fix="rerun `synthcheck evaluate` (or `discover`)")
            return dict(data)

        return self._cached("eval_json", read)

    def evaluation(self) -> dict[str, dict[str, Any]] | None:
        """Held-out evaluation per model (``eval.json``'s reports), or None without it.

        Raises:
            DataError: see :meth:`eval_json`.
        """
        data = self.eval_json()
        return None if data is None else data["reports"]

    def scores(self) -> ScoreTable | None:
        """The ranked task model's and the reference's probabilities over the corpus, or None
        when either file or the corpus is absent.

        Raises:
            DataError: a scores file does not cover the corpus or names other labels.
        """
        return self._cached("scores", self._read_scores)

    def _read_scores(self) -> ScoreTable | None:
        names = self.task_model_names()
        task_path = TASK_SCORES.path(self.path, name=names[0]) if names else None
        ref_path = REFERENCE_SCORES.path(self.path)
        ids = list(self.corpus_texts())
        if task_path is None or not ref_path.is_file() or not ids:
            return None
        labels = self.labels or list(next(iter_jsonl(task_path), {}).get("probs") or {})
        return ScoreTable(ids=ids, labels=labels, task_name=names[0],
                          task=read_score_file(task_path, ids, labels),
                          reference=read_score_file(ref_path, ids, labels))

    def verify_dirs(self) -> list[Path]:
        """``verify/<suite>/`` directories that hold a ``summary.json``."""
        return [p.parent for p in VERIFY_SUMMARY.glob(self.path)]

    def verify_outputs(self) -> list[VerifyOutputs]:
        """Every verified suite, its ``summary.json`` parsed.

        Raises:
            DataError: a summary.json is not valid JSON or not an object.
        """
        return self._cached("verify", lambda: [
            VerifyOutputs(d, read_summary_json(d / VERIFY_SUMMARY.name))
            for d in self.verify_dirs()])
