"""HateCheck: ``test_suite_cases.csv`` and ``template_placeholders.csv``."""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from formalize._expand import Case, CompiledTemplate
from formalize._lexicons import LexiconSet
from formalize._suite import Suite
from formalize._template import Slot, Text, parse_template
from formalize.formats._base import (
    Exported,
    Format,
    check_imported_labels,
    csv_text,
    gold_tests,
    read_csv,
)
from synth.core import DataError, TemplateError, read_text, write_text_atomic

HATECHECK_COLUMNS = ["functionality", "case_id", "test_case", "label_gold", "target_ident",
                     "direction", "focus_words", "focus_lemma", "ref_case_id", "ref_templ_id",
                     "templ_id", "case_templ"]
_BRACKET = re.compile(r"\[(?:(a|A):)?([A-Za-z_][A-Za-z0-9_]*)\]")


_ARTICLE_BEFORE = re.compile(r"\b(a|an|A|An) \{([A-Za-z_][A-Za-z0-9_]*)\}")
_SENTENCE_START = re.compile(r"(^|[.!?] +)\{([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDERS_NAME = "template_placeholders.csv"
_ROW = "_row"  # the meta key holding a case row's position in the published file


def _bracket_template(template: str | None, text: str) -> str:
    """Our template syntax -> HateCheck's ``[PLACEHOLDER]`` syntax (``{a:X}`` -> ``[a:X]``;
    ``{Cap:X}`` -> ``[X]``, as HateCheck writes a capitalised placeholder)."""
    if template is None:
        return text
    out = []
    for node in parse_template(template):
        if isinstance(node, Text):
            out.append(node.value)
        elif node.article in ("a", "A"):
            out.append(f"[{node.article}:{node.key}]")
        else:
            out.append(f"[{node.key}]")
    return "".join(out)


def _from_bracket(template: str) -> str:
    """HateCheck's ``[PLACEHOLDER]`` syntax -> ours (literal braces escaped)."""
    escaped = template.replace("{", "{{").replace("}", "}}")
    return _BRACKET.sub(lambda m: "{" + (f"{m.group(1)}:" if m.group(1) else "") + m.group(2) + "}",
                        escaped)


def _variants(template: str) -> list[str]:
    """``template`` and the readings HateCheck's cases need: a literal "a"/"an" before a
    placeholder as article agreement (``a {X}`` -> ``{a:X}``), a placeholder at a sentence
    start capitalised (``{X} are`` -> ``{Cap:X} are``), and both."""
    def article(t: str) -> str:
        return _ARTICLE_BEFORE.sub(
            lambda m: "{" + ("A" if m.group(1)[0] == "A" else "a") + ":" + m.group(2) + "}", t)

    def cap(t: str) -> str:
        return _SENTENCE_START.sub(lambda m: m.group(1) + "{Cap:" + m.group(2) + "}", t)

    out = [template, article(template), cap(template), cap(article(template))]
    return list(dict.fromkeys(out))


def _expand_all(template: str, lexicons: LexiconSet) -> set[str] | None:
    """All texts of a template, or None if a placeholder is unknown or it is too large."""
    try:
        nodes = parse_template(template)
        domains = {n.key: lexicons.domain(n.lexicon) for n in nodes if isinstance(n, Slot)}
    except TemplateError:
        return None
    compiled = CompiledTemplate.build(template, nodes, domains)
    if compiled.size > 1_000_000:
        return None
    return {compiled.render(c) for c in compiled.combos()}


def _recover(case_templ: str, texts: Sequence[str], lexicons: LexiconSet) -> str | None:
    """The template (ours) whose full expansion is exactly ``texts`` (stripped), or None.

    HateCheck's texts mostly end with a space its templates lack, capitalise a placeholder at
    a sentence start and agree "a"/"an" with the fill: each reading is tried in turn."""
    ours = _from_bracket(case_templ.strip())
    if not any(isinstance(n, Slot) for n in parse_template(ours)):
        return None
    wanted = [t.strip() for t in texts]
    if len(set(wanted)) != len(wanted):
        return None
    for candidate in _variants(ours):
        if _expand_all(candidate, lexicons) == set(wanted):
            return candidate
    return None


def _target(case: Case) -> str:
    """A new row's ``target_ident``: the first fill from a group/identity lexicon."""
    return next((v for _k, s, v in case.fills
                 if s.upper().startswith(("GROUP", "IDENTITY"))), "")


def export_hatecheck(suite: Suite, out_dir: str | Path, *, sample: int | None = None,
                     seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write ``test_suite_cases.csv`` and ``template_placeholders.csv`` into ``out_dir``.

    Only tests with gold labels (MFT, contrast) are written; returns the names of the tests
    left out. A case imported from HateCheck is written as the row(s) it came from (every
    column, its case id, at its published position); other cases follow with new ids:
    ``{NOUN}`` becomes ``[NOUN]`` and ``{a:NOUN}`` becomes ``[a:NOUN]``.
    """
    kept, skipped = gold_tests(suite)
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    meta = suite.spec.meta.get("hatecheck", {})
    columns: list[str] = list(meta.get("columns") or ["", *HATECHECK_COLUMNS])
    published: list[tuple[int, list[str]]] = []
    new: list[dict[str, Any]] = []
    used: dict[str, None] = {}  # lexicon names in first-use order
    templ_ids: dict[tuple[str, str], int] = {}
    for test in kept:
        for case in test.cases(sample, seed):
            if case.meta:
                published += [(int(m[_ROW]), [m.get(c, "") for c in columns])
                              for m in case.meta]
                continue
            for _key, source, _ in case.fills:
                used.setdefault(source, None)
            tkey = (test.name, case.template or case.text)
            new.append({"functionality": test.name, "test_case": case.text,
                        "label_gold": case.label or "", "target_ident": _target(case),
                        "templ_id": templ_ids.setdefault(tkey, len(templ_ids) + 1),
                        "case_templ": _bracket_template(case.template, case.text)})
    published.sort(key=lambda r: r[0])
    rows = [values for _, values in published]
    if new:
        ids = [int(r[columns.index("case_id")]) for r in rows
               if "case_id" in columns and r[columns.index("case_id")].isdigit()]
        templ_base = max([int(r[columns.index("templ_id")]) for r in rows
                          if "templ_id" in columns and r[columns.index("templ_id")].isdigit()],
                         default=0)
        next_id = max(ids, default=0) + 1
        for k, row in enumerate(new):
            row.update(case_id=next_id + k, templ_id=templ_base + row["templ_id"])
            row[""] = len(rows)
            rows.append([str(row.get(c, "")) for c in columns])
    newline = meta.get("newline", "\n")
    out = Path(out_dir)
    write_text_atomic(out / "test_suite_cases.csv",
                      _layout(csv_text(columns, rows, newline=newline), meta))
    write_text_atomic(out / "template_placeholders.csv",
                      _placeholders_text(suite, meta.get("placeholders") or {}, used))
    return skipped


def _placeholders_text(suite: Suite, meta: dict[str, Any], used: dict[str, None]) -> str:
    """``template_placeholders.csv``: the imported rows (as published, where the lexicon still
    holds those values), then every other lexicon the new rows use."""
    columns = list(meta.get("columns") or ["Placeholder", "Values"])
    rows: list[list[str]] = []
    written: set[str] = set()
    for raw in meta.get("rows", []):
        row = dict(zip(columns, raw, strict=False))
        lex = row.get("Placeholder", "").strip().strip("[]")
        written.add(lex)
        if lex in suite.lexicons and lex in used:
            current = list(suite.lexicons.values(lex))
            if _split_values(row.get("Values", "")) != current:
                row["Values"] = _join_values(suite, lex)
        rows.append([row.get(c, "") for c in columns])
    for lex in used:
        if lex not in written:
            rows.append([{"Placeholder": f"[{lex}]", "Values": _join_values(suite, lex)}.get(c, "")
                         for c in columns])
    return _layout(csv_text(columns, rows, newline=meta.get("newline", "\n")), meta)


def _join_values(suite: Suite, lex: str) -> str:
    values = suite.lexicons.values(lex)
    bad = [v for v in values if "," in v]
    if bad:
        raise TemplateError(f"lexicon {lex!r} has a value with a comma ({bad[0]!r}), which "
                            "HateCheck's placeholder file cannot hold", where=suite.source,
                            fix="remove the comma or export as native-cases")
    return ",".join(values)


def _split_values(raw: str) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in (raw or "").split(",") if v.strip()))


def read_hatecheck_placeholders(path: str | Path, encoding: str = "utf-8"
                                ) -> dict[str, list[str]]:
    """Read ``template_placeholders.csv`` (Placeholder, Values): ``[NAME]`` -> values."""
    rows = read_csv(path, ["Placeholder", "Values"], "HateCheck placeholders", encoding)
    return {row["Placeholder"].strip().strip("[]"): _split_values(row["Values"]) for row in rows}


def _raw_table(path: Path, encoding: str = "utf-8"
               ) -> tuple[list[str], list[list[str]], str, bool]:
    """A CSV file's header, rows (as written), line ending and whether its last line ends
    with one (HateCheck's published ``template_placeholders.csv`` does not)."""
    text = read_text(path, encoding, kind="HateCheck CSV", field="--encoding")
    newline = "\r\n" if "\r\n" in text else "\n"
    table = list(csv.reader(io.StringIO(text, newline="")))
    return (table[0] if table else []), table[1:], newline, text.endswith(("\n", "\r"))


def _file_meta(newline: str, final_newline: bool) -> dict[str, Any]:
    """The layout keys kept in the suite's ``meta`` (``final_newline`` only when absent, so
    suites imported from ordinary files stay as they were)."""
    return {"newline": newline} if final_newline else {"newline": newline, "final_newline": False}


def _layout(text: str, meta: dict[str, Any]) -> str:
    """``text`` without its last line ending when the imported file had none."""
    if meta.get("final_newline", True) is False:
        return text[: -len(meta.get("newline", "\n"))] if text.endswith(("\n", "\r")) else text
    return text


def import_hatecheck(cases_csv: str | Path, placeholders_csv: str | Path | None = None, *,
                     name: str = "hatecheck", labels: Sequence[str] | None = None,
                     encoding: str = "utf-8") -> dict[str, Any]:
    """Read HateCheck's ``test_suite_cases.csv`` (and placeholders) into suite data.

    One MFT test per functionality. A template whose full expansion reproduces exactly its
    cases (one gold label; texts compared without HateCheck's trailing spaces, placeholders
    read with sentence-initial capitals and "a"/"an" agreement where that is what matches) is
    kept as a template; every other case is kept verbatim, so the suite produces every case
    of the file, no more and no fewer. Texts are scored stripped of surrounding spaces. Every
    column of every row is kept as case metadata (``case_meta``) and the headers in the
    suite's ``meta``, so :func:`export_hatecheck` reproduces both files.

    Warns (``UserWarning``) when ``case_templ`` holds placeholders but no placeholder file
    was given: those cases are then kept verbatim.

    Raises:
        DataError: a file is missing or lacks a required column.
    """
    rows = read_csv(cases_csv, ["functionality", "test_case", "label_gold", "case_templ"],
                     "HateCheck cases", encoding)
    header, _, newline, final_nl = _raw_table(Path(cases_csv), encoding)
    lexicons = (read_hatecheck_placeholders(placeholders_csv, encoding) if placeholders_csv
                else {})
    if placeholders_csv is None:
        n = sum(1 for r in rows if _BRACKET.search(r["case_templ"] or ""))
        if n:
            warnings.warn(
                f"{cases_csv}: {n:,} cases come from templates with placeholders, but no "
                f"template_placeholders.csv was found beside it, so they are imported as "
                f"plain cases; pass --placeholders to keep them as templates", stacklevel=2)
    lexset = LexiconSet({k: v for k, v in lexicons.items() if v})
    all_labels = list(labels) if labels else sorted({r["label_gold"] for r in rows})
    by_func: dict[str, dict[str, list[dict[str, str]]]] = {}
    for k, row in enumerate(rows):
        row[_ROW] = str(k)
        by_func.setdefault(row["functionality"], {}).setdefault(row["case_templ"], []).append(row)
    tests = []
    for func, templ_groups in by_func.items():
        label_counts = Counter(r["label_gold"] for g in templ_groups.values() for r in g)
        main_label = label_counts.most_common(1)[0][0]
        templates, cases = [], []
        case_meta: dict[str, list[dict[str, str]]] = {}
        for templ, group in templ_groups.items():
            labels_here = {r["label_gold"] for r in group}
            recovered = (_recover(templ, [r["test_case"] for r in group], lexset)
                         if labels_here == {main_label} and lexset.names() else None)
            if recovered is not None:
                templates.append(recovered)
            else:
                cases += [{"text": r["test_case"].strip(), "label": r["label_gold"]}
                          for r in group]
            for r in group:
                row_meta = {c: r.get(c) or "" for c in header}
                row_meta[_ROW] = r[_ROW]
                case_meta.setdefault(r["test_case"].strip(), []).append(row_meta)
        test: dict[str, Any] = {"name": func, "capability": func.split("_")[0], "type": "mft",
                                "label": main_label}
        if templates:
            test["templates"] = templates
        if cases:
            test["cases"] = [c if c["label"] != main_label else c["text"] for c in cases]
        test["case_meta"] = case_meta
        tests.append(test)
    meta: dict[str, Any] = {"columns": header, **_file_meta(newline, final_nl)}
    if placeholders_csv is not None:
        ph_header, ph_rows, ph_newline, ph_final = _raw_table(Path(placeholders_csv), encoding)
        meta["placeholders"] = {"columns": ph_header, "rows": ph_rows,
                                **_file_meta(ph_newline, ph_final)}
    return check_imported_labels(
        {"name": name, "labels": all_labels, "builtin_lexicons": False,
         "lexicons": {k: v for k, v in lexicons.items() if v}, "tests": tests,
         "meta": {"hatecheck": meta}}, cases_csv, "HateCheck cases")


class HateCheck(Format):
    """HateCheck's two CSV files (gold-label tests only)."""

    name = "hatecheck"
    description = "HateCheck's test_suite_cases.csv and template_placeholders.csv"
    out_help = "a folder: test_suite_cases.csv and template_placeholders.csv"
    out_files = ("test_suite_cases.csv", PLACEHOLDERS_NAME)

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write both files into the folder ``out`` (see :func:`export_hatecheck`)."""
        skipped = export_hatecheck(suite, out, sample=sample, seed=seed, max_cases=max_cases)
        return Exported(f"wrote {out}/test_suite_cases.csv and template_placeholders.csv",
                        skipped)

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = (), encoding: str = "utf-8") -> dict[str, Any]:
        """Read ``test_suite_cases.csv`` (``path``, or the folder holding it) and the
        placeholders (default: ``template_placeholders.csv`` next to it, if present)."""
        inp = Path(path)
        cases = inp / "test_suite_cases.csv" if inp.is_dir() else inp
        if placeholders and not Path(placeholders).is_file():
            raise DataError("HateCheck placeholders file not found", where=str(placeholders),
                            fix="check the --placeholders path (or leave it out to use "
                                "template_placeholders.csv beside the cases)")
        ph = Path(placeholders) if placeholders else cases.parent / PLACEHOLDERS_NAME
        return import_hatecheck(cases, ph if ph.is_file() else None, name=name, labels=labels,
                                encoding=encoding)
