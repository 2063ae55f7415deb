"""Inline SVG charts: the latency charts written directly (render/line_chart.py), the others drawn
with matplotlib (Agg-free SVG backend, offline, deterministic).

Each chart is returned as SVG text with its ids prefixed, so many charts can share one HTML page
without id clashes. Fonts are left as text (``svg.fonttype = none``) so the PDF keeps them
searchable and the HTML stays small. matplotlib is loaded on the first chart, not on import: a
build draws its charts in worker processes, and `check` draws none.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

STYLE: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "esrp-report",
    "font.family": "sans-serif",
    "font.size": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
PALETTE = ("#1f4e79", "#2e75b6", "#9dc3e6", "#c55a11", "#70ad47")
_ID = re.compile(r'\bid="([^"]+)"')


@cache
def _pyplot() -> Any:
    import matplotlib as mpl  # noqa: PLC0415

    mpl.use("svg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _place(fig: Figure, bottom: float = 0.2, right: float = 0.98) -> None:
    """The plot's margins in the figure, as fractions of its size."""
    # Fixed margins, not bbox_inches="tight": a tight box draws every figure twice.
    fig.subplots_adjust(left=0.09, right=right, top=0.88, bottom=bottom)


def _svg(fig: Figure, prefix: str, *, close: bool = True) -> str:
    """A laid-out figure as inline SVG text, its ids prefixed with ``prefix``."""
    buffer = io.StringIO()
    # No creator: a chart of the vendor's document names no tool (its date would make builds differ).
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    if close:
        _pyplot().close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML declaration and doctype: inline in HTML
    for ident in set(_ID.findall(text)):
        new = f"{prefix}-{ident}"
        text = text.replace(f'id="{ident}"', f'id="{new}"').replace(f"#{ident})", f"#{new})")
        text = text.replace(f'href="#{ident}"', f'href="#{new}"')
    return text


def latency_chart(series: pl.DataFrame, title: str, limit: float | None, prefix: str) -> str:
    """One line per instance over the collection window, with the threshold drawn across.

    Written as SVG directly (render/line_chart.py), not with matplotlib: a document holds four of
    these per server, and the plain SVG is quicker both to write and for WeasyPrint to lay out.
    It has no ids, so ``prefix`` is not needed to keep charts on one page apart."""
    import numpy as np  # noqa: PLC0415
    import polars as pl  # noqa: PLC0415 - not in the forkserver the workers come from: its threads

    from esrp_report.render.line_chart import latency_svg  # noqa: PLC0415

    names = [c for c in series.columns if c != "timestamp"]
    if series.height:
        start = series["timestamp"][0]
        minutes = ((series["timestamp"] - start).dt.total_seconds() / 60).to_numpy()
    else:
        minutes = np.zeros(0)
    lines = [series[name].cast(pl.Float64).fill_null(np.nan).to_numpy() for name in names]
    return latency_svg(minutes, lines, title, limit, colours=PALETTE[:2])


def achieved_vs_target_chart(
    labels: Sequence[str], achieved: Sequence[float | None], targets: Sequence[float | None], prefix: str
) -> str:
    """A bar chart of achieved transactional IOPS per label with each target marked, as SVG (ids prefixed with
    ``prefix``); a missing achieved value draws as 0, a missing target is left out."""
    with _pyplot().rc_context(STYLE):
        return _svg(achieved_vs_target_figure(labels, achieved, targets), prefix)


def achieved_vs_target_figure(
    labels: Sequence[str], achieved: Sequence[float | None], targets: Sequence[float | None]
) -> Figure:
    """The figure of ``achieved_vs_target_chart``, laid out, its legend above the plot. It has no title:
    its figure's caption names it (html.py, ``CHART_CAPTIONS``), and a title would say it twice."""
    plt = _pyplot()
    fig: Figure
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.6, 2.2))
        xs = range(len(labels))
        ax.bar(xs, [a or 0 for a in achieved], color=PALETTE[0], label="achieved")
        ax.scatter(
            xs,
            [t if t is not None else float("nan") for t in targets],
            color="#c00000",
            marker="_",
            s=400,
            label="target",
            zorder=3,
        )
        ax.set_xticks(list(xs), labels, rotation=30, ha="right")
        ax.set_ylabel("transactional IOPS")
        _legend_above(ax, columns=2)
        _place(fig, bottom=0.3)
        return fig


