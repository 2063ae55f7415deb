from __future__ import annotations

import codecs
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.counter_csv import describe_counter_log, read_counter_csv, sniff_counter_csv
from esrp_report.ingest.perfmon.counter_path import CounterPath, format_counter_path
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError
from esrp_synth.perfmon_csv import write_pdh_csv

START = datetime(2011, 3, 11, 13, 28, 5, 123000)
PATHS = [r"\\EMAIL5\LogicalDisk(C:\MP\DB\DB1)\Avg. Disk sec/Read", r"\\EMAIL5\Memory\Available MBytes"]
HEADER = '"(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\\\H\\Memory\\Available MBytes","\\\\H\\Memory\\Pages/sec"'
ENGINES = ["pyarrow", "native"] if counter_csv._pdhcsv is not None else ["pyarrow"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _write(tmp_path: Path, rows: int = 4, **kwargs: object) -> Path:
    """Rows i = 0.. hold (2i + 0.25, 2i + 1.25), 15 s apart from START (local time, bias 480)."""
    path = tmp_path / "Performance_2011_3_11_13_27_46.csv"
    stamps = [START + timedelta(seconds=15 * i) for i in range(rows)]
    values = np.arange(rows * 2, dtype=float).reshape(rows, 2) + 0.25
    write_pdh_csv(path, PATHS, stamps, values, **kwargs)  # type: ignore[arg-type]
    return path


def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode().split("\r\n")


def _put(path: Path, lines: list[str]) -> None:
    path.write_bytes("\r\n".join(lines).encode())


# --- round trip -------------------------------------------------------------------------------

_names = st.text(
    st.characters(codec="cp1252", exclude_characters='\\()"\r\n\t', exclude_categories=("Cc",)),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip() == s)
_paths = st.builds(
    CounterPath,
    machine=st.one_of(st.none(), _names),
    object=_names,
    instance=st.one_of(
        st.none(),
        _names,
        st.builds(lambda a, b: f"{a}\\{b}", _names, _names),
        st.builds(lambda a, b: f"{a}({b})", _names, _names),
    ),
    counter=_names,
)
_values = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=64))
_stamps = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)  # perfmon writes milliseconds
)


@given(
    paths=st.lists(_paths, min_size=1, max_size=6, unique_by=lambda p: format_counter_path(p).casefold()),
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
    stamps = sorted(data.draw(st.lists(_stamps, min_size=rows, max_size=rows)))
    text_paths = [format_counter_path(p) for p in paths]
    file = tmp_path / f"log-{encoding}.csv"
    array = np.array([[math.nan if v is None else v for v in row] for row in matrix], dtype=float)
    write_pdh_csv(file, text_paths, stamps, array, separator=separator, encoding=encoding, bias_minutes=bias)

    assert sniff_counter_csv(file.read_bytes()[:4096])
    # Random characters are no language: a code page is named, as --encoding does (detection is
    # tested on real names in test_code_pages.py).
    log = read_counter_csv(file, engine=engine, encoding="cp1252" if encoding == "cp1252" else None)
    assert log.format == ("pdh-tsv" if separator == "\t" else "pdh-csv")
    assert (log.utc_offset_minutes, log.time_zone_name) == (-bias, "Pacific Standard Time")
    assert log.counters["path"].to_list() == text_paths
    assert not log.counters["duplicate"].any()
    parsed = [
        CounterPath(r["machine"], r["object"], r["instance"], r["counter"])
        for r in log.counters.iter_rows(named=True)
    ]
    assert parsed == paths
    assert log.samples.columns == ["timestamp", *log.counters["column"]]
    assert log.samples.schema["timestamp"] == pl.Datetime("us", "UTC")
    for j, column in enumerate(log.counters["column"]):
        assert log.samples[column].dtype == pl.Float64
        assert log.samples[column].to_list() == [row[j] for row in matrix]  # exact, and None stays None
    assert log.samples["timestamp"].to_list() == [
        (s + timedelta(minutes=bias)).replace(tzinfo=UTC) for s in stamps
    ]
    assert not log.problems


def test_timestamps_are_local_time_plus_the_bias(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=2, time_zone_name="Eastern Standard Time", bias_minutes=300)
    log = read_counter_csv(path, engine=engine)
    assert log.utc_offset_minutes == -300 and log.time_zone_name == "Eastern Standard Time"
    # 13:28:05.123 in New York (EST, UTC-5) is 18:28:05.123 UTC.
    assert log.samples["timestamp"][0] == datetime(2011, 3, 11, 18, 28, 5, 123000, tzinfo=UTC)


def test_relog_style_numbers_read_exactly(engine: str, tmp_path: Path) -> None:
    """relog prints %.20g with three-digit exponents; the nearest double must come back."""
    texts = ["3.3011502253651360951e-005", "0.10000000000000000555", "123456789012345678901234", "-0", "1E5"]
    path = tmp_path / "relog.csv"
    cells = ",".join(f'"{t}"' for t in texts)
    paths = ",".join(f'"\\\\H\\Memory\\C{i}"' for i in range(len(texts)))
    path.write_bytes(f'"(PDH-CSV 4.0) (UTC)(0)",{paths}\r\n"01/02/2020 00:00:00.000",{cells}\r\n'.encode())
    row = read_counter_csv(path, engine=engine).samples.drop("timestamp").row(0)
    assert [math.copysign(1, v) for v in row] == [math.copysign(1, float(t)) for t in texts]
    assert list(row) == [float(t) for t in texts]


# --- damaged files: partial results with Problems ---------------------------------------------


def test_file_cut_mid_row_keeps_the_whole_rows_and_names_the_cut_line(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 5])  # '"6.25","7.' : would read as 7.0 if taken as whole
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, 2.25, 4.25]
    [problem] = log.problems
    assert (problem.location, problem.lost) == ("line 5", 1)
    assert problem.message == "last line is cut short (file truncated?); row dropped"


