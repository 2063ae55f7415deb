"""Logs written with known raw values (by the independent writer) read back exactly.

The expected values are computed here, by hand, from the published formulas: not through the
reader's own cooking code.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report.ingest.perfmon import blg as blg_module
from esrp_report.ingest.perfmon.blg import BlgFile, read_blg
from esrp_report.model.errors import CounterLogError, InputError
from esrp_synth import blg_writer as w

# Every test runs with both engines (the "engine" fixture: tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine")


FREQ = 10_000_000  # block PerfFreq
OBJECT_FREQ = 10_000_000
STEP = 15  # seconds between samples
START = datetime(2026, 3, 1, 9, 0, 0)

# (counter, expected(n0, n1, d..)) for every type the reader cooks, plus one it does not.
TYPES: list[tuple[w.Counter, str]] = [
    (w.Counter("Raw", w.PERF_COUNTER_RAWCOUNT, size=4), "raw"),
    (w.Counter("Raw Hex", w.PERF_COUNTER_RAWCOUNT_HEX, size=4), "raw"),
    (w.Counter("Large Raw", w.PERF_COUNTER_LARGE_RAWCOUNT), "raw"),
    (w.Counter("Large Raw Hex", w.PERF_COUNTER_LARGE_RAWCOUNT_HEX), "raw"),
    (w.Counter("% Fraction", w.PERF_RAW_FRACTION, size=4), "fraction"),
    (w.Counter("% Large Fraction", w.PERF_LARGE_RAW_FRACTION), "fraction"),
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
COUNTERS = tuple(c for c, _ in TYPES)
INSTANCES = ("disk", "disk", "other", "_Total")  # a duplicate name: read as disk, disk#1
OBJECTS = (
    w.PerfObject("Every Type", COUNTERS, INSTANCES, has_object_time=True),
    w.PerfObject("Single", (w.Counter("Value", w.PERF_COUNTER_LARGE_RAWCOUNT),), None),
)


def _filetime(moment: datetime) -> int:
    return (moment - datetime(1601, 1, 1)) // timedelta(microseconds=1) * 10


def _samples(count: int, seed: int = 7) -> list[w.SampleSpec]:
    rng = np.random.default_rng(seed)
    shape = (len(INSTANCES), len(COUNTERS))
    first = rng.integers(1, 1_000, size=shape)
    base = rng.integers(1, 1_000, size=shape)
    out = []
    for k in range(count):
        # Every raw value grows; DWORD counters go past 2**31 to prove they are read unsigned.
        first = first + rng.integers(0, 50_000, size=shape)
        base = base + rng.integers(1, 500, size=shape)
        values = first.copy()
        for j, (counter, _) in enumerate(TYPES):
            if counter.size == 4 and counter.counter_type in (
                w.PERF_COUNTER_COUNTER,
                w.PERF_COUNTER_RAWCOUNT,
            ):
                values[:, j] += 3_000_000_000
        out.append(
            w.SampleSpec(
                local_time=START + timedelta(seconds=STEP * k),
                perf_time=10_000_000_000 + k * STEP * FREQ + int(rng.integers(0, 1000)),
                perf_time_100ns=_filetime(START - timedelta(hours=1))
                + k * STEP * 10_000_000
                + int(rng.integers(0, 1000)),
                values={"Every Type": values, "Single": np.array([[k * 1_000_000_007]])},
                bases={"Every Type": base.copy()},
                object_times={
                    "Every Type": 5_000_000_000 + k * STEP * OBJECT_FREQ + int(rng.integers(0, 99))
                },
            )
        )
    return out


def _expected(kind: str, k: int, i: int, j: int, samples: list[w.SampleSpec]) -> float | None:
    """The displayed value of counter j, instance i, sample k, from the published formulas."""
    s1 = samples[k]
    n1 = int(s1.values["Every Type"][i, j])
    b1 = int(s1.bases["Every Type"][i, j])  # type: ignore[index]
    o1 = s1.object_times["Every Type"]  # type: ignore[index]
    if kind == "raw":
        return float(n1)
    if kind == "fraction":
        return 100.0 * n1 / b1
    if kind == "elapsed":
        return (o1 - n1) / OBJECT_FREQ
    if kind == "uncooked" or k == 0:
        return None
    s0 = samples[k - 1]
    dn = n1 - int(s0.values["Every Type"][i, j])
    db = b1 - int(s0.bases["Every Type"][i, j])  # type: ignore[index]
    dpt = s1.perf_time - s0.perf_time
    d100 = s1.perf_time_100ns - s0.perf_time_100ns
    dobj = o1 - s0.object_times["Every Type"]  # type: ignore[index]
    table = {
        "rate": dn / (dpt / FREQ),
        "timer_pt": 100.0 * dn / dpt,
        "timer_inv_pt": 100.0 * (1 - dn / dpt),
        "timer_100": 100.0 * dn / d100,
        "timer_inv_100": 100.0 * (1 - dn / d100),
        "timer_obj": 100.0 * dn / dobj,
        "precision": 100.0 * dn / db,
        "queue_pt": dn / dpt,
        "queue_100": dn / d100,
        "queue_obj": dn / dobj,
        "average_timer": (dn / FREQ) / db,
        "average": dn / db,
        "sample_fraction": 100.0 * dn / db,
        "delta": float(dn),
        "multi_pt": 100.0 * (dn / dpt) / b1,
        "multi_100": 100.0 * (dn / d100) / b1,
    }
    return table[kind]


def _write(path: Path, samples: list[w.SampleSpec], **options: object) -> Path:
    w.write_blg(
        path,
        machine="MBX01",
        objects=OBJECTS,
        samples=samples,
        utc_offset_minutes=60,
        object_perf_freq=OBJECT_FREQ,
        perf_freq=FREQ,
        **options,  # type: ignore[arg-type]
    )
    return path


def _value(log, instance: str | None, counter: str, obj: str = "Every Type") -> list[float | None]:  # type: ignore[no-untyped-def]
    row = log.counters.filter(
        (pl.col("object") == obj) & (pl.col("counter") == counter) & pl.col("instance").eq_missing(instance)
    )
    assert row.height == 1, (instance, counter)
    return log.samples.get_column(row.get_column("column")[0]).to_list()


@pytest.mark.parametrize(
    "options",
    [
        {"pointer_size": 4},
        {"pointer_size": 8},
        {"pointer_size": 8, "buffer_size": 4096, "fragment_data": 1000},  # every sample split over buffers
    ],
    ids=["32-bit", "64-bit", "split-records"],
)
def test_every_counter_type_reads_back_exactly(tmp_path: Path, options: dict[str, int]) -> None:
    samples = _samples(5)
    log = read_blg(_write(tmp_path / "types.blg", samples, **options))
    assert log.samples.height == 5
    assert log.utc_offset_minutes == 60
    assert log.samples.get_column("timestamp")[0].replace(tzinfo=None) == START - timedelta(hours=1)
    names = ["disk", "disk#1", "other", "_Total"]
    for j, (counter, kind) in enumerate(TYPES):
        for i, instance in enumerate(names):
            got = _value(log, instance, counter.name)
            want = [_expected(kind, k, i, j, samples) for k in range(5)]
            assert [g is None for g in got] == [v is None for v in want], (counter.name, instance)
            for g, v in zip(got, want, strict=True):
                if v is not None:
                    assert g == pytest.approx(v, rel=1e-12, abs=1e-12), (counter.name, instance)
    assert _value(log, None, "Value", "Single") == [float(k * 1_000_000_007) for k in range(5)]
    # The type the reader does not cook: reported once, its raw values kept exactly.
    uncooked = [p for p in log.problems if "% Multi Inv" in p.message]
    assert len(uncooked) == 1 and "PERF_COUNTER_MULTI_TIMER_INV" in uncooked[0].message
    assert log.raw is not None
    column = log.counters.filter(
        (pl.col("counter") == "% Multi Inv") & (pl.col("instance") == "other")
    ).get_column("column")[0]
    j = len(TYPES) - 1
    assert log.raw.get_column(column).to_list() == [int(s.values["Every Type"][2, j]) for s in samples]


def test_types_are_named_in_the_counter_table(tmp_path: Path) -> None:
    log = read_blg(_write(tmp_path / "t.blg", _samples(2)))
    types = dict(log.counters.filter(pl.col("instance") == "other").select("counter", "type").iter_rows())
    assert types["Avg. sec/op"] == "PERF_AVERAGE_TIMER"
    assert types["% Multi Inv"] == "PERF_COUNTER_MULTI_TIMER_INV"


def test_instances_that_come_and_go(tmp_path: Path) -> None:
    samples = _samples(4)
    # Sample 2 lacks "other": its values are missing there, and its rates restart after it.
    fewer = ("disk", "disk", "_Total")
    s = samples[2]
    keep = [0, 1, 3]
    samples[2] = w.SampleSpec(
        s.local_time,
        s.perf_time,
        s.perf_time_100ns,
        {"Every Type": s.values["Every Type"][keep], "Single": s.values["Single"]},
        {"Every Type": s.bases["Every Type"][keep]},  # type: ignore[index]
        s.object_times,
        {"Every Type": fewer},
    )
    log = read_blg(_write(tmp_path / "come-go.blg", samples))
    rate = _value(log, "other", "Ops/sec")
    assert rate[0] is None and rate[1] is not None and rate[2] is None and rate[3] is None
    assert _value(log, "other", "Raw")[2] is None and _value(log, "other", "Raw")[3] is not None
    assert all(v is not None for v in _value(log, "disk#1", "Ops/sec")[1:])


def test_instance_appearing_keeps_the_other_instances_rates(tmp_path: Path) -> None:
    """Regression: a clock slot shared by every column took its previous value from a column that
    had just appeared (stale, zero), so every rate of that sample was wrong."""
    samples = _samples(4)
    for k in (0, 1):
        s = samples[k]
        keep = [0, 1, 2]  # "_Total", the last instance, appears in sample 2
        samples[k] = w.SampleSpec(
            s.local_time,
            s.perf_time,
            s.perf_time_100ns,
            {"Every Type": s.values["Every Type"][keep], "Single": s.values["Single"]},
            {"Every Type": s.bases["Every Type"][keep]},  # type: ignore[index]
            s.object_times,
            {"Every Type": INSTANCES[:3]},
        )
    log = read_blg(_write(tmp_path / "appears.blg", samples))
    for j, (counter, kind) in enumerate(TYPES):
        if kind == "uncooked":
            continue
        got = _value(log, "disk", counter.name)
        want = [_expected(kind, k, 0, j, samples) for k in range(4)]
        assert [g is None for g in got] == [v is None for v in want], counter.name
        assert [g for g in got if g is not None] == pytest.approx(
            [v for v in want if v is not None], rel=1e-12
        )
    assert _value(log, "_Total", "Ops/sec")[2] is None and _value(log, "_Total", "Ops/sec")[3] is not None


def test_engines_agree_bit_for_bit(tmp_path: Path, engine: str) -> None:
    if blg_module._blgcook is None:
        pytest.skip("the compiled .blg engine was not built")
    samples = _samples(6)
    s = samples[3]
    samples[3] = w.SampleSpec(  # an instance missing from one sample, so layouts change twice
        s.local_time,
        s.perf_time,
        s.perf_time_100ns,
        {"Every Type": s.values["Every Type"][[0, 2, 3]], "Single": s.values["Single"]},
        {"Every Type": s.bases["Every Type"][[0, 2, 3]]},  # type: ignore[index]
        s.object_times,
        {"Every Type": ("disk", "other", "_Total")},
    )
    path = _write(tmp_path / "both.blg", samples, buffer_size=4096, fragment_data=1000)
    batches = {}
    for name in ("native", "numpy"):
        with BlgFile(path, engine=name) as blg:
            batches[name] = [(b.stamps, b.values, b.uncooked_values) for b in blg.batches()]
    assert len(batches["native"]) == len(batches["numpy"]) == 3
    for (s1, v1, u1), (s2, v2, u2) in zip(batches["native"], batches["numpy"], strict=True):
        assert (s1 == s2).all() and (u1 == u2).all()
        assert v1.shape == v2.shape
        assert ((v1.view(np.int64) == v2.view(np.int64)) | (np.isnan(v1) & np.isnan(v2))).all()


def test_compiled_engine_refuses_plans_outside_its_buffers() -> None:
    """The compiled pass checks every offset and index before reading: a plan pointing outside
    the row, the slots or the output is a ValueError, never a read out of bounds."""
    cook = getattr(blg_module._blgcook, "cook", None)
    if cook is None:
        pytest.skip("the compiled .blg engine was not built")
    rows, stride = 2, 16
    matrix = np.arange(rows * stride, dtype=np.uint8).reshape(rows, stride)

    def run(
        position: list[int], width: list[int], n: int = 0, d: int = -1, f: int = -1, out: int = 0
    ) -> np.ndarray:
        slots = len(position)
        values = np.full((rows, 2), np.nan)
        keep = np.arange(slots, dtype=np.int64)
        kept = np.empty((rows, slots), dtype=np.int64)
        one = np.array
        cook(
            matrix,
            rows,
            stride,
            one(position, np.int64),
            one(width, np.int64),
            np.zeros(slots, np.int64),
            one([3], np.int64),  # a rate
            one([n], np.int64),
            one([d], np.int64),
            one([-1], np.int64),
            one([f], np.int64),
            one([out], np.int64),
            one([1], np.uint8),
            values,
            2,
            keep,
            kept,
            np.empty(slots, np.int64),
        )
        return kept

    kept = run([0, 8, 12], [8, 8, 4], n=0, d=1, f=2)
    assert kept[1, 2] == int.from_bytes(bytes(range(28, 32)), "little")  # a DWORD, unsigned
    for bad in (
        {"position": [9], "width": [8]},  # runs past the 16-byte row
        {"position": [13], "width": [4]},
        {"position": [-1], "width": [4]},
        {"position": [0], "width": [2]},
        {"position": [0], "width": [8], "n": 1},  # no slot 1
        {"position": [0], "width": [8], "d": 5},
        {"position": [0], "width": [8], "f": -3},
        {"position": [0], "width": [8], "out": 2},  # the output has 2 columns
    ):
        with pytest.raises(ValueError, match="outside"):
            run(**bad)  # type: ignore[arg-type]
    stack, same = blg_module._blgcook.stack, blg_module._blgcook.same  # type: ignore[union-attr]
    rows_out = np.empty((2, 16), dtype=np.uint8)
    stack([[b"abc", memoryview(b"defgh")], [b"xy"]], 6, 16, rows_out)
    assert bytes(rows_out[0]) == b"abcdef" + bytes(10) and bytes(rows_out[1]) == b"xy" + bytes(14)
    with pytest.raises(ValueError, match="outside the row"):
        stack([[b"abc"]], 17, 16, np.empty(16, dtype=np.uint8))
    with pytest.raises(ValueError, match="stack output"):
        stack([[b"abc"], [b"d"]], 8, 16, np.empty(16, dtype=np.uint8))
    equal = np.empty(2, dtype=np.bool_)
    words = np.array([1], np.int64)
    same(rows_out, 2, 16, words, np.array([0], np.uint64), np.array([2**64 - 1], np.uint64), equal)
    assert equal.tolist() == [True, True]
    same(
        rows_out, 2, 16, np.array([0], np.int64), np.array([0], np.uint64), np.array([0xFF], np.uint64), equal
    )
    assert equal.tolist() == [False, False]
    with pytest.raises(ValueError, match="outside the row"):
        same(rows_out, 2, 16, np.array([2], np.int64), np.zeros(1, np.uint64), np.zeros(1, np.uint64), equal)
    with pytest.raises(ValueError, match="matrix"):
        cook(
            matrix,
            rows + 1,
            stride,
            *[np.zeros(1, np.int64)] * 9,
            np.zeros(1, np.uint8),
            np.zeros(1),
            1,
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(1, np.int64),
        )


def test_log_never_closed_reads_its_samples(tmp_path: Path) -> None:
    log = read_blg(_write(tmp_path / "open.blg", _samples(3), write_catalog=False))
    assert log.samples.height == 3
    assert any("not closed" in p.message for p in log.problems)


def test_rate_after_a_raw_value_went_backwards_is_empty(tmp_path: Path) -> None:
    samples = _samples(4)
    values = samples[2].values["Every Type"].copy()
    j = [c.name for c in COUNTERS].index("Bytes/sec")
    values[0, j] = 1  # backwards: a restarted provider
    s = samples[2]
    samples[2] = w.SampleSpec(
        s.local_time,
        s.perf_time,
        s.perf_time_100ns,
        {**s.values, "Every Type": values},
        s.bases,
        s.object_times,
    )
    log = read_blg(_write(tmp_path / "back.blg", samples))
    got = _value(log, "disk", "Bytes/sec")
    assert got[2] is None and got[1] is not None and got[3] is not None and got[3] >= 0


# --- damage, fuzzed -------------------------------------------------------------------------------


def _log_bytes(**options: object) -> bytes:
    stream = io.BytesIO()
    with w.BlgWriter(
        stream,
        machine="MBX01",
        objects=OBJECTS,
        perf_freq=FREQ,
        object_perf_freq=OBJECT_FREQ,
        **options,  # type: ignore[arg-type]
    ) as writer:
        for s in _samples(8):
            writer.add_sample(s.local_time, s.perf_time, s.perf_time_100ns, s.values, s.bases, s.object_times)
    return stream.getvalue()


CLEAN = _log_bytes(buffer_size=4096, fragment_data=1000)


def _read_accounting(tmp_path: Path, data: bytes) -> tuple[int, int, list[str]]:
    path = tmp_path / "fuzz.blg"
    path.write_bytes(data)
    try:
        with BlgFile(path) as blg:
            for _ in blg.batches():
                pass
            return blg.samples_read, blg.samples_lost, [p.describe() for p in blg.problems]
    except (CounterLogError, InputError):
        return 0, 0, ["refused"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=len(CLEAN)))
def test_truncated_anywhere_never_crashes_and_says_so(tmp_path: Path, cut: int) -> None:
    read, _lost, problems = _read_accounting(tmp_path, CLEAN[:cut])
    assert read <= 8
    if read < 8 and problems != ["refused"]:
        assert any("cut short" in p or "not closed" in p or "incomplete" in p for p in problems)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(min_value=4096, max_value=len(CLEAN) - 1),
    junk=st.binary(min_size=1, max_size=600),
)
def test_corrupted_bytes_never_crash_and_losses_are_accounted(
    tmp_path: Path, start: int, junk: bytes
) -> None:
    data = bytearray(CLEAN)
    data[start : start + len(junk)] = junk[: len(data) - start]
    read, lost, problems = _read_accounting(tmp_path, bytes(data))
    if problems == ["refused"]:
        return
    assert read <= 8
    if read < 8:
        # Whatever was dropped is named: by a damaged buffer/event/fragment/sample, or by the catalog.
        assert lost > 0 or any("closing catalog" in p or "not closed" in p for p in problems), problems


def test_regression_fragment_with_a_time_stamp_beyond_the_calendar(tmp_path: Path) -> None:
    """Found by fuzzing: describing a dropped record whose FILETIME is past year 9999 overflowed."""
    data = bytearray(CLEAN)
    events = []  # (offset, fragment, count) of every event in buffers 1..
    for start in range(4096, len(data), 4096):
        position = start + 0x48
        end = start + int.from_bytes(data[start + 0x30 : start + 0x34], "little")
        while position + 72 <= end:
            size = int.from_bytes(data[position : position + 2], "little")
            fragment = int.from_bytes(data[position + 64 : position + 68], "little")
            count = int.from_bytes(data[position + 68 : position + 72], "little")
            events.append((position, fragment, count))
            position = (position + size + 7) & ~7
    first = next(i for i, (_, fragment, count) in enumerate(events) if fragment == 1 and count > 1)
    at, _, _ = events[first]
    data[at + 16 : at + 24] = (2**63 - 1).to_bytes(8, "little")  # the record's time stamp
    after, _, _ = events[first + 1]
    data[after + 64 : after + 68] = (9).to_bytes(4, "little")  # its next fragment out of order
    read, lost, problems = _read_accounting(tmp_path, bytes(data))
    assert read + lost == 8
    assert any("an unreadable time (FILETIME 9223372036854775807) incomplete" in p for p in problems)


def test_regression_sample_time_stamp_beyond_int64(tmp_path: Path) -> None:
    """Found by fuzzing: a sample event's FILETIME above 2**63 overflowed the stamp array."""
    data = bytearray(CLEAN)
    start = 4096
    position = start + 0x48
    end = start + int.from_bytes(data[start + 0x30 : start + 0x34], "little")
    while position + 72 <= end:
        if data[position + 4] == 34 and int.from_bytes(data[position + 64 : position + 68], "little") == 1:
            break
        position = (position + int.from_bytes(data[position : position + 2], "little") + 7) & ~7
    else:
        pytest.skip("no sample starts in buffer 1")
    data[position + 16 : position + 24] = (2**64 - 5).to_bytes(8, "little")
    read, lost, problems = _read_accounting(tmp_path, bytes(data))
    assert (read, lost) == (7, 1)
    assert any("outside the calendar" in p for p in problems)


