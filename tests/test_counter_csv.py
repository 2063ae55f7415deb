from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report.errors import CounterLogError, UnsupportedFormatError
from esrp_report.ingest import counter_csv
from esrp_report.ingest.counter_csv import describe_counter_log, read_counter_csv, sniff_counter_csv
from esrp_report.ingest.counter_path import CounterPath, format_counter_path
from esrp_report.synth.perfmon_csv import write_pdh_csv

START = datetime(2011, 3, 11, 13, 28, 5, 123000)
ENGINES = ["pyarrow", "native"] if counter_csv._pdhcsv is not None else ["pyarrow"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


PATHS = [r"\\EMAIL5\LogicalDisk(C:\MP\DB\DB1)\Avg. Disk sec/Read", r"\\EMAIL5\Memory\Available MBytes"]


def _write(tmp_path: Path, rows: int = 4, **kwargs: object) -> Path:
    path = tmp_path / "Performance_2011_3_11_13_27_46.csv"
    stamps = [START + timedelta(seconds=15 * i) for i in range(rows)]
    values = np.arange(rows * 2, dtype=float).reshape(rows, 2) + 0.25
    write_pdh_csv(path, PATHS, stamps, values, **kwargs)  # type: ignore[arg-type]
    return path


_names = st.text(
    st.characters(codec="cp1252", exclude_characters='\\()"\r\n\t,', exclude_categories=("Cc",)),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip() == s)
_paths = st.builds(
    CounterPath,
    machine=_names,
    object=_names,
    instance=st.one_of(
        st.none(), st.builds(lambda a, b: f"{a}\\{b}", _names, _names), _names.map(lambda s: f"{s}(x)")
    ),
    counter=_names,
)
_values = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=64))


@given(
    paths=st.lists(_paths, min_size=1, max_size=6, unique_by=format_counter_path),
    data=st.data(),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "cp1252"]),
    separator=st.sampled_from([",", "\t"]),
    bias=st.integers(-720, 720),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_logs_parse_back_exactly(
    engine: str,
    tmp_path: Path,
    paths: list[CounterPath],
    data: st.DataObject,
    encoding: str,
    separator: str,
    bias: int,
) -> None:
    rows = data.draw(st.integers(1, 5))
    matrix = [[data.draw(_values) for _ in paths] for _ in range(rows)]
    stamps = [START + timedelta(seconds=15 * i, milliseconds=7 * i) for i in range(rows)]
    text_paths = [format_counter_path(p) for p in paths]
    file = tmp_path / f"log-{encoding}.csv"
    array = np.array([[math.nan if v is None else v for v in row] for row in matrix], dtype=float)
    write_pdh_csv(file, text_paths, stamps, array, separator=separator, encoding=encoding, bias_minutes=bias)

    log = read_counter_csv(file, engine=engine)
    assert log.format == ("pdh-tsv" if separator == "\t" else "pdh-csv")
    assert log.utc_offset_minutes == -bias
    assert log.counters["path"].to_list() == text_paths
    parsed = [
        CounterPath(r["machine"], r["object"], r["instance"], r["counter"])
        for r in log.counters.iter_rows(named=True)
    ]
    assert parsed == paths
    assert log.samples.height == rows
    for j, column in enumerate(log.counters["column"]):
        assert log.samples[column].to_list() == [row[j] for row in matrix]
    expected_utc = [(s + timedelta(minutes=bias)).replace(tzinfo=UTC) for s in stamps]
    assert log.samples["timestamp"].to_list() == expected_utc
    assert not log.problems


def test_truncated_file_keeps_every_whole_row_and_counts_the_cut_one(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 5])  # cuts into the last value: '"6.25","7.' would read as 7.0
    log = read_counter_csv(path, engine=engine)
    assert log.samples.height == 3
    assert [p.lost for p in log.problems] == [1]
    assert log.problems[0].location == "line 5"
    assert "cut short" in log.problems[0].message or "fields" in log.problems[0].message


