"""`synthcheck report`: every section of report.html, embedded figures only, summary.md's key
numbers, runs with missing pieces, clear errors, and a headless-Chromium screenshot."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synthcheck.cli import main
from tests.synthcheck import runbuilder  # noqa: E402

PIL_Image = pytest.importorskip("PIL.Image", reason="Pillow decodes the figures")

HARD_RGB = (0xD6, 0x27, 0x28)  # synthcheck.report._figures.HARD_COLOR
OTHER_RGB = (0x7F, 0x9F, 0xBF)  # OTHER_COLOR
MODEL_RGB = [(0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)]  # template bars: first two models


def blend(rgb: tuple[int, int, int], alpha: float) -> tuple[int, int, int]:
    """``rgb`` drawn with ``alpha`` on white (how matplotlib renders it)."""
    return tuple(round(255 - alpha * (255 - c)) for c in rgb)  # type: ignore[return-value]


CORPUS_POINT = blend(OTHER_RGB, 0.6)  # the scatter's markers
HARD_POINT = blend(HARD_RGB, 0.9)
HARD_BAR = blend(HARD_RGB, 0.85)  # the n-gram bars
SECTIONS = ["provenance", "overview", "findings", "trust", "divergence", "scatter", "ngrams",
            "hard", "verify-tiny", "examples-tiny", "groups-tiny", "fills-tiny"]
FIGURES = ["fig-divergence", "fig-scatter", "fig-ngrams", "fig-fail-rate-tiny",
           "fig-groups-tiny-reviewer-gender"]


class Page(HTMLParser):
    """Sections (id -> text inside), images (id -> attributes) and every src/href."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.sections: dict[str, str] = {}
        self.images: dict[str, dict[str, str]] = {}
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.tags: set[str] = set()
        self._section: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        if tag == "section":
            self._section = a["id"]
            self.sections[self._section] = ""
        if tag == "img":
            self.images[a.get("id", "")] = a
        for key in ("src", "href", "srcset", "poster", "data"):
            if key in a:
                self.links.append((tag, key, a[key]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._section:
            self.sections[self._section] += data


def decode(img: dict[str, str]) -> np.ndarray:
    prefix = "data:image/png;base64,"
    assert img["src"].startswith(prefix)
    im = PIL_Image.open(io.BytesIO(base64.b64decode(img["src"][len(prefix):])))
    assert im.format == "PNG"
    assert im.size == (int(img["width"]), int(img["height"]))
    return np.asarray(im.convert("RGB")).astype(int)


def near(pixels: np.ndarray, rgb: tuple[int, int, int], tol: int = 40) -> int:
    """How many pixels lie within ``tol`` (Euclidean, RGB) of ``rgb``."""
    return int((((pixels - np.array(rgb)) ** 2).sum(axis=-1) < tol * tol).sum())


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def held_out_precision() -> dict[str, Any]:
    """eval.json's precision fields (``discovery.held_out_reliability``) on the corpus."""
    from discovery import HeldOutScores, RankingConfig, held_out_reliability

    texts = [r["text"] for r in runbuilder.corpus_records()]
    gold = {p.format(n=n): lab for p, lab in runbuilder.PATTERNS for n in runbuilder.NOUNS}
    probs = {"keyword": runbuilder.keyword_model.predict_proba(texts),
             "reference": runbuilder.reference_probs(texts)}
    held = HeldOutScores(runbuilder.LABELS, [gold[t] for t in texts],
                         {k: np.array([[r[lab] for lab in runbuilder.LABELS] for r in v])
                          for k, v in probs.items()})
    return held_out_reliability(held, RankingConfig(top_fraction=0.2), ranked="keyword")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A complete run, its report written by the CLI: (run dir, stdout, report.html)."""
    run = runbuilder.build_run(tmp_path_factory.mktemp("report") / "run")
    # The held-out evaluation that `discover` writes (the builder has no models to evaluate),
    # and the hard subset's precision measured on held-out scores: the corpus sentences with
    # their patterns' labels, scored by the builder's keyword model and reference.
    (run / "eval.json").write_text(json.dumps({"reports": {
        "keyword": {"accuracy": 0.8125, "macro_f1": 0.8, "n": 16},
        "reference": {"accuracy": 0.875, "macro_f1": 0.87, "n": 16}}, **held_out_precision()}))
    capture = io.StringIO()
    stdout, sys.stdout = sys.stdout, capture
    try:
        code = main(["report", "--run", str(run)])
    finally:
        sys.stdout = stdout
    assert code == 0
    return run, capture.getvalue(), (run / "report.html").read_text(encoding="utf-8")


def test_cli_writes_report_and_summary(built: tuple[Path, str, str]) -> None:
    run, out, _ = built
    assert f"wrote {run / 'report.html'} (12 sections, 5 figures)" in out  # findings: n-grams
    assert f"wrote {run / 'summary.md'}" in out
    assert "skipped Review decisions: no review/decisions.jsonl" in out
    assert (run / "report.html").stat().st_size > 10_000


def test_every_section_is_present_with_its_figure(built: tuple[Path, str, str]) -> None:
    _, _, html = built
    page = Page(html)
    for key in SECTIONS:
        assert key in page.sections, key
        assert "Skipped" not in page.sections[key], (key, page.sections[key][:200])
    assert "Skipped: no review/decisions.jsonl" in page.sections["review"]
    assert sorted(i for i in page.images) == sorted(FIGURES)
    for fig_id in FIGURES:  # each figure decodes and is not blank
        pixels = decode(page.images[fig_id])
        assert (pixels < 250).any(axis=-1).mean() > 0.03, fig_id
        assert (pixels.max(axis=-1) - pixels.min(axis=-1) > 60).sum() > 100, fig_id

    div = decode(page.images["fig-divergence"])
    assert near(div, OTHER_RGB) > 2000  # the bars
    assert near(div, HARD_RGB) > 100  # the hard subset's cut-off line
    assert "the hard subset (10) lies right of 0.635" in page.sections["divergence"]

    # The scatter: the corpus in grey-blue, the hard subset in red, as the caption says.
    scatter = decode(page.images["fig-scatter"])
    assert near(scatter, HARD_POINT, tol=20) > 150 and near(scatter, CORPUS_POINT, tol=20) > 300
    assert "hard subset in red" in page.sections["scatter"]
    assert "Top labels agree on 80.0%" in page.sections["scatter"]

    assert near(decode(page.images["fig-ngrams"]), HARD_BAR, tol=20) > 20_000
    assert "Top 18 of 18 n-grams by z" in page.sections["ngrams"]

    bars = decode(page.images["fig-fail-rate-tiny"])  # one bar colour per model
    assert all(near(bars, rgb) > 1000 for rgb in MODEL_RGB)
    assert "for 2 model(s) (the share of its cases each model fails; lower is better), 24 cases" \
        in page.sections["verify-tiny"]

    heat = decode(page.images["fig-groups-tiny-reviewer-gender"])
    assert near(heat, (0x05, 0x30, 0x61)) > 1000 and near(heat, (0x67, 0x00, 0x1F)) > 1000

    fills = page.sections["fills-tiny"]
    for test in ("positive adjective", "negative adjective", "double negation"):
        assert test in fills
    hard = page.sections["hard"]
    assert "10 sentences, each a failure by the run's one rule; the first 10 by rank." in hard
    assert runbuilder.hard_ids(built[0])[0] in hard


def test_report_is_self_contained(built: tuple[Path, str, str]) -> None:
    _, _, html = built
    page = Page(html)
    assert {"link", "iframe", "object", "embed"}.isdisjoint(page.tags)
    assert html.count("<script") == 1 and "<script>" in html  # inline only: no src
    bad = [(t, k, v[:60]) for t, k, v in page.links
           if not (v.startswith("#") or v.startswith("data:image/png;base64,"))]
    assert bad == []
    assert sum(1 for _, k, _ in page.links if k == "src") == len(FIGURES)
    assert not re.search(r"https?://|file:|url\(|@import", html)


def test_summary_md_has_the_key_numbers(built: tuple[Path, str, str]) -> None:
    run, _, _ = built
    md = (run / "summary.md").read_text(encoding="utf-8")
    corpus = runbuilder.corpus_records()
    texts = [r["text"] for r in corpus]
    task = runbuilder.keyword_model.predict_proba(texts)
    ref = runbuilder.reference_probs(texts)
    agree = np.mean([(t["positive"] > 0.5) == (r["positive"] > 0.5)
                     for t, r in zip(task, ref, strict=True)])
    summary = json.loads((run / "verify" / "tiny" / "summary.json").read_text())
    tests = [r for r in summary["summary"] if r["level"] == "test"]

    def fail_rate(model: str) -> str:  # as verify prints it
        n = sum(r["n"] for r in tests if r["model"] == model)
        bad = sum(r["failures"] for r in tests if r["model"] == model)
        return f"{100 * bad / n:.1f}% ({bad}/{n} cases failed)"

    hard = [json.loads(line) for line in (run / "hard.jsonl").read_text().splitlines()]
    ngrams = [json.loads(line) for line in (run / "ngrams.jsonl").read_text().splitlines()]
    expected = [
        "| config hash | feedc0de12345678 |",
        f"| corpus sentences | {len(corpus)} |",
        f"| scored sentences | {len(corpus)} (task model 'keyword' and the reference) |",
        f"| top-label agreement, task model vs reference | {100 * agree:.1f}% |",
        f"| hard subset | {runbuilder.HARD_SIZE} sentences, divergence >= "
        f"{min(r['divergence'] for r in hard):.3f}; labels differ on 10 |",
        f"| n-grams mined | {len(ngrams)} |",
        f"| suite tiny: fail rate of keyword | {fail_rate('keyword')} |",
        f"| suite tiny: fail rate of negation-aware | {fail_rate('negation-aware')} |",
        "| keyword | 0.812 | 0.800 | 16 |",  # held-out evaluation
        "| reference | 0.875 | 0.870 | 16 |",
        # how far to trust the hard subset: the keyword model is wrong on all 10 of the
        # held-out sentences the rule selects (its 10 errors are where the models differ most)
        "| abs_top (configured) | 1.000 | 0.722 | 1.000 | 10 |",
        "| task model keyword | 0.812 |", "| majority-class baseline | 0.500 |",
        f"| 1 | {hard[0]['id']} | {hard[0]['text']} | {hard[0]['divergence']:.3f} | negative "
        "| positive |",
        f"| {ngrams[0]['ngram']} | 5 | 5 | {ngrams[0]['z']:.3f} |",
        "| double negation | 100.0% | 0.0% |",  # per-test fail rate per model, as verify
        "| negative adjective | 0.0% | 0.0% |",
        "| positive adjective | 33.3% | 33.3% |",
        # test-group deviations, every label (a multi-label model's differ)
        "| male | 0.018 | -0.018 | 0.018 | -0.018 |",
        "| female | -0.018 | 0.018 | -0.018 | 0.018 |",
        "| PADJ | superb | 3 | 100.0% | 100.0% |",  # per-fill fail rate: the models' gap
        "| THING | book | 1 | 100.0% | 0.0% |",
        "_Skipped: no review/decisions.jsonl",
    ]
    missing = [line for line in expected if line not in md]
    assert missing == [], md
    assert fail_rate("keyword") == "33.3% (6/18 cases failed)"  # the numbers above are real
    assert "data:image" not in md


def test_out_option_writes_elsewhere(built: tuple[Path, str, str], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = built
    before = snapshot(run)
    assert main(["report", "--run", str(run), "--out", str(tmp_path / "r" / "x.html")]) == 0
    assert (tmp_path / "r" / "x.html").is_file() and (tmp_path / "r" / "summary.md").is_file()
    assert snapshot(run) == before
    assert f"wrote {tmp_path / 'r' / 'x.html'}" in capsys.readouterr().out


def test_missing_pieces_skip_their_sections(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = runbuilder.build_run(tmp_path / "run", verify=False, ngrams=False, scores=False)
    assert main(["report", "--run", str(run)]) == 0
    out = capsys.readouterr().out
    assert "skipped Task model vs reference: no task-model and reference scores" in out
    assert "skipped N-gram enrichment: no ngrams.jsonl (run `synthcheck mine`)" in out
    assert "skipped Verification: no verify/<suite>/summary.json" in out
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    assert sorted(page.images) == ["fig-divergence"]  # the hard subset's divergences only
    for key in ("scatter", "ngrams", "verify", "review"):
        assert page.sections[key].strip().splitlines()[-1].startswith("Skipped: "), key
    assert ("Divergence (abs_top) of the 10 hard-subset sentences only (no scores"
            in page.sections["divergence"])
    assert "10 sentences, each a failure by the run's one rule; the first 10 by rank." in \
        page.sections["hard"]
    assert not any(k.startswith(("groups-", "fills-")) for k in page.sections)
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "_Skipped: no ngrams.jsonl (run `synthcheck mine`)_" in md
    assert "| corpus sentences | 50 |" in md and "scored sentences" not in md


def test_no_hard_subset_keeps_the_scatter_without_highlight(tmp_path: Path) -> None:
    run = runbuilder.build_run(tmp_path / "run", verify=False)
    (run / "hard.jsonl").unlink()
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    assert page.sections["hard"].strip().endswith("Skipped: no hard.jsonl (run `synthcheck rank`)")
    scatter = decode(page.images["fig-scatter"])
    assert near(scatter, CORPUS_POINT, tol=20) > 300
    assert near(scatter, HARD_POINT, tol=60) == 0  # nothing highlighted
    assert "no hard subset highlighted (no hard.jsonl)" in page.sections["scatter"]
    assert "Divergence (abs_top) of 50 sentences." in page.sections["divergence"]


def test_nothing_to_report_is_an_error_that_keeps_old_files(
        built: tuple[Path, str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "empty"
    run.mkdir()
    shutil.copy(built[0] / "manifest.json", run / "manifest.json")
    (run / "report.html").write_text("old report")
    before = snapshot(run)
    assert main(["report", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: nothing to report: the run has no corpus, scores, hard.jsonl, "
                          f"ngrams.jsonl, eval.json, review decisions or verify outputs ({run}): "
                          "run `synthcheck discover`")
    assert "Traceback" not in err
    assert snapshot(run) == before


def test_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "nope"
    assert main(["report", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: the run directory does not exist ({run}): pass the "
                          "directory `discover`, `generate` or `verify` wrote (--run DIR)")
    assert not run.exists()


def test_empty_directory_without_manifest_has_nothing_to_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "empty"
    run.mkdir()
    assert main(["report", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: nothing to report: the run has no corpus, scores, hard.jsonl, "
                          f"ngrams.jsonl, eval.json, review decisions or verify outputs ({run})")
    assert list(run.iterdir()) == []


def test_malformed_input_names_the_file_and_keeps_the_old_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = runbuilder.build_run(tmp_path / "run", ngrams=False)
    assert main(["report", "--run", str(run)]) == 0
    capsys.readouterr()
    (run / "verify" / "tiny" / "summary.json").write_text('{"suite": "tiny", ')
    before = snapshot(run)
    assert main(["report", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: summary.json is not valid JSON: Expecting property name "
                          f"enclosed in double quotes ({run / 'verify' / 'tiny' / 'summary.json'})"
                          ": rerun `synthcheck verify`")
    assert snapshot(run) == before


# -- the browser ---------------------------------------------------------------------------
def screenshot(html: Path, out: Path, *, height: int) -> np.ndarray:
    """Render ``html`` in headless Chromium at 1200 x ``height`` CSS pixels; return RGB."""
    chromium = shutil.which("chromium")
    assert chromium
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={out.parent / ('profile-' + out.stem)}",
           f"--screenshot={out}", f"--window-size=1200,{height}", html.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return np.asarray(PIL_Image.open(out).convert("RGB")).astype(int)


PALETTE = {"histogram bars": OTHER_RGB, "n-gram bars": HARD_BAR, "corpus points": CORPUS_POINT,
           "first model's bars": MODEL_RGB[0], "second model's bars": MODEL_RGB[1],
           "heatmap, negative": (0x05, 0x30, 0x61), "heatmap, positive": (0x67, 0x00, 0x1F)}


def near_mask(pixels: np.ndarray, rgb: tuple[int, int, int], tol: int = 20) -> np.ndarray:
    return ((pixels - np.array(rgb)) ** 2).sum(axis=-1) < tol * tol


def ink_tiles(pixels: np.ndarray, size: int = 50) -> set[tuple[int, int]]:
    """Tiles (row, column) of which over 1% is in the figures' colours."""
    ink = np.zeros(pixels.shape[:2], dtype=bool)
    for rgb in PALETTE.values():
        ink |= near_mask(pixels, rgb)
    h, w = ink.shape
    return {(y // size, x // size) for y in range(0, h - size + 1, size)
            for x in range(0, w - size + 1, size)
            if ink[y:y + size, x:x + size].mean() > 0.01}


def regions(tiles: set[tuple[int, int]]) -> int:
    """Connected groups of tiles (edge neighbours)."""
    left, n = set(tiles), 0
    while left:
        n += 1
        stack = [left.pop()]
        while stack:
            r, c = stack.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in left:
                    left.remove(nb)
                    stack.append(nb)
    return n


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="needs Debian's `chromium` on PATH (apt-get install chromium)")
def test_figures_render_in_headless_chromium(built: tuple[Path, str, str],
                                             tmp_path: Path) -> None:
    run, _, html = built
    height = 8000  # the whole page (asserted below), so every figure is in the shot
    shot = screenshot(run / "report.html", tmp_path / "report.png", height=height)
    assert shot.shape == (height, 1200, 3)
    ink = np.where((shot < 240).any(axis=(1, 2)))[0]
    assert ink.max() < height - 200, "the page is longer than the screenshot"

    # The same page with the figures' data removed: what a failed render looks like.
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r'src="data:image/png;base64,[^"]*"', 'src="data:image/png;base64,"',
                             html), encoding="utf-8")
    blank = screenshot(broken, tmp_path / "broken.png", height=height)

    # Each figure colour covers as many screen pixels as in the embedded PNGs together (drawn
    # whole, at 1:1), and (nearly) none without the figures.
    pngs = [decode(img) for img in Page(html).images.values()]
    for name, rgb in PALETTE.items():
        expected = sum(near(p, rgb, tol=20) for p in pngs)
        seen, without = near(shot, rgb, tol=20), near(blank, rgb, tol=20)
        assert expected > 300, name
        assert 0.9 * expected <= seen <= 1.1 * expected + 100, (name, expected, seen)
        assert without < expected / 10, (name, expected, without)

    # Several separate non-blank figure regions, spread down the page.
    tiles = ink_tiles(shot)
    assert len(tiles) >= 100
    assert regions(tiles) >= 5
    rows = sorted({r for r, _ in tiles})
    assert rows[-1] - rows[0] > 40  # from the first figure to the last: over 2,000 pixels
    assert ink_tiles(blank) == set()


