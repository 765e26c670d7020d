"""Import and export: native cases JSONL, HateCheck CSVs, the ADE capability CSV, AdaTest."""

from __future__ import annotations

import csv
import io
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from formalize._expand import Case, CompiledTemplate
from formalize._lexicons import LexiconSet
from formalize._spec import ContrastTest, LabelRule, MFTTest
from formalize._suite import Suite
from formalize._template import Slot, Text, parse_template, to_template_text
from synth.core import DataError, TemplateError, write_jsonl, write_text_atomic

HATECHECK_COLUMNS = ["functionality", "case_id", "test_case", "label_gold", "target_ident",
                     "direction", "focus_words", "focus_lemma", "ref_case_id", "ref_templ_id",
                     "templ_id", "case_templ"]
ADATEST_COLUMNS = ["topic", "input", "output", "label", "labeler", "description"]
_GOLD_TYPES = ("mft", "contrast")
_BRACKET = re.compile(r"\[(?:(a|A):)?([A-Za-z_][A-Za-z0-9_]*)\]")


# -- helpers ----------------------------------------------------------------------------
def _csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _read_csv(path: str | Path, required: Sequence[str], what: str) -> list[dict[str, str]]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} file not found", where=str(path), fix="check the path")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        missing = [c for c in required if c not in fields]
        if missing:
            raise DataError(
                f"{what} CSV has no column {', '.join(repr(m) for m in missing)}", where=str(path),
                fix=f"the columns must include {', '.join(required)} (found: "
                    f"{', '.join(f for f in fields if f) or 'none'})")
        return list(reader)


def _gold_tests(suite: Suite) -> tuple[list[Any], list[str]]:
    kept = [t for t in suite.tests if t.type in _GOLD_TYPES]
    skipped = [t.name for t in suite.tests if t.type not in _GOLD_TYPES]
    return kept, skipped


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


# -- native -----------------------------------------------------------------------------
def export_native_cases(suite: Suite, path: str | Path, *, sample: int | None = None,
                        seed: int | None = None, max_cases: int | None = None) -> int:
    """Write every case as flattened JSON Lines (test, capability, type, case_id, text, label,
    fills, ...); loadable by ``pandas.read_json(lines=True)`` and ``datasets``.

    Returns the number of cases written."""
    return write_jsonl(path, (c.to_record() for c in suite.cases(sample, seed, max_cases)))


