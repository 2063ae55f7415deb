"""Counter-log figures over the collection window, built from frames (no file reader involved)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from esrp_report import model as m
from esrp_report.analysis import compare, metrics
from esrp_report.model import CounterLog, InstanceRow, InstanceTable, Run, TableKind, TestKind

OBJ = "MSExchange Database ==> Instances"
COUNTERS = [
    (OBJ, "JetstressWin/Instance1.1", "I/O Database Reads Average Latency"),
    (OBJ, "JetstressWin/Instance1.1", "I/O Database Reads/sec"),
    (OBJ, "JetstressWin/Instance1.1", "Database Maintenance IO Reads/sec"),
    (OBJ, "JetstressWin/Instance1.1", "I/O Database Reads Average Bytes"),
    (OBJ, "JetstressWin/Instance1.1", "Database Maintenance IO Reads Average Bytes"),
    (OBJ, "JetstressWin/Instance1.1", "I/O Log Writes Average Latency"),
    (OBJ, "_Total", "I/O Database Reads/sec"),
    ("MSExchange Database", "JetstressWin", "Database Page Fault Stalls/sec"),
    ("Processor", "_Total", "% Processor Time"),
    ("LogicalDisk", "C:\\MP\\DB\\DB1", "Avg. Disk sec/Read"),
]
LOCAL_START = datetime(2011, 3, 11, 13, 28, 0)
OFFSET = -480  # Pacific Standard Time: local = UTC - 8 h


def _log(in_window: list[list[float | None]], warmup: list[float]) -> CounterLog:
    """Two warm-up samples (before the window, wildly different), then the in-window samples."""
    columns = [f"c{i:04d}" for i in range(len(COUNTERS))]
    counters = pl.DataFrame(
        {
            "column": columns,
            "path": [f"\\\\MBX1\\{o}({i})\\{c}" for o, i, c in COUNTERS],
            "machine": ["MBX1"] * len(COUNTERS),
            "object": [o for o, _, _ in COUNTERS],
            "instance": [i for _, i, _ in COUNTERS],
            "counter": [c for _, _, c in COUNTERS],
            "duplicate": [False] * len(COUNTERS),
        }
    )
    rows = [warmup, warmup, *in_window]
    utc0 = (LOCAL_START - timedelta(minutes=OFFSET)).replace(tzinfo=UTC)
    stamps = [utc0 + timedelta(seconds=15 * k) for k in range(len(rows))]
    data: dict[str, object] = {"timestamp": pl.Series(stamps, dtype=pl.Datetime("us", "UTC"))}
    for j, col in enumerate(columns):
        data[col] = pl.Series([row[j] for row in rows], dtype=pl.Float64)
    return CounterLog("Performance_x.csv", "pdh-csv", counters, pl.DataFrame(data), utc_offset_minutes=OFFSET)


def _run_with_window() -> Run:
    run = Run(TestKind.PERFORMANCE, "MBX1", sources=["Performance_x.html"])
    run.collection_start = LOCAL_START + timedelta(seconds=30)  # skips the two warm-up samples
    run.collection_end = LOCAL_START + timedelta(hours=1)
    return run


IN_WINDOW = [
    # lat, reads, bdm, bytes, bdm bytes, log lat, _Total reads, stalls, cpu, disk s/read
    [18.0, 75.0, 30.0, 128000.0, 262144.0, 0.8, 150.0, 0.0, 1.0, 0.018],
    [19.0, 76.0, 31.0, 129000.0, 262144.0, 1.0, 152.0, 2.0, 3.0, 0.020],
]
WARMUP = [500.0, 1.0, 1.0, 1.0, 1.0, 50.0, 2.0, 9.0, 99.0, 0.5]


def test_window_means_exclude_samples_before_collection_start() -> None:
    result = metrics.counter_metrics(_run_with_window(), _log(IN_WINDOW, WARMUP))
    assert result.window.origin == "report"
    assert result.samples_in_window == 2
    total = result.tables[TableKind.TOTAL].row("Instance1.1")
    assert total is not None
    assert total.values[m.DB_READ_LATENCY] == pytest.approx(18.5)
    assert total.values[m.DB_READS] == pytest.approx(75.5)
    assert result.maxima["Instance1.1"][m.DB_READ_LATENCY] == 19.0
    assert result.maxima["Instance1.1"][m.LOG_WRITE_LATENCY] == 1.0


def test_transactional_reads_are_total_less_maintenance() -> None:
    result = metrics.counter_metrics(_run_with_window(), _log(IN_WINDOW, WARMUP))
    trans = result.tables[TableKind.TRANSACTIONAL].row("Instance1.1")
    assert trans is not None
    assert trans.values[m.DB_READS] == pytest.approx(45.0)
    expected_bytes = ((75 * 128000 - 30 * 262144) / 45 + (76 * 129000 - 31 * 262144) / 45) / 2
    assert trans.values[m.DB_READ_BYTES] == pytest.approx(expected_bytes)
    bdm = result.tables[TableKind.BACKGROUND_MAINTENANCE].row("Instance1.1")
    assert bdm is not None
    assert bdm.values[m.BDM_READS] == pytest.approx(30.5)
    # _Total is not a database instance.
    assert [r.instance for r in result.tables[TableKind.TOTAL].rows] == ["Instance1.1"]


def test_host_counters_and_volumes_in_report_units() -> None:
    result = metrics.counter_metrics(_run_with_window(), _log(IN_WINDOW, WARMUP))
    host = {h.name: h for h in result.host}
    assert host["% Processor Time"].average == pytest.approx(2.0)
    assert host["% Processor Time"].maximum == 3.0
    assert host["Database Page Fault Stalls/sec"].average == pytest.approx(1.0)
    assert result.volumes["C:\\MP\\DB\\DB1"]["read_latency_ms"] == pytest.approx(19.0)


def test_missing_samples_are_ignored_not_zeroed() -> None:
    rows = [list(IN_WINDOW[0]), list(IN_WINDOW[1])]
    rows[1][0] = None
    result = metrics.counter_metrics(_run_with_window(), _log(rows, WARMUP))
    total = result.tables[TableKind.TOTAL].row("Instance1.1")
    assert total is not None
    assert total.values[m.DB_READ_LATENCY] == 18.0
    assert result.latency_samples["Instance1.1"][m.DB_READ_LATENCY] == 1


def test_without_report_the_whole_log_is_used_and_said() -> None:
    run = Run(TestKind.PERFORMANCE, "MBX1")
    result = metrics.counter_metrics(run, _log(IN_WINDOW, WARMUP))
    assert result.samples_in_window == 4
    assert any("collection window unknown" in p.message for p in result.problems)


def test_compare_flags_one_percent_but_not_a_rounding_difference() -> None:
    report = {
        TableKind.TOTAL: InstanceTable(
            TableKind.TOTAL,
            [InstanceRow("Instance1.1", {m.DB_READ_LATENCY: 18.5 * 1.01, m.DB_READS: 75.5004})],
        )
    }
    log = {
        TableKind.TOTAL: InstanceTable(
            TableKind.TOTAL,
            [InstanceRow("JetstressWin/Instance1.1", {m.DB_READ_LATENCY: 18.5, m.DB_READS: 75.5})],
        )
    }
    found = compare.compare_tables(report, "report", log, "log")
    assert [(d.metric, round(d.relative_difference, 4)) for d in found] == [(m.DB_READ_LATENCY, 0.0099)]


def test_one_expression_over_many_columns_reduces_as_one_per_column() -> None:
    """Each (one expression over many columns, Polars planning it once) gives every column the
    count, exact mean, minimum and maximum that an expression of its own gives, batch by batch;
    an expression of its own beside it keeps its figures."""
    rng = np.random.default_rng(11)
    values = rng.lognormal(size=(500, 5)) * np.array([1.0, 10.0, 1e3, 1e-3, 50.0])
    values[::9, 0] = -1.0  # outside the bounds: left out
    values[::23, 3] = np.inf
    frame = pl.DataFrame({f"c{i}": values[:, i] for i in range(values.shape[1])}).with_columns(
        pl.when(pl.int_range(pl.len()) % 31 == 4).then(None).otherwise(pl.col("c2")).alias("c2")
    )
    columns = ["c4", "c0", "c2", "c3"]  # not in the frame's order: the outputs follow the list
    bounds = (0.0, 1e4)
    extra = {"sum": pl.col("c0") + pl.col("c1")}
    each = metrics.Reduction(
        extra, each=[metrics.Each("col|", columns, metrics._valid(pl.col(columns), bounds))]
    )
    alone = metrics.Reduction({f"col|{c}": metrics._valid(pl.col(c), bounds) for c in columns} | extra)
    for start in range(0, frame.height, 128):
        each.add(frame.slice(start, 128))
        alone.add(frame.slice(start, 128))
    assert each.names == alone.names == [*(f"col|{c}" for c in columns), "sum"]
    for name in alone.names:
        assert (each.count(name), each.mean(name), each.min(name), each.max(name)) == (
            alone.count(name),
            alone.mean(name),
            alone.min(name),
            alone.max(name),
        ), name
    assert each.count("col|c0") < frame.height  # the bounds did leave samples out


@pytest.mark.skipif(metrics._exactsum is None, reason="the compiled exact-sum extension is not built")
def test_compiled_and_numpy_binning_leave_the_same_integers() -> None:
    """The C loop reads exponents from the bits (frexp only for subnormals) and may walk the
    batch column by column; NumPy uses frexp and bincount. Every bin must hold the same integer,
    so the means are the same to the last bit whichever path ran."""
    rng = np.random.default_rng(7)
    values = rng.standard_normal((300, 6)) * np.array([1e-3, 1.0, 1e3, 1e12, 1e-300, 1e300])
    values[::7, 0] = 5e-324  # the smallest subnormal
    values[::11, 1] = -2.5e-310  # a negative subnormal
    values[::13, 2] = 0.0
    values[::17, 3] = -0.0
    values[5, 4] = np.nan
    values[6, 5] = np.inf
    values[7, 5] = -np.inf
    frame = pl.DataFrame({f"c{i}": values[:, i] for i in range(values.shape[1])}).with_columns(
        pl.when(pl.int_range(pl.len()) % 19 == 3).then(None).otherwise(pl.col("c1")).alias("c1")
    )
    expressions = {name: pl.col(name) for name in frame.columns}
    native = metrics.Reduction(expressions)
    numpy_path = metrics.Reduction(expressions, engine="numpy")
    for start in range(0, frame.height, 64):  # batches, column-major as Polars hands them over
        native.add(frame.slice(start, 64))
        numpy_path.add(frame.slice(start, 64))
    assert np.array_equal(native.high, numpy_path.high) and np.array_equal(native.low, numpy_path.low)
    whole = frame.fill_null(np.nan).to_numpy()
    for layout in (np.ascontiguousarray(whole), np.asfortranarray(whole)):  # the C loop, both orders
        high, low = np.zeros_like(native.high), np.zeros_like(native.low)
        by_column = not layout.flags.c_contiguous
        metrics._exactsum.bin_mantissas(layout, *layout.shape, by_column, high, low)
        assert np.array_equal(high, numpy_path.high) and np.array_equal(low, numpy_path.low)
    assert native.counts.tolist() == numpy_path.counts.tolist()
    assert native.count("c1") == frame.height - frame["c1"].null_count()
    for name in expressions:
        a, b = native.mean(name), numpy_path.mean(name)
        assert (a is None and b is None) or (math.isnan(a) and math.isnan(b)) or a == b, name  # type: ignore[arg-type]
    assert math.isnan(native.mean("c4"))  # type: ignore[arg-type]
    assert math.isnan(native.mean("c5"))  # type: ignore[arg-type]  # +inf and -inf
    assert native.mean("c1") == pytest.approx(float(frame["c1"].drop_nulls().mean()))  # type: ignore[arg-type]
