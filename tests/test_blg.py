"""The binary perfmon log reader on the one real log we have (SampleLog.blg, Vista, 11 samples).

There is no relog output for it: the tests pin what the data proves about itself (the format
notes' plausibility checks) and how damage to it is accounted for.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.blg import BlgFile, read_blg
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError

# Every test runs with both engines (the "engine" fixture: tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine")


SAMPLE = Path(__file__).parent / "data" / "blg" / "SampleLog.blg"
BUFFER = 65536


@pytest.fixture(scope="module")
def log(engine: str):  # type: ignore[no-untyped-def]
    return read_blg(SAMPLE)


def series(log, obj: str, instance: str | None, counter: str) -> pl.Series:  # type: ignore[no-untyped-def]
    rows = log.counters.filter(
        (pl.col("object") == obj) & (pl.col("counter") == counter) & pl.col("instance").eq_missing(instance)
    )
    assert rows.height == 1, (obj, instance, counter)
    return log.samples.get_column(rows.get_column("column")[0])


def test_metadata_every_object_counter_and_instance(log) -> None:  # type: ignore[no-untyped-def]
    per_object = {
        row["object"]: (row["counters"], row["instances"])
        for row in log.counters.group_by("object")
        .agg(pl.col("counter").n_unique().alias("counters"), pl.col("instance").n_unique().alias("instances"))
        .iter_rows(named=True)
    }
    assert per_object == {
        "LogicalDisk": (23, 3),
        "TCPv4": (9, 1),
        "Memory": (35, 1),
        "Network Interface": (17, 2),
        "PhysicalDisk": (21, 2),
        "Process": (28, 57),
        "Processor": (15, 2),
        "System": (17, 1),
    }
    assert log.counters.height == 1832
    assert set(log.counters.get_column("machine")) == {"ZACH-PC"}
    processes = set(log.counters.filter(pl.col("object") == "Process").get_column("instance"))
    assert {"svchost", "svchost#1", "svchost#12", "_Total", "Idle"} <= processes
    assert "svchost#13" not in processes
    assert log.problems == []


def test_eleven_samples_at_sixty_seconds_in_utc(log) -> None:  # type: ignore[no-untyped-def]
    stamps = log.samples.get_column("timestamp")
    assert stamps.len() == 11
    assert stamps[0] == datetime(2007, 8, 14, 19, 40, 38, 659000, tzinfo=UTC)  # 15:40:38.659 local, UTC-4
    assert stamps[-1] == datetime(2007, 8, 14, 19, 50, 38, 599000, tzinfo=UTC)
    steps = stamps.diff().dt.total_milliseconds().drop_nulls()
    assert steps.min() >= 59_955 and steps.max() <= 60_000
    assert log.utc_offset_minutes == -240
    assert log.time_zone_name == "Eastern Daylight Time"  # -111 resolved, as Windows prints it


def test_processor_time_within_range_and_complements_idle(log) -> None:  # type: ignore[no-untyped-def]
    busy = series(log, "Processor", "_Total", "% Processor Time")
    idle = series(log, "Processor", "_Total", "% Idle Time")
    assert busy[0] is None  # a rate needs two samples
    values = busy.drop_nulls()
    assert values.len() == 10
    assert values.min() >= 19.7 and values.max() <= 86.9
    assert ((busy + idle).drop_nulls() - 100).abs().max() < 1e-9
    user = series(log, "Processor", "_Total", "% User Time")
    privileged = series(log, "Processor", "_Total", "% Privileged Time")
    assert ((user + privileged - busy).drop_nulls().abs().max()) < 0.05
    # Process(Idle) % Processor Time is the processor's idle time.
    assert ((series(log, "Process", "Idle", "% Processor Time") - idle).drop_nulls().abs().max()) < 1e-9


def test_memory_identities(log) -> None:  # type: ignore[no-untyped-def]
    kbytes = series(log, "Memory", None, "Available KBytes")
    available = series(log, "Memory", None, "Available Bytes")
    assert (kbytes * 1024 == available).all()
    assert 83e6 < available.min() < available.max() < 223e6
    committed = series(log, "Memory", None, "Committed Bytes")
    limit = series(log, "Memory", None, "Commit Limit")
    in_use = series(log, "Memory", None, "% Committed Bytes In Use")
    assert ((100 * committed / limit - in_use).abs().max()) < 1e-9


def test_totals_are_sums_of_instances_for_additive_counters(log) -> None:  # type: ignore[no-untyped-def]
    threads = series(log, "System", None, "Threads")
    assert (threads == series(log, "Process", "_Total", "Thread Count")).all()
    for obj, counter in [("LogicalDisk", "Free Megabytes"), ("LogicalDisk", "Disk Transfers/sec")]:
        parts = log.counters.filter(
            (pl.col("object") == obj) & (pl.col("counter") == counter) & (pl.col("instance") != "_Total")
        ).get_column("column")
        summed = log.samples.select(pl.sum_horizontal(parts.to_list())).to_series()
        total = series(log, obj, "_Total", counter)
        assert ((summed - total).drop_nulls().abs() <= 1e-9 * (1 + total.drop_nulls().abs())).all(), counter
    processes = series(log, "System", None, "Processes")
    instances = log.samples.select(
        pl.sum_horizontal(
            pl.col(c).is_not_null().cast(pl.Int32)
            for c in log.counters.filter(
                (pl.col("object") == "Process")
                & (pl.col("counter") == "ID Process")
                & (pl.col("instance") != "_Total")
            ).get_column("column")
        )
    ).to_series()
    assert (processes == instances).all()


def test_disk_queue_length_is_transfers_times_seconds_per_transfer(log) -> None:  # type: ignore[no-untyped-def]
    for obj, instance in [("LogicalDisk", "C:"), ("PhysicalDisk", "0 C:")]:
        queue = series(log, obj, instance, "Avg. Disk Queue Length")
        little = series(log, obj, instance, "Disk Transfers/sec") * series(
            log, obj, instance, "Avg. Disk sec/Transfer"
        )
        assert ((queue / little - 1).drop_nulls().abs().max()) < 5e-4
        disk_time = series(log, obj, instance, "% Disk Time")
        assert ((disk_time - 100 * queue).drop_nulls().abs().max()) < 5e-2
        transfers = series(log, obj, instance, "Disk Transfers/sec")
        parts = series(log, obj, instance, "Disk Reads/sec") + series(log, obj, instance, "Disk Writes/sec")
        assert ((transfers - parts).drop_nulls().abs().max()) < 1e-9


def test_no_negative_rates_and_only_explained_gaps(log) -> None:  # type: ignore[no-untyped-def]
    values = log.samples.drop("timestamp")
    assert sum(int((values.get_column(c) < 0).sum()) for c in values.columns) == 0
    up = series(log, "System", None, "System Up Time")
    assert abs(up[0] - 2002.16) < 0.01
    assert ((up.diff().drop_nulls() - 60).abs().max()) < 0.05


def test_counter_selection_and_window() -> None:
    log = read_blg(SAMPLE, counters=[r"\Processor(*)\% Processor Time", r"\\*\Memory\Available*"])
    assert sorted(log.counters.get_column("path").to_list()) == [
        r"\\ZACH-PC\Memory\Available Bytes",
        r"\\ZACH-PC\Memory\Available KBytes",
        r"\\ZACH-PC\Memory\Available MBytes",
        r"\\ZACH-PC\Processor(0)\% Processor Time",
        r"\\ZACH-PC\Processor(_Total)\% Processor Time",
    ]
    begin = datetime(2007, 8, 14, 19, 45, tzinfo=UTC)
    assert read_blg(SAMPLE, begin=begin).samples.height == 6
    # A naive bound is the log's local time (UTC-4 here), as for window_report and convert.
    assert read_blg(SAMPLE, begin=datetime(2007, 8, 14, 15, 45)).samples.height == 6


# --- damage ---------------------------------------------------------------------------------------


def damaged(tmp_path: Path, data: bytes, name: str = "damaged.blg") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_truncated_file_returns_the_samples_before_the_cut(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    cut = damaged(tmp_path, data[: 4 * BUFFER + 20000])
    log = read_blg(cut)
    assert 0 < log.samples.height < 11
    text = " | ".join(p.describe() for p in log.problems)
    assert "cut short" in text and "buffer 4" in text
    assert "closing catalog" in text or "not closed" in text
    cut_sample = [p for p in log.problems if "cut by the end of the file" in p.message]
    assert [(p.lost, p.location) for p in cut_sample] == [(1, "buffer 4, byte 278016")]
    assert "sample at 2007-08-14 15:44:38.599 local" in cut_sample[0].message


def test_corrupted_middle_buffer_is_skipped_and_accounted(tmp_path: Path) -> None:
    data = bytearray(SAMPLE.read_bytes())
    data[3 * BUFFER : 3 * BUFFER + 4] = b"\x13\x00\x00\x00"  # buffer size field wrong
    log = read_blg(damaged(tmp_path, bytes(data)))
    whole = read_blg(SAMPLE)
    messages = [p.describe() for p in log.problems]
    assert any("buffer 3 (byte 196608)" in m and "damaged buffer header" in m for m in messages)
    lost = sum(p.lost for p in log.problems if "catalog" not in (p.location or ""))
    assert log.samples.height + lost == 11
    assert any("closing catalog lists 11 sample(s)" in m for m in messages)
    # Samples that were read keep their values; a rate after the gap has no value for its first sample.
    kept = whole.samples.join(log.samples.select("timestamp"), on="timestamp")
    assert kept.height == log.samples.height


def test_event_overrunning_its_buffer_is_reported(tmp_path: Path) -> None:
    data = bytearray(SAMPLE.read_bytes())
    first_event = 2 * BUFFER + 0x48
    data[first_event : first_event + 2] = (0xF000).to_bytes(2, "little")
    log = read_blg(damaged(tmp_path, bytes(data)))
    # The event (a name table, kind 36) is stepped over to the next event's class GUID: the
    # samples after it in the buffer are read, not skipped with the rest of the buffer.
    assert any(
        "does not fit the buffer" in p.message
        and "1 event(s) skipped (record kind 36" in p.message
        and p.location == "buffer 2, byte 131144"
        for p in log.problems
    )
    assert log.samples.height == 11


@pytest.mark.parametrize("fill", [b"\x00", b"\xff"])
def test_filled_tail_buffers_are_reported_not_read(tmp_path: Path, fill: bytes) -> None:
    data = SAMPLE.read_bytes()[: 5 * BUFFER] + fill * (2 * BUFFER)
    log = read_blg(damaged(tmp_path, data))
    assert log.samples.height > 0
    blank = [p for p in log.problems if "filled with a single byte value" in p.message]
    assert len(blank) == 1 and blank[0].location == "buffers 5-6 (bytes 327680-458752)"


def test_wrong_magic_and_older_format_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(CounterLogError, match=r"byte 0: not a binary perfmon log"):
        read_blg(damaged(tmp_path, b"\x12\x34" + SAMPLE.read_bytes()[2:]))
    with pytest.raises(UnsupportedFormatError, match=r"PDH-BIN.*relog"):
        read_blg(damaged(tmp_path, b"PDH-BIN 2.0\x00" + b"\x00" * 4096))


def test_nothing_readable_is_an_error_with_the_account(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()[:BUFFER] + b"\x00" * (6 * BUFFER)
    with pytest.raises(CounterLogError, match="no readable samples"):
        read_blg(damaged(tmp_path, data))


def test_structure_pass_counts_without_cooking() -> None:
    with BlgFile(SAMPLE) as blg:
        batches = list(blg.batches(values=False))
        assert blg.samples_read == 11
        assert blg.catalog is not None and blg.catalog.samples == 11
        assert sum(len(b.stamps) for b in batches) == 11
        assert blg.header.pointer_size == 4 and blg.header.os_build == 6000
        assert blg.header.perf_frequency == 3_579_545


# --- convert and inspect --------------------------------------------------------------------------


def test_convert_to_csv_reads_back_identically(tmp_path: Path, log) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["convert", str(SAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "11 sample(s) x 1832 counter(s)" in result.output
    raw = out.read_bytes()
    assert raw.startswith(
        b'"(PDH-CSV 4.0) (Eastern Daylight Time)(240)","\\\\ZACH-PC\\LogicalDisk(HarddiskVolume1)\\% Free Space"'
    )
    first_row = raw.split(b"\r\n")[1]
    assert first_row.startswith(
        b'"08/14/2007 15:40:38.659","19.942797711908476",'
    )  # one-sample type: a value
    assert b'," ",' in first_row  # two-sample types: no value in the first sample, written as a space
    back = read_counter_csv(out)
    assert back.samples.height == 11 and back.counters.height == 1832
    assert back.counters.get_column("path").to_list() == log.counters.get_column("path").to_list()
    assert back.samples.get_column("timestamp").to_list() == log.samples.get_column("timestamp").to_list()
    for ours, theirs in zip(log.samples.columns[1:], back.samples.columns[1:], strict=True):
        a, b = log.samples.get_column(ours), back.samples.get_column(theirs)
        assert a.is_null().to_list() == b.is_null().to_list()
        assert (a - b).drop_nulls().abs().max() in (None, 0.0)


def test_convert_tsv_and_parquet_with_selection_and_window(tmp_path: Path) -> None:
    tsv = tmp_path / "cpu.tsv"
    result = CliRunner().invoke(
        app,
        [
            "convert",
            str(SAMPLE),
            "-o",
            str(tsv),
            "--counters",
            r"\Processor(*)\*",
            "--begin",
            "2007-08-14 15:45:00",
        ],
    )
    assert result.exit_code == 0, result.output
    assert tsv.read_bytes().startswith(b'"(PDH-TSV 4.0) (Eastern Daylight Time)(240)"\t')
    back = read_counter_csv(tsv)
    assert back.samples.height == 6 and set(back.counters.get_column("object")) == {"Processor"}
    parquet = tmp_path / "cpu.parquet"
    result = CliRunner().invoke(app, ["convert", str(SAMPLE), "-o", str(parquet), "--counters", r"\Memory\*"])
    assert result.exit_code == 0, result.output
    frame = pl.read_parquet(parquet)
    assert frame.height == 11 and frame.width == 36
    assert r"\\ZACH-PC\Memory\Available Bytes" in frame.columns
    assert frame.schema["timestamp"] == pl.Datetime("us", "UTC")


def test_convert_refuses_unknown_output_and_reports_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["convert", str(SAMPLE), "-o", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2 and "expected a file name ending in .csv, .tsv or .parquet" in result.output
    bad = damaged(tmp_path, b"\x00" * 1000, "bad.blg")
    result = CliRunner().invoke(app, ["convert", str(bad), "-o", str(tmp_path / "x.csv")])
    assert result.exit_code == 2


def test_inspect_describes_a_blg() -> None:
    result = CliRunner().invoke(app, ["inspect", str(SAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    assert '"format": "perfmon-blg"' in result.output
    assert '"samples": 11' in result.output and '"closing_catalog_samples": 11' in result.output
    assert "build 6000, 32-bit" in result.output