# -- HateCheck ----------------------------------------------------------------------------
def export_hatecheck(suite: Suite, out_dir: str | Path, *, sample: int | None = None,
                     seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write ``test_suite_cases.csv`` and ``template_placeholders.csv`` into ``out_dir``.

    Only tests with gold labels (MFT, contrast) are written; returns the names of the tests
    left out. ``{NOUN}`` becomes ``[NOUN]`` and ``{a:NOUN}`` becomes ``[a:NOUN]``.
    """
    kept, skipped = _gold_tests(suite)
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
    write_text_atomic(out / "test_suite_cases.csv", _csv_text(["", *HATECHECK_COLUMNS], rows))
    write_text_atomic(out / "template_placeholders.csv", _csv_text(["Placeholder", "Values"],
                                                                   ph_rows))
    return skipped


def read_hatecheck_placeholders(path: str | Path) -> dict[str, list[str]]:
    """Read ``template_placeholders.csv`` (Placeholder, Values): ``[NAME]`` -> values."""
    rows = _read_csv(path, ["Placeholder", "Values"], "HateCheck placeholders")
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
    rows = _read_csv(cases_csv, ["functionality", "test_case", "label_gold", "case_templ"],
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


# -- capability CSV (published ADE templates) ------------------------------------------------
def _split_by_rule(test: Any) -> list[tuple[str, str | None]]:
    """(template text with lowercase slots, label) per template, a fill-dependent label split
    into one template per source lexicon."""
    spec = test.spec
    out: list[tuple[str, str | None]] = []
    for tpl in test.source.templates:
        variants: list[tuple[tuple[Any, ...], str]] = []
        if isinstance(spec.label, LabelRule):
            for source, label in spec.label.map.items():
                nodes = tuple(Slot(source, source, n.article, n.column)
                              if isinstance(n, Slot) and n.key == spec.label.by else n
                              for n in tpl.nodes)
                if any(s == source for _, s in tpl.domains[tpl.keys.index(spec.label.by)]):
                    variants.append((nodes, label))
        else:
            variants.append((tpl.nodes, spec.label))
        for nodes, label in variants:
            lowered = tuple(Slot(n.key.lower(), n.lexicon.lower(), n.article, n.column)
                            if isinstance(n, Slot) else n for n in nodes)
            out.append((to_template_text(lowered), label))
    fixed = spec.label if isinstance(spec.label, str) else None
    out += [(to_template_text((Text(t),)), fixed) for t in spec.texts]
    out += [(to_template_text((Text(c.text),)), c.label or fixed) for c in spec.cases]
    return out


def _gold_index(suite: Suite, label: str | None) -> int:
    # Suite checks give every MFT and contrast case a gold label.
    assert label is not None, "an MFT or contrast case without a gold label"
    return suite.labels.index(label)


def export_capability_csv(suite: Suite, path: str | Path) -> list[str]:
    """Write the ADE capability CSV (unnamed index, capability, label, template); labels are
    written as indices into the suite's labels, slots in lowercase (``{drug}``, ``{ade}``).

    MFT tests are written as templates; contrast tests as one row per case (its text, braces
    escaped, with its gold label). Returns the names of the tests left out (INV, DIR and
    group tests, which have no gold labels)."""
    rows: list[list[Any]] = []
    skipped: list[str] = []
    for test in suite.tests:
        if isinstance(test.spec, MFTTest):
            for template, label in _split_by_rule(test):
                rows.append([len(rows), test.capability, _gold_index(suite, label), template])
        elif isinstance(test.spec, ContrastTest):
            for case in test.cases():
                rows.append([len(rows), test.capability, _gold_index(suite, case.label),
                             to_template_text((Text(case.text),))])
        else:
            skipped.append(test.name)
    write_text_atomic(path, _csv_text(["", "capability", "label", "template"], rows))
    return skipped


def import_capability_csv(path: str | Path, *, name: str = "imported",
                          labels: Sequence[str] | None = None,
                          lexicon_files: Sequence[str] = ()) -> dict[str, Any]:
    """Read a capability/label/template CSV into suite data: one MFT test per (capability,
    label); slots are upper-cased (``{drug}`` -> ``{DRUG}``) to use the built-in lexicons.

    ``labels`` names the integer labels (``0`` -> labels[0]); without it labels stay as written.

    Raises:
        DataError: the file is missing, lacks a column, or a label is not an index of ``labels``.
    """
    rows = _read_csv(path, ["capability", "label", "template"], "capability")
    groups: dict[tuple[str, str], list[str]] = {}
    for k, row in enumerate(rows, start=2):
        raw = (row["label"] or "").strip()
        if labels:
            try:
                label = labels[int(float(raw))]
            except (ValueError, IndexError):
                raise DataError(f"label {raw!r} is not an index into {list(labels)}",
                                where=f"{path}, line {k}",
                                fix="use 0..n-1, or import without --labels") from None
        else:
            label = raw
        nodes = parse_template(row["template"] or "", where=f"{path}, line {k}")
        template = to_template_text(tuple(
            Slot(n.key.upper(), n.lexicon.upper(), n.article, n.column)
            if isinstance(n, Slot) else n for n in nodes))
        groups.setdefault((row["capability"], label), []).append(template)
    all_labels = list(labels) if labels else sorted({lab for _, lab in groups})
    tests = [{"name": f"{cap}: {lab}", "capability": cap, "type": "mft", "label": lab,
              "templates": list(dict.fromkeys(tpls))} for (cap, lab), tpls in groups.items()]
    data: dict[str, Any] = {"name": name, "labels": all_labels, "tests": tests}
    if lexicon_files:
        data["lexicon_files"] = list(lexicon_files)
    return data


# -- AdaTest ----------------------------------------------------------------------------------
def export_adatest(suite: Suite, path: str | Path, *, sample: int | None = None,
                   seed: int | None = None, max_cases: int | None = None) -> list[str]:
    """Write an AdaTest test tree CSV (id index, topic, input, output, label, labeler,
    description): a topic per ``/capability/test``, a topic marker row for each, and one
    ``pass`` row per case whose output is its gold label. Returns the tests left out."""
    kept, skipped = _gold_tests(suite)
    suite.check_limit(sample, max_cases)
    seed = suite.spec.seed if seed is None else seed
    rows = []

    def clean(s: str) -> str:
        return s.replace("/", " ").strip()

    for test in kept:
        topic = f"/{clean(test.capability)}/{clean(test.name)}"
        rows.append([uuid.uuid5(uuid.NAMESPACE_URL, topic).hex, topic, "", "", "topic_marker",
                     "synthcheck", test.spec.description])
        case: Case
        for case in test.cases(sample, seed):
            rows.append([uuid.uuid5(uuid.NAMESPACE_URL, f"{topic}/{case.case_id}").hex, topic,
                         case.text, case.label, "pass", "synthcheck", ""])
    write_text_atomic(path, _csv_text(["", *ADATEST_COLUMNS], rows))
    return skipped