def iops_split_chart(labels: Sequence[str], parts: Mapping[str, Sequence[float]], prefix: str) -> str:
    """Stacked IOPS per server: transactional, maintenance, log."""
    with _pyplot().rc_context(STYLE):
        return _svg(iops_split_figure(labels, parts), prefix)


def iops_split_figure(labels: Sequence[str], parts: Mapping[str, Sequence[float]]) -> Figure:
    """The figure of ``iops_split_chart``, laid out, its legend above the plot (no title: see
    ``achieved_vs_target_figure``)."""
    plt = _pyplot()
    fig: Figure
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.6, 2.2))
        xs = list(range(len(labels)))
        bottom = [0.0] * len(labels)
        for i, (name, values) in enumerate(parts.items()):
            ax.bar(xs, values, bottom=bottom, color=PALETTE[i % len(PALETTE)], label=name)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set_xticks(xs, labels, rotation=30, ha="right")
        ax.set_ylabel("IOPS")
        _legend_above(ax, columns=len(parts))
        _place(fig, bottom=0.3)
        return fig


def _legend_above(ax: Any, *, columns: int) -> None:
    """The legend in one row above the plot's top right corner: inside the plot it would hide the
    tops of the bars."""
    ax.legend(
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        ncols=columns,
        frameon=False,
        fontsize=7,
        borderaxespad=0.2,
    )


LATENCY_COLOURS = ("#c55a11", "#70ad47", "#7f3f98")


def trend_chart(
    labels: Sequence[str],
    parts: Mapping[str, Sequence[float]],
    latencies: Mapping[str, Sequence[float]],
    prefix: str,
) -> str:
    """004's figures: per run, IOPS stacked by kind (transactional, log, differential) as bars,
    and the latencies as lines with markers on a second axis (ms)."""
    plt = _pyplot()
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.6, 3.0))
        xs = list(range(len(labels)))
        bottom = [0.0] * len(labels)
        handles = []
        for i, (name, values) in enumerate(parts.items()):
            shown = [max(v, 0.0) for v in values]  # a negative differential cannot be stacked
            handles.append(ax.bar(xs, shown, bottom=bottom, width=0.6, color=PALETTE[i % 3], label=name))
            bottom = [b + v for b, v in zip(bottom, shown, strict=True)]
        ax.set_ylabel("IOPS")
        ax.grid(axis="x", visible=False)
        turned = len(labels) > 3 or max((len(label) for label in labels), default=0) > 24
        ax.set_xticks(xs, labels, rotation=20 if turned else 0, ha="right" if turned else "center")
        right = ax.twinx()
        right.spines["right"].set_visible(True)
        right.grid(False)
        for i, (name, values) in enumerate(latencies.items()):
            (line,) = right.plot(
                xs,
                list(values),
                color=LATENCY_COLOURS[i % 3],
                marker="o",
                markersize=3.5,
                linewidth=1.4,
                label=name,
            )
            handles.append(line)
        right.set_ylabel("latency (ms)")
        right.set_ylim(bottom=0, top=max((v for vs in latencies.values() for v in vs), default=1.0) * 1.15)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncols=3,
            frameon=False,
            fontsize=7,
        )
        _place(fig, bottom=0.3 if turned else 0.12, right=0.91)
        return _svg(fig, prefix)


@dataclass(frozen=True)
class ChartSpec:
    """What to draw, in plain picklable data, so charts can be drawn in worker processes.

    ``key`` names the chart's place in a document and prefixes its SVG ids."""

    key: str
    kind: str  # "latency", "achieved", "split" or "trend"
    args: tuple[Any, ...]


def draw(spec: ChartSpec) -> str:
    """The SVG of a chart spec (latency, achieved, split or trend); raises ValueError for an unknown kind."""
    if spec.kind == "latency":
        series, title, limit = spec.args
        return latency_chart(series, title, limit, spec.key)
    if spec.kind == "achieved":
        labels, achieved, targets = spec.args
        return achieved_vs_target_chart(labels, achieved, targets, spec.key)
    if spec.kind == "split":
        labels, parts = spec.args
        return iops_split_chart(labels, parts, spec.key)
    if spec.kind == "trend":
        labels, parts, latencies = spec.args
        return trend_chart(labels, parts, latencies, spec.key)
    raise ValueError(f"unknown chart kind {spec.kind!r}")
