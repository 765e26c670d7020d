"""docs/architecture.md's module tree names exactly the modules the packages hold.

Run as a script, it prints the tree (paste it into the doc):
``python tests/synthcheck/test_architecture_doc.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("synth", "discovery", "formalize", "synthcheck")
DOC = ROOT / "docs" / "architecture.md"
TREE_LINE = re.compile(r"^((?:synth|discovery|formalize|synthcheck)/\S+\.py)\b")


def modules() -> list[str]:
    """Every module of the four packages, as a path from the repository root."""
    return sorted(str(p.relative_to(ROOT)) for pkg in PACKAGES
                  for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def summary(path: str) -> str:
    """The first line of a module's docstring (empty without one)."""
    doc = ast.get_docstring(ast.parse((ROOT / path).read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def tree() -> str:
    """The tree the doc holds: one module a line, with its docstring's first line."""
    width = max(len(m) for m in modules()) + 2

    def cut(text: str) -> str:
        room = 100 - width
        return text if len(text) <= room else text[:room - 3].rstrip() + "..."
    return "\n".join(f"{m:<{width}}{cut(summary(m))}".rstrip() for m in modules())


def documented() -> list[str]:
    """The module paths the doc's tree names."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## The tree", 1)[1]
    return sorted(m.group(1) for line in block.splitlines() if (m := TREE_LINE.match(line)))


def test_the_tree_names_every_module_and_only_those() -> None:
    named, present = set(documented()), set(modules())
    assert sorted(named - present) == [], "the tree names modules that do not exist"
    assert sorted(present - named) == [], "the tree misses modules"


def test_the_tree_names_each_module_once() -> None:
    names = documented()
    assert len(names) == len(set(names))


if __name__ == "__main__":
    print(tree())
