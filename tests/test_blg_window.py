"""Exact window averages of a .blg: the formula on the window's first and last raw values.

Logs are written with known raw values (by the independent writer) at unequal intervals, with a
sample missing; the expected figures are computed here by hand from the published formulas.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.blg import read_blg, window_averages, window_report
from esrp_report.ingest.perfmon.counter_types import WINDOW_WHY, Formula, RawEnds, window_average
from esrp_report.model.errors import CounterLogError
from esrp_synth import blg_writer as w

# Every test runs with both engines (the "engine" fixture: tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine")


FREQ = 10_000_000
OBJECT_FREQ = 10_000_000
START = datetime(2026, 3, 1, 9, 0, 0)
# Seconds from the start: unequal steps, and the sample at 45 s is missing from the log.
OFFSETS = (0, 15, 30, 60, 70, 100)

KINDS: list[tuple[w.Counter, str]] = [
    (w.Counter("Raw", w.PERF_COUNTER_RAWCOUNT, size=4), "raw"),
    (w.Counter("Large Raw", w.PERF_COUNTER_LARGE_RAWCOUNT), "raw"),
    (w.Counter("% Fraction", w.PERF_RAW_FRACTION, size=4), "fraction"),
    (w.Counter("Elapsed", w.PERF_ELAPSED_TIME), "elapsed"),
    (w.Counter("Ops/sec", w.PERF_COUNTER_COUNTER, size=4), "rate"),
    (w.Counter("Bytes/sec", w.PERF_COUNTER_BULK_COUNT), "rate"),
    (w.Counter("Sample Counter", w.PERF_SAMPLE_COUNTER, size=4), "rate"),
    (w.Counter("% Timer", w.PERF_COUNTER_TIMER), "timer_pt"),
    (w.Counter("% Timer Inv", w.PERF_COUNTER_TIMER_INV), "timer_inv_pt"),
    (w.Counter("% 100ns", w.PERF_100NSEC_TIMER), "timer_100"),
    (w.Counter("% 100ns Inv", w.PERF_100NSEC_TIMER_INV), "timer_inv_100"),
    (w.Counter("% Object Timer", w.PERF_OBJ_TIME_TIMER), "timer_obj"),
    (w.Counter("% Precision System", w.PERF_PRECISION_SYSTEM_TIMER), "precision"),
    (w.Counter("% Precision 100ns", w.PERF_PRECISION_100NS_TIMER), "precision"),
    (w.Counter("% Precision Object", w.PERF_PRECISION_OBJECT_TIMER), "precision"),
    (w.Counter("Queue", w.PERF_COUNTER_QUEUELEN_TYPE, size=4), "queue_pt"),
    (w.Counter("Large Queue", w.PERF_COUNTER_LARGE_QUEUELEN_TYPE), "queue_pt"),
    (w.Counter("100ns Queue", w.PERF_COUNTER_100NS_QUEUELEN_TYPE), "queue_100"),
    (w.Counter("Object Queue", w.PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE), "queue_obj"),
    (w.Counter("Avg. sec/op", w.PERF_AVERAGE_TIMER, size=4), "average_timer"),
    (w.Counter("Avg. Bytes/op", w.PERF_AVERAGE_BULK), "average"),
    (w.Counter("% Sample Fraction", w.PERF_SAMPLE_FRACTION, size=4), "sample_fraction"),
    (w.Counter("Delta", w.PERF_COUNTER_DELTA, size=4), "delta"),
    (w.Counter("Large Delta", w.PERF_COUNTER_LARGE_DELTA), "delta"),
    (w.Counter("% Multi", w.PERF_COUNTER_MULTI_TIMER), "multi_pt"),
    (w.Counter("% 100ns Multi", w.PERF_100NSEC_MULTI_TIMER), "multi_100"),
    (w.Counter("% Multi Inv", w.PERF_COUNTER_MULTI_TIMER_INV), "uncooked"),
]
INSTANTANEOUS = {"raw", "fraction", "elapsed"}
COUNTERS = tuple(c for c, _ in KINDS)
INSTANCES = ("disk", "other", "_Total")
OBJECTS = (w.PerfObject("Every Type", COUNTERS, INSTANCES, has_object_time=True),)
MULTI = [j for j, (_, kind) in enumerate(KINDS) if kind.startswith("multi")]


def _filetime(moment: datetime) -> int:
    return (moment - datetime(1601, 1, 1)) // timedelta(microseconds=1) * 10


def _samples(offsets: tuple[int, ...] = OFFSETS, seed: int = 3) -> list[w.SampleSpec]:
    rng = np.random.default_rng(seed)
    shape = (len(INSTANCES), len(COUNTERS))
    first = rng.integers(1, 1_000, size=shape)
    base = rng.integers(1, 1_000, size=shape)
    out = []
    for k, seconds in enumerate(offsets):
        # Movements unrelated to the interval lengths: per-interval values vary, so their plain
        # mean differs from the window's figure for every type that divides by a time or a base.
        if k:
            first = first + rng.integers(0, 50_000, size=shape)
            base = base + rng.integers(1, 500, size=shape)
        bases = base.copy()
        bases[:, MULTI] = 4  # the multi count (processors) stays the same
        out.append(
            w.SampleSpec(
                local_time=START + timedelta(seconds=seconds),
                perf_time=10_000_000_000 + seconds * FREQ + int(rng.integers(0, 1000)),
                perf_time_100ns=_filetime(START - timedelta(hours=1))
                + seconds * 10_000_000
                + int(rng.integers(0, 1000)),
                values={"Every Type": first.copy()},
                bases={"Every Type": bases},
                object_times={"Every Type": 5_000_000_000 + seconds * OBJECT_FREQ + int(rng.integers(0, 99))},
            )
        )
    return out


def _formula(kind: str, s0: w.SampleSpec, s1: w.SampleSpec, i: int, j: int) -> float:
    """The published formula with s0 as the earlier and s1 as the later raw sample."""
    n0, n1 = int(s0.values["Every Type"][i, j]), int(s1.values["Every Type"][i, j])
    b0, b1 = int(s0.bases["Every Type"][i, j]), int(s1.bases["Every Type"][i, j])  # type: ignore[index]
    o0, o1 = s0.object_times["Every Type"], s1.object_times["Every Type"]  # type: ignore[index]
    if kind == "raw":
        return float(n1)
    if kind == "fraction":
        return 100.0 * n1 / b1
    if kind == "elapsed":
        return (o1 - n1) / OBJECT_FREQ
    dn, db = n1 - n0, b1 - b0
    dpt = s1.perf_time - s0.perf_time
    d100 = s1.perf_time_100ns - s0.perf_time_100ns
    dobj = o1 - o0
    table = {
        "rate": lambda: dn / (dpt / FREQ),
        "timer_pt": lambda: 100.0 * dn / dpt,
        "timer_inv_pt": lambda: 100.0 * (1 - dn / dpt),
        "timer_100": lambda: 100.0 * dn / d100,
        "timer_inv_100": lambda: 100.0 * (1 - dn / d100),
        "timer_obj": lambda: 100.0 * dn / dobj,
        "precision": lambda: 100.0 * dn / db,
        "queue_pt": lambda: dn / dpt,
        "queue_100": lambda: dn / d100,
        "queue_obj": lambda: dn / dobj,
        "average_timer": lambda: (dn / FREQ) / db,
        "average": lambda: dn / db,
        "sample_fraction": lambda: 100.0 * dn / db,
        "delta": lambda: float(dn),
        "multi_pt": lambda: 100.0 * (dn / dpt) / b1,
        "multi_100": lambda: 100.0 * (dn / d100) / b1,
    }
    return float(table[kind]())


def _write(path: Path, samples: list[w.SampleSpec]) -> Path:
    w.write_blg(
        path,
        machine="MBX01",
        objects=OBJECTS,
        samples=samples,
        utc_offset_minutes=60,
        object_perf_freq=OBJECT_FREQ,
        perf_freq=FREQ,
        pointer_size=8,
        buffer_size=4096,
        fragment_data=1000,  # records split across buffers
    )
    return path


def _row(frame: pl.DataFrame, instance: str, counter: str) -> dict[str, object]:
    rows = frame.filter(pl.col("path") == f"\\\\MBX01\\Every Type({instance})\\{counter}")
    assert rows.height == 1, (instance, counter)
    return rows.row(0, named=True)


def _check_window(frame: pl.DataFrame, samples: list[w.SampleSpec]) -> int:
    """Every counter of every instance against its hand-computed window figures; returns how many
    difference-type figures differ from the plain mean of their samples."""
    differing = 0
    for j, (counter, kind) in enumerate(KINDS):
        for i, instance in enumerate(INSTANCES):
            row = _row(frame, instance, counter.name)
            assert row["samples"] == len(samples)
            if kind == "uncooked":
                assert row["kind"] == "not cooked" and row["exact_average"] is None
                assert row["why"] == WINDOW_WHY[2] and row["mean_of_samples"] is None
                continue
            if kind in INSTANTANEOUS:
                assert row["kind"] == "instantaneous" and row["exact_average"] is None
                assert "instantaneous" in str(row["why"])
                plain = np.mean([_formula(kind, s, s, i, j) for s in samples])
                assert row["mean_of_samples"] == pytest.approx(plain, rel=1e-12)
                continue
            exact = _formula(kind, samples[0], samples[-1], i, j)
            if kind == "delta":
                exact /= len(samples) - 1  # per sample interval
            per_interval = [_formula(kind, a, b, i, j) for a, b in itertools.pairwise(samples)]
            plain = float(np.mean(per_interval))
            assert row["kind"] == "difference" and row["why"] is None, (counter.name, row["why"])
            assert row["exact_average"] == pytest.approx(exact, rel=1e-12), (counter.name, instance)
            assert row["mean_of_samples"] == pytest.approx(plain, rel=1e-12), (counter.name, instance)
            assert row["relative_difference"] == pytest.approx(
                (plain - exact) / abs(exact), rel=1e-9, abs=1e-15
            )
            if kind == "delta":
                # No time in the formula: the mean of the deltas is the movement per interval.
                assert plain == pytest.approx(exact, rel=1e-12)
            else:
                assert abs(plain - exact) > 1e-6 * abs(exact), (counter.name, instance)
                differing += 1
    return differing


def test_exact_window_average_of_every_type_over_unequal_intervals(tmp_path: Path) -> None:
    samples = _samples()
    path = _write(tmp_path / "window.blg", samples)
    report = window_report(path)
    assert report.samples == len(OFFSETS) and report.samples_lost == 0
    assert report.first == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    assert report.last == datetime(2026, 3, 1, 8, 1, 40, tzinfo=UTC)
    differing = _check_window(report.frame, samples)
    assert differing == 3 * len([k for _, k in KINDS if k not in INSTANTANEOUS | {"uncooked", "delta"}])
    # The mean of samples is the mean of what read_blg returns for the same span.
    log = read_blg(path)
    column = log.counters.filter(pl.col("path") == r"\\MBX01\Every Type(disk)\Ops/sec").get_column("column")[
        0
    ]
    assert _row(report.frame, "disk", "Ops/sec")["mean_of_samples"] == pytest.approx(
        log.samples.get_column(column).mean(), rel=1e-12
    )


def test_window_bounds_take_the_first_and_last_sample_inside(tmp_path: Path) -> None:
    samples = _samples()
    path = _write(tmp_path / "window.blg", samples)
    # Naive bounds are the log's local time; 09:00:20 .. 09:01:15 holds the samples at 30, 60, 70 s.
    frame = window_averages(path, begin=START + timedelta(seconds=20), end=START + timedelta(seconds=75))
    _check_window(frame, samples[2:5])
    # Aware bounds are absolute: the same window in UTC (the log is at UTC+1).
    aware = window_averages(
        path,
        counters=[r"\Every Type(*)\Ops/sec"],
        begin=datetime(2026, 3, 1, 8, 0, 20, tzinfo=UTC),
        end=datetime(2026, 3, 1, 8, 1, 15, tzinfo=UTC),
    )
    assert aware.height == 3
    assert _row(aware, "disk", "Ops/sec")["exact_average"] == _row(frame, "disk", "Ops/sec")["exact_average"]


def test_no_value_rules_say_why(tmp_path: Path) -> None:
    samples = _samples()
    j_ops = [c.name for c in COUNTERS].index("Ops/sec")
    j_bytes = [c.name for c in COUNTERS].index("Bytes/sec")
    edited = []
    for k, s in enumerate(samples):
        values = s.values["Every Type"].copy()
        bases = s.bases["Every Type"].copy()  # type: ignore[index]
        names = INSTANCES
        if k == 2:
            values[0, j_bytes] = 5  # "disk" Bytes/sec goes backwards, then grows past where it began
        if k >= 3:
            values[0, j_bytes] += 10**9
        keep = [0, 1, 2]
        if k == 3:
            keep = [0, 2]  # "other" vanishes for one sample, then returns
        if k == 0:
            keep = [0, 1]  # "_Total" appears after the first sample
        names = tuple(INSTANCES[i] for i in keep)
        edited.append(
            w.SampleSpec(
                s.local_time,
                s.perf_time,
                s.perf_time_100ns,
                {"Every Type": values[keep]},
                {"Every Type": bases[keep]},
                s.object_times,
                {"Every Type": names},
            )
        )
    frame = window_averages(_write(tmp_path / "gaps.blg", edited))
    backwards = _row(frame, "disk", "Bytes/sec")
    assert backwards["exact_average"] is None and "went backwards" in str(backwards["why"])
    assert backwards["mean_of_samples"] is not None  # the intervals that have a value still do
    assert _row(frame, "disk", "Ops/sec")["exact_average"] is not None
    reset = _row(frame, "other", "Ops/sec")
    assert reset["exact_average"] is None and "vanished and returned" in str(reset["why"])
    assert reset["samples"] == len(OFFSETS) - 1
    late = _row(frame, "_Total", "Ops/sec")
    assert late["exact_average"] is None and "absent at the window's first sample" in str(late["why"])
    assert late["first"] == datetime(2026, 3, 1, 8, 0, 15, tzinfo=UTC)
    # An instantaneous counter of the instance that came and went still has its mean.
    assert _row(frame, "other", "Raw")["mean_of_samples"] is not None
    assert j_ops != j_bytes
    # One sample in the window: no first/last movement.
    one = window_averages(
        _write(tmp_path / "one.blg", _samples()),
        counters=[r"\Every Type(disk)\Ops/sec"],
        begin=START + timedelta(seconds=60),
        end=START + timedelta(seconds=60),
    )
    assert one.row(0, named=True)["why"] == "only one sample inside the window"
    with pytest.raises(CounterLogError, match="no sample inside the window"):
        window_averages(tmp_path / "one.blg", begin=START + timedelta(hours=2))


def test_pure_window_function_rules() -> None:
    def ends(n: list[int], d: list[int], b: list[int] | None = None) -> RawEnds:
        size = len(n)
        return RawEnds(
            np.array(n, np.int64),
            np.array(d, np.int64),
            np.array(b or [0] * size, np.int64),
            np.full(size, FREQ),
        )

    first, last = ends([10, 10, 10, 50], [0, 0, 100, 0]), ends([40, 5, 10, 80], [30, 0, 100, 0])
    values, why = window_average(
        Formula.RATE, first, last, intervals=np.array([3, 3, 3, 0]), why=np.zeros(4, np.int64)
    )
    assert values[0] == pytest.approx(30 / (30 / FREQ))
    assert np.isnan(values[1:]).all()
    assert [WINDOW_WHY[int(c)] for c in why[1:]] == [
        WINDOW_WHY[8],  # backwards
        WINDOW_WHY[9],  # no time elapsed (never a zero)
        WINDOW_WHY[7],  # one sample
    ]
    # Averages: a base that did not move over the whole window means no operations: 0, as perfmon.
    values, why = window_average(
        Formula.AVERAGE, ends([5], [7]), ends([5], [7]), intervals=np.array([4]), why=np.zeros(1, np.int64)
    )
    assert values.tolist() == [0.0] and why.tolist() == [0]
    values, why = window_average(
        Formula.MULTI_TIMER,
        ends([0], [0], [2]),
        ends([10], [100], [4]),
        intervals=np.array([2]),
        why=np.zeros(1, np.int64),
    )
    assert np.isnan(values[0]) and WINDOW_WHY[int(why[0])] == "the multi count changed inside the window"
    # What the reader already knows wins over the arithmetic.
    values, why = window_average(
        Formula.TIMER, ends([0], [0]), ends([10], [100]), intervals=np.array([2]), why=np.array([6])
    )
    assert np.isnan(values[0]) and int(why[0]) == 6


# --- the real log ---------------------------------------------------------------------------------

SAMPLE = Path(__file__).parent / "data" / "blg" / "SampleLog.blg"


@pytest.fixture(scope="module")
def sample_frame(engine: str) -> pl.DataFrame:
    return window_averages(SAMPLE)


@pytest.fixture(scope="module")
def sample_log(engine: str):  # type: ignore[no-untyped-def]
    return read_blg(SAMPLE)


def _sample_row(frame: pl.DataFrame, path: str) -> dict[str, object]:
    rows = frame.filter(pl.col("path") == path)
    assert rows.height == 1, path
    return rows.row(0, named=True)


def _series(log, path: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    column = log.counters.filter(pl.col("path") == path).get_column("column")[0]
    return log.samples.get_column(column).to_numpy()


def test_sample_log_rate_is_movement_over_time(sample_frame: pl.DataFrame, sample_log) -> None:  # type: ignore[no-untyped-def]
    """Each cooked rate times its interval is that interval's raw movement: their sum over the
    window divided by the window's length is delta-raw / delta-time. The intervals here come from
    the event time stamps, which agree with the counters' own clock within 11 ms a minute."""
    seconds = sample_log.samples.get_column("timestamp").dt.epoch("us").to_numpy() / 1e6
    steps = np.diff(seconds)
    for path in (r"\\ZACH-PC\PhysicalDisk(_Total)\Disk Transfers/sec", r"\\ZACH-PC\Memory\Page Faults/sec"):
        rates = _series(sample_log, path)[1:]
        row = _sample_row(sample_frame, path)
        assert row["kind"] == "difference" and row["samples"] == 11
        assert row["exact_average"] == pytest.approx(float((rates * steps).sum() / steps.sum()), rel=3e-4)


