"""Charts drawn on the reused latency figure come out as from a new figure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

from esrp_report.render import charts


def _series(seed: int, instances: int, points: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    start = datetime(2011, 3, 14, 9, 2, 3, tzinfo=UTC)
    frame = {"timestamp": [start + timedelta(minutes=15 * i) for i in range(points)]}
    for i in range(instances):
        frame[f"Instance{i}"] = list(5 + 20 * rng.random(points) * (seed + 1))
    return pl.DataFrame(frame)


def _fresh(series: pl.DataFrame, title: str, limit: float | None, prefix: str) -> str:
    charts._LATENCY.clear()  # the next chart gets a new figure
    return charts.latency_chart(series, title, limit, prefix)


def test_a_latency_chart_does_not_depend_on_the_charts_drawn_before_it() -> None:
    tall = (_series(3, 20, 100), "EMAIL1: Database read latency per instance", 20.0, "a")
    short = (_series(0, 3, 12), "EMAIL2: Log write latency per instance", None, "b")
    expected = {"a": _fresh(*tall), "b": _fresh(*short)}
    assert expected["a"] != expected["b"]
    # On the reused figure, in both orders, with other kinds of chart in between.
    charts.draw(charts.ChartSpec("c", "achieved", (["x", "y"], [3.0, 4.0], [3.5, None])))
    assert charts.latency_chart(*short) == expected["b"]
    assert charts.latency_chart(*tall) == expected["a"]
    charts.draw(charts.ChartSpec("d", "split", (["x"], {"transactional": [1.0], "log writes": [0.5]})))
    assert charts.latency_chart(*short) == expected["b"]
    assert "limit 20 ms" in expected["a"] and "limit" not in expected["b"]
