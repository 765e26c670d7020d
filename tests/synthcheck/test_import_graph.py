"""The import graph of the four packages, function-body imports included (read with ``ast``,
nothing imported): no cycle between modules, and no floor imports a floor above it
(synth <- discovery <- formalize <- synthcheck).

``python tests/synthcheck/test_import_graph.py [ROOT]`` prints every cycle (strongly connected group
of modules) and upward import under ROOT (default: this checkout), then their counts.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLOORS = ("synth", "discovery", "formalize", "synthcheck")


def modules(root: Path) -> dict[str, Path]:
    """Module name -> file, for every module of the four packages under ``root``."""
    out = {}
    for pkg in FLOORS:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file (``TYPE_CHECKING`` blocks
    left out: they are not run). ``from pkg import x`` counts ``pkg.x`` when that is a
    module, else ``pkg``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for b in node.body for n in ast.walk(b)}
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[:len(pkg) - node.level + 1]
                base = ".".join([*pkg, *([base] if base else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph(root: Path) -> dict[str, set[str]]:
    mods = modules(root)
    known = set(mods)
    return {m: imports(m, p, known) for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted.
    A package's ``__init__`` importing its own modules, which import siblings through the
    package, is not a cycle of modules: edges into a package ``__init__`` from inside it are
    left out."""
    def inside(a: str, b: str) -> bool:
        return a.startswith(b + ".")

    edges = {a: {b for b in bs if not inside(a, b)} for a, bs in g.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def upward(g: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of a floor above ``a``'s."""
    def floor(m: str) -> int:
        return FLOORS.index(m.split(".")[0])

    return sorted(f"{a} -> {b}" for a, bs in g.items() for b in bs if floor(b) > floor(a))


def test_no_import_cycle() -> None:
    assert cycles(graph(REPO)) == []


def test_no_floor_imports_a_floor_above_it() -> None:
    assert upward(graph(REPO)) == []


if __name__ == "__main__":
    g = graph(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO)
    found = cycles(g)
    for c in found:
        print("cycle:", " <-> ".join(c))
    up = upward(g)
    for u in up:
        print("upward:", u)
    print(f"{len(found)} cycles, {len(up)} upward imports")
