"""HateCheck: ``test_suite_cases.csv`` and ``template_placeholders.csv``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from formalize._expand import CompiledTemplate
from formalize._lexicons import LexiconSet
from formalize._suite import Suite
from formalize._template import Slot, Text, parse_template
from formalize.formats._base import Exported, Format, csv_text, gold_tests, read_csv
from synth.core import TemplateError, write_text_atomic

HATECHECK_COLUMNS = ["functionality", "case_id", "test_case", "label_gold", "target_ident",
                     "direction", "focus_words", "focus_lemma", "ref_case_id", "ref_templ_id",
                     "templ_id", "case_templ"]
_BRACKET = re.compile(r"\[(?:(a|A):)?([A-Za-z_][A-Za-z0-9_]*)\]")


def _bracket_template(template: str | None, text: str) -> str:
    """Our template syntax -> HateCheck's ``[PLACEHOLDER]`` syntax."""
    if template is None:
        return text
    out = []
    for node in parse_template(template):
        if isinstance(node, Text):
            out.append(node.value)
        else:
            out.append(f"[{node.article}:{node.key}]" if node.article else f"[{node.key}]")
    return "".join(out)


def _from_bracket(template: str) -> str:
    """HateCheck's ``[PLACEHOLDER]`` syntax -> ours (literal braces escaped)."""
    escaped = template.replace("{", "{{").replace("}", "}}")
    return _BRACKET.sub(lambda m: "{" + (f"{m.group(1)}:" if m.group(1) else "") + m.group(2) + "}",
                        escaped)


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


def export_hatecheck(suite: Suite, out_dir: str | Path, *, sample: int | None = None,
                     seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write ``test_suite_cases.csv`` and ``template_placeholders.csv`` into ``out_dir``.

    Only tests with gold labels (MFT, contrast) are written; returns the names of the tests
    left out. ``{NOUN}`` becomes ``[NOUN]`` and ``{a:NOUN}`` becomes ``[a:NOUN]``.
    """
    kept, skipped = gold_tests(suite)
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    rows: list[list[Any]] = []
    used: dict[str, None] = {}  # lexicon names in first-use order
    templ_ids: dict[tuple[str, str], int] = {}
    for test in kept:
        for case in test.cases(sample, seed):
            for key, _source, _ in case.fills:
                lex = re.sub(r"[0-9]+$", "", key)
                if case.template is not None:
                    used.setdefault(lex, None)
            tkey = (test.name, case.template or case.text)
            templ_id = templ_ids.setdefault(tkey, len(templ_ids) + 1)
            target = next((v for k, s, v in case.fills if s.startswith("GROUP")), "")
            rows.append([len(rows), test.name, len(rows) + 1, case.text, case.label, target,
                         "", "", "", "", "", templ_id,
                         _bracket_template(case.template, case.text)])
    ph_rows: list[list[str]] = []
    for lex in used:
        values = suite.lexicons.values(lex)
        bad = [v for v in values if "," in v]
        if bad:
            raise TemplateError(f"lexicon {lex!r} has a value with a comma ({bad[0]!r}), which "
                                "HateCheck's placeholder file cannot hold", where=suite.source,
                                fix="remove the comma or export as native-cases")
        ph_rows.append([f"[{lex}]", ",".join(values)])
    out = Path(out_dir)
    write_text_atomic(out / "test_suite_cases.csv", csv_text(["", *HATECHECK_COLUMNS], rows))
    write_text_atomic(out / "template_placeholders.csv", csv_text(["Placeholder", "Values"],
                                                                   ph_rows))
    return skipped


def read_hatecheck_placeholders(path: str | Path) -> dict[str, list[str]]:
    """Read ``template_placeholders.csv`` (Placeholder, Values): ``[NAME]`` -> values."""
    rows = read_csv(path, ["Placeholder", "Values"], "HateCheck placeholders")
    out: dict[str, list[str]] = {}
    for row in rows:
        name = row["Placeholder"].strip().strip("[]")
        out[name] = [v.strip() for v in (row["Values"] or "").split(",") if v.strip()]
    return out


def import_hatecheck(cases_csv: str | Path, placeholders_csv: str | Path | None = None, *,
                     name: str = "hatecheck", labels: Sequence[str] | None = None
                     ) -> dict[str, Any]:
    """Read HateCheck's ``test_suite_cases.csv`` (and placeholders) into suite data.

    One MFT test per functionality. A template whose full expansion reproduces exactly its
    cases (one gold label) is kept as a template; every other case is kept verbatim, so the
    suite produces every case of the file, no more and no fewer.

    Raises:
        DataError: a file is missing or lacks a required column.
    """
    rows = read_csv(cases_csv, ["functionality", "test_case", "label_gold", "case_templ"],
                     "HateCheck cases")
    lexicons = read_hatecheck_placeholders(placeholders_csv) if placeholders_csv else {}
    lexset = LexiconSet({k: v for k, v in lexicons.items() if v})
    all_labels = list(labels) if labels else sorted({r["label_gold"] for r in rows})
    by_func: dict[str, dict[str, list[dict[str, str]]]] = {}
    for row in rows:
        by_func.setdefault(row["functionality"], {}).setdefault(row["case_templ"], []).append(row)
    tests = []
    for func, templ_groups in by_func.items():
        label_counts = Counter(r["label_gold"] for g in templ_groups.values() for r in g)
        main_label = label_counts.most_common(1)[0][0]
        templates, cases = [], []
        for templ, group in templ_groups.items():
            ours = _from_bracket(templ)
            texts = [r["test_case"] for r in group]
            labels_here = {r["label_gold"] for r in group}
            if (ours != templ.replace("{", "{{").replace("}", "}}") and labels_here == {main_label}
                    and _expand_all(ours, lexset) == set(texts) and len(set(texts)) == len(texts)):
                templates.append(ours)
            else:
                cases += [{"text": r["test_case"], "label": r["label_gold"]} for r in group]
        test: dict[str, Any] = {"name": func, "capability": func.split("_")[0], "type": "mft",
                                "label": main_label}
        if templates:
            test["templates"] = templates
        if cases:
            test["cases"] = [c if c["label"] != main_label else c["text"] for c in cases]
        tests.append(test)
    return {"name": name, "labels": all_labels, "builtin_lexicons": False,
            "lexicons": {k: v for k, v in lexicons.items() if v}, "tests": tests}


class HateCheck(Format):
    """HateCheck's two CSV files (gold-label tests only)."""

    name = "hatecheck"
    description = "HateCheck's test_suite_cases.csv and template_placeholders.csv"
    out_help = "a folder: test_suite_cases.csv and template_placeholders.csv"

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write both files into the folder ``out`` (see :func:`export_hatecheck`)."""
        skipped = export_hatecheck(suite, out, sample=sample, seed=seed, max_cases=max_cases)
        return Exported(f"wrote {out}/test_suite_cases.csv and template_placeholders.csv",
                        skipped)

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = ()) -> dict[str, Any]:
        """Read ``test_suite_cases.csv`` (``path``, or the folder holding it) and the
        placeholders (default: ``template_placeholders.csv`` next to it, if present)."""
        inp = Path(path)
        cases = inp / "test_suite_cases.csv" if inp.is_dir() else inp
        ph = Path(placeholders) if placeholders else cases.parent / "template_placeholders.csv"
        return import_hatecheck(cases, ph if ph.is_file() else None, name=name, labels=labels)
