"""Annotator review of a run's hard subset: the append-only decision log and the session the
review notebook drives (tables, n-gram drill-down, tagging, an ipywidgets UI with a plain
fallback).

Every decision is appended to ``review/decisions.jsonl`` and fsynced before ``tag`` returns,
so a crashed kernel loses nothing that was acknowledged. The latest decision per sentence
id wins when the log is read back.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from discovery import TOKEN_PATTERN
from formalize._run_outputs import RunOutputs
from synth.core import DataError, RunDirError, append_jsonl, did_you_mean, provenance

#: The tags an annotator gives a hard sentence.
TAGS = ("task-model error", "reference error", "ambiguous", "not a pattern")
DECISIONS = Path("review") / "decisions.jsonl"
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
        if (base / path / "manifest.json").is_file():
            return base / path, str(base / path)
    return cwd / path, f"{path}, looked up in {cwd} and {cwd.parent}"


class ReviewLogWarning(UserWarning):
    """A line of the decision log was skipped (a write cut off mid-line)."""


def _normalise_tag(tag: object) -> str:
    text = " ".join(str(tag).replace("_", " ").split()).lower()
    text = text.replace("task model", "task-model")
    if text in TAGS:
        return text
    raise DataError(f"unknown review tag {tag!r}", where="review tag",
                    fix=f"use one of: {', '.join(TAGS)}; " + did_you_mean(str(tag), list(TAGS)))


class ReviewLog:
    """The decisions of one run's review, in ``<run>/review/decisions.jsonl``.

    Args:
        run_dir: the run directory.
        annotator: default annotator name recorded with each decision.
        known_ids: ids that may be tagged (default: the hard subset's and the corpus's,
            when the run has them); a tag on another id is refused.
    """

    def __init__(self, run_dir: str | Path, *, annotator: str | None = None,
                 known_ids: Iterable[str] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / DECISIONS
        self.annotator = annotator
        self._known = set(map(str, known_ids)) if known_ids is not None else None
        self._tail_checked = False
        self.warnings: list[str] = []

    # -- writing -----------------------------------------------------------------------
    def tag(self, id: str, tag: str, note: str | None = None, hypothesis: str | None = None,
            annotator: str | None = None) -> dict[str, Any]:
        """Record one decision at once (appended and fsynced); return the record.

        Raises:
            DataError: the tag is not one of :data:`TAGS`, or the id is not in the run.
        """
        tag = _normalise_tag(tag)
        sid = str(id)
        known = self._known_ids()
        if known and sid not in known:
            raise DataError(f"unknown sentence id {sid!r}", where=str(self.run_dir),
                            fix="tag an id from hard.jsonl or the corpus; "
                                + did_you_mean(sid, sorted(known)))
        record = {"id": sid, "tag": tag,
                  "note": note or None, "hypothesis": (hypothesis or "").strip() or None,
                  "annotator": annotator or self.annotator,
                  "time": datetime.now(UTC).isoformat(timespec="seconds"),
                  **provenance(self._config_hash())}
        self._repair_tail()
        append_jsonl(self.path, record)
        return record

    def _known_ids(self) -> set[str]:
        if self._known is None:
            ids: set[str] = set()
            hard = self.run_dir / "hard.jsonl"
            if hard.is_file():
                from synth.core import iter_jsonl

                ids.update(str(r.get("id")) for r in iter_jsonl(hard))
            if (self.run_dir / "corpus").is_dir():
                from synth import iter_corpus

                ids.update(str(r["id"]) for r in iter_corpus(self.run_dir))
            self._known = ids
        return self._known

    def _config_hash(self) -> str:
        try:
            manifest = json.loads((self.run_dir / "manifest.json").read_text(encoding="utf-8"))
            return str(manifest.get("config_hash") or "unknown")
        except (OSError, ValueError):
            return "unknown"

    def _repair_tail(self) -> None:
        """Move a cut-off last line aside (to ``decisions.jsonl.torn``) before appending, so
        the next record does not glue onto it and turn it into a bad line in the middle."""
        if self._tail_checked or not self.path.is_file():
            self._tail_checked = True
            return
        data = self.path.read_bytes()
        body = data.rstrip(b"\n")
        start = body.rfind(b"\n") + 1
        last = body[start:]
        bad = bool(last.strip()) and (not data.endswith(b"\n") or _bad_line(last))
        if bad:
            torn = self.path.with_name(self.path.name + ".torn")
            with torn.open("ab") as handle:
                handle.write(last + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            with self.path.open("r+b") as handle:
                handle.truncate(start)
                handle.flush()
                os.fsync(handle.fileno())
            warnings.warn(f"moved a cut-off last line of {self.path} to {torn}",
                          ReviewLogWarning, stacklevel=3)
        self._tail_checked = True

    # -- reading -----------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        """Every decision in file order (a cut-off last line is skipped with a warning).

        Raises:
            DataError: a line other than the last is not a decision record (names the line).
        """
        self.warnings = []
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        out = []
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            problem = _line_problem(line)
            if problem is None:
                out.append(json.loads(line))
                continue
            if lineno == len(lines):
                msg = (f"skipped line {lineno} of {self.path}: {problem} (a write cut off "
                       f"mid-line; the decisions before it are kept)")
                self.warnings.append(msg)
                warnings.warn(msg, ReviewLogWarning, stacklevel=2)
                continue
            raise DataError(f"bad decision record: {problem}", where=f"{self.path}, line {lineno}",
                            fix="fix or delete that line (the log is plain JSON Lines)")
        return out

    def load(self) -> dict[str, dict[str, Any]]:
        """The current decision per sentence id (the latest one wins), in first-tag order."""
        latest: dict[str, dict[str, Any]] = {}
        for rec in self.records():
            latest[str(rec["id"])] = rec
        return latest

    def hypotheses(self) -> dict[str, list[str]]:
        """Hypothesis text -> ids whose current decision carries it (first-seen order)."""
        out: dict[str, list[str]] = {}
        for sid, rec in self.load().items():
            if rec.get("hypothesis"):
                out.setdefault(str(rec["hypothesis"]), []).append(sid)
        return out


def _line_problem(line: str) -> str | None:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})"
    if not isinstance(rec, dict):
        return "not a JSON object"
    if not isinstance(rec.get("id"), str) or rec.get("tag") not in TAGS:
        return "lacks an 'id' or a known 'tag'"
    return None


def _bad_line(raw: bytes) -> bool:
    return _line_problem(raw.decode("utf-8", errors="replace")) is not None


def tagged_sentences(run_dir: str | Path, *, tag: str | None = "task-model error",
                     hypothesis: str | None = None) -> list[dict[str, Any]]:
    """The sentences whose current decision has ``tag`` (and ``hypothesis``, if given), as
    ``{"id", "text", "label", "tag", "hypothesis"}``; ``label`` is the reference's label
    from the hard subset (the likely gold label of a task-model error), else None."""
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
            corpus = run.corpus_texts() if corpus is None else corpus
            if sid not in corpus:
                raise DataError(f"decision names sentence id {sid!r}, which is not in the run",
                                where=str(run.path / DECISIONS),
                                fix="review decisions belong to the run they were made on")
            text, label = corpus[sid], None
        out.append({"id": sid, "text": text, "label": label, "tag": rec["tag"],
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
    def positive(self) -> str:
        """The label whose probability the tables show (the last label, e.g. ``positive``)."""
        return self.labels[-1] if self.labels else ""

    def _row(self, rec: dict[str, Any], decisions: dict[str, dict[str, Any]]) -> dict[str, Any]:
        lab = self.positive
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
            raise DataError("the run has no hard subset", where=str(self.run.path / "hard.jsonl"),
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
        return ReviewWidget(self)


class ReviewWidget:
    """The ipywidgets UI: a sortable hard-subset table, an n-gram picker showing its sentences
    with both models' probabilities, a tag menu per sentence (saved on change) and a
    hypothesis box. Works in JupyterLab, Notebook 7 and classic notebooks (stock widgets only).

    ``tag_widgets`` maps the shown sentence ids to their tag menus (for scripting and tests).
    """

    def __init__(self, session: ReviewSession, *, top_ngrams: int = 50, rows: int = 50) -> None:
        import ipywidgets as w

        self.session, self.rows = session, rows
        cols = list(session.hard_table().columns) if session._hard else ["rank"]
        self.sort = w.Dropdown(options=cols, value="rank" if "rank" in cols else cols[0],
                               description="sort by")
        self.ascending = w.Checkbox(value=True, description="ascending")
        self.hard_out = w.Output()
        grams = session.ngram_table(top_ngrams)
        options = [(f"{r['ngram']}  ({r.get('hard_count', '?')} hard)", r["ngram"])
                   for r in grams.to_dict(orient="records")] if len(grams) else []
        self.ngram = w.Dropdown(options=[("(choose an n-gram)", "")] + options,
                                description="n-gram")
        self.hypothesis = w.Combobox(options=list(session.log.hypotheses()),
                                     placeholder="what the task model gets wrong",
                                     description="hypothesis", layout=w.Layout(width="80%"))
        self.status = w.HTML()
        self.sentence_box = w.VBox()
        self.tag_widgets: dict[str, Any] = {}
        self.sort.observe(lambda _: self.show_hard(), names="value")
        self.ascending.observe(lambda _: self.show_hard(), names="value")
        self.ngram.observe(lambda change: self.show_ngram(change["new"]), names="value")
        self.box = w.VBox([w.HTML("<b>Hard subset</b>"), w.HBox([self.sort, self.ascending]),
                           self.hard_out, w.HTML("<b>N-grams</b>"), self.ngram, self.hypothesis,
                           self.sentence_box, self.status])
        self.show_hard()
        self._update_status()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)

    def show_hard(self) -> None:
        """Redraw the hard-subset table with the chosen sort."""
        from IPython.display import display

        self.hard_out.clear_output()
        with self.hard_out:
            if self.session._hard:
                display(self.session.hard_table(self.sort.value, self.ascending.value)
                        .head(self.rows))

    def show_ngram(self, ngram: str) -> None:
        """Show the sentences of ``ngram``, each with a tag menu restored from the log."""
        import ipywidgets as w

        self.tag_widgets = {}
        if not ngram:
            self.sentence_box.children = ()
            return
        df = self.session.sentences(ngram)
        lab = self.session.positive
        hyps = [h for h in df["hypothesis"] if h]
        if hyps and not self.hypothesis.value:
            self.hypothesis.value = hyps[-1]
        children = []
        for r in df.to_dict(orient="records"):
            menu = w.Dropdown(options=[("(untagged)", "")] + [(t, t) for t in TAGS],
                              value=r["tag"] or "", layout=w.Layout(width="180px"))
            menu.observe(lambda change, sid=r["id"]: self._on_tag(sid, change["new"]),
                         names="value")
            self.tag_widgets[r["id"]] = menu
            info = (f"<b>{r['id']}</b> {_escape(str(r['text']))}<br><small>task "
                    f"p({lab})={_fmt(r[f'task p({lab})'])}, reference p({lab})="
                    f"{_fmt(r[f'reference p({lab})'])}, divergence {_fmt(r['divergence'])}"
                    f"</small>")
            children.append(w.HBox([menu, w.HTML(info, layout=w.Layout(width="85%"))]))
        self.sentence_box.children = tuple(children)

    def _on_tag(self, sid: str, tag: str) -> None:
        if not tag:
            return
        self.session.tag(sid, tag, hypothesis=self.hypothesis.value or None)
        known = list(self.session.log.hypotheses())
        if list(self.hypothesis.options) != known:
            self.hypothesis.options = known
        self._update_status(f"saved: {sid} = {tag}")
        self.show_hard()

    def _update_status(self, last: str = "") -> None:
        counts: dict[str, int] = {}
        for d in self.session.log.load().values():
            counts[d["tag"]] = counts.get(d["tag"], 0) + 1
        summary = ", ".join(f"{t}: {counts.get(t, 0)}" for t in TAGS)
        self.status.value = f"<small>{_escape(last)} &nbsp; decisions: {summary}</small>"


def _fmt(x: Any) -> str:
    try:
        return f"{float(x):.3f}"
    except (TypeError, ValueError):
        return "-"


def _escape(text: str) -> str:
    import html

    return html.escape(text)