def test_a_whole_last_row_without_line_end_is_kept(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    whole = path.read_bytes()
    path.write_bytes(whole + b"\x00" * 8)  # NUL padding after the last line end loses nothing
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0002"].to_list() == [1.25, 3.25, 5.25] and not log.problems
    path.write_bytes(whole.rstrip(b"\r\n"))
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0002"].to_list() == [1.25, 3.25, 5.25] and not log.problems


def test_ragged_rows_are_dropped_with_their_line_numbers(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=5)
    lines = _lines(path)
    lines[2] = '"03/11/2011 13:28:20.123","1.0"'
    lines[3] += ',"9.0"'
    lines.insert(4, "")  # a blank line is not a row, but it is a line
    _put(path, lines)
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, 6.25, 8.25]
    found = {(p.message, p.location, p.lost) for p in log.problems}
    assert found == {
        ("1 row(s) with too few fields (2, expected 3); rows dropped", "line 3", 1),
        ("1 row(s) with too many fields (4, expected 3); rows dropped", "line 4", 1),
    }


def test_many_damaged_rows_are_one_problem_listing_the_first_lines(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=30)
    lines = _lines(path)
    for index in range(2, 27):
        lines[index] = lines[index].rsplit(",", 1)[0]
    _put(path, lines)
    log = read_counter_csv(path, engine=engine)
    [problem] = log.problems
    assert problem.lost == 25 and log.sample_count == 5
    assert problem.location == "lines 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 and 15 more"


def test_a_cell_that_is_not_a_number_is_left_empty_and_its_row_kept(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    path.write_bytes(path.read_bytes().replace(b'"2.25"', b'"abc"').replace(b'"7.25"', b'"1.#INF"'))
    log = read_counter_csv(path, engine=engine)
    # Only the damaged cells go; the sound cell beside each stays (it may hold the worst value).
    assert log.samples["c0001"].to_list() == [0.25, None, 4.25, 6.25]
    assert log.samples["c0002"].to_list() == [1.25, 3.25, 5.25, None]
    assert log.damage.cells == {"c0001": 1, "c0002": 1} and log.damage.rows_lost == 0
    [problem] = log.problems
    assert problem.message == (
        "2 cell(s) that are not numbers in 2 row(s) (first: 'abc' in column 2; columns 2, 3); "
        "those cells left empty, the rest of their rows kept"
    )
    assert (problem.location, problem.lost) == ("lines 3, 5", 2)


def test_infinite_and_nan_cells_are_damage_in_both_engines(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    path.write_bytes(path.read_bytes().replace(b'"2.25"', b'"inf"').replace(b'"5.25"', b'"NaN"'))
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, None, 4.25, 6.25]
    assert log.samples["c0002"].to_list() == [1.25, 3.25, None, 7.25]
    assert log.damage.cells == {"c0001": 1, "c0002": 1}


def test_a_dropped_row_keeps_its_readable_values_as_lost_maxima(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=4)
    path.write_bytes(path.read_bytes().replace(b"03/11/2011 13:28:20.123", b"yesterday"))
    log = read_counter_csv(path, engine=engine)
    assert log.damage.rows_lost == 1
    assert log.damage.lost_maxima == {"c0001": 2.25, "c0002": 3.25}


def test_unreadable_timestamps_are_dropped_and_named(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    path.write_bytes(path.read_bytes().replace(b"03/11/2011 13:28:20.123", b"yesterday"))
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, 4.25]
    [problem] = log.problems
    assert "1 row(s) with an unreadable timestamp (first: 'yesterday'" in problem.message
    assert (problem.location, problem.lost) == ("line 3", 1)


def test_damage_of_several_kinds_in_one_file(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=6)
    lines = _lines(path)
    lines[2] = lines[2].replace('"2.25"', '"x"')
    lines[3] = lines[3].rsplit(",", 1)[0]
    lines[5] = lines[5].replace("03/11/2011", "13/11/2011")
    _put(path, lines)
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, None, 6.25, 10.25]  # the "x" cell only
    assert [(p.location, p.lost) for p in log.problems] == [("line 3", 1), ("line 4", 1), ("line 6", 1)]
    assert (log.damage.cells, log.damage.rows_lost) == ({"c0001": 1}, 2)


