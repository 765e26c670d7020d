"""The test tree's layout rules: helpers are imported as ``tests.<folder>.<module>`` (pyproject's
pytest ``pythonpath = ["."]``), never by putting a folder on ``sys.path`` by hand, and never
from a conftest module by name (with two conftest.py files in one run, ``from conftest import``
finds whichever was collected last: `pytest tests/synthcheck tests/discovery` once failed to
collect).
Shared fixtures live in a conftest.py, shared helpers in a plain module beside it."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# `sys.path.insert(...)`, `sys.path[:0] = ...`, `sys.path.append(...)`: a folder put on the path
# by hand (pytest's `monkeypatch.syspath_prepend` is undone after the test, and allowed).
PATH_HACK = re.compile(r"(?<![\w.])sys\.path\s*(\.\s*(insert|append|extend)\s*\(|\[[^\]]*\]\s*=)")
CONFTEST_IMPORT = re.compile(r"^\s*(from\s+conftest\s+import|import\s+conftest\b)", re.M)


def offenders(pattern: re.Pattern[str], root: Path = TESTS) -> list[str]:
    """``path:line: text`` for every line under ``root``'s Python files matching ``pattern``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root.parent)}:{number}: {line.strip()}")
    return found


def test_no_test_module_edits_sys_path() -> None:
    found = offenders(PATH_HACK)
    assert not found, ("import the helper as `tests.<folder>.<module>` instead of putting its "
                       "folder on sys.path (a child process gets PYTHONPATH=<checkout>):\n"
                       + "\n".join(found))


def test_nothing_imports_a_conftest_by_name() -> None:
    found = offenders(CONFTEST_IMPORT)
    assert not found, ("move the helper out of conftest.py into a module beside it and import "
                       "it as `tests.<folder>.<module>`:\n" + "\n".join(found))


def test_the_patterns_catch_what_they_are_for(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    bad = tmp_path / "t" / "test_bad.py"
    bad.write_text("import sys\nsys.path.insert(0, 'x')\nsys.path[:0] = ['y']\n"
                   "sys.path.append('z')\nfrom conftest import build\n    import conftest\n")
    good = tmp_path / "t" / "test_good.py"
    good.write_text("monkeypatch.syspath_prepend('x')\nbare_sys_path[:0] = ['y']\n"
                    "from tests.synth.fakes import FakeBackend\nassert 'x' in sys.path\n")
    assert [f.split(":", 2)[1] for f in offenders(PATH_HACK, tmp_path)] == ["2", "3", "4"]
    assert [f.split(":", 2)[1] for f in offenders(CONFTEST_IMPORT, tmp_path)] == ["5", "6"]
    assert all("test_bad.py" in f for f in offenders(PATH_HACK, tmp_path))
