"""The test tree's layout rules: helpers are imported as ``tests.<folder>.<module>`` (pyproject's
pytest ``pythonpath = ["."]``), never by putting a folder on ``sys.path`` by hand, and never
from a conftest module by name (with two conftest.py files in one run, ``from conftest import``
finds whichever was collected last: `pytest tests/synthcheck tests/discovery` once failed to
collect).
Shared fixtures live in a conftest.py, shared helpers in a plain module beside it.

The tests mirror the packages: the tests of package P live in tests/P/ (beside the helper
folders bench, exports and real_vllm), each test type of formalize/types has its
tests/formalize/types/test_<module>.py, and no two test modules share the name pytest imports
them under."""

from __future__ import annotations

import ast
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


# --- the tests mirror the packages ---------------------------------------------------------

ROOT = TESTS.parent
#: Top-level test folders that test no one package: the bench scripts' small modes, the exports
#: checked with the real tools, the real vLLM engine.
HELPER_FOLDERS = {"bench", "exports", "real_vllm"}


def packages(root: Path = ROOT) -> set[str]:
    """The checkout's top-level packages (a folder with an ``__init__.py``)."""
    return {p.parent.name for p in root.glob("*/__init__.py")}


def unmirrored_folders(tests: Path = TESTS, root: Path = ROOT) -> list[str]:
    """Top-level folders under ``tests`` holding Python files that name neither a package of
    ``root`` nor a helper folder."""
    known = packages(root) | HELPER_FOLDERS
    return sorted(p.name for p in tests.iterdir()
                  if p.is_dir() and any(p.rglob("*.py")) and p.name not in known)


def type_modules(types_dir: Path = ROOT / "formalize" / "types") -> list[str]:
    """The modules of ``types_dir`` that define a test type: a public module with a class that
    has a ``judge`` method (the one every test type implements; the private ``_base`` and
    ``_perturbed`` only hold what the types share)."""
    found = []
    for path in sorted(types_dir.glob("[!_]*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.ClassDef)
               and any(isinstance(f, ast.FunctionDef) and f.name == "judge" for f in node.body)
               for node in tree.body):
            found.append(path.stem)
    return found


def collected_names(tests: Path = TESTS) -> dict[str, list[str]]:
    """Each test module's import name under pytest's default ``prepend`` import mode (its
    basename, qualified by the folders above it that hold an ``__init__.py``) -> its paths."""
    names: dict[str, list[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        parts, folder = [path.stem], path.parent
        while (folder / "__init__.py").exists():
            parts.insert(0, folder.name)
            folder = folder.parent
        names.setdefault(".".join(parts), []).append(str(path.relative_to(tests.parent)))
    return names


def test_every_test_folder_names_a_package() -> None:
    assert {"synth", "discovery", "formalize", "synthcheck"} <= packages()
    found = unmirrored_folders()
    assert not found, (f"tests/{found[0]}/ names no package: the tests of package P live in "
                       f"tests/P/ (packages: {sorted(packages())}; helper folders: "
                       f"{sorted(HELPER_FOLDERS)}): {found}")


def test_each_test_type_has_its_test_file() -> None:
    types = type_modules()
    assert {"mft", "inv", "dir", "group", "contrast"} <= set(types)
    missing = [f"tests/formalize/types/test_{t}.py" for t in types
               if not (TESTS / "formalize" / "types" / f"test_{t}.py").is_file()]
    assert not missing, ("each module of formalize/types that defines a test type has its tests "
                         f"in tests/formalize/types/test_<module>.py; missing: {missing}")


def test_no_two_test_modules_share_an_import_name() -> None:
    clashes = {name: paths for name, paths in collected_names().items() if len(paths) > 1}
    assert not clashes, ("pytest imports these under one name and fails to collect the second "
                         f"('import file mismatch'); rename one: {clashes}")


def test_the_layout_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    root, tests = tmp_path, tmp_path / "tests"
    for folder in ["pkg", "tests/pkg", "tests/app", "tests/bench", "tests/pkg/sub"]:
        (root / folder).mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for path in ["tests/pkg/test_a.py", "tests/app/test_a.py", "tests/bench/test_b.py",
                 "tests/pkg/sub/test_a.py"]:
        (root / path).write_text("")
    assert packages(root) == {"pkg"}
    assert unmirrored_folders(tests, root) == ["app"]
    assert collected_names(tests)["test_a"] == [
        "tests/app/test_a.py", "tests/pkg/sub/test_a.py", "tests/pkg/test_a.py"]
    (tests / "pkg" / "sub" / "__init__.py").write_text("")
    assert collected_names(tests)["sub.test_a"] == ["tests/pkg/sub/test_a.py"]
    (root / "types").mkdir()
    (root / "types" / "good.py").write_text("class T:\n    @classmethod\n    def judge(cls): ...\n")
    (root / "types" / "plain.py").write_text("def judge(): ...\n")
    (root / "types" / "_shared.py").write_text("class B:\n    def judge(self): ...\n")
    assert type_modules(root / "types") == ["good"]