def test_a_late_byte_that_is_not_utf8_costs_only_its_cell(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3000)  # the bad byte lies past the 64 KiB head that decides the encoding
    data = path.read_bytes()
    assert data.index(b'"5000.25"') > 65536
    path.write_bytes(data.replace(b'"5000.25"', b'"5000.2\xff"'))
    log = read_counter_csv(path, engine=engine)
    assert log.sample_count == 3000 and 5000.25 not in log.samples["c0001"].to_list()
    assert log.counters["path"].to_list() == PATHS
    row_problem = (
        "1 cell(s) that are not numbers in 1 row(s) (first: '5000.2\ufffd' in column 2; columns 2); "
        "those cells left empty, the rest of their rows kept",
        "line 2502",
    )
    decoded = ("1 character(s) could not be decoded as utf-8 and were replaced", None)
    found = [(p.message, p.location) for p in log.problems]
    # PyArrow checks UTF-8 as it reads and says so; the compiled parser only sees a cell that is no number.
    assert found == ([decoded, row_problem] if engine == "pyarrow" else [row_problem])


def test_an_early_byte_that_is_not_utf8_in_a_row_is_shown_byte_for_byte(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    path.write_bytes(path.read_bytes().replace(b'"2.25"', b'"2.2\xff"'))
    log = read_counter_csv(path, engine=engine)
    assert log.samples["c0001"].to_list() == [0.25, None, 4.25]
    [problem] = log.problems
    assert "(first: '2.2\xff' in column 2;" in problem.message and problem.location == "line 3"


# --- the header -------------------------------------------------------------------------------


def test_duplicate_columns_are_kept_and_flagged(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    write_pdh_csv(path, [PATHS[0], PATHS[1], PATHS[0].upper()], [START], np.array([[1.0, 2.0, 3.0]]))
    log = read_counter_csv(path, engine=engine)
    assert log.counters["duplicate"].to_list() == [False, False, True]
    assert log.counters["column"].to_list() == ["c0001", "c0002", "c0003"]
    assert log.samples.select("c0001", "c0003").row(0) == (1.0, 3.0)
    [problem] = log.problems
    assert problem.message.startswith(f"counter path {PATHS[0]!r} appears 2 times (columns 2, 4)")
    assert problem.location == "line 1, column 4"


@pytest.mark.parametrize(
    ("first_cell", "zone", "offset"),
    [
        ("(PDH-CSV 4.0) (GMT Standard Time)(0)", "GMT Standard Time", 0),
        ("(PDH-CSV 4.0) (@tzres.dll,-111)(240)", "@tzres.dll,-111", -240),
        ("(PDH-CSV 4.0) (India Standard Time)(-330)", "India Standard Time", 330),
        ("(PDH-CSV 4.0)(480)", None, -480),
    ],
)
def test_header_zone_and_bias(
    engine: str, tmp_path: Path, first_cell: str, zone: str | None, offset: int
) -> None:
    path = tmp_path / "zone.csv"
    path.write_bytes(
        f'"{first_cell}","\\\\H\\Memory\\Pages/sec"\r\n"01/02/2020 03:04:05.006","1"\r\n'.encode()
    )
    log = read_counter_csv(path, engine=engine)
    assert (log.time_zone_name, log.utc_offset_minutes, log.problems) == (zone, offset, [])
    assert log.samples["timestamp"][0] == datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=UTC) - timedelta(
        minutes=offset
    )


@pytest.mark.parametrize(
    "first_cell", ["(PDH-CSV 4.0) (Pacific Standard Time)", "(PDH-CSV 4.0) (Pacific Sta"]
)
def test_missing_bias_means_offset_unknown(engine: str, tmp_path: Path, first_cell: str) -> None:
    path = tmp_path / "nobias.csv"
    path.write_bytes(
        f'"{first_cell}","\\\\H\\Memory\\Pages/sec"\r\n"01/02/2020 03:04:05.006","1"\r\n'.encode()
    )
    log = read_counter_csv(path, engine=engine)
    assert log.utc_offset_minutes is None
    assert log.samples["timestamp"][0] == datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)  # local kept as UTC
    warning = next(p for p in log.problems if p.severity == "warning")
    assert warning.message.startswith("time-zone offset unknown (the header gives no bias)")


