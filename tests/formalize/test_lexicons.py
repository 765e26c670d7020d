"""Built-in lexicons ship inside the package (a non-editable install has them); lexicon names
cannot end with a digit."""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import formalize
from formalize import Suite, builtin_lexicons
from formalize import _lexicons as lexmod
from synth.core import TemplateError
from tests.formalize.conftest import suite_dict

ROOT = Path(__file__).resolve().parents[2]


def test_builtin_lexicons_are_package_data():
    pkg = Path(str(importlib.resources.files("formalize")))
    files = sorted(p.name for p in (pkg / "lexicons").glob("*.yaml"))
    assert files == ["checklist.yaml", "medical.yaml", "people.yaml", "sentiment.yaml",
                     "time.yaml"]
    # The loader reads them from inside the package, not from the repository's configs/.
    assert lexmod.BUILTIN_LEXICON_DIR == (pkg / "lexicons").resolve()
    assert lexmod.BUILTIN_LEXICON_DIR.is_relative_to(Path(formalize.__file__).resolve().parent)
    # The documented path still works in a checkout: configs/lexicons links to them.
    link = ROOT / "configs" / "lexicons"
    assert link.is_symlink() and os.readlink(link) == "../formalize/lexicons"
    assert sorted(p.name for p in link.glob("*.yaml")) == files


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None,
                    reason="building a wheel needs setuptools")
def test_a_built_wheel_has_the_builtin_lexicons(tmp_path):
    # Build from a copy of the sources (the checkout is left untouched), then import the
    # unpacked wheel, not the checkout: the built-in lexicons must be there.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("synth", "discovery", "formalize", "synthcheck"):
        shutil.copytree(ROOT / pkg, src / pkg, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "whl"), str(src)], check=True, cwd=tmp_path,
                   capture_output=True)
    (wheel,) = (tmp_path / "whl").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path / "site")
    assert {n for n in names if n.startswith("formalize/lexicons/")} == {
        f"formalize/lexicons/{f}" for f in ("checklist.yaml", "medical.yaml", "people.yaml",
                                            "sentiment.yaml", "time.yaml")}
    code = ("import formalize, sys; from formalize import builtin_lexicons; "
            "print(formalize.__file__); print(len(builtin_lexicons()))")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=tmp_path, env=env).stdout.split()
    assert out[0].startswith(str(tmp_path / "site")) and out[1] == str(len(builtin_lexicons()))


def test_a_missing_builtin_folder_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(lexmod, "BUILTIN_LEXICON_DIR", tmp_path / "nowhere")
    monkeypatch.setattr(lexmod, "_BUILTIN_CACHE", None)
    with pytest.raises(TemplateError, match=r"the built-in lexicons are missing.*nowhere.*"
                       r"reinstall synthcheck"):
        builtin_lexicons()
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(lexmod, "BUILTIN_LEXICON_DIR", tmp_path / "empty")
    with pytest.raises(TemplateError, match="the built-in lexicons are missing"):
        Suite.from_dict(suite_dict({"name": "t", "type": "mft", "template": "{NOUN}",
                                    "label": "positive"}))
    # A suite that does not use them does not need them.
    suite = Suite.from_dict(suite_dict({"name": "t", "type": "mft", "template": "{X}",
                                        "label": "positive"}, builtin_lexicons=False,
                                       lexicons={"X": ["a"]}))
    assert [c.text for c in suite.cases()] == ["a"]


def test_no_builtin_lexicon_name_ends_with_a_digit():
    names = builtin_lexicons()
    assert names["PRONOUN_THIRD"] == ("he", "she", "they")
    assert "PRONOUN_3" not in names
    assert not [n for n in names if n[-1].isdigit()]


def test_a_lexicon_file_name_ending_with_a_digit_is_refused(tmp_path):
    (tmp_path / "lex.yaml").write_text("PLACE: [bistro]\nPLACE_2: [diner]\n")
    with pytest.raises(TemplateError, match=r"lexicon name 'PLACE_2' ends with a digit "
                       r"\(.*lex.yaml\): rename it so that it does not end with a digit.*"
                       r"\{PLACE_2\} would draw from 'PLACE_'"):
        lexmod.read_lexicon_yaml(tmp_path / "lex.yaml")
    # Through a suite: the suite's entry and line are named too.
    (tmp_path / "s.yaml").write_text("name: s\nlabels: [negative, positive]\nlexicon_files:\n"
                                     "  - lex.yaml\ntests:\n  - {name: t, type: mft, template: "
                                     "'{PLACE}', label: positive}\n")
    with pytest.raises(TemplateError, match=r"lexicon name 'PLACE_2' ends with a digit "
                       r"\(.*s.yaml, lexicon_files.0, line 4: .*lex.yaml\)"):
        Suite.from_yaml(tmp_path / "s.yaml")
    with pytest.raises(TemplateError, match=r"slot alias name 'ADJ2' ends with a digit "
                       r"\(<suite>, slots.ADJ2\)"):
        Suite.from_dict(suite_dict({"name": "t", "type": "mft", "template": "{NOUN}",
                                    "label": "positive"}, slots={"ADJ2": ["POS_ADJ"]}))


def test_a_self_referencing_slot_alias_is_named_as_such(tmp_path):
    """Issue 19: it read "slot alias 'A' names unknown lexicon 'A'"."""
    import pytest as _pytest

    from formalize import Suite
    from synth.core import TemplateError

    data = {"name": "s", "labels": ["a", "b"], "slots": {"A": ["A"]},
            "tests": [{"name": "t", "type": "mft", "template": "x {A}", "label": "a"}]}
    with _pytest.raises(TemplateError) as info:
        Suite.from_dict(data, source="s.yaml")
    assert info.value.format() == (
        "slot alias 'A' names itself; an alias lists lexicons, not other aliases "
        "(s.yaml, test 't', template): list the lexicons 'A' draws from (e.g. A: [POS_ADJ, "
        "NEG_ADJ]), or rename the alias")
