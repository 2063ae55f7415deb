"""`inspect` describes a counter log from the stream, a batch at a time, and prints what a whole read
would: memory follows the batch, not the file (docs/security.md, "Memory bounded in every command").

The reference below is the description as it was worked out from the whole frame of samples
(Polars over every row at once); the streamed description must equal it field for field, with
batches forced down to one row or one sample.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esrp_report.app import api
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.blg import describe_blg, read_blg
from esrp_report.ingest.perfmon.blg import reading as blg_reading
from esrp_report.ingest.perfmon.describe import SampleSummary
from esrp_report.model import CounterLog
from esrp_synth import blg_raw_writer as rw
from esrp_synth.perfmon_csv import write_pdh_csv

ROOT = Path(__file__).resolve().parent.parent
EMAIL5_CSV = ROOT / "samples" / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv"
BLG_DATA = Path(__file__).parent / "data" / "blg"
CSV_LOGS = [
    EMAIL5_CSV,
    BLG_DATA / "powershell" / "CounterSamples.csv",
    BLG_DATA / "powershell" / "CounterSamples.tsv",
]
BLG_LOGS = [
    BLG_DATA / "SampleLog.blg",
    BLG_DATA / "powershell" / "CounterSamples.blg",
    BLG_DATA / "powershell" / "BadCounterSamples.blg",
]
SAMPLE_FIELDS = ("first_sample", "last_sample", "samples", "interval_seconds", "missing_cells")


def _whole_frame_fields(log: CounterLog) -> dict[str, Any]:
    """The sample figures as they were worked out over the whole frame at once."""
    samples = log.samples
    steps = samples.get_column("timestamp").diff().dt.total_microseconds().drop_nulls()
    median = steps.median() if samples.height > 1 else None
    stamps = samples.get_column("timestamp")
    first, last = stamps.min(), stamps.max()
    return {
        "first_sample": first.isoformat() if isinstance(first, datetime) else None,
        "last_sample": last.isoformat() if isinstance(last, datetime) else None,
        "samples": samples.height,
        "interval_seconds": float(median) / 1e6 if isinstance(median, int | float) else None,
        "missing_cells": int(sum(samples.drop("timestamp").null_count().row(0))),
    }


def _damaged_csv(tmp_path: Path) -> Path:
    """Short, long and non-numeric rows and missing cells through 300 rows, cut short at the end."""
    path = tmp_path / "damaged.csv"
    paths = [rf"\\EMAIL5\LogicalDisk(C:\MP\DB{i})\Avg. Disk sec/Read" for i in range(4)]
    stamps = [datetime(2011, 3, 11, 13, 28, 5) + timedelta(seconds=15 * i) for i in range(300)]
    values = np.arange(1200, dtype=float).reshape(300, 4) / 8
    values[::9, 1] = np.nan
    write_pdh_csv(path, paths, stamps, values)
    lines = path.read_bytes().decode().split("\r\n")
    lines[20] = lines[20].rsplit(",", 2)[0]
    lines[100] += ',"1.0"'
    lines[150] = lines[150].replace('"2', '"abc', 1)
    path.write_bytes(("\r\n".join(lines)).encode()[:-40])
    return path


def _irregular_csv(tmp_path: Path, rows: int) -> Path:
    """Steps of every kind: jitter, gaps, repeats and steps back in time (the median is not the
    interval the log was asked for, and with an even count it falls between two steps)."""
    rng = random.Random(rows)
    stamp = datetime(2011, 3, 11, 13, 28, 5)
    stamps = []
    for _ in range(rows):
        stamps.append(stamp)
        jitter = rng.randint(14_000, 16_000)
        stamp += timedelta(milliseconds=jitter if rng.random() < 0.6 else rng.choice([0, -3_000, 60_000]))
    values = np.array([[rng.random() for _ in range(3)] for _ in range(rows)])
    values[rng.sample(range(rows), rows // 5), 2] = np.nan
    path = tmp_path / f"irregular-{rows}.csv"
    write_pdh_csv(path, [rf"\\H\Memory\Counter {i}" for i in range(3)], stamps, values)
    return path


@pytest.mark.parametrize("batch", [1, 4_000, 1 << 30])
@pytest.mark.parametrize("log", CSV_LOGS, ids=lambda p: p.name)
def test_a_csv_streamed_in_any_batches_is_described_as_the_whole_read(log: Path, batch: int) -> None:
    whole = counter_csv.read_counter_csv(log)
    described = counter_csv.describe_counter_file(log)
    streamed = counter_csv.describe_counter_file(log, stream_bytes=0, batch_bytes=batch)
    assert streamed == described
    assert {k: described[k] for k in SAMPLE_FIELDS} == _whole_frame_fields(whole)


@pytest.mark.parametrize("rows", [2, 301, 302])
def test_the_median_step_across_batch_cuts_is_the_whole_frames(rows: int, tmp_path: Path) -> None:
    path = _irregular_csv(tmp_path, rows)
    streamed = counter_csv.describe_counter_file(path, stream_bytes=0, batch_bytes=1)
    assert {k: streamed[k] for k in SAMPLE_FIELDS} == _whole_frame_fields(counter_csv.read_counter_csv(path))
    if rows > 2:  # steps back and repeats are steps too: the median is none of the fixed steps
        assert streamed["interval_seconds"] not in (None, 0.0, -3.0, 60.0)


def test_a_damaged_csv_is_described_with_the_same_problems_streamed(tmp_path: Path) -> None:
    path = _damaged_csv(tmp_path)
    whole = counter_csv.describe_counter_file(path)
    assert whole["problems"]  # the damage is there to be described
    for batch in (1, 700, 1 << 30):
        assert counter_csv.describe_counter_file(path, stream_bytes=0, batch_bytes=batch) == whole


def test_a_csv_without_samples_is_refused_streamed_as_whole(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b'"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\r\n')
    with pytest.raises(Exception) as whole:
        counter_csv.describe_counter_file(path)
    with pytest.raises(type(whole.value)) as streamed:
        counter_csv.describe_counter_file(path, stream_bytes=0)
    assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("log", BLG_LOGS, ids=lambda p: p.name)
def test_a_blg_described_a_sample_at_a_time_is_the_whole_read(log: Path) -> None:
    described = describe_blg(log)
    assert describe_blg(log, batch_bytes=1) == described
    assert {k: described[k] for k in SAMPLE_FIELDS} == _whole_frame_fields(read_blg(log))


def test_a_blg_column_first_seen_late_counts_as_missing_before(tmp_path: Path) -> None:
    """A wildcard instance that appears at the fourth sample is null in the three before it, as
    the whole read pads it: 3 missing cells, though no batch before it had the column."""
    freq = 10_000_000
    counters = [
        rw.RawCounter("s1", "Memory", "Pages/sec", 0x10410400),
        rw.RawCounter("s1", "Network Interface", "Bytes Total/sec", 0x10410500, "*"),
    ]
    start = datetime(2024, 3, 1, 10, 0, 0)
    samples = [
        rw.RawSample(
            [
                rw.RawValue(5 * i, i * freq),
                rw.RawArray(
                    (
                        rw.RawItem("a", 7 * i, i * freq),
                        *([rw.RawItem("b", 3 * i, i * freq)] if i >= 3 else []),
                    )
                ),
            ],
            start + timedelta(seconds=15 * i),
        )
        for i in range(8)
    ]
    path = tmp_path / "late.blg"
    rw.write_raw_blg(path, counters, samples, header=rw.LogHeader(perf_freq=freq))
    whole = _whole_frame_fields(read_blg(path))
    described = describe_blg(path, batch_bytes=1)
    assert described["counter_columns"] == 3
    assert {k: described[k] for k in SAMPLE_FIELDS} == whole
    assert whole["missing_cells"] >= 3


def test_inspect_of_a_large_log_never_reads_it_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the streaming line, inspect describes from the stream: the whole-file readers and the
    whole frame are never built, and more than one batch is summed."""
    csv_expected = api.inspect(EMAIL5_CSV)
    blg_expected = api.inspect(BLG_LOGS[0])

    def whole_read(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("inspect read a large log whole")

    monkeypatch.setattr(counter_csv, "STREAM_BYTES", 0)
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 50_000)
    monkeypatch.setattr(counter_csv, "read_counter_csv", whole_read)
    monkeypatch.setattr(blg_reading, "_collect", whole_read)
    monkeypatch.setattr(blg_reading, "_frame", whole_read)
    batches: list[int] = []
    summed = SampleSummary.add

    def counted(self: SampleSummary, stamps: Any, missing_cells: int) -> None:
        batches.append(stamps.len())
        summed(self, stamps, missing_cells)

    monkeypatch.setattr(SampleSummary, "add", counted)
    assert api.inspect(EMAIL5_CSV) == csv_expected
    assert len(batches) > 1 and sum(batches) == csv_expected["samples"]
    assert api.inspect(BLG_LOGS[0]) == blg_expected
