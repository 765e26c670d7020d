"""The docs against the code: flags that exist, the install list, no stale status notes."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from synthcheck.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    out = {s for a in parser._actions for s in a.option_strings}
    for a in parser._actions:  # nested sub-commands (e.g. `annotate export`)
        if isinstance(a, argparse._SubParsersAction):
            for p in a.choices.values():
                out |= _flags(p)
    return out


def test_every_flag_in_a_documented_command_line_exists() -> None:
    commands = _commands()
    wrong = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        # `synthcheck CMD ...` in code blocks and inline code, continuation lines joined.
        for m in re.finditer(r"synthcheck ([a-z-]+)((?:[^`\n]|\\\n)*)", text.replace("\\\n", " ")):
            cmd, rest = m.group(1), m.group(2)
            if cmd not in commands:
                continue
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
                if flag not in _flags(commands[cmd]):
                    wrong.append(f"{doc.name}: synthcheck {cmd} {flag}")
    assert wrong == []


def test_prose_names_generates_show_flag() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "`--sample` sentences" not in guide
    assert "dropped, and `--show` sentences (default 5)." in guide
    assert "--show" in _flags(_commands()["generate"])


def test_the_guides_manual_install_lists_every_packaged_model_and_data_set() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")

    def variable(name: str) -> list[str]:
        value = re.search(rf"^{name} := ((?:.*\\\n)*.*)$", makefile, re.M).group(1)
        words = value.replace("\\\n", " ").split()
        # expand $(OTHER) the way make does
        return [w for word in words
                for w in (variable(word[2:-1]) if word.startswith("$(") else [word])]

    nodeps = variable("NODEPS")
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    line = next(x for x in guide.splitlines() if x.startswith(".venv/bin/pip install --no-deps"))
    assert line.split("--no-deps ")[1].split() == nodeps


def test_no_stale_status_notes() -> None:
    text = (ROOT / "docs" / "discovery.md").read_text(encoding="utf-8")
    assert "pending" not in text


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_executed_notebooks_are_ignored() -> None:
    # docs/notebooks.md runs `jupyter execute --output='{notebook_name}-executed'`.
    out = subprocess.run(["git", "check-ignore", "notebooks/review-executed.ipynb",
                          "notebooks/formalize-executed.ipynb"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.stdout.split() == ["notebooks/review-executed.ipynb",
                                  "notebooks/formalize-executed.ipynb"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_installs_no_browser_and_hides_the_editable_box() -> None:
    # `make -n -B`: the commands each target would run, none executed.
    def commands(target: str) -> str:
        return subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout

    demo, test = commands("demo"), commands("test")
    assert "chromium" not in demo and "apt-get" not in demo and "selenium" not in demo
    assert "apt-get install -y -qq chromium chromium-driver" in test
    # every install into .venv is under the constraints of the last passing run
    assert 'pip install -qq -c tests/constraints.txt -e ".[dev,browser]"' in test
    assert 'pip install -qq -c tests/constraints.txt -e ".[dev]"' in demo
    editable = [x for x in demo.splitlines() if "pip install" in x and " -e " in x]
    assert editable and all(" -qq " in x for x in editable)
