"""Lexicons: named lists of fill values (built-in YAML files, or user YAML, CSV and TXT files)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.core import ConfigError, DataError, TemplateError, did_you_mean, iter_records, load_yaml

#: Where the built-in lexicons live: ``formalize/lexicons`` inside the package (package data,
#: so a non-editable install has them too; ``configs/lexicons`` in a checkout links here).
BUILTIN_LEXICON_DIR = Path(__file__).resolve().parent / "lexicons"

#: Built-in lexicons that were renamed: old name -> new name (for "did you mean" messages).
RENAMED_LEXICONS = {"PRONOUN_3": "PRONOUN_THIRD"}


def renamed_hint(name: str) -> str:
    """Return "; 'X' was renamed to 'Y'" for a renamed built-in lexicon, else ""."""
    new = RENAMED_LEXICONS.get(name)
    return f"; the built-in lexicon {name!r} was renamed to {new!r}" if new else ""


def check_lexicon_name(name: str, where: str, kind: str = "lexicon") -> None:
    """Refuse a lexicon name that ends with a digit: ``{NAME1}`` in a template reads as a
    second draw from ``NAME``, so such a lexicon could never be named in a template.

    Raises:
        TemplateError: ``name`` ends with a digit (names the file and the lexicon).
    """
    if name[-1:].isdigit():
        stem = name.rstrip("0123456789")
        raise TemplateError(
            f"{kind} name {name!r} ends with a digit", where=where,
            fix=f"rename it so that it does not end with a digit: in a template a trailing "
                f"digit marks another draw ({{{name}}} would draw from {stem!r})")


def _clean(values: Iterable[Any], name: str, where: str) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for value in values:
        if value is None or isinstance(value, dict | list):
            raise TemplateError(f"lexicon {name!r} has a non-text value {value!r}", where=where,
                                fix="list plain strings (quote numbers if needed)")
        text = str(value).strip()
        if text:
            out.setdefault(text, None)
    if not out:
        raise TemplateError(f"lexicon {name!r} is empty", where=where,
                            fix="give it at least one value")
    return tuple(out)


@dataclass(frozen=True)
class PairedLexicon:
    """A lexicon whose entries are tuples filling several placeholders together: the i-th
    value of every slot comes from the i-th entry (``{TIME_ENTITY_S}`` ... ``{TIME_ENTITY_L}``
    gives "2 days" ... "2 weeks", never "2 days" ... "1 day")."""

    name: str
    slots: tuple[str, ...]
    """The slot names (lexicon names in templates) that its columns fill, in order."""
    rows: tuple[tuple[str, ...], ...]
    """The entries, one value per slot each (duplicate entries dropped)."""

    def column(self, slot: str) -> tuple[str, ...]:
        """The values of one slot, entry by entry (not de-duplicated: index i is entry i)."""
        k = self.slots.index(slot)
        return tuple(row[k] for row in self.rows)


def paired_lexicon(name: str, slots: Any, values: Any, where: str) -> PairedLexicon:
    """Check and build a paired lexicon (``slots: [A, B]``, ``values: [[a1, b1], ...]``).

    Raises:
        TemplateError: fewer than two slots, a slot name that ends with a digit or repeats,
            no entries, an entry that is not a list, or an entry whose number of values is
            not the number of slots (names the entry).
    """
    if (not isinstance(slots, list) or len(slots) < 2
            or not all(isinstance(s, str) and s for s in slots)):
        raise TemplateError(f"paired lexicon {name!r} needs 'slots': a list of two or more "
                            f"slot names, got {slots!r}", where=where,
                            fix="write slots: [NAME_A, NAME_B]")
    if len(set(slots)) != len(slots):
        raise TemplateError(f"paired lexicon {name!r} names a slot twice: {slots}", where=where,
                            fix="give each column its own slot name")
    for slot in slots:
        check_lexicon_name(slot, where, f"paired lexicon {name!r} slot")
    if not isinstance(values, list) or not values:
        raise TemplateError(f"paired lexicon {name!r} has no entries", where=where,
                            fix=f"list entries of {len(slots)} values: - [{', '.join(slots)}]")
    rows: dict[tuple[str, ...], None] = {}
    for k, entry in enumerate(values):
        if not isinstance(entry, list) or len(entry) != len(slots):
            got = f"{len(entry)} values" if isinstance(entry, list) else repr(entry)
            raise TemplateError(
                f"paired lexicon {name!r}, entry {k}: {got} for {len(slots)} slots "
                f"({', '.join(slots)})", where=where,
                fix=f"give every entry exactly {len(slots)} values, one per slot, in order")
        row = tuple(_clean([v], name, where)[0] for v in entry)
        rows.setdefault(row, None)
    return PairedLexicon(name, tuple(slots), tuple(rows))


def read_lexicon_file(path: str | Path, *, name: str, column: str | None = None,
                      key: str | None = None) -> tuple[str, ...]:
    """Read one lexicon from a file.

    ``.txt``: one value per line (``#`` comments and blank lines skipped); ``.csv``: the
    column ``column`` (default: the first column); ``.yaml``/``.yml``: a list, or a mapping
    from which ``key`` (default ``name``) is taken.

    Raises:
        TemplateError: the file is missing, of an unknown kind, lacks the column or key, or
            the lexicon is empty.
    """
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise TemplateError(f"lexicon file for {name!r} not found", where=where,
                            fix="check the path (relative paths are relative to the suite file)")
    suffix = path.suffix.lower()
    if suffix in (".txt", ".csv"):
        try:
            records = iter_records(path, kind="lexicon file", text_field="value")
        except DataError as exc:
            raise TemplateError(exc.what, where=exc.where, fix=exc.fix) from None
        if records.columns is None:
            values = (r["value"] for _, r in records)
            return _clean((v for v in values if not v.lstrip().startswith("#")), name, where)
        fields = records.columns
        col = column or (fields[0] if fields else None)
        if col is None or col not in fields:
            raise TemplateError(
                f"CSV lexicon file has no column {col!r}", where=where,
                fix=f"name one of its columns: {', '.join(fields) or '(none)'}")
        return _clean((row[col] for _, row in records), name, where)
    if suffix in (".yaml", ".yml"):
        try:
            data, _ = load_yaml(path)
        except ConfigError as exc:
            raise TemplateError(exc.what, where=exc.where, fix=exc.fix) from None
        if isinstance(data, Mapping):
            wanted = key or name
            if wanted not in data:
                raise TemplateError(f"unknown lexicon {wanted!r} in {path.name}", where=where,
                                    fix=did_you_mean(wanted, sorted(map(str, data))))
            data = data[wanted]
            if isinstance(data, Mapping):
                data = data.get("values", [])
        if not isinstance(data, list):
            raise TemplateError(f"lexicon {name!r} must be a list of strings", where=where,
                                fix="write it as a YAML list")
        return _clean(data, name, where)
    raise TemplateError(f"unknown lexicon file type {suffix!r}", where=where,
                        fix="use .yaml, .csv or .txt")


def read_lexicon_yaml(path: str | Path, pairs: dict[str, PairedLexicon] | None = None
                      ) -> dict[str, tuple[str, ...]]:
    """Read every lexicon of a YAML file (``NAME: [values]`` or ``NAME: {values: [...]}``).

    Paired lexicons (``NAME: {slots: [A, B], values: [[a, b], ...]}``) are added to ``pairs``;
    without ``pairs`` they are an error."""
    path = Path(path)
    try:
        data, _ = load_yaml(path)
    except ConfigError as exc:
        raise TemplateError(exc.what, where=exc.where, fix=exc.fix) from None
    if not isinstance(data, Mapping):
        raise TemplateError("a lexicon file must map names to lists", where=str(path),
                            fix="write NAME: [value, ...] pairs")
    out: dict[str, tuple[str, ...]] = {}
    for name, entry in data.items():
        check_lexicon_name(str(name), str(path))
        if isinstance(entry, Mapping) and "slots" in entry:
            if pairs is None:
                raise TemplateError(f"paired lexicon {name!r} cannot be used here",
                                    where=str(path), fix="give it as a plain list")
            pairs[str(name)] = paired_lexicon(str(name), entry["slots"], entry.get("values"),
                                              str(path))
            continue
        values = entry.get("values", []) if isinstance(entry, Mapping) else entry
        if not isinstance(values, list):
            raise TemplateError(f"lexicon {name!r} must be a list of strings", where=str(path),
                                fix="write it as a YAML list")
        out[str(name)] = _clean(values, str(name), str(path))
    return out


_BUILTIN_CACHE: dict[str, tuple[str, ...]] | None = None
_BUILTIN_PAIRS: dict[str, PairedLexicon] = {}


def builtin_lexicons() -> dict[str, tuple[str, ...]]:
    """Return the built-in lexicons (every ``formalize/lexicons/*.yaml``), name -> values.

    Raises:
        TemplateError: the built-in lexicon folder is missing or holds no ``.yaml`` file (a
            broken installation), rather than silently offering no lexicons.
    """
    global _BUILTIN_CACHE
    if _BUILTIN_CACHE is None:
        paths = sorted(BUILTIN_LEXICON_DIR.glob("*.yaml")) if BUILTIN_LEXICON_DIR.is_dir() else []
        if not paths:
            raise TemplateError(
                "the built-in lexicons are missing (no formalize/lexicons/*.yaml in the "
                "installed package)", where=str(BUILTIN_LEXICON_DIR),
                fix="reinstall synthcheck (pip install --force-reinstall synthcheck), or set "
                    "'builtin_lexicons: false' in the suite and define every lexicon it uses")
        merged: dict[str, tuple[str, ...]] = {}
        for path in paths:
            merged.update(read_lexicon_yaml(path, _BUILTIN_PAIRS))
        _BUILTIN_CACHE = merged
    return dict(_BUILTIN_CACHE)


def builtin_pairs() -> dict[str, PairedLexicon]:
    """Return the built-in paired lexicons (e.g. ``TIME_ENTITY_SL``), name -> lexicon."""
    builtin_lexicons()
    return dict(_BUILTIN_PAIRS)


class LexiconSet:
    """Lexicons by name, plus slot aliases that union several lexicons.

    ``domain(lexicon)`` returns the values a slot drawing from ``lexicon`` can take, each with
    the lexicon it came from (so a gold label can depend on the source of a fill). A slot of
    a paired lexicon (``pairs``) is a name of its own whose domain is its column; the
    template compiler fills the slots of one pair together (:meth:`pair_of`).
    """

    def __init__(self, lexicons: Mapping[str, Iterable[str]],
                 aliases: Mapping[str, list[str]] | None = None, where: str = "suite",
                 pairs: Mapping[str, PairedLexicon] | None = None) -> None:
        self.where = where
        self.lexicons: dict[str, tuple[str, ...]] = {
            name: _clean(values, name, where) for name, values in lexicons.items()}
        self.aliases: dict[str, list[str]] = dict(aliases or {})
        self.pairs: dict[str, PairedLexicon] = dict(pairs or {})
        self._members: dict[str, PairedLexicon] = {}
        for pair in self.pairs.values():
            for slot in pair.slots:
                other = self._members.get(slot)
                if other is not None or slot in self.lexicons or slot in self.aliases:
                    by = f"paired lexicon {other.name!r}" if other else "a lexicon or alias"
                    raise TemplateError(
                        f"paired lexicon {pair.name!r} fills slot {slot!r}, which {by} "
                        f"also defines", where=where,
                        fix="rename one of them: a slot name fills from one place only")
                self._members[slot] = pair
        self._domains: dict[str, tuple[tuple[str, str], ...]] = {}

    def names(self) -> list[str]:
        """Return every lexicon, alias and paired slot name, sorted."""
        return sorted(set(self.lexicons) | set(self.aliases) | set(self._members))

    def __contains__(self, name: object) -> bool:
        return name in self.lexicons or name in self.aliases or name in self._members

    def pair_of(self, name: str) -> str | None:
        """The paired lexicon whose slot ``name`` is, or None."""
        pair = self._members.get(name)
        return pair.name if pair is not None else None

    def values(self, name: str, where: str | None = None) -> tuple[str, ...]:
        """Return the values of a lexicon or alias (see :meth:`domain`)."""
        return tuple(v for v, _ in self.domain(name, where))

    def domain(self, name: str, where: str | None = None) -> tuple[tuple[str, str], ...]:
        """Return ``(value, source lexicon)`` pairs for a lexicon or alias, duplicates removed.

        Raises:
            TemplateError: ``name`` is neither a lexicon nor an alias (with "did you mean").
        """
        if name in self._domains:
            return self._domains[name]
        if name in self.aliases:
            pairs: dict[str, str] = {}
            for source in self.aliases[name]:
                if source == name and source not in self.lexicons:
                    raise TemplateError(
                        f"slot alias {name!r} names itself; an alias lists lexicons, not "
                        f"other aliases", where=where or self.where,
                        fix=f"list the lexicons {name!r} draws from (e.g. {name}: "
                            f"[POS_ADJ, NEG_ADJ]), or rename the alias")
                if source not in self.lexicons:
                    raise TemplateError(
                        f"slot alias {name!r} names unknown lexicon {source!r}",
                        where=where or self.where,
                        fix=did_you_mean(source, sorted(self.lexicons)))
                for value in self.lexicons[source]:
                    pairs.setdefault(value, source)
            dom = tuple(pairs.items())
        elif name in self.lexicons:
            dom = tuple((v, name) for v in self.lexicons[name])
        elif name in self._members:
            dom = tuple((v, name) for v in self._members[name].column(name))
        else:
            raise TemplateError(f"unknown lexicon {name!r}", where=where or self.where,
                                fix=did_you_mean(name, self.names()) + renamed_hint(name) +
                                "; define it under 'lexicons:' in the suite")
        self._domains[name] = dom
        return dom
