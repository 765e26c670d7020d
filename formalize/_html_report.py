"""`synthcheck report`: one self-contained ``report.html`` (figures as base64 PNG) and a
``summary.md`` for a run directory.

Sections whose inputs are absent are skipped with a note; only a missing manifest is an
error (RunDirError).
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from discovery import SORT_KEYS
from formalize import _report_figures as figs
from formalize._report import summary_tests
from formalize._report_data import RunData, read_summary_json
from synth.core import DataError, git_commit, package_version, write_text_atomic

# Bump when the report's content or layout changes: `discover` then rewrites a current report.
REPORT_FORMAT = 2



@dataclass
class ReportSection:
    """One part of the report: HTML and Markdown bodies, or the note why it was skipped."""

    key: str
    title: str
    html: str = ""
    markdown: str = ""
    skipped: str | None = None
    figures: list[str] = field(default_factory=list)  # ids of the <img> elements


@dataclass
class Report:
    """A built report; :meth:`write` puts ``report.html`` and ``summary.md`` on disk."""

    run: RunData
    sections: list[ReportSection]
    generated: str

    def to_html(self) -> str:
        """The whole self-contained page."""
        body = []
        toc = []
        for s in self.sections:
            toc.append(f'<li><a href="#{s.key}">{_e(s.title)}</a>'
                       + (" <span class=skip>(skipped)</span>" if s.skipped else "") + "</li>")
            inner = (f'<p class="skip">Skipped: {_e(s.skipped)}</p>' if s.skipped else s.html)
            body.append(f'<section id="{s.key}"><h2>{_e(s.title)}</h2>\n{inner}\n</section>')
        title = f"synthcheck report: {self.run.name}"
        return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
                f"<title>{_e(title)}</title>"
                f'<meta name="generator" content="synthcheck {_e(package_version())}">'
                f"<style>{_CSS}</style></head>\n<body>\n<h1>{_e(title)}</h1>\n"
                f"<p class=meta>{_e(str(self.run.path))} &middot; generated {_e(self.generated)}"
                f"</p>\n<nav><ul>{''.join(toc)}</ul></nav>\n" + "\n".join(body)
                + "\n</body></html>\n")

    def to_markdown(self) -> str:
        """A plain-text summary: provenance, key numbers and tables (no figures)."""
        parts = [f"# synthcheck report: {self.run.name}\n",
                 f"Run directory `{self.run.path}`; generated {self.generated}; "
                 f"figures in `report.html`.\n"]
        for s in self.sections:
            parts.append(f"## {s.title}\n")
            parts.append(f"_Skipped: {s.skipped}_\n" if s.skipped else s.markdown.rstrip() + "\n")
        return "\n".join(parts)

    def write(self, out: str | Path | None = None) -> Path:
        """Write ``report.html`` (default: in the run directory) and ``summary.md`` beside
        it, atomically; return the HTML's path."""
        path = Path(out) if out is not None else self.run.path / "report.html"
        write_text_atomic(path, self.to_html())
        write_text_atomic(path.with_name("summary.md"), self.to_markdown())
        return path


