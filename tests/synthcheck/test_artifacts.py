"""Run-directory files are declared once (``synth.core.ARTIFACTS``): no file-name literal
outside the ``artifact(...)`` declarations, and every declared JSON Lines file of a real run
matches its row model.

``python tests/synthcheck/test_artifacts.py [ROOT]`` prints the literals found under ROOT (default:
this checkout), one per line, then their count.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("synth", "discovery", "formalize", "synthcheck")


def declared() -> tuple[set[str], set[str]]:
    """(every declared file's path and own name, e.g. ``scores/reference.jsonl`` and
    ``reference.jsonl``; the top folders of those in folders, e.g. ``scores``)."""
    import discovery  # noqa: F401  (declares its files)
    import formalize  # noqa: F401
    import synthcheck._artifacts  # noqa: F401
    import synthcheck.stages  # noqa: F401  (loads the plug-in finding sources)
    from discovery import finding_sources
    from synth.core import ARTIFACTS

    finding_sources()
    names: set[str] = set()
    folders: set[str] = set()
    for a in ARTIFACTS.values():
        if "." in a.name.lstrip("."):  # a file (a folder's bare name, "corpus", is also a
            # word: it counts only joined with "/", below)
            names |= {x for x in (a.file, a.name) if "{" not in x}
        folders.add(a.file.split("/")[0])
    return names, folders


def _is_declaration(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "artifact") or \
        (isinstance(f, ast.Attribute) and f.attr == "artifact")


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    return []


def literals(root: Path) -> Iterator[str]:
    """``path:line: literal`` for each run-file name written as a literal under ``root``: a
    string equal to a declared file's name, or a declared folder or file pattern joined with
    ``/`` (``run / "scores"``, ``run / f"task-{name}.jsonl"``); declarations are exempt."""
    names, folders = declared()
    patterns = {a.name.split("{")[0] for a in _artifacts() if "{" in a.name}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            exempt: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _is_declaration(node):
                    exempt |= {id(n) for n in ast.walk(node)}
            for node in ast.walk(tree):
                if id(node) in exempt:
                    continue
                hits = []
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and node.value in names:
                    hits.append(node.value)
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                    for s in _strings(node.right):
                        if s in folders or any(s.startswith(p) for p in patterns if p):
                            hits.append(s)
                for s in hits:
                    yield f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}: {s!r}"


def _artifacts() -> list:  # type: ignore[type-arg]
    from synth.core import ARTIFACTS

    return list(ARTIFACTS.values())


def test_no_run_file_name_literal_outside_the_registry() -> None:
    found = sorted(set(literals(REPO)))
    assert found == [], "\n".join(found)


if __name__ == "__main__":
    found = sorted(set(literals(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO)))
    print("\n".join(found))
    print(len(found))
