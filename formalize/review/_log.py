"""The review decision log: append-only ``review/decisions.jsonl``, one tag per decision.

Every decision is appended and fsynced before ``tag`` returns, so a crashed kernel loses
nothing that was acknowledged. The latest decision per sentence id wins when the log is read
back.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from discovery import HARD
from formalize._artifacts import DECISIONS as DECISIONS_FILE
from synth import CORPUS
from synth.core import MANIFEST, DataError, append_jsonl, did_you_mean, iter_jsonl_lines, provenance

#: The tags an annotator gives a hard sentence.
TAGS = ("task-model error", "reference error", "ambiguous", "not a pattern")
#: Where a run directory keeps its decisions.
DECISIONS = Path(DECISIONS_FILE.file)


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
            annotator: str | None = None, *, label: str | None = None, key: str | None = None,
            time: str | None = None) -> dict[str, Any]:
        """Record one decision at once (appended and fsynced); return the record.

        Args:
            label: the annotator's own label for the sentence (its gold label), when given;
                ``propose`` uses it before the reference's.
            key: the decision's id in the tool it came from (e.g. a Label Studio
                annotation id and its update time); an import skips a key already logged.
            time: when the decision was made (ISO 8601; default now). An imported decision
                keeps the tool's own time, so an old export never overrides a later one.

        Raises:
            DataError: the tag is not one of :data:`TAGS`, or the id is not in the run.
        """
        tag = _normalise_tag(tag)
        sid = str(id)
        known = self._known_ids()
        if known and sid not in known:
            raise DataError(f"unknown sentence id {sid!r}", where=str(self.run_dir),
                            fix="tag an id from hard.jsonl or the corpus; "
                                + closest_ids(sid, known))
        self.check_writable()
        record = {"id": sid, "tag": tag,
                  "note": note or None, "hypothesis": (hypothesis or "").strip() or None,
                  "annotator": annotator or self.annotator,
                  "time": time or datetime.now(UTC).isoformat(timespec="seconds"),
                  "label": label or None, "key": key,
                  **provenance(self._config_hash())}
        self._repair_tail()
        append_jsonl(self.path, record)
        return record

    def check_writable(self) -> None:
        """Refuse a log path that is not a file (e.g. a directory) before anything is written.

        Raises:
            DataError: the log path exists and is not a regular file.
        """
        if self.path.exists() and not self.path.is_file():
            raise DataError("the review log is a directory, not a file"
                            if self.path.is_dir() else "the review log is not a regular file",
                            where=str(self.path),
                            fix="move it aside; the log is one JSON Lines file that the "
                                "review notebook and annotate import append to")

    def _known_ids(self) -> set[str]:
        if self._known is None:
            ids: set[str] = set()
            hard = HARD.path(self.run_dir)
            if hard.is_file():
                from synth.core import iter_jsonl

                ids.update(str(r.get("id")) for r in iter_jsonl(hard))
            if CORPUS.path(self.run_dir).is_dir():
                from synth import iter_corpus

                ids.update(str(r["id"]) for r in iter_corpus(self.run_dir))
            self._known = ids
        return self._known

    def _config_hash(self) -> str:
        try:
            manifest = json.loads(MANIFEST.path(self.run_dir).read_text(encoding="utf-8"))
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
        self.check_writable()
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        numbered = list(enumerate(lines, start=1))
        where = str(self.path)
        try:
            out = _decisions(numbered[:-1], where)
        except DataError as exc:
            raise DataError(f"bad decision record: {exc.what}", where=exc.where,
                            fix="fix or delete that line (the log is plain JSON Lines)") from None
        try:
            out += _decisions(numbered[-1:], where)
        except DataError as exc:
            msg = (f"skipped line {len(lines)} of {self.path}: {exc.what} (a write cut off "
                   f"mid-line; the decisions before it are kept)")
            self.warnings.append(msg)
            warnings.warn(msg, ReviewLogWarning, stacklevel=2)
        return out

    def load(self) -> dict[str, dict[str, Any]]:
        """The current decision per sentence id (the latest by its ``time`` wins; equal
        times, the later line), in first-tag order."""
        from discovery import decision_time

        latest: dict[str, dict[str, Any]] = {}
        for rec in self.records():
            sid = str(rec["id"])
            if sid not in latest or (decision_time(rec.get("time"))
                                     >= decision_time(latest[sid].get("time"))):
                latest[sid] = rec
        return latest

    def keys(self) -> set[str]:
        """The tool keys of the logged decisions (what an import has already brought)."""
        return {str(r["key"]) for r in self.records() if r.get("key")}

    def hypotheses(self) -> dict[str, list[str]]:
        """Hypothesis text -> ids whose current decision carries it (first-seen order)."""
        out: dict[str, list[str]] = {}
        for sid, rec in self.load().items():
            if rec.get("hypothesis"):
                out.setdefault(str(rec["hypothesis"]), []).append(sid)
        return out


def _decisions(numbered: Iterable[tuple[int, str]], where: str) -> list[dict[str, Any]]:
    """The decision records of numbered lines, read by synth.core's JSON Lines reader.

    Raises:
        DataError: a line is not a JSON object, or lacks an ``id`` or a known ``tag``
            (names ``where`` and the line).
    """
    out = []
    for lineno, record in iter_jsonl_lines(numbered, where):
        if not isinstance(record.get("id"), str) or record.get("tag") not in TAGS:
            raise DataError("lacks an 'id' or a known 'tag'", where=f"{where}, line {lineno}",
                            fix="fix or delete that line")
        out.append(record)
    return out


def _bad_line(raw: bytes) -> bool:
    try:
        _decisions([(1, raw.decode("utf-8", errors="replace"))], "decision log")
    except DataError:
        return True
    return False


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions and substitutions cost 1)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest_ids(sid: str, known: Iterable[str], n: int = 3) -> str:
    """``did you mean 'a', 'b' or 'c'? (of 207 ids)``: the ``n`` known ids nearest ``sid`` by
    edit distance (ties in id order), never the whole list."""
    ids = sorted(known)
    ranked = sorted(ids, key=lambda k: (_edit_distance(sid, k), k))[:n]
    shown = [repr(k) for k in ranked]
    said = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f"did you mean {said}? (of {len(ids)} ids in the run)"