def test_tsv_is_told_by_the_header_not_the_extension(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=2, separator="\t")
    renamed = path.rename(tmp_path / "log.csv")
    log = read_counter_csv(renamed, engine=engine)
    assert log.format == "pdh-tsv" and log.samples["c0002"].to_list() == [1.25, 3.25]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig", "cp1252"])
def test_encodings_with_and_without_bom(engine: str, tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "enc.csv"
    paths = [r"\\H\Prozessor(_Total)\Prozessorzeit (%)", r"\\H\Température(é)\Valeur"]
    write_pdh_csv(path, paths, [START], np.array([[1.5, 2.5]]), encoding=encoding)
    head = path.read_bytes()
    assert head.startswith(codecs.BOM_UTF16_LE) == (encoding == "utf-16")
    assert sniff_counter_csv(head)
    log = read_counter_csv(path, engine=engine)
    assert log.counters["path"].to_list() == paths and log.counters["instance"][1] == "é"
    assert log.samples.drop("timestamp").row(0) == (1.5, 2.5)


# --- unusable files: typed errors naming file, line and what was expected -----------------------


@pytest.mark.parametrize(
    ("content", "error", "pieces"),
    [
        (b"", CounterLogError, ["empty file", "line 1", 'expected "(PDH-CSV 4.0)']),
        (b"\xef\xbb\xbf\r\n", CounterLogError, ["empty file", "line 1"]),
        (
            (HEADER + "\r\n").encode(),
            CounterLogError,
            ["no readable samples", "line 2", 'expected "MM/DD/YYYY HH:MM:SS.fff"'],
        ),
        (
            (HEADER + '\r\n"01/02/2020 00:00:00.000","1"\r\n').encode(),
            CounterLogError,
            ["no readable samples (1 damaged row(s) dropped)", "line 2"],
        ),
        (
            b'"(PDH-CSV 4.0) (UTC)(0)"\r\n"01/01/2020 00:00:00.000"\r\n',
            CounterLogError,
            ["header names no counters", "line 1"],
        ),
        (
            b'"01/01/2020 00:00:00.000","1"\r\n',
            CounterLogError,
            ["no header: line 1 is a data row", 'expected "(PDH-CSV 4.0)'],
        ),
        (
            b"name,value\r\nx,1\r\n",
            UnsupportedFormatError,
            ["not a perfmon counter log", "line 1, column 1", "found 'name,value'"],
        ),
        (
            b'"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec","Memory"\r\n',
            CounterLogError,
            ["line 1, column 3", "counter path 'Memory' does not start with a backslash"],
        ),
    ],
)
def test_unusable_files_raise_typed_errors(
    engine: str, tmp_path: Path, content: bytes, error: type, pieces: list[str]
) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(error) as info:
        read_counter_csv(path, engine=engine)
    assert type(info.value) is error
    text = str(info.value)
    assert text.startswith(f"{path}: ")
    for piece in pieces:
        assert piece in text


def test_unknown_engine_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="engine must be one of"):
        read_counter_csv(_write(tmp_path), engine="fast")


def test_sniff() -> None:
    assert sniff_counter_csv(b'"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\M\\C"\r\n')
    assert sniff_counter_csv(codecs.BOM_UTF16_LE + '"(PDH-TSV 4.0)'.encode("utf-16-le"))
    assert not sniff_counter_csv(b"name,value\r\n")
    assert not sniff_counter_csv(b"<html>(PDH-CSV 4.0)")


