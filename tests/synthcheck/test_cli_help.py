"""The CLI's help: a description for every command, one meaning per flag name."""

from __future__ import annotations

import argparse

import pytest

from synthcheck.cli import build_parser


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_has_a_summary_and_a_description() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in commands().items():
        assert helps.get(name), f"{name} has no summary in `synthcheck --help`"
        assert parser.description and len(parser.description) > 20, f"{name}: no description"
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings} has no help text"


@pytest.mark.parametrize(("flag", "meaning"), [("--sample", "fills"), ("--seed", "suite seed")])
def test_a_flag_name_means_one_thing(flag, meaning) -> None:
    seen = {}
    for name, parser in commands().items():
        for action in parser._actions:
            if flag in action.option_strings:
                seen[name] = action.help or ""
    assert seen, flag
    if flag == "--sample":
        assert all("fills" in h for h in seen.values()), seen
    else:  # train-demo's split seed is --split-seed
        assert "train-demo" not in seen
        assert all("split" not in h for h in seen.values()), seen
        assert set(seen) == {"verify", "export"}
        assert all(h.startswith("suite seed of the fills drawn") for h in seen.values()), seen


def test_name_flags_say_what_they_name_and_run_says_required() -> None:
    # `--name` named the suite in `import` and a test in `propose`: each now has its own
    # flag (the old spelling kept as an alias), and a required --run says so.
    helps = {}
    for name, parser in commands().items():
        for action in parser._actions:
            if "--name" in action.option_strings:
                helps[name] = (action.option_strings, action.help)
    assert helps == {
        "propose": (["--test-name", "--name"],
                    "name of the appended TEST in the suite (not the suite's name)"),
        "import": (["--suite-name", "--name"],
                   "name of the written SUITE (default: the output file's stem)")}
    runs = {name: a.help for name, parser in commands().items() for a in parser._actions
            if "--run" in a.option_strings and a.required}
    assert runs["discover"] == "run directory for outputs, e.g. runs/NAME (required)"
    assert all(h.endswith("(required)") for h in runs.values()), runs
