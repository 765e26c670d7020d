"""One table of hostile strings through every output people read (issue 28): the terminal
(everything a command prints), ``summary.md``, ``report.html``, the PR markdown and the JUnit
XML of ``verify``. Control characters and bidi overrides must show as visible escapes, and
where Markdown is written, links, images and mentions must be inert."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent

from synth.core import markdown_text, read_jsonl, visible, write_jsonl  # noqa: E402
from synthcheck import cli as cli_module  # noqa: E402
from tests.synthcheck.runbuilder import build_run  # noqa: E402
from tests.synthcheck.test_cli_discovery import cli  # noqa: E402

HOSTILE = {
    "window title": "\x1b]0;pwned\x07",
    "clear screen": "\x1b[2J\x1b[H",
    "backspaces": "good\x08\x08\x08\x08bad",
    "right-to-left override": "\u202eevil\u202c",
    "isolate": "\u2066x\u2069",
    "C1 control": "a\x9bb",
    "markdown link": "[click me](http://evil.example/)",
    "markdown image": "![pixel](http://evil.example/p.png)",
    "mention": "@octocat please look",
    "raw html": "<script>alert(1)</script>",
    "escaped bracket": "\\[x](http://evil.example/)",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
LIVE_MARKDOWN = re.compile(r"\][(\[:]|(?<![`\w])@octocat")


def assert_inert(text: str, *, markdown: bool = False) -> None:
    assert not RAW.search(text), repr(RAW.search(text))
    assert "<script>alert" not in text
    if markdown:
        assert not LIVE_MARKDOWN.search(text), LIVE_MARKDOWN.search(text)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_sanitisers_on_each_hostile_string(name: str) -> None:
    s = HOSTILE[name]
    assert_inert(visible(s).replace("<script>", ""))
    assert_inert(markdown_text(s), markdown=True)


def test_visible_escapes_read_back() -> None:
    assert visible("a\x1b[2Jb\x07\u202e") == "a\\x1b[2Jb\\x07\\u202e"
    assert visible("line\nnext\t.", keep="\n\t") == "line\nnext\t."
    assert markdown_text("[a](b) @me 5|6 [0.5, 0.9]") == "[a]\\(b) `@`me 5\\|6 [0.5, 0.9]"


def test_everything_a_command_prints_is_visible(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    def hostile_command(args: argparse.Namespace) -> int:
        for s in HOSTILE.values():
            print(f"  1 0.900 task=positive ref=negative  {s}")
            print(f"warning: {s}", file=sys.stderr)
        return 0

    import synthcheck._cmd_models as models

    monkeypatch.setattr(models, "run", hostile_command)  # any command: all go through main
    assert cli_module.main(["models"]) == 0
    out, err = capsys.readouterr()
    assert_inert(out.replace("<script>", ""))
    assert_inert(err.replace("<script>", ""))
    assert "\\x1b]0;pwned\\x07" in out and "\\u202eevil" in err
    assert sys.stdout.__class__.__name__ != "VisibleStream"  # restored after the command


def _hostile_run(tmp_path: Path) -> Path:
    run = build_run(tmp_path / "run", verify=False)
    texts = list(HOSTILE.values())
    hard = read_jsonl(run / "hard.jsonl")
    for i, rec in enumerate(hard):
        rec["text"] = f"{texts[i % len(texts)]} {rec['text']}"
    write_jsonl(run / "hard.jsonl", hard)
    ngrams = read_jsonl(run / "ngrams.jsonl")
    for i, rec in enumerate(ngrams):
        rec["ngram"] = texts[i % len(texts)]
    write_jsonl(run / "ngrams.jsonl", ngrams)
    return run


def test_summary_md_and_report_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _hostile_run(tmp_path)
    code, out, err = cli(["report", "--run", run], capsys)
    assert code == 0, err
    md = (run / "summary.md").read_text(encoding="utf-8")
    html = (run / "report.html").read_text(encoding="utf-8")
    assert_inert(md, markdown=True)
    assert_inert(html)
    assert "\\x1b]0;pwned\\x07" in html and "\\\\x1b]0;pwned\\\\x07" in md
    assert "[click me]\\(http://evil.example/)" in md and "`@`octocat" in md


SUITE = {"name": "hostile", "labels": ["negative", "positive"], "builtin_lexicons": False,
         "lexicons": {"THING": list(HOSTILE.values())},
         "tests": [{"name": "always wrong", "capability": "Vocabulary", "type": "mft",
                    "template": "The {THING} is great.", "label": "negative",
                    "max_fail_rate": 0.1}]}


def test_verify_markdown_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xml.etree.ElementTree as ET

    suite = tmp_path / "hostile.yaml"
    suite.write_text(yaml.safe_dump(SUITE, allow_unicode=True), encoding="utf-8")
    md, junit = tmp_path / "pr.md", tmp_path / "junit.xml"
    code, out, err = cli(["verify", "--suite", suite, "--model",
                          "python:runbuilder:keyword_model", "--run", tmp_path / "v",
                          "--markdown", md, "--junit", junit], capsys)
    assert code == 1, err  # the gate is exceeded: the examples are listed
    assert_inert(out.replace("<script>", ""))
    text = md.read_text(encoding="utf-8")
    assert_inert(text, markdown=True)
    assert "\\\\u202eevil" in text  # the examples are there, inert
    xml = junit.read_text(encoding="utf-8")
    assert_inert(xml.replace("&lt;script&gt;", ""))
    ET.fromstring(xml)  # still well-formed XML 1.0
