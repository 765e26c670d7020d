"""The report's figures: matplotlib (Agg canvas, no pyplot state) rendered to PNG bytes.

Each function takes plain arrays/records and returns a :class:`Png` (bytes plus pixel size),
so the HTML can give every ``<img>`` its exact width and height.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

DPI = 100
HARD_COLOR = "#d62728"
OTHER_COLOR = "#7f9fbf"
MODEL_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


@dataclass(frozen=True)
class Png:
    """A rendered figure."""

    data: bytes
    width: int
    height: int


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _render(fig: Any) -> Png:
    buf = io.BytesIO()
    # No "Software" text chunk: the same inputs give the same bytes.
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    w, h = fig.canvas.get_width_height()
    return Png(buf.getvalue(), int(w), int(h))


def divergence_histogram(values: ArrayLike, threshold: float | None, *, metric: str,
                         hard_only: bool = False) -> Png:
    """Histogram of per-sentence divergence; a line marks the hard subset's cut-off."""
    import numpy as np

    fig = _figure(5.6, 3.4)
    ax = fig.add_subplot()
    vals = np.asarray(values, dtype=np.float64)
    vals = vals[np.isfinite(vals)]
    bins = max(10, min(60, int(math.sqrt(max(len(vals), 1))) * 2))
    ax.hist(vals, bins=bins, color=HARD_COLOR if hard_only else OTHER_COLOR,
            edgecolor="white", linewidth=0.5)
    if threshold is not None and not hard_only:
        ax.axvline(threshold, color=HARD_COLOR, linestyle="--", linewidth=1.5,
                   label=f"hard subset cut-off ({threshold:.3f})")
        fig.legend(loc="outside lower center", fontsize=8, frameon=False)
    ax.set_xlabel(f"divergence ({metric})")
    ax.set_ylabel("sentences")
    ax.set_title("hard subset only" if hard_only else f"divergence over {len(vals):,} sentences",
                 fontsize=10)
    return _render(fig)


def probability_scatter(task: ArrayLike, reference: ArrayLike, hard: ArrayLike, *,
                        label: str, task_name: str) -> Png:
    """Task-model vs reference probability of ``label``; the hard subset in red."""
    import numpy as np

    fig = _figure(5.6, 4.6)
    ax = fig.add_subplot()
    x, y = np.asarray(task, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    mask = np.asarray(hard, dtype=bool)
    ax.plot([0, 1], [0, 1], color="#999999", linewidth=1, linestyle=":")
    ax.scatter(x[~mask], y[~mask], s=14, color=OTHER_COLOR, alpha=0.6, linewidths=0,
               label=f"corpus ({int((~mask).sum()):,})")
    if mask.any():
        ax.scatter(x[mask], y[mask], s=22, color=HARD_COLOR, alpha=0.9, linewidths=0,
                   label=f"hard subset ({int(mask.sum()):,})")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"task model {task_name}: p({label})")
    ax.set_ylabel(f"reference: p({label})")
    fig.legend(loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return _render(fig)


def ngram_enrichment(ngrams: Sequence[str], values: Sequence[float], *, statistic: str,
                     counts: Sequence[int] | None = None) -> Png:
    """Horizontal bars of the top n-grams by the mining statistic (best on top)."""
    n = len(ngrams)
    fig = _figure(5.6, max(2.4, 0.26 * n + 1.0))
    ax = fig.add_subplot()
    pos = list(range(n))[::-1]
    ax.barh(pos, values, color=HARD_COLOR, alpha=0.85)
    names = [g if counts is None else f"{g}  ({c})" for g, c in
             zip(ngrams, counts if counts is not None else [0] * n, strict=True)]
    ax.set_yticks(pos, names, fontsize=8)
    ax.set_xlabel(statistic + (" (hard-subset count in brackets)" if counts is not None else ""))
    ax.axvline(0, color="#444444", linewidth=0.8)
    return _render(fig)


ZERO_STUB = 0.008  # the width drawn for a 0.0% bar, so that it stays visible


def fail_rate_figure(tests: Sequence[str], models: Sequence[str],
                     rate: Mapping[tuple[str, str], float]) -> Any:
    """Grouped horizontal bars: fail rate per test for each model, each bar with its value as
    ``verify`` prints it (``12.5%``); a 0.0% bar is drawn as a short stub. The legend sits
    below the axes, where it cannot cover a bar. Returns the (unrendered) matplotlib
    Figure."""
    n, m = len(tests), max(1, len(models))
    fig = _figure(5.6, max(2.4, 0.22 * n * m + 0.3 * n + 1.0 + 0.2 * math.ceil(m / 3)))
    ax = fig.add_subplot()
    height = 0.8 / m
    for j, model in enumerate(models):
        ys = [(n - 1 - i) + (m - 1 - j - (m - 1) / 2) * height for i in range(n)]
        vals = [float(rate.get((t, model), float("nan"))) for t in tests]
        widths = [v if math.isnan(v) else max(v, ZERO_STUB) for v in vals]
        ax.barh(ys, widths, height=height * 0.95, color=MODEL_COLORS[j % len(MODEL_COLORS)],
                label=model)
        for y, v in zip(ys, vals, strict=True):
            ax.text(max(0.0 if math.isnan(v) else v, ZERO_STUB) + 0.01, y,
                    "n/a" if math.isnan(v) else f"{100 * v:.1f}%", va="center", fontsize=6)
    ax.set_yticks(range(n)[::-1], [t[:40] for t in tests], fontsize=8)
    ax.set_xlim(0, 1.14)
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0], ["0%", "20%", "40%", "60%", "80%", "100%"])
    ax.set_xlabel("fail rate (share of the test's cases failed; lower is better)")
    fig.legend(loc="outside lower center", ncols=min(m, 3), fontsize=7, frameon=False)
    return fig


def template_fail_rate(tests: Sequence[str], models: Sequence[str],
                       rate: Mapping[tuple[str, str], float]) -> Png:
    """:func:`fail_rate_figure`, rendered."""
    return _render(fail_rate_figure(tests, models, rate))


def group_heatmap(test: str, rows: Sequence[str], columns: Sequence[str],
                  values: Sequence[Sequence[float]], scale: float | None = None) -> Png:
    """Heatmap of test-group deviations c_i, in the original's orientation (rows: model /
    label, one row per label, so a multi-label model shows each label's own deviation;
    columns: groups), on a symmetric scale: fixed at ``[-scale, scale]``, or (None) scaled
    to the largest deviation."""
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    fig = _figure(max(5.6, 0.9 * len(columns) + 2.4), max(2.0, 0.4 * len(rows) + 1.4))
    ax = fig.add_subplot()
    if scale is not None:
        lim = float(scale)
    else:
        lim = float(np.nanmax(np.abs(data))) if data.size and np.isfinite(data).any() else 1.0
        lim = lim or 1.0
    im = ax.imshow(data, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_yticks(range(len(rows)), list(rows), fontsize=8)
    ax.set_xticks(range(len(columns)), list(columns), fontsize=7, rotation=20, ha="right")
    for (i, j), v in np.ndenumerate(data):
        if np.isfinite(v):
            ax.text(j, i, f"{v:+.3f}", ha="center", va="center", fontsize=7,
                    color="white" if abs(v) > 0.6 * lim else "black")
    ax.set_title(f"{test}: deviation c_i = p_i - mean of other groups", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return _render(fig)