FOCUS_ROWS = [
    {"ngram": "blown away", "n": 20, "failures": 15, "rate": 0.75, "rate_lo": 0.531,
     "rate_hi": 0.888, "base_rate": 0.2, "base_n": 50, "base_failures": 10, "rate_ratio": 3.75,
     "rate_diff": 0.55, "p_value": 1e-5, "q_value": 2e-5, "confirmed": True, "rank": 1,
     "corpus_count": 5, "corpus_failures": 5,
     "examples": [{"text": "I was blown away by this film.",
                   "task_probs": {"negative": 0.85, "positive": 0.15},
                   "reference_probs": {"negative": 0.1, "positive": 0.9}},
                  {"text": "We were blown away by the cast.",
                   "task_probs": {"negative": 0.8, "positive": 0.2},
                   "reference_probs": {"negative": 0.25, "positive": 0.75}}]},
    {"ngram": "movie", "n": 18, "failures": 4, "rate": 0.222, "rate_lo": 0.09,
     "rate_hi": 0.452, "base_rate": 0.2, "base_n": 50, "base_failures": 10,
     "rate_ratio": 1.11, "rate_diff": 0.022, "p_value": 0.6, "q_value": 0.6,
     "confirmed": False, "rank": 2, "corpus_count": 10, "corpus_failures": 2,
     "examples": []},
]