def test_describe(engine: str, tmp_path: Path) -> None:
    path = _write(tmp_path, rows=3)
    lines = _lines(path)
    lines[2] = lines[2].replace('"3.25"', '" "')
    _put(path, lines)
    info = describe_counter_log(read_counter_csv(path, engine=engine))
    assert info == {
        "dialect": "pdh-csv",
        "encoding": "ascii",
        "encoding_basis": "the header is ASCII (every code page reads it alike)",
        "time_zone": "Pacific Standard Time",
        "utc_offset_minutes": -480,
        "time_basis": "utc",
        "machines": ["EMAIL5"],
        "objects": {
            "LogicalDisk": {"counters": 1, "instances": 1},
            "Memory": {"counters": 1, "instances": 0},
        },
        "counter_columns": 2,
        "duplicate_columns": 0,
        "first_sample": "2011-03-11T21:28:05.123000+00:00",
        "last_sample": "2011-03-11T21:28:35.123000+00:00",
        "samples": 3,
        "interval_seconds": 15.0,
        "missing_cells": 1,
        "problems": [],
    }


NATIVE = pytest.mark.skipif(counter_csv._pdhcsv is None, reason="the compiled PDH-CSV parser was not built")
ROWS = (
    b'"01/01/2020 00:00:00.000","1.5"," "\n'
    b'"01/01/2020 00:00:15.000","2.5"\n'  # too few fields: left out
    b'"01/01/2020 00:00:30.000","x","7"\n'  # not a number: an empty cell, the row kept
    b'"bad stamp","4","8"\n'  # unreadable stamp: left out
    b'"01/01/2020 00:00:45.000","5","9"\n'
)


@NATIVE
@pytest.mark.parametrize(
    "rows",
    [ROWS, ROWS.replace(b'","2.5"\n', b'","2.5","3"\n').replace(b"bad stamp", b"01/01/2020 00:00:40.000")],
)
def test_the_parser_hands_polars_its_sound_rows_through_the_arrow_interface(rows: bytes) -> None:
    """Polars and PyArrow, two independent consumers of the capsules, see the same rows; the
    values outlive every buffer the parser returned (the array holds what it points into)."""
    import gc

    import pyarrow as pa

    parse, arrow_table = counter_csv._pdhcsv.parse, counter_csv._pdhcsv.arrow_table  # type: ignore[union-attr]
    values, stamps, status, *_ = parse(rows, 0, 2, ",", 2, 2)
    sound = [s == 0 for s in status]
    bias = 480 * 60_000_000
    frame = pl.DataFrame(counter_csv._ArrowRows(arrow_table(values, stamps, status, ["a", "b"], bias)[:2]))
    schema, array, kept = arrow_table(values, stamps, status, ["a", "b"], bias)
    batch = pa.RecordBatch._import_from_c_capsule(schema, array)
    del values, stamps, status, schema, array
    gc.collect()
    expected_a = [1.5, 2.5, None, 4.0, 5.0]
    expected_b = [None, 3.0, 7.0, 8.0, 9.0]
    keep = [i for i, ok in enumerate(sound) if ok and (i != 3 or b"bad stamp" not in rows)]
    assert kept == frame.height == batch.num_rows == len(keep)
    assert frame.schema == pl.Schema(
        {"timestamp": pl.Datetime("us", "UTC"), "a": pl.Float64, "b": pl.Float64}
    )
    assert frame.get_column("a").to_list() == [expected_a[i] for i in keep]
    assert frame.get_column("b").to_list() == [expected_b[i] for i in keep]
    assert frame.get_column("timestamp")[0] == datetime(2020, 1, 1, 8, tzinfo=UTC)  # local + 480 min
    assert pl.DataFrame(pl.from_arrow(batch)).equals(frame)


@NATIVE
def test_the_arrow_export_refuses_buffers_of_different_rows() -> None:
    arrow_table = counter_csv._pdhcsv.arrow_table  # type: ignore[union-attr]
    values, stamps, status, *_ = counter_csv._pdhcsv.parse(ROWS, 0, 2, ",", 1, 2)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="same rows"):
        arrow_table(values, stamps, status[:-1], ["a", "b"], 0)
    with pytest.raises(ValueError, match="same rows"):
        arrow_table(values, stamps, status, ["a"], 0)
    with pytest.raises(TypeError):
        arrow_table(values, stamps, status, ["a", 2], 0)