def test_sample_log_average_timer_is_weighted_by_operations(sample_frame: pl.DataFrame, sample_log) -> None:  # type: ignore[no-untyped-def]
    """Avg. Disk sec/Transfer over the window is the transfer-weighted mean, not the plain mean."""
    disk = r"\\ZACH-PC\PhysicalDisk(_Total)"
    seconds = sample_log.samples.get_column("timestamp").dt.epoch("us").to_numpy() / 1e6
    transfers = _series(sample_log, disk + r"\Disk Transfers/sec")[1:] * np.diff(seconds)
    latency = _series(sample_log, disk + r"\Avg. Disk sec/Transfer")[1:]
    row = _sample_row(sample_frame, disk + r"\Avg. Disk sec/Transfer")
    weighted = float((latency * transfers).sum() / transfers.sum())
    assert row["exact_average"] == pytest.approx(weighted, rel=1e-3)
    assert row["mean_of_samples"] == pytest.approx(float(latency.mean()), rel=1e-12)
    assert abs(row["relative_difference"]) > 0.05  # type: ignore[arg-type]  # the plain mean is >5 % off here


def test_sample_log_identities_and_reasons(sample_frame: pl.DataFrame) -> None:
    busy = _sample_row(sample_frame, r"\\ZACH-PC\Processor(_Total)\% Processor Time")
    idle = _sample_row(sample_frame, r"\\ZACH-PC\Processor(_Total)\% Idle Time")
    assert busy["exact_average"] + idle["exact_average"] == pytest.approx(100, abs=1e-9)  # type: ignore[operator]
    # The provider reset C1 time at 15:47 (format notes): no first/last average across it.
    c1 = _sample_row(sample_frame, r"\\ZACH-PC\Processor(_Total)\% C1 Time")
    assert c1["exact_average"] is None and "went backwards" in str(c1["why"])
    up = _sample_row(sample_frame, r"\\ZACH-PC\System\System Up Time")
    assert up["kind"] == "instantaneous" and up["exact_average"] is None
    late = _sample_row(sample_frame, r"\\ZACH-PC\Process(rundll32#1)\% Processor Time")
    assert late["exact_average"] is None and late["samples"] < 11
    difference = sample_frame.filter(pl.col("kind") == "difference")
    assert difference.height > 800
    # Every difference column either has its exact value or says why not; none is a silent zero.
    assert difference.filter(pl.col("exact_average").is_null() & pl.col("why").is_null()).height == 0


def test_inspect_averages_json_and_table() -> None:
    result = CliRunner().invoke(
        app,
        [
            "inspect",
            str(SAMPLE),
            "--averages",
            "--counters",
            r"\PhysicalDisk(_Total)\Avg. Disk sec/Transfer",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["window"]["samples"] == 11 and data["samples_lost"] == 0
    (row,) = data["counters"]
    assert row["type"] == "PERF_AVERAGE_TIMER" and row["exact_average"] > row["mean_of_samples"] > 0
    result = CliRunner().invoke(
        app,
        ["inspect", str(SAMPLE), "--averages", "--counters", r"\Memory\*", "--begin", "2007-08-14 15:45:00"],
    )
    assert result.exit_code == 0, result.output
    assert "6 sample(s)" in result.output and "exact average" in result.output
    result = CliRunner().invoke(app, ["inspect", str(Path(__file__)), "--averages"])
    assert result.exit_code == 2 and "binary perfmon log" in result.output