def build_report(run_dir: str | Path, *, top_ngrams: int = 20, top_fills: int = 12,
                 top_hard: int = 15) -> Report:
    """Read a run directory and build every report section.

    Raises:
        RunDirError: the directory has no (readable) manifest.json.
        DataError: an input file is malformed (names the file and line), or the run holds
            nothing to report (no corpus, scores, hard subset, n-grams, evaluation, review
            or verify outputs).
    """
    run = RunData(Path(run_dir))
    sections = [_provenance(run), _overview(run), _divergence(run), _scatter(run),
                _ngrams(run, top_ngrams), _hard(run, top_hard), _review(run)]
    sections += _verify(run, top_fills)
    if all(s.skipped for s in sections[1:]):
        raise DataError(
            "nothing to report: the run has no corpus, scores, hard.jsonl, ngrams.jsonl, "
            "eval.json, review decisions or verify outputs", where=str(run.path),
            fix="run `synthcheck discover` (or its stages) with this --run first")
    return Report(run, sections, datetime.now(UTC).isoformat(timespec="seconds"))


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write ``report.html`` and ``summary.md`` for a run; return the HTML's path.

    Raises:
        RunDirError: the directory has no manifest.json.
    """
    return build_report(run_dir).write(out)


# -- helpers -------------------------------------------------------------------------------
def _e(text: Any) -> str:
    return html.escape(str(text))


def _img(png: figs.Png, fig_id: str, alt: str, caption: str) -> str:
    data = base64.b64encode(png.data).decode("ascii")
    return (f'<figure><img id="{fig_id}" class="fig" alt="{_e(alt)}" width="{png.width}" '
            f'height="{png.height}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in text)
    return "-".join(p for p in out.split("-") if p) or "x"


def _fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        return f"{x:.2g}" if 0 < abs(x) < 10 ** -digits else f"{x:.{digits}f}"
    return "-" if x is None else str(x)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]],
                shade: Sequence[int] = ()) -> str:
    """A plain table; columns in ``shade`` hold accuracies in [0, 1], shaded red to green."""
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header)
           + "</tr></thead><tbody>"]
    for row in rows:
        cells = []
        for j, v in enumerate(row):
            style = ""
            if j in shade and isinstance(v, float) and not math.isnan(v):
                hue = int(120 * max(0.0, min(1.0, v)))
                style = f' style="background:hsl({hue},70%,85%)"'
            cells.append(f"<td{style}>{_e(_fmt(v))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return _fmt(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(str, header)) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# -- sections --------------------------------------------------------------------------
def _provenance(run: RunData) -> ReportSection:
    m = run.manifest
    stages = m.get("stages") or {}
    rows = [("run", run.name), ("config hash", m.get("config_hash", "unknown")),
            ("synthcheck version", m.get("version", "unknown")),
            ("git commit", m.get("git_commit", "unknown")),
            ("created", m.get("created", "unknown"))]
    rows += [(f"stage {name}", (info or {}).get("status", "?")) for name, info in stages.items()]
    rows += [("report written by", f"synthcheck {package_version()} ({git_commit()})")]
    return ReportSection("provenance", "Provenance", html=_html_table(["field", "value"], rows),
                         markdown=_md_table(["field", "value"], rows))


def _overview(run: RunData) -> ReportSection:
    """The key numbers of the run, and the held-out evaluation when there is one."""
    import numpy as np

    sec = ReportSection("overview", "Overview")
    rows: list[tuple[str, Any]] = []
    size = run.corpus_size()
    if size is not None:
        rows.append(("corpus sentences", size))
    scores = run.scores()
    if scores is not None and len(scores.ids):
        agree = float(np.mean(np.nanargmax(scores.task, 1) == np.nanargmax(scores.reference, 1)))
        rows.append(("scored sentences", f"{len(scores.ids):,} (task model "
                                         f"{scores.task_name!r} and the reference)"))
        rows.append(("top-label agreement, task model vs reference", f"{100 * agree:.1f}%"))
    hard = run.hard()
    if hard is not None:
        div = [float(r["divergence"]) for r in hard if "divergence" in r]
        flips = sum(1 for r in hard if r.get("task_label") != r.get("reference_label"))
        rows.append(("hard subset", f"{len(hard):,} sentences"
                     + (f", divergence >= {min(div):.3f}" if div else "")
                     + f"; labels differ on {flips:,}"))
    ngrams = run.ngrams()
    if ngrams is not None:
        rows.append(("n-grams mined", len(ngrams)))
        if ngrams:
            rows.append(("top n-grams", ", ".join(str(r.get("ngram")) for r in ngrams[:5])))
    for d in run.verify_dirs():
        data = read_summary_json(d / "summary.json")
        suite = str(data.get("suite") or d.name)
        n: dict[str, int] = {}
        fails: dict[str, int] = {}
        for r in data.get("summary") or []:
            if r.get("level") == "test" and r.get("n"):
                n[r["model"]] = n.get(r["model"], 0) + int(r["n"])
                fails[r["model"]] = fails.get(r["model"], 0) + int(r.get("failures") or 0)
        for model, total in n.items():
            rows.append((f"suite {suite}: accuracy of {model}",
                         f"{1 - fails[model] / total:.3f} ({total - fails[model]:,}/{total:,} "
                         f"cases)"))
    reports = run.evaluation()
    if not rows and not reports:
        sec.skipped = "no corpus, scores, hard subset, n-grams, evaluation or verify outputs"
        return sec
    sec.html = _html_table(["quantity", "value"], rows) if rows else ""
    sec.markdown = _md_table(["quantity", "value"], rows) if rows else ""
    if reports:
        header = ["model", "accuracy", "macro-F1", "n"]
        erows = [[name, _num(rep.get("accuracy")), _num(rep.get("macro_f1")), rep.get("n")]
                 for name, rep in reports.items() if isinstance(rep, dict)]
        sec.html += ("<h3>Held-out evaluation</h3>"
                     + _html_table(header, erows, shade=(1, 2)))
        sec.markdown += "\nHeld-out evaluation:\n\n" + _md_table(header, erows)
    return sec


def _metric(run: RunData) -> str:
    return str(run.section("ranking").get("metric") or "abs_top")


def _divergence(run: RunData) -> ReportSection:
    sec = ReportSection("divergence", "Divergence")
    scores, hard = run.scores(), run.hard()
    metric = _metric(run)
    hard_div = [float(r["divergence"]) for r in hard or [] if "divergence" in r]
    threshold = min(hard_div) if hard_div else None
    if scores is not None and len(scores.ids):
        from discovery import divergence

        values = divergence(scores.task, scores.reference, metric)
        png = figs.divergence_histogram(values, threshold, metric=metric)
        n = len(values)
    elif hard_div:
        n = len(hard_div)
        png = figs.divergence_histogram(hard_div, None, metric=metric, hard_only=True)
    else:
        sec.skipped = "no scores (scores/task-*.jsonl, scores/reference.jsonl) and no hard.jsonl"
        return sec
    sec.figures = ["fig-divergence"]
    if scores is None:
        cap = (f"Divergence ({metric}) of the {n:,} hard-subset sentences only (no scores in "
               f"scores/, so the rest of the corpus is not shown).")
    else:
        cap = (f"Divergence ({metric}) of {n:,} sentences"
               + (f"; the hard subset ({len(hard_div):,}) lies right of {threshold:.3f}."
                  if threshold is not None else "."))
    sec.html = _img(png, "fig-divergence", "divergence histogram", cap)
    sec.markdown = cap + "\n"
    return sec


def _scatter(run: RunData) -> ReportSection:
    import numpy as np

    sec = ReportSection("scatter", "Task model vs reference")
    scores = run.scores()
    if scores is None or not len(scores.ids) or not scores.labels:
        sec.skipped = "no task-model and reference scores in scores/"
        return sec
    hard_ids = {str(r["id"]) for r in run.hard() or []}
    mask = np.array([i in hard_ids for i in scores.ids], dtype=bool)
    if len(scores.labels) == 2:
        col, label = len(scores.labels) - 1, scores.labels[-1]
        x, y = scores.task[:, col], scores.reference[:, col]
    else:  # each sentence's task-model top label
        top = np.nanargmax(scores.task, axis=1)
        rows = np.arange(len(top))
        x, y, label = scores.task[rows, top], scores.reference[rows, top], "task's top label"
    png = figs.probability_scatter(x, y, mask, label=label, task_name=scores.task_name)
    agree = float(np.mean(np.nanargmax(scores.task, 1) == np.nanargmax(scores.reference, 1)))
    shown = ("hard subset in red" if mask.any() else
             "no hard subset highlighted (no hard.jsonl)" if run.hard() is None else
             "no hard-subset sentence among them")
    cap = (f"p({label}) from task model {scores.task_name!r} against the reference, "
           f"{len(scores.ids):,} sentences; {shown}. Top labels agree on {100 * agree:.1f}%.")
    sec.figures = ["fig-scatter"]
    sec.html = _img(png, "fig-scatter", "task vs reference probability scatter", cap)
    sec.markdown = cap + "\n"
    return sec


def _ngrams(run: RunData, top: int) -> ReportSection:
    sec = ReportSection("ngrams", "N-gram enrichment")
    rows = run.ngrams()
    if rows is None:
        sec.skipped = "no ngrams.jsonl (run `synthcheck mine`)"
        return sec
    if not rows:
        sec.skipped = "ngrams.jsonl is empty: no n-gram reached mining.min_support"
        return sec
    stat = str(run.section("mining").get("statistic") or "z")
    column, smaller = SORT_KEYS.get(stat, ("z", False))
    if column not in rows[0]:
        column, smaller, stat = "z", False, "z"
    head = rows[:top]
    vals = [float(r.get(column, math.nan)) for r in head]
    if smaller:  # q-values: plot -log10 q so that longer bars are stronger
        vals = [-math.log10(max(v, 1e-300)) for v in vals]
    label = f"-log10 {column}" if smaller else column
    png = figs.ngram_enrichment([str(r["ngram"]) for r in head], vals, statistic=label,
                                counts=[int(r.get("hard_count", 0)) for r in head])
    sec.figures = ["fig-ngrams"]
    cap = f"Top {len(head)} of {len(rows):,} n-grams by {stat}."
    table_cols = [c for c in ("ngram", "hard_count", "corpus_count", column, "q_value",
                              "disagreement_rate", "mean_divergence") if c in rows[0]]
    table_cols = list(dict.fromkeys(table_cols))
    trows = [[r.get(c) for c in table_cols] for r in head]
    sec.html = (_img(png, "fig-ngrams", "n-gram enrichment chart", cap)
                + _html_table(table_cols, trows))
    sec.markdown = cap + "\n\n" + _md_table(table_cols, trows)
    return sec


def _hard(run: RunData, top: int) -> ReportSection:
    sec = ReportSection("hard", "Hard subset")
    hard = run.hard()
    if hard is None:
        sec.skipped = "no hard.jsonl (run `synthcheck rank`)"
        return sec
    cols = ["rank", "id", "text", "divergence", "task_label", "reference_label"]
    rows = [[r.get(c) for c in cols] for r in hard[:top]]
    cap = f"{len(hard):,} sentences; the first {len(rows)} by rank."
    sec.html = f"<p>{_e(cap)}</p>" + _html_table(cols, rows)
    sec.markdown = cap + "\n\n" + _md_table(cols, rows)
    return sec


def _review(run: RunData) -> ReportSection:
    from formalize._review import TAGS, ReviewLog

    sec = ReportSection("review", "Review decisions")
    log = ReviewLog(run.path)
    if not log.path.is_file():
        sec.skipped = "no review/decisions.jsonl (tag sentences in notebooks/review.ipynb)"
        return sec
    decisions = log.load()
    counts = [[t, sum(1 for d in decisions.values() if d["tag"] == t)] for t in TAGS]
    hyps = [[h, len(ids), ", ".join(ids[:5])] for h, ids in log.hypotheses().items()]
    notes = "".join(f"<p class=skip>{_e(w)}</p>" for w in log.warnings)
    sec.html = (notes + _html_table(["tag", "sentences"], counts)
                + (_html_table(["hypothesis", "sentences", "ids"], hyps) if hyps else ""))
    sec.markdown = _md_table(["tag", "sentences"], counts) + (
        "\n" + _md_table(["hypothesis", "sentences", "ids"], hyps) if hyps else "")
    return sec


def _verify(run: RunData, top_fills: int) -> list[ReportSection]:
    dirs = run.verify_dirs()
    if not dirs:
        return [ReportSection("verify", "Verification", skipped=(
            "no verify/<suite>/summary.json (run `synthcheck verify --suite SUITE --model SPEC "
            f"--run {run.path}`)"))]
    out = []
    for d in dirs:
        out += _verify_suite(d, top_fills)
    return out


def _verify_suite(d: Path, top_fills: int) -> list[ReportSection]:
    data = read_summary_json(d / "summary.json")
    suite = str(data.get("suite") or d.name)
    slug = _slug(suite)
    tests = summary_tests(data)
    summary = [r for r in data.get("summary") or [] if r.get("level") == "test"]
    models = list(data.get("models") or dict.fromkeys(r["model"] for r in summary))
    acc = {(r["key"], r["model"]): 1 - float(r["fail_rate"]) for r in summary
           if r.get("fail_rate") is not None}
    names = [t for t, info in tests.items() if info.get("type") != "group"]  # suite order
    names += [k for k in dict.fromkeys(r["key"] for r in summary) if k not in names]
    sections = []
    sec = ReportSection(f"verify-{slug}", f"Suite {suite}: accuracy per template")
    if acc:
        png = figs.template_accuracy(names, models, acc)
        sec.figures = [f"fig-accuracy-{slug}"]
        cap = (f"Accuracy per test of suite {suite!r} for {len(models)} model(s), "
               f"{data.get('cases', '?')} cases (provenance: config hash "
               f"{data.get('config_hash', '?')}, git {data.get('git_commit', '?')}).")
        rows = [[t] + [acc.get((t, m), math.nan) for m in models] for t in names]
        sec.html = (_img(png, f"fig-accuracy-{slug}", "per-template accuracy bars", cap)
                    + _html_table(["test", *models], rows, shade=range(1, len(models) + 1)))
        sec.markdown = cap + "\n\n" + _md_table(["test", *models], rows)
    else:
        sec.skipped = f"suite {suite!r} has no pass/fail tests in {d / 'summary.json'}"
    sections.append(sec)
    sections.append(_groups(data, suite, slug))
    sections.append(_fills(d, suite, slug, models, top_fills))
    return sections


def _groups(data: dict[str, Any], suite: str, slug: str) -> ReportSection:
    sec = ReportSection(f"groups-{slug}", f"Suite {suite}: test groups")
    groups = data.get("groups") or []
    if not groups:
        sec.skipped = f"suite {suite!r} has no verified test-group tests"
        return sec
    labels = list(data.get("labels") or dict.fromkeys(r["label"] for r in groups))
    shown = labels[-1:] if len(labels) == 2 else labels  # binary: c(neg) = -c(pos)
    html_parts, md_parts = [], []
    for test in dict.fromkeys(r["test"] for r in groups):
        rows = [r for r in groups if r["test"] == test and r["label"] in shown]
        gnames = list(dict.fromkeys(r["group"] for r in rows))
        cols = list(dict.fromkeys((r["model"], r["label"]) for r in rows))
        val = {(r["group"], r["model"], r["label"]): r.get("deviation") for r in rows}
        matrix = [[_num(val.get((g, m, lab))) for m, lab in cols] for g in gnames]
        col_names = [f"{m}: {lab}" for m, lab in cols]
        fig_id = f"fig-groups-{slug}-{_slug(test)}"
        png = figs.group_heatmap(test, gnames, col_names, matrix)
        sec.figures.append(fig_id)
        cap = f"Test group {test!r}: deviation of mean p(label) per group from the others."
        html_parts.append(_img(png, fig_id, f"test-group heatmap {test}", cap))
        md_parts.append(f"### {test}\n\n" + _md_table(["group", *col_names],
                                                     [[g, *r] for g, r in zip(gnames, matrix,
                                                                              strict=True)]))
    sec.html, sec.markdown = "".join(html_parts), "\n".join(md_parts)
    return sec


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _fills(d: Path, suite: str, slug: str, models: list[str], top: int) -> ReportSection:
    import pandas as pd

    sec = ReportSection(f"fills-{slug}", f"Suite {suite}: accuracy per fill")
    path = d / "fills.csv"
    if not path.is_file():
        sec.skipped = f"no {path}"
        return sec
    df = pd.read_csv(path, dtype={c: str for c in ("test", "slot", "lexicon", "value", "model")},
                     keep_default_na=False)
    if df.empty:
        sec.skipped = f"suite {suite!r} has no templated tests with fills"
        return sec
    models = [m for m in models if m in set(df["model"])] or list(dict.fromkeys(df["model"]))
    html_parts = [f"<p>The {top} fills with the lowest accuracy (worst model) per test.</p>"]
    md_parts = []
    for test, part in df.groupby("test", sort=False):
        wide = part.pivot_table(index=["slot", "value"], columns="model", values="accuracy",
                                aggfunc="first")
        n = part.groupby(["slot", "value"])["n"].max()
        wide = wide.reindex(columns=[m for m in models if m in wide.columns])
        wide["_min"] = wide.min(axis=1)
        wide = wide.sort_values(["_min"], kind="mergesort").head(top)
        rows = [[slot, value, int(n[(slot, value)]),
                 *[float(wide.loc[(slot, value), m]) for m in wide.columns if m != "_min"]]
                for slot, value in wide.index]
        header = ["slot", "value", "n", *[m for m in wide.columns if m != "_min"]]
        html_parts.append(f"<h3>{_e(test)}</h3>"
                          + _html_table(header, rows, shade=range(3, len(header))))
        md_parts.append(f"### {test}\n\n" + _md_table(header, rows))
    sec.html, sec.markdown = "".join(html_parts), "\n".join(md_parts)
    return sec


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1160px;
color:#222;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;border-bottom:1px solid #ddd;padding-bottom:4px;
margin-top:28px}h3{font-size:15px}
.meta{color:#666;font-size:13px}nav ul{columns:3;font-size:13px}
.skip{color:#8a6d3b;font-style:italic}
figure{display:inline-block;margin:8px 12px 8px 0;vertical-align:top}
figcaption{font-size:12px;color:#555;max-width:560px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
"""
