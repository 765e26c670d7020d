"""The report for any run directory (verify alone), escaping in report.html and summary.md,
the accuracy figure's zero bars and legend, and the page's tables sorted and filtered in
headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from synthcheck.cli import main
from synthcheck.report import build_report
from synthcheck.report._figures import ZERO_STUB, fail_rate_figure
from tests.synthcheck import runbuilder  # noqa: E402
from tests.synthcheck.test_report import Page  # noqa: E402


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return runbuilder.build_run(tmp_path_factory.mktemp("pages") / "run")


def test_verify_only_run_gets_a_report(full_run: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "verify-only"
    shutil.copytree(full_run / "verify", run / "verify")  # what `verify --run` alone writes
    assert main(["report", "--run", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {run / 'report.html'} (6 sections, 2 figures)" in out
    assert "skipped N-gram enrichment: no ngrams.jsonl" in out
    page = Page((run / "report.html").read_text(encoding="utf-8"))
    for key in ("overview", "verify-tiny", "examples-tiny", "groups-tiny", "fills-tiny",
                "provenance"):
        assert "Skipped" not in page.sections[key], key
    for key in ("ngrams", "hard", "divergence", "scatter", "review"):
        assert page.sections[key].strip().splitlines()[-1].startswith("Skipped: "), key
    assert sorted(page.images) == ["fig-fail-rate-tiny", "fig-groups-tiny-reviewer-gender"]
    html = (run / "report.html").read_text(encoding="utf-8")
    assert ("Not in this run directory: manifest.json, corpus, scores, hard.jsonl, "
            "ngrams.jsonl, eval.json, review decisions;") in html
    md = (run / "summary.md").read_text(encoding="utf-8")
    assert "| manifest | none (a run directory made by `verify` alone) |" in md
    assert "| suite tiny | config hash c0ffee, synthcheck " in md
    assert "| suite tiny: fail rate of keyword | 33.3% (6/18 cases failed) |" in md
    assert "| Negation | 100.0% | 0.0% |" in md  # per capability: fail rates, as verify prints
    assert "| positive | 50.0% | 25.0% |" in md  # per expected label
    # The failing examples, each with the fills of its case (from cases.jsonl).
    assert ("| keyword | I can't say I don't love this book. | THING=book | positive | negative "
            "| negative 0.890, positive 0.110 |") in md
    assert "| negation-aware | This film is superb. | THING=film; PADJ=superb | positive |" in md
    assert "negation-aware | I can't say" not in md  # it passes double negation


def test_html_and_markdown_escape_run_text(full_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    evil = "<script>alert(1)</script> & <b>bold</b>"
    hard = [json.loads(x) for x in (run / "hard.jsonl").read_text().splitlines()]
    hard[0]["text"] = evil
    (run / "hard.jsonl").write_text("".join(json.dumps(r) + "\n" for r in hard))
    ex = run / "verify" / "tiny" / "examples.jsonl"
    rows = [json.loads(x) for x in ex.read_text().splitlines()]
    rows[0]["test"] = "<script>x()</script>"
    ex.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = build_report(run)
    html, md = report.to_html(), report.to_markdown()
    assert "<script>alert" not in html and "<b>" not in html and "<script>x()" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert len(re.findall(r"<script", html)) == 1  # the page's own, inline
    assert "<script" not in md and "<b>" not in md
    assert "&lt;script>alert(1)&lt;/script> & &lt;b>bold&lt;/b>" in md
    assert "### &lt;script>x()&lt;/script>" in md


def test_markdown_text_escapes_only_what_could_be_html() -> None:
    # summary.md is read as plain text too: "q < 0.05" and "0.754 < 0.772" stay as written,
    # a tag or an entity does not survive.
    from synthcheck.report._render import md_text

    assert md_text("q < 0.05; 0.754 < 0.772 & x <= y") == "q < 0.05; 0.754 < 0.772 & x <= y"
    assert md_text("<b>x</b> <!-- c --> &amp; &#60; a|b") == \
        "&lt;b>x&lt;/b> &lt;!-- c --> &amp;amp; &amp;#60; a\\|b"


def test_zero_bars_are_visible_and_the_legend_covers_no_bar() -> None:
    tests = ["a", "b", "c"]
    acc = {("a", "m1"): 0.0, ("a", "m2"): 1.0, ("b", "m1"): 0.5, ("b", "m2"): 0.0,
           ("c", "m1"): 1.0}
    fig = fail_rate_figure(tests, ["m1", "m2"], acc)
    fig.canvas.draw()
    ax = fig.axes[0]
    widths = sorted(round(p.get_width(), 6) for p in ax.patches)
    # NaN (c, m2) is drawn as no bar; every 0.0% as a stub.
    assert widths[:2] == [ZERO_STUB, ZERO_STUB] and widths[2:5] == [0.5, 1.0, 1.0]
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["0.0%", "0.0%", "100.0%", "100.0%", "50.0%", "n/a"]
    stub_px = ax.transData.transform((ZERO_STUB, 0))[0] - ax.transData.transform((0, 0))[0]
    assert stub_px >= 3  # pixels: visible at the report's 100 dpi
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["m1", "m2"]
    for bar in ax.patches:
        assert not legend.overlaps(bar.get_window_extent(renderer))
    assert legend.y1 <= ax.get_window_extent(renderer).y0  # below the plot


# -- the browser ---------------------------------------------------------------------------
DRIVE = """<script>
(function () {
  var sec = document.getElementById("verify-tiny");
  var table = sec.querySelector("table.sortable");
  table.tHead.rows[0].cells[1].click();  // sort by the keyword model's fail rate: ascending
  table.tHead.rows[0].cells[1].click();  // and again: descending
  var f = document.querySelector("#examples-tiny input.filter");  // the first test's table
  f.value = "BOOK";
  f.dispatchEvent(new Event("input"));
})();
</script></body>"""
SEARCH = """<script>
(function () {
  var q = document.getElementById("search");
  q.value = "book";
  q.dispatchEvent(new Event("input"));
})();
</script></body>"""


def dump_dom(html: Path, tmp: Path) -> str:
    chromium = shutil.which("chromium")
    assert chromium
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", f"--user-data-dir={tmp / 'profile'}", "--dump-dom",
           html.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def shown_rows(dom: str, section: str) -> list[list[str]]:
    """The visible rows (cell texts) of every table in ``section``."""
    body = dom[dom.index(f'<section id="{section}"'):]
    body = body[:body.index("</section>")]
    out = []
    for tr in re.findall(r"<tr( hidden=\"\")?>(.*?)</tr>", body, flags=re.S):
        if tr[0] or "<td" not in tr[1]:
            continue
        out.append([re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr[1])])
    return out


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="needs Debian's `chromium` on PATH (apt-get install chromium)")
def test_tables_sort_and_filter_in_headless_chromium(full_run: Path, tmp_path: Path) -> None:
    page = build_report(full_run).to_html()
    as_built = tmp_path / "plain.html"
    as_built.write_text(page, encoding="utf-8")
    plain = dump_dom(as_built, tmp_path)
    assert [r[0] for r in shown_rows(plain, "verify-tiny")][:3] == [
        "positive adjective", "negative adjective", "double negation"]  # suite order
    assert len(shown_rows(plain, "examples-tiny")) == 9

    driven = tmp_path / "driven.html"
    driven.write_text(page.replace("</body>", DRIVE), encoding="utf-8")
    dom = dump_dom(driven, tmp_path)
    rows = shown_rows(dom, "verify-tiny")
    assert [r[:2] for r in rows[:3]] == [["double negation", "100.0%"],  # fail rates
                                         ["positive adjective", "33.3%"],
                                         ["negative adjective", "0.0%"]]
    assert 'aria-sort="descending"' in dom
    # The first table's filter ("BOOK", any case) hides its other rows, in that table only.
    examples = shown_rows(dom, "examples-tiny")
    assert [r[:3] for r in examples] == [
        ["keyword", "This book is superb.", "THING=book; PADJ=superb"],
        ["negation-aware", "This book is superb.", "THING=book; PADJ=superb"],
        *[["keyword", f"I can't say I don't love this {n}.", f"THING={n}"]
          for n in ("movie", "film", "book")]]
    assert examples[0][3:] == ["positive", "negative", "negative 0.853, positive 0.147"]
    assert len(shown_rows(dom, "hard")) == len(shown_rows(plain, "hard")) == 10

    searched = tmp_path / "searched.html"
    searched.write_text(page.replace("</body>", SEARCH), encoding="utf-8")
    dom = dump_dom(searched, tmp_path)
    seen = {key: shown_rows(dom, key) for key in ("verify-tiny", "examples-tiny", "hard")}
    assert seen["verify-tiny"] == []  # no row mentions "book"
    assert [r[1] for r in seen["examples-tiny"]] == ["This book is superb."] * 2 + [
        "I can't say I don't love this book."]
    assert seen["hard"] and all("book" in " ".join(r).lower() for r in seen["hard"])
    total = sum(len(shown_rows(dom, k)) for k in re.findall(r'<section id="([^"]+)"', dom))
    count = re.search(r'<span id="search-count">(\d+) matching rows</span>', dom)
    assert count is not None and int(count.group(1)) == total