def test_findings_block_shows_confirmed_patterns_first(tmp_path: Path) -> None:
    run = runbuilder.build_run(tmp_path / "run")
    (run / "focus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in FOCUS_ROWS))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["stages"]["focus"] = {"status": "complete"}
    manifest["config"]["focus"] = {"alpha": 0.05, "failure": "disagreement"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    assert list(page.sections)[:2] == ["overview", "findings"]
    findings = page.sections["findings"]
    assert "Findings: confirmed failure patterns" in findings
    assert ("Focus rounds generated 38 new sentences containing 2 candidate n-grams and scored "
            "them with both models; 1 are confirmed: they fail significantly more often than "
            "the corpus (failure: disagreement; base rate 0.20 over 50 sentences), or "
            "deleting them changes the task model's top label") in findings
    # The confirmed pattern first: its rate with the interval, the base rate and q.
    first = findings.index("blown away")
    assert first < findings.index("movie")
    assert "0.75 [0.53, 0.89]" in findings and "2e-05" in findings
    # Its failing sentences with both models' probabilities; none for the unconfirmed one.
    assert "\u201cblown away\u201d: fails 15 of 20 new sentences (0.75 [0.53, 0.89]), " \
           "q = 2e-05" in findings
    assert "I was blown away by this film." in findings
    assert "negative=0.85 positive=0.15" in findings and "negative=0.10 positive=0.90" in findings
    assert "\u201cmovie\u201d" not in findings
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "| 1 | blown away | yes (failure rate) | 15 | 20 | 0.75 [0.53, 0.89] |" in md
    assert "| We were blown away by the cast. | negative=0.80 positive=0.20 | " \
           "negative=0.25 positive=0.75 |" in md

    # A focus.jsonl the manifest does not record as complete (focus since turned off) is
    # ignored: the block falls back to the mined n-grams, marked unconfirmed.
    manifest["stages"].pop("focus")
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", "--run", str(run)]) == 0
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    findings = page.sections["findings"]
    assert "Findings: top mined n-grams (not confirmed)" in findings
    assert "blown away by" in findings or "blown away" in findings
    assert "may be anecdotes" in findings and "0.75 [0.53, 0.89]" not in findings


def test_report_of_a_file_says_it_is_a_file(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 19: `report --run FILE` said the directory "does not exist"."""
    path = tmp_path / "notes.txt"
    path.write_text("x")
    assert main(["report", "--run", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: the run path is a file, not a directory ({path}): pass the directory "
        f"`discover`, `generate` or `verify` wrote (--run DIR)\n")
    assert path.read_text() == "x"


def test_a_cut_table_says_how_many_rows_it_shows(tmp_path: Path) -> None:
    """Issue 27: the report's findings table showed 15 of 41 rows without saying so."""
    run = runbuilder.build_run(tmp_path / "run")
    total = len((run / "ngrams.jsonl").read_text().splitlines())
    assert total > 10
    assert main(["report", "--run", str(run)]) == 0
    findings = Page((run / "report.html").read_text(encoding="utf-8")).sections["findings"]
    assert f"10 of {total} n-grams shown; every row is in the run's files." in findings
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert f"10 of {total} n-grams shown" in md