@pytest.mark.slow
def test_vmax_sample_with_blg_performance_logs_builds_the_same_document(
    tmp_path: Path, vmax_build: Path
) -> None:
    """The VMAX sample's performance logs rewritten as .blg (same values) give the same document."""
    import re
    import shutil

    from typer.testing import CliRunner

    from esrp_report.cli.main import app
    from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
    from esrp_synth.perfmon_blg import counter_log_to_blg

    samples = Path(__file__).parents[1] / "samples"
    copy = tmp_path / "samples"
    shutil.copytree(samples, copy)
    converted = 0
    # The VMAX design's folders only (samples/ holds other designs' logs too).
    logs = [*(copy / "EMAIL5").glob("Performance_*.csv"), *(copy / "vmax").rglob("Performance_*.csv")]
    for csv in sorted(logs):
        counter_log_to_blg(read_counter_csv(csv), csv.with_suffix(".blg"))
        csv.unlink()
        converted += 1
    assert converted == 10  # one performance log per server
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", str(copy / "vmax.toml"), "-o", str(out), "--format", "html"])
    assert result.exit_code == 0, result.output

    def text(path: Path) -> str:
        # The vendor's document (the review beside it lists each evidence file's size, which is the
        # .blg's, not the CSV's).
        html = (path / "vmax.html").read_text(encoding="utf-8")
        html = re.sub(r"<svg.*?</svg>", "<svg/>", html, flags=re.S)  # charts: drawn from the same values
        html = re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "BUILD TIME", html)
        return html.replace(".blg", ".csv").replace(str(copy), "SAMPLES").replace(str(samples), "SAMPLES")

    ours, theirs = text(out), text(vmax_build)
    assert ours == theirs
