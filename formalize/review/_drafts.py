"""What happens to a draft template: try it against task models (a run's are loaded by
``synthcheck.load_run_scorers``), turn accepted drafts into a suite, and append them to a
suite file (its text kept, the new tests added at the end).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from formalize.review._propose import TemplateDraft
from synth.core import TemplateError, write_text_atomic


# -- trying and accepting drafts -------------------------------------------------------
def draft_suite(tests: Sequence[Mapping[str, Any]], labels: Sequence[str], *,
                name: str = "draft", lexicons: Mapping[str, Sequence[str]] | None = None) -> Any:
    """A Suite (built-in lexicons plus ``lexicons``) holding ``tests``, checked."""
    from formalize._suite import Suite

    data: dict[str, Any] = {"name": name, "labels": list(labels), "tests": list(tests)}
    if lexicons:
        data["lexicons"] = {k: list(v) for k, v in lexicons.items()}
    return Suite.from_dict(data, source=f"<{name}>")


def run_draft(draft: TemplateDraft | str, scorers: Mapping[str, Any], labels: Sequence[str], *,
              label: str | None = None, sample: int | None = None,
              lexicons: Mapping[str, Sequence[str]] | None = None, seed: int = 0) -> Any:
    """Expand one draft (or template text) as an MFT test and run it with TemplateRunner;
    return the VerifyResult (``result.format_table()``, ``result.cases``)."""
    from formalize._runner import TemplateRunner

    if isinstance(draft, str):
        draft = TemplateDraft(draft, 0, (), (), (), 0, None)
    if draft.new_lexicons:  # a merged draft's own FILL lexicon
        lexicons = {**(lexicons or {}), **dict(draft.new_lexicons)}
    suite = draft_suite([draft.to_test("draft", label=label)], labels, lexicons=lexicons)
    return TemplateRunner(sample=sample, seed=seed).run(suite, dict(scorers))


def append_tests(suite_path: str | Path, tests: Sequence[Mapping[str, Any]], *,
                 labels: Sequence[str] | None = None, name: str | None = None,
                 lexicons: Mapping[str, Sequence[str]] | None = None) -> Any:
    """Append tests to a suite file (created when missing) and return the loaded Suite.

    ``lexicons`` are new lexicons the tests need (a merged draft's own ``FILL``): they are
    added to the suite's ``lexicons:``, and a name the suite already defines is refused.

    The file is checked as a whole before it is replaced (atomically), so a duplicate test
    name or a bad template leaves it untouched. Existing tests are kept; so are comments,
    when ``tests:`` is the file's last top-level key (else the file is re-written as YAML).

    Raises:
        TemplateError: the result would not load (names the problem), or a new file needs
            ``labels``.
    """
    import yaml

    from formalize._suite import Suite, dump_suite_yaml, load_suite

    path = Path(suite_path)
    new = [dict(t) for t in tests]
    if path.is_file():
        from synth.core import load_yaml, read_text

        # load_yaml: one line naming the file and line (not PyYAML's multi-line text), and
        # the size, alias and encoding checks of every other YAML the project reads.
        data, _ = load_yaml(path)
        old_text = read_text(path, kind="suite file")
        if not isinstance(data, dict) or not isinstance(data.get("tests", []), list):
            raise TemplateError("suite file has no 'tests' list", where=str(path),
                                fix="append to a suite file (name:, labels:, tests:)")
        merged = {**data, "tests": list(data.get("tests") or []) + new}
        text = _append_text(old_text, data, new) or dump_suite_yaml(merged)
        if lexicons:
            have = dict(data.get("lexicons") or {})
            taken = sorted(set(have) & set(lexicons))
            if taken:
                raise TemplateError(f"the suite already defines lexicon {taken[0]!r}",
                                    where=str(path), fix="rename the draft's own lexicon "
                                    "(TemplateDraft.renamed(suite.lexicons.names()))")
            merged = {**data, "lexicons": {**have, **{k: list(v) for k, v in
                                                      lexicons.items()}},
                      "tests": merged["tests"]}
            text = _add_lexicons_text(text, data, lexicons) or dump_suite_yaml(merged)
        if yaml.safe_load(text) != merged:
            text = dump_suite_yaml(merged)
    else:
        if not labels:
            raise TemplateError("a new suite file needs the task's labels", where=str(path),
                                fix="pass labels=[...] (the CLI takes them from the run)")
        merged = {"name": name or path.stem, "labels": list(labels), "tests": new}
        if lexicons:
            merged = {"name": merged["name"], "labels": merged["labels"],
                      "lexicons": {k: list(v) for k, v in lexicons.items()}, "tests": new}
        text = dump_suite_yaml(merged)
    Suite.from_dict(merged, source=str(path), base_dir=path.parent)  # refuse before writing
    write_text_atomic(path, text)
    return load_suite(path)


def _append_text(old_text: str, data: dict[str, Any], new: list[dict[str, Any]]) -> str | None:
    """The old text with ``new`` appended as block-list items, or None if the layout does not
    allow it (``tests`` not last, a flow list, or no items to copy the indent from)."""
    import yaml

    if not data.get("tests") or list(data)[-1] != "tests":
        return None
    node = yaml.compose(old_text)
    seq = next((v for k, v in node.value if k.value == "tests"), None)
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style:
        return None
    indent = " " * seq.start_mark.column
    items = yaml.safe_dump(new, sort_keys=False, allow_unicode=True, width=100)
    block = "".join(indent + line if line.strip() else line
                    for line in items.splitlines(keepends=True))
    return old_text.rstrip("\n") + "\n" + block


def _add_lexicons_text(text: str, data: dict[str, Any],
                       lexicons: Mapping[str, Sequence[str]]) -> str | None:
    """``text`` with ``lexicons`` added as flow lists at the end of its block ``lexicons:``
    mapping, or as a new ``lexicons:`` block before ``tests:`` (comments kept); None where
    the layout does not allow it (the caller re-writes the file as YAML)."""
    import yaml

    node = yaml.compose(text)
    lines = text.splitlines(keepends=True)
    entries = {k: list(v) for k, v in lexicons.items()}
    if data.get("lexicons"):
        lex = next((v for k, v in node.value if k.value == "lexicons"), None)
        if not isinstance(lex, yaml.MappingNode) or lex.flow_style or not lex.value:
            return None
        indent = " " * lex.value[0][0].start_mark.column
        at = lex.end_mark.line if lex.end_mark.column == 0 else lex.end_mark.line + 1
    elif "lexicons" not in data:
        key = next((k for k, _ in node.value if k.value == "tests"), None)
        if key is None or key.start_mark.column != 0:
            return None
        indent, at = "  ", key.start_mark.line
        lines.insert(at, "lexicons:\n")
        at += 1
    else:
        return None
    block = [f"{indent}{k}: {yaml.safe_dump(v, default_flow_style=True, width=10**6).strip()}\n"
             for k, v in entries.items()]
    lines[at:at] = block
    return "".join(lines)
