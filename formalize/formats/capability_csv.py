"""The capability CSV of the published ADE templates: capability, label index, template."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from formalize._suite import Suite
from formalize._template import Slot, Text, parse_template, to_template_text
from formalize.formats._base import Exported, Format, check_imported_labels, csv_text, read_csv
from formalize.types import CompiledTest
from synth.core import DataError, write_text_atomic


def _lowered(test: CompiledTest, spelling: dict[str, str]) -> list[tuple[str, str | None]] | None:
    """The test's (template, label) pairs with slots in lowercase, or as the imported file
    spelled them (``spelling``: our key -> its spelling); None: it has none."""
    pairs = test.gold_templates()
    if pairs is None:
        return None

    def spelt(key: str) -> str:
        return spelling.get(key, key.lower())

    return [(to_template_text(tuple(Slot(spelt(n.key), spelt(n.lexicon), n.article, n.column)
                                    if isinstance(n, Slot) else n for n in nodes)), label)
            for nodes, label in pairs]


def _gold_index(suite: Suite, label: str | None) -> int:
    # Suite checks give every MFT and contrast case a gold label.
    assert label is not None, "an MFT or contrast case without a gold label"
    return suite.labels.index(label)


def export_capability_csv(suite: Suite, path: str | Path) -> list[str]:
    """Write the ADE capability CSV (unnamed index, capability, label, template); labels are
    written as indices into the suite's labels, slots in lowercase (``{drug}``, ``{ade}``).

    Tests with templates (MFT) are written as templates; other gold-label tests (contrast) as
    one row per case (its text, braces escaped, with its gold label). Returns the names of the
    tests left out (INV, DIR and group tests, which have no gold labels)."""
    rows: list[list[Any]] = []
    skipped: list[str] = []
    spelling = dict(suite.spec.meta.get("capability_csv", {}).get("slots", {}))
    for test in suite.tests:
        pairs = _lowered(test, spelling) if test.gold else None
        if pairs is not None:
            for template, label in pairs:
                rows.append([len(rows), test.capability, _gold_index(suite, label), template])
        elif test.gold:
            for case in test.cases():
                rows.append([len(rows), test.capability, _gold_index(suite, case.label),
                             to_template_text((Text(case.text),))])
        else:
            skipped.append(test.name)
    write_text_atomic(path, csv_text(["", "capability", "label", "template"], rows))
    return skipped


def import_capability_csv(path: str | Path, *, name: str = "imported",
                          labels: Sequence[str] | None = None,
                          lexicon_files: Sequence[str] = (), encoding: str = "utf-8"
                          ) -> dict[str, Any]:
    """Read a capability/label/template CSV into suite data: one MFT test per (capability,
    label), named ``capability: label``, its capability as written; slots are upper-cased
    (``{drug}`` -> ``{DRUG}``, ``{time_entity_s}`` -> ``{TIME_ENTITY_S}``) to use the built-in
    lexicons (the paired ``TIME_ENTITY_S``/``TIME_ENTITY_L`` are filled together); the file's
    spelling of each slot is kept in the suite's ``meta`` so export writes it back.

    ``labels`` names the integer labels (``0`` -> labels[0]); without it labels stay as written.

    Raises:
        DataError: the file is missing, lacks a column, or a label is not an index of ``labels``.
    """
    rows = read_csv(path, ["capability", "label", "template"], "capability", encoding)
    groups: dict[tuple[str, str], list[str]] = {}
    spelling: dict[str, str] = {}
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
        for n in nodes:
            if isinstance(n, Slot) and n.key != n.key.lower():
                spelling.setdefault(n.key.upper(), n.key)
        template = to_template_text(tuple(
            Slot(n.key.upper(), n.lexicon.upper(), n.article, n.column)
            if isinstance(n, Slot) else n for n in nodes))
        groups.setdefault((row["capability"], label), []).append(template)
    all_labels = list(labels) if labels else sorted({lab for _, lab in groups})
    tests = [{"name": f"{cap}: {lab}", "capability": cap, "type": "mft", "label": lab,
              "templates": list(dict.fromkeys(tpls))} for (cap, lab), tpls in groups.items()]
    data: dict[str, Any] = {"name": name, "labels": all_labels, "tests": tests}
    if spelling:
        data["meta"] = {"capability_csv": {"slots": spelling}}
    if lexicon_files:
        data["lexicon_files"] = list(lexicon_files)
    return check_imported_labels(data, path, "capability")


class CapabilityCsv(Format):
    """One row per template (gold-label tests only)."""

    name = "capability-csv"
    description = "the ADE capability/label/template CSV"
    takes_lexicon_files = True

    def export(self, suite: Suite, out: str | Path, *, sample: int | None = None,
               seed: int | None = None, max_cases: int | None = None) -> Exported:
        """Write the CSV (templates are written, not cases: sampling does not apply)."""
        return Exported(f"wrote {out}", export_capability_csv(suite, out))

    def import_(self, path: str | Path, *, name: str, labels: Sequence[str] | None = None,
                placeholders: str | Path | None = None,
                lexicon_files: Sequence[str] = (), encoding: str = "utf-8") -> dict[str, Any]:
        """Read the CSV (see :func:`import_capability_csv`)."""
        return import_capability_csv(path, name=name, labels=labels, lexicon_files=lexicon_files,
                                     encoding=encoding)