def test_ragged_rows_are_dropped_with_their_line_numbers(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    lines = path.read_bytes().decode().split("\r\n")
    lines[2] = '"03/11/2011 13:28:20.123","1.0"'
    lines[3] = lines[3] + ',"9.0"'
    path.write_bytes("\r\n".join(lines).encode())
    log = read_counter_csv(path, engine=engine)
    assert log.samples.height == 2
    assert sorted((p.location, p.lost) for p in log.problems) == [("line 3", 1), ("line 4", 1)]
    assert any("row has 2 fields, expected 3" in p.message for p in log.problems)


def test_a_non_numeric_cell_becomes_missing_and_is_counted(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    path.write_text(path.read_text().replace('"2.25"', '"abc"'))
    log = read_counter_csv(path, engine=engine)
    assert log.samples.height == 3
    assert log.samples["c00001"].to_list() == [0.25, None, 4.25]
    assert [(p.lost, p.location) for p in log.problems] == [(1, "column 2")]
    assert "'abc'" in log.problems[0].message


def test_unreadable_timestamp_rows_are_dropped_and_counted(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    path.write_text(path.read_text().replace("03/11/2011 13:28:20.123", "yesterday"))
    log = read_counter_csv(path, engine=engine)
    assert log.samples.height == 2
    assert log.problems[0].lost == 1 and "'yesterday'" in log.problems[0].message


def test_duplicate_columns_are_kept_and_flagged(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    write_pdh_csv(path, [PATHS[0], PATHS[0]], [START], np.array([[1.0, 2.0]]))
    log = read_counter_csv(path, engine=engine)
    assert log.counters["duplicate"].to_list() == [False, True]
    assert log.samples.select("c00001", "c00002").row(0) == (1.0, 2.0)
    assert "appears more than once" in log.problems[0].message


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (b"", CounterLogError, "empty file"),
        (
            b'"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Available MBytes"\r\n',
            CounterLogError,
            "no readable samples",
        ),
        (b'"(PDH-CSV 4.0) (UTC)(0)"\r\n"01/01/2020 00:00:00.000"\r\n', CounterLogError, "names no counters"),
        (b"name,value\r\nx,1\r\n", UnsupportedFormatError, "not a perfmon counter log"),
        (b'"(PDH-CSV 4.0) (UTC)(0)","Memory"\r\n', CounterLogError, "does not start with a backslash"),
    ],
)
def test_unusable_files_raise_typed_errors_naming_the_file(
    engine: str, tmp_path: Path, content: bytes, error: type, message: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(error) as info:
        read_counter_csv(path, engine=engine)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_missing_bias_is_said_and_utf16_without_bom_is_read(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=2, encoding="utf-16-le")
    assert sniff_counter_csv(path.read_bytes()[:200])
    text = path.read_bytes().decode("utf-16-le").replace("(480)", "")
    path.write_bytes(text.encode("utf-16-le"))
    log = read_counter_csv(path, engine=engine)
    assert log.utc_offset_minutes is None
    assert "no time-zone bias" in log.problems[0].message
    assert log.samples["timestamp"][0] == START.replace(tzinfo=UTC)


def test_describe(engine: str, tmp_path: Path) -> None:
    info = describe_counter_log(read_counter_csv(_write(tmp_path, rows=3), engine=engine))
    assert info["machines"] == ["EMAIL5"]
    assert info["samples"] == 3
    assert info["interval_seconds"] == 15.0
    assert info["objects"] == {
        "LogicalDisk": {"counters": 1, "instances": 1},
        "Memory": {"counters": 1, "instances": 0},
    }


def test_many_damaged_rows_each_get_their_own_line_number(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=600)
    lines = path.read_bytes().decode().split("\r\n")
    damaged = list(range(3, 601, 3))  # every third data line (file lines 3, 6, ...) loses a field
    for line in damaged:
        lines[line - 1] = lines[line - 1].rsplit(",", 1)[0]
    path.write_bytes("\r\n".join(lines).encode())
    log = read_counter_csv(path, engine=engine)
    assert log.samples.height == 600 - len(damaged)
    assert [p.location for p in log.problems] == [f"line {n}" for n in damaged]
    assert all(p.lost == 1 and "row has 2 fields, expected 3" in p.message for p in log.problems)
