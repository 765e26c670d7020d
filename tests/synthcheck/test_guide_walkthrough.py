"""docs/guide.md's "Bring your own model and data" walk-through, run as the guide writes it.

The commands are parsed out of the guide's marked fenced block (``<!-- walkthrough:
commands -->``) and run in a scratch folder that links the repository's ``configs/`` (the
guide runs them from the repository root): ``mkdir -p``, ``python - <<'EOF'`` (executed in
this process), ``cat > FILE <<'EOF'`` and ``synthcheck ...`` (through ``synthcheck.cli.main``).
Any other line fails the test, so the guide cannot grow a step this test does not run. The
marked output block must appear, line by line and in order, in what the commands print; the
marked errors block's commands must fail with exactly the error line shown.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from synthcheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"

try:  # the notebook kernel fixture (tests/synthcheck/test_notebooks.py), for the tweet walk-through
    from tests.synthcheck.test_notebooks import kernel_env  # noqa: F401
except pytest.skip.Exception:  # nbformat / nbclient / ipykernel missing
    kernel_env = None


def marked_block(name: str) -> str:
    """The fenced block right after ``<!-- walkthrough: NAME -->`` in the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    match = re.search(rf"<!-- walkthrough: {name} -->\n```[a-z]*\n(.*?)\n```\n", text, re.S)
    assert match, f"docs/guide.md has no '<!-- walkthrough: {name} -->' block"
    return match.group(1)


def commands(block: str) -> list[tuple[str, str | None]]:
    """``(command line, here-document body or None)`` for each command of a shell block."""
    lines = block.splitlines()
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        heredoc = re.fullmatch(r"(.*) <<'EOF'", line)
        body = None
        if heredoc:
            end = lines.index("EOF", i)
            body = "\n".join(lines[i:end]) + "\n"
            line, i = heredoc.group(1), end + 1
        out.append((line, body))
    return out


def run_line(line: str, body: str | None) -> int:
    """Run one command of the walk-through; return its exit status."""
    argv = shlex.split(line)
    if argv[:2] == ["mkdir", "-p"] and len(argv) == 3 and body is None:
        Path(argv[2]).mkdir(parents=True, exist_ok=True)
        return 0
    if argv == ["python", "-"] and body is not None:
        exec(compile(body, "<guide: python ->", "exec"), {"__name__": "__main__"})  # noqa: S102
        return 0
    if argv[:2] == ["cat", ">"] and len(argv) == 3 and body is not None:
        Path(argv[2]).write_text(body, encoding="utf-8")
        return 0
    if argv[0] == "synthcheck" and body is None:
        return main(argv[1:])
    pytest.fail(f"the guide's walk-through has a line this test cannot run: {line!r}")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_walkthrough_runs_from_zero_to_the_report(scratch, capsys):
    printed = []
    for line, body in commands(marked_block("commands")):
        code = run_line(line, body)
        out, err = capsys.readouterr()
        assert code == 0, f"{line!r} exited {code}: {err}"
        printed.extend((out + err).splitlines())

    # The guide's output block, line by line and in order ("..." skips lines).
    rest = iter(line.rstrip() for line in printed)
    for shown in marked_block("output").splitlines():
        if shown.strip() != "...":
            assert any(got == shown.rstrip() for got in rest), \
                f"the guide shows {shown!r}, which the walk-through did not print (in order)"

    run = scratch / "byo" / "run"
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "mine" in html and "double negation" in html
    saved = json.loads((run / "eval.json").read_text())
    report = saved["reports"]["mine"]
    # 24 of 48 rows (the first 24 all positive): 12 per label.
    assert report["n"] == 24
    assert {lab: c["support"] for lab, c in report["per_class"].items()} == {
        "negative": 12, "positive": 12}
    assert saved["evaluation"]["encoding"] == "latin-1"
    assert json.loads((run / "verify" / "sentiment" / "summary.json").read_text())

    # The file really is latin-1 with non-ASCII text, and is read without replacements.
    from discovery import read_labeled_file

    raw = (scratch / "byo" / "reviews.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    data = read_labeled_file(scratch / "byo" / "reviews.csv", ["negative", "positive"],
                             text_field="review_body", label_field="stars_label",
                             encoding="latin-1")
    assert data.texts[0].startswith("Señor, the film was ") and data.texts[0].endswith("déjà vu.")
    assert not any("\ufffd" in t for t in data.texts)

    # Mistakes: exactly the guide's error lines, and nothing already written changes.
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    errors = marked_block("errors").splitlines()
    assert errors and len(errors) % 2 == 0
    for command, error in zip(errors[::2], errors[1::2], strict=True):
        assert command.startswith("$ ") and error.startswith("error: ")
        assert run_line(command[2:], None) == 2
        assert capsys.readouterr().err.strip() == error
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before

    # The stratified sample is the same on a rerun.
    def without_time(reports):
        return {name: {k: v for k, v in rep.items() if k != "seconds"}
                for name, rep in reports.items()}

    assert main(["evaluate", "--config", "byo/my-run.yaml", "--run", "byo/run", "-q"]) == 0
    again = json.loads((run / "eval.json").read_text())["reports"]
    assert without_time(again) == without_time(saved["reports"])


