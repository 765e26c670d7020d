"""The focus stage in `discover`: runs after mine, skipped when current, redone when its
section changes, resumed after a lost part, byte-identical from scratch, and off with
``focus.enabled: false``; `synthcheck focus` and the report's findings block."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent

from discovery._focus_rounds import contains_ngram  # noqa: E402
from synthcheck import load_run_config  # noqa: E402
from synthcheck._pipeline import discover  # noqa: E402
from synthcheck.cli import main  # noqa: E402
from synthcheck.report import build_report  # noqa: E402
from synthcheck.stages import STAGE_NAMES as STAGES  # noqa: E402
from tests.synth.fakes import FakeBackend  # noqa: E402
from tests.synthcheck import runbuilder  # noqa: E402

BUDGET = 5


@pytest.fixture
def cfg_path(mini_config: Callable[..., Path]) -> Path:
    return mini_config(
        focus={"candidates": 3, "budget": BUDGET, "ngrams": ["film"]},
        evaluation={"size": 8, "include_reference": False},
    )


@pytest.fixture
def backends(monkeypatch: pytest.MonkeyPatch) -> list[FakeBackend]:
    """Every generator backend built (stage 1's and the focus stage's), in order."""

    built: list[FakeBackend] = []

    def build(cfg: Any) -> FakeBackend:
        built.append(FakeBackend())
        return built[-1]

    runbuilder.fake_generator(monkeypatch, build)
    monkeypatch.syspath_prepend(str(HERE))
    return built


def rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "focus.jsonl").read_text().splitlines()]


quiet = runbuilder.discover_quietly


def test_focus_stage_in_discover(cfg_path: Path, tmp_path: Path,
                                 backends: list[FakeBackend]) -> None:
    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    first = quiet(cfg, run)
    assert STAGES.index("mine") < STAGES.index("focus") < STAGES.index("evaluate")
    assert first.stages["focus"] == "ran"
    out = rows(run)
    mined = [json.loads(line)["ngram"]
             for line in (run / "ngrams.jsonl").read_text().splitlines()]
    # Up to 3 mined candidates plus the user's own n-gram, ranked, with the stage's fields.
    assert "film" in {r["ngram"] for r in out} and 2 <= len(out) <= 4
    assert [r["rank"] for r in out] == list(range(1, len(out) + 1))
    assert set(out[0]) >= {"ngram", "n", "failures", "rate", "rate_lo", "rate_hi", "base_rate",
                           "rate_ratio", "rate_diff", "p_value", "q_value", "confirmed",
                           "examples", "corpus_count"}
    # The others come from the pool: mined n-grams and the occlusion stage's rows
    # (select: balanced lets the sources take turns).
    words = [json.loads(line)["word"]
             for line in (run / "words.jsonl").read_text().splitlines()]
    assert {r["ngram"] for r in out if r["ngram"] != "film"} <= {*mined, *words}
    assert {r["source"] for r in out if r["ngram"] != "film"} <= {"ngram", "word", "phrase",
                                                                 "group", "semantic"}
    # One generator backend for the whole stage; the candidates' prompts are generated
    # together, at least 2 generator batches (2 x 4 prompts) per call: 2 candidates a call.
    focus_backend = backends[-1]
    sizes = [len(call) for call in focus_backend.calls]
    assert sum(sizes) == BUDGET * len(out)
    assert sizes == [2 * BUDGET] * (len(out) // 2) + [BUDGET] * (len(out) % 2)
    for r in out:
        assert r["n"] <= BUDGET and all(contains_ngram(x["text"], r["ngram"])
                                        for x in r["examples"])
        assert set(r["examples"][0]["task_probs"]) == {"negative", "positive"} \
            if r["examples"] else True
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest["stages"]["focus"]
    assert entry["status"] == "complete" and entry["candidates"] == len(out)
    assert entry["prompts"] == BUDGET * len(out) and "seconds" in entry
    assert json.loads((run / "focus.jsonl.meta.json").read_text())["config_hash"] == \
        entry["stage_hash"]
    first_bytes = (run / "focus.jsonl").read_bytes()
    first_parts = sorted((run / "focus" / ".parts").glob("round1-*.jsonl"))

    # Current: skipped, no backend built.
    n_built = len(backends)
    again = quiet(cfg, run)
    assert again.stages["focus"] == "skipped (current)" and len(backends) == n_built

    # Its section changes: focus (and findings and the report) rerun, nothing upstream.
    more = load_run_config(cfg_path, ["focus.budget=7"])
    changed = quiet(more, run)
    assert {k for k, v in changed.stages.items() if v == "ran"} == {"focus", "findings",
                                                                     "report"}
    assert len([p for c in backends[-1].calls for p in c]) == 7 * len(out)
    assert (run / "focus.jsonl").read_bytes() != first_bytes

    # Back to the first config, one part lost and the stage forgotten: only that
    # candidate is generated again, and focus.jsonl is the same bytes.
    redo = quiet(cfg, run)
    assert redo.stages["focus"] == "ran" and (run / "focus.jsonl").read_bytes() == first_bytes
    parts = first_parts  # named by the parts' hash: the stage's less the controls' scheme
    assert len(parts) == len(out) and all(p.is_file() for p in parts)
    parts[0].unlink()
    (run / "focus.jsonl").unlink()
    n_built = len(backends)
    resumed = quiet(cfg, run)
    assert resumed.stages["focus"] == "ran" and len(backends) == n_built + 1
    assert [len(c) for c in backends[-1].calls] == [BUDGET]
    assert (run / "focus.jsonl").read_bytes() == first_bytes

    # From scratch in a new directory with the same seed: the same bytes.
    fresh = tmp_path / "fresh"
    quiet(cfg, fresh)
    assert (fresh / "focus.jsonl").read_bytes() == first_bytes


def test_the_estimate_is_the_prompts_a_focus_run_sends(cfg_path: Path, tmp_path: Path,
                                                       backends: list[FakeBackend]) -> None:
    """One focus-cost formula: `discover`'s estimate line before the stage counts exactly the
    prompts the focus backend then receives (a round whose pool fills ``focus.candidates``),
    and the manifest records the same number."""
    cfg = load_run_config(cfg_path)
    run = tmp_path / "r"
    lines: list[str] = []
    discover(cfg, run, progress=False, log=lines.append)
    estimate = next(line for line in lines if line.startswith("[focus] estimate: "))
    sent = sum(len(call) for call in backends[-1].calls)
    assert cfg.focus.max_prompts == (3 + 1) * BUDGET
    assert estimate.startswith(f"[focus] estimate: {cfg.focus.max_prompts:,} prompts at ")
    assert sent == cfg.focus.max_prompts == len(rows(run)) * BUDGET
    assert json.loads((run / "manifest.json").read_text())["stages"]["focus"]["prompts"] == sent


def test_focus_off_skips_the_stage_and_the_report_falls_back(
        cfg_path: Path, tmp_path: Path, backends: list[FakeBackend],
        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    out = capsys.readouterr().out
    assert "[focus] ran in " in out
    summary = out.split("\n\n== synthcheck discover: ", 1)[1]
    focus_rows = rows(run)
    confirmed = [r for r in focus_rows if r["confirmed"]]
    assert (f"focus rounds: {len(focus_rows)} candidates, "
            f"{sum(r['n'] for r in focus_rows)} new sentences from "
            f"{BUDGET * len(focus_rows)} prompts in ") in summary
    assert (f"; {len(confirmed)} confirmed failure pattern(s) (failure: task model's top "
            f"label differs from the reference's; base rate ") in summary
    # one base rate for the run: focus's is the slices' and the rank stage's
    manifest = json.loads((run / "manifest.json").read_text())["stages"]
    rates = {s: manifest[s]["base_rate"] for s in ("rank", "semantic", "metadata",
                                                   "occlusion", "findings", "focus")}
    assert len(set(rates.values())) == 1, rates
    shown = confirmed or focus_rows[:3]
    for r in shown:
        assert f"  {r['ngram']:<28} [{r['source']}] fails {r['failures']}/{r['n']} = " \
            in summary
        # the paired test's evidence, next to the failure rate
        assert f"; deleting it flips the task model alone on {r['flipped']}/{r['n']} " \
            in summary
    # The report's focus block comes right after the overview and all findings.
    report = build_report(run)
    ids = [s.key for s in report.sections]
    assert ids[:2] == ["overview", "findings"]
    findings = report.sections[1]
    assert findings.title == "Findings: every kind, ranked"  # findings.jsonl, then focus
    heads = [b.text for b in findings.blocks if b.kind == "heading"]
    assert "Focus rounds: confirmed failure patterns" in heads
    at = next(i for i, b in enumerate(findings.blocks)
              if b.kind == "heading" and b.text.startswith("Focus rounds"))
    table = next(b for b in findings.blocks[at:] if b.kind == "table")
    assert [c.text for c in table.rows[0][:2]] == ["1", focus_rows[0]["ngram"]]
    assert table.header[5] == "failure rate [95% CI]"
    first = focus_rows[0]
    if first["rate"] is not None:
        assert table.rows[0][5].text == \
            f"{first['rate']:.2f} [{first['rate_lo']:.2f}, {first['rate_hi']:.2f}]"
    md = (run / "summary.md").read_text()
    assert "Focus rounds: confirmed failure patterns" in md

    # focus.enabled: false: the stage is off, forgotten in the manifest, and the report
    # shows the mined n-grams instead.
    assert main(["discover", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "focus.enabled=false"]) == 0
    out = capsys.readouterr().out
    assert "[focus]" not in out and "focus rounds: off (focus.enabled: false)" in out
    manifest = json.loads((run / "manifest.json").read_text())
    assert "focus" not in manifest["stages"]
    report = build_report(run)
    findings = report.sections[1]
    at = next(i for i, b in enumerate(findings.blocks)
              if b.kind == "heading" and b.text == "Top mined n-grams (not confirmed)")
    ngrams = [json.loads(line) for line in (run / "ngrams.jsonl").read_text().splitlines()]
    table = next(b for b in findings.blocks[at:] if b.kind == "table")
    assert [row[0].text for row in table.rows] == [g["ngram"] for g in ngrams[:10]]

    # `synthcheck focus` runs it by hand (whatever focus.enabled says), then it is current.
    assert main(["focus", "--config", str(cfg_path), "--run", str(run), "-q",
                 "-P", "focus.enabled=false"]) == 0
    out = capsys.readouterr().out
    assert f"{len(focus_rows)} candidates, " in out and str(run / "focus.jsonl") in out
    assert rows(run) == focus_rows
    assert main(["focus", "--config", str(cfg_path), "--run", str(run), "-q"]) == 0
    assert "focus rounds are up to date" in capsys.readouterr().out


def test_focus_before_mining_is_refused(cfg_path: Path, tmp_path: Path,
                                        backends: list[FakeBackend],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "r"
    assert main(["generate", "--config", str(cfg_path), "--run", str(run)]) == 0
    capsys.readouterr()
    assert main(["focus", "--config", str(cfg_path), "--run", str(run), "-q"]) == 2
    err = capsys.readouterr().err
    assert "error: the run has no complete n-grams" in err
    assert "run `synthcheck mine` first" in err
    assert not (run / "focus.jsonl").exists()


def test_balanced_picks_read_every_sentence_the_abstained_ones_too(
        mini_config: Callable[..., Path], tmp_path: Path, backends: list[FakeBackend],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The focus stage hands ``pool_candidates`` the judged corpus as its base and every
    corpus sentence, abstained ones included, as ``every_text`` (where a candidate occurs
    when ``balanced`` picks)."""
    import discovery._focus_stage as fs
    from discovery import read_corpus

    seen: list[Any] = []
    real = fs.pool_candidates

    def spy(base: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(base)
        return real(base, *args, **kwargs)

    monkeypatch.setattr(fs, "pool_candidates", spy)
    cfg_path = mini_config(focus={"candidates": 3, "budget": BUDGET},
                           evaluation={"size": 8, "include_reference": False},
                           ranking={"top_fraction": 0.5, "min_reference_margin": 0.004})
    run = tmp_path / "r"
    quiet(load_run_config(cfg_path), run)
    _, texts = read_corpus(run)
    (base,) = seen
    assert list(base.every_text) == list(texts)
    assert 0 < len(base.texts) < len(texts)  # the margin leaves some sentences out
