"""The latency charts, written as SVG directly (render/line_chart.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import pytest
from matplotlib.text import Text

from esrp_report.render import charts
from esrp_report.render.line_chart import BOTTOM, TOP, nice_ticks

SVG = "{http://www.w3.org/2000/svg}"


def _series(seed: int, instances: int, points: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    start = datetime(2011, 3, 14, 9, 2, 3, tzinfo=UTC)
    frame = {"timestamp": [start + timedelta(minutes=15 * i) for i in range(points)]}
    for i in range(instances):
        frame[f"Instance{i}"] = list(5 + 20 * rng.random(points) * (seed + 1))
    return pl.DataFrame(frame)


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_a_latency_chart_is_the_same_whatever_was_drawn_before_it() -> None:
    tall = (_series(3, 20, 100), "EMAIL1: Database read latency per instance", 20.0, "a")
    short = (_series(0, 3, 12), "EMAIL2: Log write latency per instance", None, "b")
    first = charts.latency_chart(*tall)
    charts.draw(charts.ChartSpec("c", "achieved", (["x", "y"], [3.0, 4.0], [3.5, None])))
    charts.latency_chart(*short)
    assert charts.latency_chart(*tall) == first
    assert "limit 20 ms" in first and "limit" not in charts.latency_chart(*short)


def test_one_line_per_instance_and_the_axes_hold_the_data_and_the_limit() -> None:
    series = _series(1, 5, 40)
    svg = charts.latency_chart(series, "EMAIL3: Database read latency per instance", 20.0, "k")
    root = ET.fromstring(svg)
    lines = root.findall(f"{SVG}polyline")
    assert len(lines) == 5
    assert all(len(line.get("points", "").split()) == 40 for line in lines)
    y_labels = [float(t.text or "") for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    peak = float(series.drop("timestamp").max_horizontal().max())  # type: ignore[arg-type]
    assert y_labels[0] == 0 and max(peak, 20.0) <= y_labels[-1] <= max(peak, 20.0) * 1.5
    for line in lines:  # every point inside the plot, none above the top tick
        ys = [float(p.split(",")[1]) for p in line.get("points", "").split()]
        assert min(ys) >= TOP - 1e-6 and max(ys) <= BOTTOM + 1e-6
    assert "minutes into the collection window" in _texts(svg)


def test_a_missing_sample_breaks_the_line_instead_of_drawing_zero() -> None:
    series = _series(2, 1, 10).with_columns(
        pl.when(pl.int_range(pl.len()) == 4).then(None).otherwise(pl.col("Instance0")).alias("Instance0")
    )
    svg = charts.latency_chart(series, "gap", None, "k")
    runs = [line.get("points", "").split() for line in ET.fromstring(svg).iter(f"{SVG}polyline")]
    assert [len(r) for r in runs] == [4, 5]


def test_titles_are_escaped_and_the_svg_is_well_formed() -> None:
    svg = charts.latency_chart(_series(0, 2, 5), '<script>alert(1)</script> & "x"', 20.0, "k")
    assert "<script>" not in svg
    assert '<script>alert(1)</script> & "x"' in _texts(svg)
    assert ET.fromstring(svg).get("aria-label") == '<script>alert(1)</script> & "x"'


@pytest.mark.parametrize(
    ("high", "expected"),
    [
        (21.0, [0, 5, 10, 15, 20, 25]),
        (0.93, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (1440.0, [0, 250, 500, 750, 1000, 1250, 1500]),
        (0.0, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ],
)
def test_ticks_are_round_numbers_from_zero_past_the_highest_value(high: float, expected: list[float]) -> None:
    assert nice_ticks(high) == pytest.approx(expected)


SERVERS = [f"Server {i}" for i in range(1, 11)]


@pytest.mark.parametrize(
    "figure",
    [
        lambda: charts.achieved_vs_target_figure(SERVERS, [1424.6] * 10, [1400.0] * 10),
        lambda: charts.iops_split_figure(
            SERVERS,
            {
                "transactional": [1424.6] * 10,
                "maintenance (BDM) reads": [600.0] * 10,
                "log writes": [490.0] * 10,
            },
        ),
    ],
    ids=["achieved", "split"],
)
def test_bar_chart_legends_sit_outside_the_plot_and_inside_the_figure(figure: Any) -> None:
    fig = figure()
    try:
        fig.draw_without_rendering()
        (ax,) = fig.axes
        legend = ax.get_legend().get_window_extent()
        plot = ax.get_window_extent()
        # The figure's caption names the chart: no title is drawn over the plot to say it twice.
        assert [t for t in ax.get_children() if isinstance(t, Text) and t.get_text()] == []
        assert not legend.overlaps(plot), "the legend is drawn over the bars"
        assert fig.bbox.contains(legend.x0, legend.y0) and fig.bbox.contains(legend.x1, legend.y1)
        labels = [t.get_window_extent() for t in ax.get_xticklabels()]
        assert all(fig.bbox.contains(b.x0, b.y0) for b in labels), "a server label is cut off"
    finally:
        charts._pyplot().close(fig)
