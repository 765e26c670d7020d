"""The review session the notebook drives: the hard subset, n-gram drill-down and tagging
as plain methods returning DataFrames, and the tagged sentences ``propose`` reads."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discovery import HARD, TOKEN_PATTERN
from formalize._run_outputs import RunOutputs
from formalize.review._log import DECISIONS, ReviewLog, _normalise_tag
from synth.core import MANIFEST, DataError, RunDirError, did_you_mean

if TYPE_CHECKING:
    from formalize.review._widget import ReviewWidget

#: The environment variable the notebooks read their run directory from.
RUN_ENV = "SYNTHCHECK_RUN"
#: The run directory the notebooks open when neither ``RUN`` nor ``$SYNTHCHECK_RUN`` is set.
DEFAULT_RUN = "runs/demo"


def _resolve_run_dir(run_dir: str | Path | None) -> tuple[Path, str]:
    """The run directory a notebook means, and where it was looked for (for errors).

    ``run_dir``, else ``$SYNTHCHECK_RUN``, else ``runs/demo``. A relative path is looked up in
    the working directory, then in its parent (a notebook's kernel starts in ``notebooks/``,
    the runs live next to it)."""
    if run_dir is None or not str(run_dir).strip():
        run_dir = os.environ.get(RUN_ENV, "").strip() or DEFAULT_RUN
    path = Path(run_dir).expanduser()
    if path.is_absolute():
        return path, str(path)
    cwd = Path.cwd()
    for base in (cwd, cwd.parent):
        if MANIFEST.path(base / path).is_file():
            return base / path, str(base / path)
    return cwd / path, f"{path}, looked up in {cwd} and {cwd.parent}"


def tagged_sentences(run_dir: str | Path, *, tag: str | None = "task-model error",
                     hypothesis: str | None = None) -> list[dict[str, Any]]:
    """The sentences whose current decision has ``tag`` (and ``hypothesis``, if given), as
    ``{"id", "text", "label", "tag", "hypothesis"}``; ``label`` is the annotator's own label
    when the decision has one (Label Studio, Argilla), else the reference's label from the
    hard subset (the likely gold label of a task-model error), else None."""
    run = RunOutputs(Path(run_dir))
    wanted = _normalise_tag(tag) if tag else None
    hard = {str(r["id"]): r for r in run.hard() or []}
    corpus: dict[str, str] | None = None
    out = []
    for sid, rec in ReviewLog(run.path).load().items():
        if wanted and rec["tag"] != wanted:
            continue
        if hypothesis and (rec.get("hypothesis") or "") != hypothesis:
            continue
        h = hard.get(sid)
        if h is not None:
            text, label = str(h["text"]), h.get("reference_label")
        else:
            if corpus is None:  # the corpus, and the focus rounds' new sentences
                from formalize.review._annotate import focus_texts

                corpus = {**focus_texts(run.path), **run.corpus_texts()}
            if sid not in corpus:
                raise DataError(f"decision names sentence id {sid!r}, which is not in the run",
                                where=str(run.path / DECISIONS),
                                fix="review decisions belong to the run they were made on")
            text, label = corpus[sid], None
        out.append({"id": sid, "text": text, "label": rec.get("label") or label,
                    "tag": rec["tag"],
                    "hypothesis": rec.get("hypothesis")})
    return out


_TOKEN = re.compile(TOKEN_PATTERN)  # the n-gram miner's words, so mined n-grams match


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _contains(tokens: list[str], gram: list[str]) -> bool:
    n = len(gram)
    return any(tokens[i:i + n] == gram for i in range(len(tokens) - n + 1))


class ReviewSession:
    """What the review notebook shows and does, as plain methods returning DataFrames.

    Args:
        run_dir: a run directory with a hard subset (``hard.jsonl``); n-grams are optional.
            ``None`` takes ``$SYNTHCHECK_RUN``, else ``runs/demo``; a relative path is looked
            up in the working directory, then in its parent. ``session.run.path`` is the
            directory it opened.
        annotator: recorded with each decision.

    Raises:
        RunDirError: the run directory has no manifest.
    """

    def __init__(self, run_dir: str | Path | None = None, *,
                 annotator: str | None = None) -> None:
        path, where = _resolve_run_dir(run_dir)
        try:
            self.run = RunOutputs(path)
        except RunDirError as exc:
            how = ("set RUN in the notebook's first cell or start Jupyter with "
                   f"{RUN_ENV}=<run directory>; " if run_dir is None or not str(run_dir).strip()
                   else "")
            raise RunDirError(exc.what, where=where, fix=how + (exc.fix or "")) from None
        self.log = ReviewLog(self.run.path, annotator=annotator)
        self.labels = self.run.labels
        self._hard = {str(r["id"]): r for r in self.run.hard() or []}

    @property
    def shown_label(self) -> str:
        """The label whose probability the tables show (the last label, e.g. ``positive``)."""
        return self.labels[-1] if self.labels else ""

    def _row(self, rec: dict[str, Any], decisions: dict[str, dict[str, Any]]) -> dict[str, Any]:
        lab = self.shown_label
        d = decisions.get(str(rec["id"]), {})
        return {"rank": rec.get("rank"), "id": str(rec["id"]), "text": rec.get("text"),
                "divergence": rec.get("divergence"), "task_label": rec.get("task_label"),
                "reference_label": rec.get("reference_label"),
                f"task p({lab})": (rec.get("task_probs") or {}).get(lab),
                f"reference p({lab})": (rec.get("reference_probs") or {}).get(lab),
                "tag": d.get("tag", ""), "hypothesis": d.get("hypothesis") or ""}

    def hard_table(self, sort_by: str = "rank", ascending: bool | None = None) -> Any:
        """The hard subset with each sentence's current tag, sorted by ``sort_by``.

        Raises:
            DataError: the run has no hard subset, or ``sort_by`` is not a column.
        """
        import pandas as pd

        if self.run.hard() is None:
            raise DataError("the run has no hard subset", where=str(HARD.path(self.run.path)),
                            fix="run `synthcheck rank` (or `discover`) first")
        decisions = self.log.load()
        df = pd.DataFrame([self._row(r, decisions) for r in self._hard.values()])
        if df.empty:
            return df
        if sort_by not in df.columns:
            raise DataError(f"cannot sort by {sort_by!r}", where="hard_table",
                            fix=did_you_mean(sort_by, list(df.columns)))
        if ascending is None:
            ascending = sort_by in ("rank", "id", "text")
        return df.sort_values(sort_by, ascending=ascending, kind="mergesort").reset_index(drop=True)

    def ngram_table(self, top: int | None = 30) -> Any:
        """The mined n-grams (as ranked by the mining statistic), without the example ids."""
        import pandas as pd

        rows = self.run.ngrams()
        if rows is None:
            return pd.DataFrame(columns=["ngram"])
        df = pd.DataFrame(rows).drop(columns=["examples"], errors="ignore")
        return df.head(top) if top else df

    def sentences(self, ngram: str) -> Any:
        """The hard sentences that contain ``ngram`` (whole words, any case), with both
        models' probabilities and their current tag."""
        import pandas as pd

        gram = _tokens(ngram)
        decisions = self.log.load()
        rows = [self._row(r, decisions) for r in self._hard.values()
                if gram and _contains(_tokens(str(r.get("text", ""))), gram)]
        return pd.DataFrame(rows, columns=list(self._row({"id": ""}, {})))

    show_ngram = sentences

    def tag(self, id: str, tag: str, note: str | None = None, hypothesis: str | None = None,
            annotator: str | None = None) -> dict[str, Any]:
        """Record a decision at once (see :meth:`ReviewLog.tag`)."""
        return self.log.tag(id, tag, note=note, hypothesis=hypothesis, annotator=annotator)

    def decisions(self) -> Any:
        """The current decision per sentence id, as a DataFrame (restored from the log; a
        missing hypothesis, note or annotator shows as an empty string)."""
        import pandas as pd

        cols = ["id", "tag", "hypothesis", "note", "annotator", "time", "text"]
        rows = [{**{k: d.get(k) or "" for k in cols}, "text": self._hard.get(i, {}).get("text")}
                for i, d in self.log.load().items()]
        return pd.DataFrame(rows, columns=cols)

    def widget(self) -> ReviewWidget | None:
        """An ipywidgets review UI, or None (with a note) when ipywidgets is not installed."""
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            print("ipywidgets is not installed: use session.hard_table(), "
                  "session.sentences('<n-gram>') and tag('<id>', 'task-model error', "
                  "hypothesis='...') instead")
            return None
        from formalize.review._widget import ReviewWidget

        return ReviewWidget(self)
