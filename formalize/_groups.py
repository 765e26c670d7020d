"""Test groups (one variant per group value) and contrast sets by entity substitution."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from formalize._perturb import case_like
from formalize._template import indefinite_article
from synth import has_corpus, iter_corpus
from synth.core import DataError, TemplateError, derive_rng, iter_records


class RunCorpusMissing(TemplateError):
    """``texts_from_run`` names a directory without a corpus (yet): `discover` checks a suite
    before it generates the corpus such a suite may read."""


def read_texts_file(path: str | Path, where: str) -> list[str]:
    """Read base texts: ``.txt`` (one per line), ``.jsonl`` (``text`` field), ``.csv`` (``text``).

    Raises:
        TemplateError: the file is missing, of an unknown kind, or has no ``text`` column.
    """
    path = Path(path)
    if not path.is_file():
        raise TemplateError("texts file not found", where=f"{where}: {path}", fix="check the path")
    suffix = path.suffix.lower()
    if suffix not in {".txt", ".jsonl", ".csv"}:
        raise TemplateError(f"unknown texts file type {suffix!r}", where=f"{where}: {path}",
                            fix="use .txt, .jsonl or .csv")
    try:
        records = iter_records(path, kind="texts file")
        if records.columns is not None and "text" not in records.columns:
            raise TemplateError("CSV texts file has no 'text' column", where=f"{where}: {path}",
                                fix="name the column holding the texts 'text'")
        values = [r["text"] for _, r in records]
    except KeyError:
        raise TemplateError("a JSONL texts file needs a 'text' field in every record",
                            where=f"{where}: {path}", fix="add the field") from None
    except DataError as exc:
        raise TemplateError(exc.what, where=exc.where, fix=exc.fix) from None
    if suffix == ".jsonl":
        return [str(value) for value in values]
    texts = [value or "" for value in values]  # a short CSV row has None for 'text'
    return [text.strip() if suffix == ".txt" else text for text in texts if text.strip()]


def read_run_texts(run: str | Path, where: str, *, base_dir: str | Path = ".",
                   limit: int | None = None, seed: int = 0, stream: str = "",
                   keep: Callable[[str], bool] | None = None) -> list[str]:
    """Read base texts from a run's generated corpus (``corpus/shard-*.jsonl``, via
    ``synth.iter_corpus``: shard order, duplicates dropped).

    Args:
        run: the run directory; a relative path is relative to ``base_dir`` (the suite's folder).
        where: names the suite and test in errors.
        limit: keep this many texts, drawn by a seeded reservoir sample (memory stays at
            ``limit`` texts) and returned in corpus order; None keeps every text.
        seed: seed of the draw.
        stream: names the draw's stream beside the seed (a group test passes its name, so two
            tests drawing from one run draw independently).
        keep: only texts for which this returns True are considered (drawn from).

    Raises:
        TemplateError: no corpus in the run directory, or a corpus record without a ``text``.
    """
    run_dir = Path(base_dir) / run
    if run_dir.exists() and not run_dir.is_dir():
        raise TemplateError("texts_from_run must name a run directory, not a file",
                            where=f"{where}: {run_dir}",
                            fix="give the run directory (the --run folder of `synthcheck "
                                "generate` or `discover`)")
    if not has_corpus(run_dir):
        fix = ("generate it first (synthcheck generate --run DIR), or check the path; a "
               "relative path is relative to the suite file's folder")
        if not Path(run).is_absolute() and has_corpus(Path(run)):
            rel = Path(os.path.relpath(Path(run).resolve(), Path(base_dir).resolve()))
            fix = (f"a relative path is relative to the suite file's folder: write "
                   f"{rel.as_posix()!r} (or an absolute path) for the run in the current "
                   "directory")
        raise RunCorpusMissing("no corpus in the run directory (no corpus/shard-*.jsonl)",
                               where=f"{where}: {run_dir}", fix=fix)
    rng = derive_rng(seed, *([stream] if stream else []), "corpus")
    reservoir: list[tuple[int, str]] = []
    i = 0
    try:
        for record in iter_corpus(run_dir):
            text = str(record["text"])
            if not text.strip() or (keep is not None and not keep(text)):
                continue
            if limit is None or i < limit:
                reservoir.append((i, text))
            else:
                j = rng.randrange(i + 1)
                if j < limit:
                    reservoir[j] = (i, text)
            i += 1
    except KeyError:
        raise TemplateError("a corpus record has no 'text' field", where=f"{where}: {run_dir}",
                            fix="point texts_from_run at a run directory that synthcheck "
                                "generate wrote") from None
    except DataError as exc:
        raise TemplateError(exc.what, where=exc.where, fix=exc.fix) from None
    return [text for _, text in sorted(reservoir)]


class GroupVariantMaker:
    """Makes one variant of a text per group value by changing, adding or keeping a mention.

    ``words`` mode: each group has marker words aligned by position; every marker of any group
    found in the text is changed into the target group's word at the same position.
    ``pattern`` mode: every match of the regular expression is replaced by the group's mention.
    A text without any mention gets ``add`` (with ``{mention}``) at the start or end, or
    inline (``at="inline"``: right before the first match of ``anchor``, as in "45 yo
    {obese} man"), or is skipped when ``add`` is not given (or, inline, the anchor is not
    found). A text that already mentions the group is kept as is. A group whose mention is
    empty (a "no mention" group) removes the mention, and the spaces it leaves are tidied.
    """

    def __init__(self, *, words: Mapping[str, Sequence[str]] | None = None,
                 pattern: str | None = None, values: Mapping[str, str] | None = None,
                 add: str | None = None, at: str = "start", anchor: str | None = None,
                 where: str = "group test") -> None:
        self.groups = list(words if words is not None else (values or {}))
        self.words = {g: list(ws) for g, ws in (words or {}).items()}
        self.values = dict(values or {})
        self.add, self.at = add, at
        self._anchor: re.Pattern[str] | None = None
        if anchor is not None:
            try:
                self._anchor = re.compile(anchor, re.IGNORECASE)
            except re.error as exc:
                raise TemplateError(f"bad regular expression {anchor!r}: {exc}", where=where,
                                    fix="fix the anchor (YAML single quotes keep backslashes)"
                                    ) from None
        if words is not None:
            lookup: dict[str, int] = {}
            for ws in self.words.values():
                for i, w in enumerate(ws):
                    lookup.setdefault(w.lower(), i)
            self._lookup = lookup
            alts = sorted(lookup, key=len, reverse=True)
            alternation = "|".join(map(re.escape, alts))
            self._regex = re.compile(r"(?<![\w-])(" + alternation + r")(?![\w-])",
                                     re.IGNORECASE)
        else:
            try:
                self._regex = re.compile(pattern or "", re.IGNORECASE)
            except re.error as exc:
                raise TemplateError(f"bad regular expression {pattern!r}: {exc}", where=where,
                                    fix="fix the pattern (YAML single quotes keep backslashes)"
                                    ) from None

    def applies(self, text: str) -> bool:
        """True when :meth:`variants` makes variants of ``text`` (it mentions the attribute,
        or ``add`` inserts a mention)."""
        if self._regex.search(text) is not None:
            return True
        if self.add is None:
            return False
        return self._anchor is None or self._anchor.search(text) is not None

    def mention(self, group: str) -> str:
        """Return the text that marks ``group`` when a mention has to be added."""
        return self.words[group][0] if self.words else self.values[group]

    def variants(self, text: str) -> dict[str, str] | None:
        """Return group -> variant of ``text``, or None when it has no mention and no ``add``."""
        if self._regex.search(text) is None:
            if not self.applies(text):
                return None
            out = {}
            for g in self.groups:
                mention = self.mention(g)
                added = self.add.replace("{mention}", mention) if self.add else ""
                if not mention:  # the "no mention" group: nothing is added
                    out[g] = text
                elif self.at == "inline":
                    assert self._anchor is not None
                    m = self._anchor.search(text)
                    assert m is not None
                    out[g] = f"{text[:m.start()]}{added} {text[m.start():]}"
                else:
                    out[g] = f"{added} {text}" if self.at == "start" else f"{text} {added}"
            return out
        return {g: _tidy(self._regex.sub(functools.partial(self._replacement, g), text))
                if not self.mention(g) else
                self._regex.sub(functools.partial(self._replacement, g), text)
                for g in self.groups}

    def _replacement(self, group: str, match: re.Match[str]) -> str:
        found = match.group(0)
        if self.words:
            return case_like(found, self.words[group][self._lookup[found.lower()]])
        return self.values[group]


def _tidy(text: str) -> str:
    """Collapse the spaces a removed mention leaves (``"66 yo  man"`` -> ``"66 yo man"``)."""
    text = re.sub(r"[ \t]{2,}", " ", text)
    return re.sub(r" ([,.;:])", r"\1", text).strip()


_ARTICLE_BEFORE = re.compile(r"\b(a|an)(\s+)$", re.IGNORECASE)
#: Words that start a noun phrase taking no indefinite article ("fewer migraines", "better
#: sleep", "a calmer mood" itself): an article before the entity is dropped for them.
_NO_ARTICLE_START = ("a", "an", "the", "some", "any", "no", "more", "less", "fewer", "better",
                     "worse", "much", "many", "several", "two", "three", "my", "your", "his",
                     "her", "their", "our")


def _takes_article(phrase: str) -> bool:
    """Whether ``phrase`` reads as a singular count noun phrase that "a"/"an" can precede:
    not one that starts with a determiner, quantifier or comparative, and not a plural."""
    words = phrase.lower().split()
    if not words or words[0] in _NO_ARTICLE_START:
        return False
    last = words[-1]
    return not (last.endswith("s") and not last.endswith(("ss", "us", "is")))


def substitute_entity(text: str, entity: str, replacement: str) -> str | None:
    """Replace every whole-word ``entity`` in ``text`` with ``replacement``.

    The entity is matched case-insensitively and the replacement takes the case of what it
    replaces ("Asthma" -> "Diabetes", "ASTHMA" -> "DIABETES"). An indefinite article before the
    entity is only touched where it is the entity's own (it agrees with the entity: "an
    ulcer", "a rash"): it then agrees with the replacement ("an itch"), or is dropped where
    the replacement takes none ("fewer migraines", "better sleep", "a calmer mood").

    Returns None when ``entity`` does not occur in ``text``.
    """
    regex = re.compile(r"(?<!\w)" + re.escape(entity) + r"(?!\w)", re.IGNORECASE)
    if regex.search(text) is None:
        return None
    out: list[str] = []
    pos = 0
    for m in regex.finditer(text):
        before = text[pos:m.start()]
        found = m.group(0)
        new = case_like(found, replacement)
        art = _ARTICLE_BEFORE.search(before)
        if art and art.group(1).lower() == indefinite_article(found):
            if _takes_article(replacement):
                fixed = indefinite_article(replacement)
                if art.group(1)[0].isupper():
                    fixed = fixed.capitalize()
                before = before[: art.start()] + fixed + art.group(2)
            else:
                before = before[: art.start()]
                if art.group(1)[0].isupper():
                    new = new[:1].upper() + new[1:]
        out.append(before + new)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def iter_contrasts(text: str, entity: str, alternatives: Sequence[str]
                   ) -> Iterator[tuple[str, str]]:
    """Yield ``(alternative, substituted text)`` for each alternative other than the entity."""
    for alt in alternatives:
        if alt == entity:
            continue
        out = substitute_entity(text, entity, alt)
        if out is not None:
            yield alt, out
