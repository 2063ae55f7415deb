"""Large counter logs are streamed: read a bounded batch of rows at a time, never held whole.

Every test forces tiny batches on small real logs and proves the streamed path gives exactly
what reading the whole log gives: the same samples, the same damage accounting, the same
figures to the last bit, the same converted files.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from esrp_report.analysis import metrics
from esrp_report.app import api
from esrp_report.app import convert as convert_module
from esrp_report.app.convert import convert
from esrp_report.ingest.jetstress.report_html import read_report
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.blg import read_blg
from esrp_report.ingest.perfmon.blg import stream as blg_stream
from esrp_report.model import Run, StreamedCounterLog, TestKind
from esrp_report.render import payload
from esrp_synth.perfmon_csv import write_pdh_csv

EMAIL5 = Path(__file__).resolve().parent.parent / "samples" / "EMAIL5"
PERF = "Performance_2011_3_11_13_27_46"
SAMPLE_BLG = Path(__file__).parent / "data" / "blg" / "SampleLog.blg"
ENGINES = ["pyarrow", "native"] if counter_csv.native_parser_available() else ["pyarrow"]
BATCHES = [1, 4_000, 100_000]  # bytes of text per batch: one row, a few rows, many rows


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _same_log(streamed: StreamedCounterLog, whole: object) -> None:
    assert isinstance(streamed, StreamedCounterLog) and streamed.streamed
    assert streamed.counters.equals(whole.counters)  # type: ignore[attr-defined]
    assert streamed.sample_count == whole.sample_count  # type: ignore[attr-defined]
    assert streamed.problems == whole.problems  # type: ignore[attr-defined]
    assert streamed.utc_offset_minutes == whole.utc_offset_minutes  # type: ignore[attr-defined]
    assert streamed.time_zone_name == whole.time_zone_name  # type: ignore[attr-defined]
    assert streamed.samples.equals(whole.samples)  # type: ignore[attr-defined]


@pytest.mark.parametrize("batch", BATCHES)
def test_email5_csv_streamed_in_tiny_batches_is_the_whole_log(engine: str, batch: int) -> None:
    whole = counter_csv.read_counter_csv(EMAIL5 / f"{PERF}.csv", engine=engine)
    streamed = counter_csv.open_counter_csv(EMAIL5 / f"{PERF}.csv", engine=engine, batch_bytes=batch)
    batches = list(streamed.sample_batches())
    assert len(batches) > 1 if batch < 100_000 else len(batches) >= 1
    assert max(b.height for b in batches) <= max(1, batch // 1_000)  # bounded: ~4 KB per row
    _same_log(streamed, whole)


def _damaged(tmp_path: Path) -> Path:
    """Damage of every kind, several times over, spread through 400 rows; cut short at the end."""
    path = tmp_path / f"{PERF}.csv"
    paths = [rf"\\EMAIL5\LogicalDisk(C:\MP\DB{i})\Avg. Disk sec/Read" for i in range(6)]
    rows = 400
    start = datetime(2011, 3, 11, 13, 28, 5)
    stamps = [start + timedelta(seconds=15 * i) for i in range(rows)]
    values = np.arange(rows * 6, dtype=float).reshape(rows, 6) / 8 + 0.125
    values[::7, 2] = np.nan
    write_pdh_csv(path, paths, stamps, values)
    lines = path.read_bytes().decode().split("\r\n")
    for at in (20, 150, 151, 390):
        lines[at] = lines[at].rsplit(",", 2)[0]  # too few fields (5, then 5...)
    lines[60] = lines[60].rsplit(",", 4)[0]  # too few, another count
    for at in (33, 240):
        lines[at] += ',"1.0"'  # too many
    for at, bad in ((45, "abc"), (200, "1.#INF"), (310, "--")):
        cells = lines[at].split(",")
        cells[3] = f'"{bad}"'
        lines[at] = ",".join(cells)
    for at in (80, 333):
        lines[at] = lines[at].replace("03/11/2011", "13/45/2011")  # unreadable time stamp
    lines[120] = lines[120].replace('","', '" x,"', 1)  # text after a closing quote
    lines.insert(250, "")  # a blank line: not a row, but a line
    lines[300] = lines[300].replace('"', "", 1)  # a quote that opens nothing
    data = "\r\n".join(lines).encode()
    late = data.index(b'"250.125"')
    data = data[:late] + b'"250.12\xff"' + data[late + len(b'"250.125"') :]  # not UTF-8
    path.write_bytes(data[:-9])  # the last row cut short
    return path


@pytest.mark.parametrize("batch", [1, 700, 5_000, 1 << 30])
def test_damage_is_accounted_the_same_when_streamed(engine: str, batch: int, tmp_path: Path) -> None:
    path = _damaged(tmp_path)
    whole = counter_csv.read_counter_csv(path, engine=engine)
    assert sum(p.lost for p in whole.problems) >= 15  # the damage above was found
    streamed = counter_csv.open_counter_csv(path, engine=engine, batch_bytes=batch)
    _same_log(streamed, whole)


def test_merged_damage_names_every_field_count_and_the_first_bad_cell(tmp_path: Path) -> None:
    streamed = counter_csv.open_counter_csv(_damaged(tmp_path), batch_bytes=1)
    messages = {p.message for p in streamed.problems}
    assert "5 row(s) with too few fields (3/5, expected 7); rows dropped" in messages
    assert any("first: 'abc' in column 4" in m for m in messages)


def test_exact_means_do_not_depend_on_batches() -> None:
    rng = np.random.default_rng(7)
    values = np.concatenate(
        [rng.lognormal(0, 3, 5_000), -rng.lognormal(0, 8, 3_000), [1e300, -1e300, 5e-324]]
    )
    rng.shuffle(values)
    frame = pl.DataFrame({"v": values}).with_columns(w=pl.when(pl.col("v") <= 1).then(pl.col("v")))
    expected = float(sum(map(Fraction, values.tolist())) / len(values))
    means = set()
    for attempt in range(5):
        cuts = sorted(random.Random(attempt).sample(range(1, len(values)), 20))
        reduced = metrics.Reduction({"v": pl.col("v"), "w": pl.col("w")})
        for lo, hi in zip([0, *cuts], [*cuts, len(values)], strict=True):
            reduced.add(frame.slice(lo, hi - lo))
        means.add(
            (reduced.mean("v"), reduced.mean("w"), reduced.max("v"), reduced.min("w"), reduced.count("w"))
        )
    assert len(means) == 1
    [(mean, _, top, _, count)] = means
    assert mean == expected and top == values.max() and count == int((values <= 1).sum())


def test_nan_infinity_and_nothing_reduce_as_float_sums_do() -> None:
    frame = pl.DataFrame(
        {"nan": [1.0, float("nan")], "inf": [1.0, float("inf")], "both": [float("-inf"), float("inf")]}
    ).with_columns(none=pl.lit(None, pl.Float64))
    reduced = metrics.Reduction({c: pl.col(c) for c in frame.columns})
    reduced.add(frame)
    assert np.isnan(reduced.mean("nan")) and reduced.mean("inf") == float("inf")
    assert np.isnan(reduced.mean("both")) and reduced.mean("none") is None and reduced.max("none") is None


@pytest.mark.parametrize("batch", [1, 50_000])
def test_counter_metrics_identical_whole_or_streamed(batch: int) -> None:
    run = read_report(EMAIL5 / f"{PERF}.html")
    whole = counter_csv.read_counter_csv(EMAIL5 / f"{PERF}.csv")
    streamed = counter_csv.open_counter_csv(EMAIL5 / f"{PERF}.csv", batch_bytes=batch)
    assert metrics.counter_metrics(run, streamed) == metrics.counter_metrics(run, whole)
    unknown_window = Run(kind=TestKind.PERFORMANCE, machine="EMAIL5")
    assert metrics.counter_metrics(unknown_window, streamed) == metrics.counter_metrics(unknown_window, whole)


def test_streamed_exact_means_agree_with_polars_means_of_the_same_window() -> None:
    """Means are exact sums divided once: on EMAIL5, read in 10 kB batches, they differ from Polars'
    mean of the whole window only in the last bits (the pinned figures of the sample documents are
    checked in test_document_numbers.py and the golden partials)."""
    run = read_report(EMAIL5 / f"{PERF}.html")
    log = counter_csv.open_counter_csv(EMAIL5 / f"{PERF}.csv", batch_bytes=10_000)
    result = metrics.counter_metrics(run, log)
    frame = metrics._in_window(counter_csv.read_counter_csv(EMAIL5 / f"{PERF}.csv").samples, result.window)
    for row in result.tables[metrics.TableKind.TOTAL].rows:
        for key, value in row.values.items():
            column = metrics._instance_columns(log)[row.instance][key]
            assert value == pytest.approx(frame.get_column(column).mean(), rel=1e-14, abs=1e-12)


@pytest.mark.parametrize("metric", ["db_reads_avg_latency_ms", "log_writes_avg_latency_ms"])
def test_chart_series_from_a_streamed_log(metric: str) -> None:
    run = read_report(EMAIL5 / f"{PERF}.html")
    whole = counter_csv.read_counter_csv(EMAIL5 / f"{PERF}.csv")
    streamed = counter_csv.open_counter_csv(EMAIL5 / f"{PERF}.csv", batch_bytes=3_000)
    for points in (40, 1_000):
        expected = metrics.instance_series(run, whole, metric, max_points=points)
        found = metrics.instance_series(run, streamed, metric, max_points=points)
        assert found.columns == expected.columns and found.height == expected.height
        assert found["timestamp"].equals(expected["timestamp"])
        for column in expected.columns[1:]:
            assert np.allclose(
                found[column].to_numpy(), expected[column].to_numpy(), rtol=1e-12, equal_nan=True
            )


def test_check_streams_large_logs_with_the_same_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = json.dumps(payload.check_payload(api.check([EMAIL5])), default=str, sort_keys=True)
    monkeypatch.setattr(counter_csv, "STREAM_BYTES", 0)
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 20_000)
    assessment = api.check([EMAIL5])
    logs = [r.run.counter_log for s in assessment.servers for r in s.runs if r.run.counter_log]
    assert len(logs) == 2 and all(isinstance(log, StreamedCounterLog) for log in logs)  # Performance, Stress
    assert json.dumps(payload.check_payload(assessment), default=str, sort_keys=True) == whole


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_convert_csv_in_tiny_batches_writes_the_same_file(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _damaged(tmp_path)
    whole = convert(source, tmp_path / f"whole{suffix}", counters=[r"*DB[1-4])*"])
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 600)
    streamed = convert(source, tmp_path / f"streamed{suffix}", counters=[r"*DB[1-4])*"])
    assert (streamed.samples, streamed.columns, streamed.problems) == (
        whole.samples,
        whole.columns,
        whole.problems,
    )
    assert whole.problems == counter_csv.read_counter_csv(source).problems
    if suffix == ".csv":
        assert streamed.output.read_bytes() == whole.output.read_bytes()
    else:
        assert pl.read_parquet(streamed.output).equals(pl.read_parquet(whole.output))


def test_convert_csv_to_a_dataset_is_read_again_when_it_is_not_utf8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the column-chunk budget, parts are written while the CSV is read; the late byte that
    is not UTF-8 makes it read again: the parts written so far go, and the dataset is written anew."""
    source = _damaged(tmp_path)
    monkeypatch.setattr(counter_csv, "_pdhcsv", None)  # PyArrow's parser: it finds the bad byte late
    whole = convert(source, tmp_path / "whole.parquet")
    assert whole.columns == 6 and whole.parts == []
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 600)
    monkeypatch.setattr(convert_module, "ROW_GROUP_BYTES", 8 * 7 * 10)  # 10 rows x 7 columns
    monkeypatch.setattr(convert_module, "PARQUET_CHUNK_BUDGET", 7 * 4)  # 4 row groups per file
    aborted: list[int] = []
    abort = convert_module._ParquetParts.abort

    def counted(self: convert_module._ParquetParts) -> None:
        aborted.append(len(self.parts))
        abort(self)

    monkeypatch.setattr(convert_module._ParquetParts, "abort", counted)
    parts = convert(source, tmp_path / "parts.parquet")
    assert len(aborted) == 1 and aborted[0] > 1  # read again after parts were written
    assert (parts.samples, parts.columns, parts.problems) == (whole.samples, whole.columns, whole.problems)
    assert len(parts.parts) == -(-whole.samples // 40) > 1
    assert sorted(parts.output.iterdir()) == parts.parts
    assert pl.read_parquet(parts.output).equals(pl.read_parquet(whole.output))


def test_blg_streamed_in_small_batches_is_the_whole_log() -> None:
    whole = read_blg(SAMPLE_BLG)
    streamed = blg_stream.open_blg(SAMPLE_BLG, batch_bytes=1)
    assert len(list(streamed.sample_batches())) == whole.sample_count  # one sample per batch
    _same_log(streamed, whole)
    run = Run(kind=TestKind.PERFORMANCE, machine="X")
    assert metrics.counter_metrics(run, streamed) == metrics.counter_metrics(run, whole)


def test_logs_above_the_threshold_are_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not counter_csv.read_counter_log(EMAIL5 / f"{PERF}.csv").streamed
    assert counter_csv.read_counter_log(EMAIL5 / f"{PERF}.csv", stream_bytes=1_000).streamed
    assert not blg_stream.read_blg_log(SAMPLE_BLG).streamed
    assert blg_stream.read_blg_log(SAMPLE_BLG, stream_bytes=1_000).streamed