def test_the_parser_refuses_lines_it_cannot_run():
    assert commands("mkdir -p a\ncat > f <<'EOF'\nx: 1\nEOF\nsynthcheck report --run a") == [
        ("mkdir -p a", None), ("cat > f", "x: 1\n"), ("synthcheck report --run a", None)]
    with pytest.raises(pytest.fail.Exception, match="cannot run: 'rm -rf byo'"):
        run_line("rm -rf byo", None)


@pytest.mark.integration
def test_the_tweet_walkthrough_runs_and_the_notebook_works_from_root_and_notebooks(
        scratch, capsys, kernel_env):
    # The second domain, as the guide writes it: own model, config, suite and lexicons,
    # discover (real SmolLM2, 16 prompts), a review, propose into the suite, verify.
    printed = []
    for line, body in commands(marked_block("tweets-commands")):
        code = run_line(line, body)
        out, err = capsys.readouterr()
        assert code == 0, f"{line!r} exited {code}: {err}"
        printed.extend((out + err).splitlines())
    rest = iter(line.rstrip() for line in printed)
    for shown in marked_block("tweets-output").splitlines():
        if shown.strip() != "...":
            assert any(got == shown.rstrip() for got in rest), \
                f"the guide shows {shown!r}, which the walk-through did not print (in order)"
    from formalize import load_suite

    suite = load_suite(scratch / "tweets" / "complaints.yaml")
    added = suite.tests[-1].spec
    assert added.name == "from review" and added.label == "complaint"
    # Drafted in the suite's domain: its own placeholders, no built-in movie ones.
    slots = set(re.findall(r"\{([A-Z_]+)\}", added.templates[0]))
    assert slots and slots <= {"AIRLINE", "THING", "PRAISE"}, added.templates
    summary = json.loads((scratch / "tweets" / "run" / "verify" / "complaints" /
                          "summary.json").read_text())
    assert summary["test_order"][-1] == "from review"

    # The formalize notebook on that run and suite, from the root and from notebooks/.
    from tests.synthcheck import test_notebooks as nbt

    (scratch / "notebooks").mkdir()
    env = {**kernel_env, "SYNTHCHECK_RUN": "tweets/run",
           "SYNTHCHECK_SUITE": "tweets/complaints.yaml"}
    for cwd in (scratch, scratch / "notebooks"):
        nb = nbt.execute("formalize", env, cwd=cwd)
        head = f"{scratch / 'tweets' / 'run'}: drafting from 'task-model error' decisions; " \
               "accepted drafts go to "
        setup = nbt.text(nb, "setup").splitlines()[0]
        assert setup.startswith(head), setup
        suite_path = cwd / setup[len(head):]  # as given from the root, found one up from notebooks/
        assert suite_path.resolve() == (scratch / "tweets" / "complaints.yaml").resolve()
        assert nbt.text(nb, "scorers") == "task models: mine\n"
        assert "suite draft:" in nbt.text(nb, "try")


def test_the_guides_review_and_propose_counts_are_what_the_code_prints(scratch, capsys):
    # Stage 1-2 of the guide's walk-through (SmolLM2 generating and scoring) are not rerun:
    # the hard subset the guide prints is rebuilt as a run, then the review, propose and
    # validate commands run as the guide writes them, and every line of the output the guide
    # shows (drafts, case counts, the validate table) must be printed, in order.
    from synth.core import write_json_atomic, write_jsonl

    hard = re.findall(r"^ +(\d+) ([\d.]+) task=(\w+) ref=(\w+)  (.+)$",
                      marked_block("stage2-output"), re.M)
    assert len(hard) == 3, hard
    run = scratch / "runs" / "guide"
    labels = ["negative", "positive"]
    write_json_atomic(run / "manifest.json", {
        "config": {"task": {"labels": labels}}, "config_hash": "guide"})
    rows = [{"id": f"q{int(rank) - 1:08d}", "text": text, "divergence": float(div),
             "task_label": task, "reference_label": ref, "rank": int(rank),
             "task_probs": {lab: float(lab == task) for lab in labels},
             "reference_probs": {lab: float(lab == ref) for lab in labels}}
            for rank, div, task, ref, text in hard]
    write_jsonl(run / "corpus" / "shard-00000.jsonl", [
        {"id": r["id"], "text": r["text"], "query": "", "raw": r["text"], "shard": 0, "seed": 0}
        for r in rows])
    write_jsonl(run / "hard.jsonl", rows)
    printed = []
    for line, body in commands(marked_block("review-commands")):
        code = run_line(line, body)
        out, err = capsys.readouterr()
        assert code == 0, f"{line!r} exited {code}: {err}"
        printed.extend((out + err).splitlines())
    rest = iter(line.rstrip() for line in printed)
    for shown in marked_block("review-output").splitlines():
        if shown.strip() != "...":
            assert any(got == shown.rstrip() for got in rest), \
                f"the guide shows {shown!r}, which the commands did not print (in order)"
