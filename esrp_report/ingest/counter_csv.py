r"""Perfmon counter logs written by perfmon or relog as CSV/TSV ("PDH-CSV 4.0").

Header: ``"(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\MACHINE\Object(Inst)\Counter",...``
where 480 is the bias (UTC - local, minutes). Rows: ``"MM/DD/YYYY HH:MM:SS.fff","1.5"," ",...``;
``" "`` is a missing sample. The parse is columnar (PyArrow CSV with an explicit schema); Python
only touches the header and rows that are damaged.
"""

from __future__ import annotations

import codecs
import csv
import mmap
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv

from esrp_report.errors import CounterLogError, UnsupportedFormatError
from esrp_report.ingest.counter_path import parse_counter_path
from esrp_report.ingest.text import sniff_encoding
from esrp_report.model import CounterLog, Problem

try:
    from esrp_report.ingest import _pdhcsv  # type: ignore[attr-defined]
except ImportError:  # no C compiler when installed: the PyArrow path serves
    _pdhcsv = None


def native_parser_available() -> bool:
    """Was the compiled PDH-CSV parser built with this installation?"""
    return _pdhcsv is not None


_HEADER = re.compile(
    r"^\(PDH-(?P<kind>CSV|TSV)\s*(?P<version>[\d.]*)\)\s*(?:\((?P<zone>[^)]*)\)?)?\s*(?:\((?P<bias>[-+]?\d+)\))?",
    re.IGNORECASE,
)
_TIMESTAMP_FORMAT = "%m/%d/%Y %H:%M:%S%.f"
_TRANSCODE_CHUNK = 8 << 20
HEAD = 65536


def sniff_counter_csv(head: bytes) -> bool:
    """Is this the start of a PDH CSV/TSV file (in any supported encoding)?"""
    encoding = sniff_encoding(head)
    text = head.decode(encoding, errors="ignore").lstrip("\ufeff")
    return bool(re.match(r'^"?\(PDH-(CSV|TSV)', text, re.IGNORECASE))


@dataclass
class _Header:
    separator: str
    paths: list[str]
    zone: str | None
    bias: int | None
    problems: list[Problem] = field(default_factory=list)


@contextmanager
def _utf8_path(path: Path, encoding: str) -> Iterator[Path]:
    """The file itself when it is UTF-8, else a UTF-8 copy made chunk by chunk."""
    if encoding in ("utf-8", "utf-8-sig"):
        yield path
        return
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    with tempfile.TemporaryDirectory(prefix="esrp-csv-") as tmp:
        target = Path(tmp) / "utf8.csv"
        offset = 0
        with path.open("rb") as src, target.open("wb") as dst:
            while chunk := src.read(_TRANSCODE_CHUNK):
                try:
                    dst.write(decoder.decode(chunk).encode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise CounterLogError(
                        path,
                        f"cannot decode as {encoding}",
                        location=f"byte {offset + exc.start}",
                        expected=f"text in {encoding}",
                    ) from exc
                offset += len(chunk)
            dst.write(decoder.decode(b"", final=True).encode("utf-8"))
        yield target


def _read_header(path: Path, source: Path) -> _Header:
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        first = handle.readline()
    if not first.strip():
        raise CounterLogError(
            source,
            "empty file",
            location="line 1",
            expected='a header "(PDH-CSV 4.0) (time zone)(bias)",counter paths...',
        )
    separator = "\t" if first.count("\t") > first.count(",") else ","
    cells = next(csv.reader([first.rstrip("\r\n")], delimiter=separator, quotechar='"'))
    match = _HEADER.match(cells[0].strip())
    if not match:
        raise UnsupportedFormatError(
            source,
            "not a perfmon counter log",
            location="line 1, column 1",
            expected='"(PDH-CSV 4.0) ..."',
            found=cells[0],
        )
    header = _Header(separator, [c.strip() for c in cells[1:]], match.group("zone"), None)
    if match.group("bias") is not None:
        header.bias = int(match.group("bias"))
    else:
        header.problems.append(
            Problem(
                str(source),
                "header has no time-zone bias; timestamps are taken as UTC",
                location="line 1, column 1",
                severity="warning",
            )
        )
    if not header.paths:
        raise CounterLogError(
            source,
            "header names no counters",
            location="line 1",
            expected="counter paths after the first column",
        )
    return header


def _counters_frame(header: _Header, source: Path) -> tuple[pl.DataFrame, list[Problem]]:
    problems: list[Problem] = []
    columns, machines, objects, instances, counters, duplicate = [], [], [], [], [], []
    seen: set[str] = set()
    for index, text in enumerate(header.paths, start=1):
        try:
            parsed = parse_counter_path(text)
        except ValueError as exc:
            raise CounterLogError(source, str(exc), location=f"line 1, column {index + 1}") from None
        columns.append(f"c{index:05d}")
        machines.append(parsed.machine)
        objects.append(parsed.object)
        instances.append(parsed.instance)
        counters.append(parsed.counter)
        key = text.casefold()
        duplicate.append(key in seen)
        if key in seen:
            problems.append(
                Problem(
                    str(source),
                    f"counter '{text}' appears more than once; the first column is used",
                    location=f"line 1, column {index + 1}",
                    severity="warning",
                )
            )
        seen.add(key)
    frame = pl.DataFrame(
        {
            "column": columns,
            "path": header.paths,
            "machine": machines,
            "object": objects,
            "instance": instances,
            "counter": counters,
            "duplicate": duplicate,
        },
        schema={
            "column": pl.String,
            "path": pl.String,
            "machine": pl.String,
            "object": pl.String,
            "instance": pl.String,
            "counter": pl.String,
            "duplicate": pl.Boolean,
        },
    )
    return frame, problems


class _LineIndex:
    """Byte offsets of line starts, built only when a problem needs a line number."""

    def __init__(self, path: Path) -> None:
        self.raw = path.read_bytes()  # one copy, searched for every damaged row
        self.starts = np.concatenate(([0], np.flatnonzero(np.frombuffer(self.raw, dtype=np.uint8) == 10) + 1))

    def ends_with_newline(self) -> bool:
        return self.raw.endswith(b"\n")

    def line_of_text(self, text: str, after: int = 0) -> tuple[int | None, int]:
        position = self.raw.find(text.encode("utf-8"), after)
        if position < 0:
            return None, after
        return int(np.searchsorted(self.starts, position, side="right")), position + 1


def read_counter_csv(path: str | Path, *, engine: str = "auto") -> CounterLog:
    """Read a PDH-CSV/TSV file. ``engine``: "native" (the compiled parser), "pyarrow", or "auto"
    (native when it was compiled, else PyArrow). Both give the same result and the same problems."""
    if engine not in ("auto", "native", "pyarrow"):
        raise ValueError("engine must be 'auto', 'native' or 'pyarrow'")
    if engine == "native" and _pdhcsv is None:
        raise RuntimeError("the compiled PDH-CSV parser is not built here")
    source = Path(path)
    try:
        with source.open("rb") as handle:
            head = handle.read(HEAD)
    except OSError as exc:
        raise CounterLogError(source, f"cannot read file: {exc.strerror or exc}") from exc
    encoding = sniff_encoding(head)
    with _utf8_path(source, encoding) as utf8:
        header = _read_header(utf8, source)
        counters, problems = _counters_frame(header, source)
        problems = header.problems + problems
        columns = counters["column"].to_list()
        if engine != "pyarrow" and _pdhcsv is not None:
            samples = _native_samples(utf8, source, header, columns, problems)
        else:
            table, _skipped = _parse_rows(utf8, source, header, columns, problems)
            samples = _samples_frame(table, source, header, problems)
    offset = -header.bias if header.bias is not None else None
    return CounterLog(
        source=str(source),
        format="pdh-tsv" if header.separator == "\t" else "pdh-csv",
        counters=counters,
        samples=samples,
        utc_offset_minutes=offset,
        time_zone_name=header.zone,
        problems=problems,
    )


def _parse_rows(
    utf8: Path, source: Path, header: _Header, columns: list[str], problems: list[Problem]
) -> tuple[pa.Table, list[str]]:
    names = ["timestamp", *columns]
    skipped: list[str] = []

    def on_invalid(row: Any) -> str:
        skipped.append(row.text)
        return "skip"

    read_options = pacsv.ReadOptions(skip_rows=1, column_names=names, block_size=4 << 20)
    parse_options = pacsv.ParseOptions(
        delimiter=header.separator, quote_char='"', invalid_row_handler=on_invalid
    )
    float_types = {name: pa.float64() for name in columns}
    try:
        table = pacsv.read_csv(
            utf8,
            read_options=read_options,
            parse_options=parse_options,
            convert_options=pacsv.ConvertOptions(
                column_types={"timestamp": pa.string(), **float_types},
                null_values=[" ", ""],
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid as exc:
        if "conversion error" not in str(exc):
            raise CounterLogError(source, f"unreadable CSV: {exc}", expected="PDH-CSV rows") from None
        skipped.clear()
        table = _parse_rows_leniently(
            utf8,
            source,
            read_options=read_options,
            parse_options=parse_options,
            names=names,
            problems=problems,
        )
    if _last_line_truncated(utf8, len(names), header.separator, skipped):
        table = table.slice(0, max(table.num_rows - 1, 0))
        skipped.append("<truncated last line>")
    if skipped:
        index = _LineIndex(utf8)
        after = 0
        for text in skipped:
            if text == "<truncated last line>":
                line: int | None = len(index.starts) - (1 if index.ends_with_newline() else 0)
                message = "last line is cut short (file truncated?); row dropped"
            else:
                line, after = index.line_of_text(text, after)
                fields = text.count(f'"{header.separator}"') + 1
                message = f"row has {fields} fields, expected {len(names)}; row dropped"
            problems.append(
                Problem(
                    str(source),
                    message,
                    location=f"line {line}" if line else None,
                    severity="warning",
                    lost=1,
                )
            )
    return table, skipped


def _parse_rows_leniently(
    utf8: Path,
    source: Path,
    *,
    read_options: pacsv.ReadOptions,
    parse_options: pacsv.ParseOptions,
    names: list[str],
    problems: list[Problem],
) -> pa.Table:
    """Slow path for files with non-numeric cells: read text, cast, count what became null."""
    text_table = pacsv.read_csv(
        utf8,
        read_options=read_options,
        parse_options=parse_options,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()), null_values=[" ", ""], strings_can_be_null=True
        ),
    )
    frame = pl.from_arrow(text_table)
    assert isinstance(frame, pl.DataFrame)
    values = names[1:]
    cast = frame.select(
        pl.col("timestamp"), *[pl.col(c).str.strip_chars().cast(pl.Float64, strict=False) for c in values]
    )
    bad = frame.select([(pl.col(c).is_not_null() & cast[c].is_null()).alias(c) for c in values])
    bad_counts = bad.sum().row(0, named=True)
    for column, count in bad_counts.items():
        if count:
            first_row = int(bad[column].arg_max() or 0)
            problems.append(
                Problem(
                    str(source),
                    f"{count} non-numeric cell(s) in column {names.index(column) + 1} "
                    f"(first: {frame[column][first_row]!r} at data row {first_row + 1}); read as missing",
                    location=f"column {names.index(column) + 1}",
                    severity="warning",
                    lost=int(count),
                )
            )
    return cast.to_arrow()


def _last_line_truncated(utf8: Path, fields: int, separator: str, skipped: list[str]) -> bool:
    with utf8.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        tail = handle.read()
    if tail.endswith(b"\n") or not tail:
        return False
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace").rstrip("\r")
    if last in skipped:
        return False  # already dropped as a short row
    complete = last.endswith('"') and last.count(f'"{separator}"') + 1 == fields
    return not complete


def _samples_frame(table: pa.Table, source: Path, header: _Header, problems: list[Problem]) -> pl.DataFrame:
    # No rechunk: the frame keeps PyArrow's blocks instead of copying every column once more.
    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    raw = frame.get_column("timestamp")
    stamp = raw.str.strip_chars().str.strptime(pl.Datetime("us"), _TIMESTAMP_FORMAT, strict=False)
    if header.bias is not None:
        stamp = stamp + timedelta(minutes=header.bias)
    stamp = stamp.dt.replace_time_zone("UTC")
    unreadable = stamp.null_count()
    frame = frame.replace_column(0, stamp)
    if unreadable:
        first = raw.filter(stamp.is_null())[0]
        problems.append(
            Problem(
                str(source),
                f"{unreadable} row(s) with an unreadable timestamp (first: {first!r}); rows dropped",
                severity="warning",
                lost=unreadable,
            )
        )
        frame = frame.filter(pl.col("timestamp").is_not_null())
    if frame.height == 0:
        raise CounterLogError(
            source,
            "no readable samples",
            location="line 2",
            expected='rows "MM/DD/YYYY HH:MM:SS.fff","value",...',
        )
    return frame


_NO_STAMP = np.iinfo(np.int64).min
_NO_ROWS = 'rows "MM/DD/YYYY HH:MM:SS.fff","value",...'


@dataclass(frozen=True)
class _NativeRows:
    """The compiled parser's per-row results (see _pdhcsv.c)."""

    status: np.ndarray  # 0 ok, 1 too few fields, 2 too many, 3 unterminated quote
    stamps: np.ndarray  # local microseconds since 1970, or _NO_STAMP
    bad: np.ndarray  # non-numeric cells per row
    lines: np.ndarray  # 1-based line of each row


def _native_samples(
    utf8: Path, source: Path, header: _Header, columns: list[str], problems: list[Problem]
) -> pl.DataFrame:
    """The compiled parser's result as a samples frame; damaged rows are re-read here to say why."""
    with utf8.open("rb") as handle:
        if utf8.stat().st_size == 0:
            raise CounterLogError(source, "no readable samples", location="line 2", expected=_NO_ROWS)
        # Mapped, not read: the parser works on the page cache without a 40 MB copy.
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            newline = mapped.find(b"\n")
            start = len(mapped) if newline < 0 else newline + 1
            threads = min(os.cpu_count() or 1, 4)
            values_b, stamps_b, status_b, bad_b, _first_b, lines_b = _pdhcsv.parse(
                mapped, start, len(columns), header.separator, threads, 2
            )
    parsed = _NativeRows(
        status=np.frombuffer(status_b, dtype=np.uint8),
        stamps=np.frombuffer(stamps_b, dtype=np.int64),
        bad=np.frombuffer(bad_b, dtype=np.int32),
        lines=np.frombuffer(lines_b, dtype=np.int64),
    )
    values = np.frombuffer(values_b, dtype=np.float64).reshape(len(columns), len(parsed.status))
    stamps = parsed.stamps
    keep = parsed.status == 0
    if not keep.all() or parsed.bad.any() or (stamps[keep] == _NO_STAMP).any():
        keep = _account_for_damage(utf8.read_bytes(), source, header, parsed, problems=problems)
    if not keep.any():
        raise CounterLogError(source, "no readable samples", location="line 2", expected=_NO_ROWS)
    everything = bool(keep.all())
    micros = stamps if everything else stamps[keep]
    if header.bias is not None:
        micros = micros + header.bias * 60_000_000
    series = [
        pl.Series("timestamp", micros, dtype=pl.Int64).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    ]
    for index, name in enumerate(columns):
        column = values[index] if everything else values[index][keep]
        series.append(pl.Series(name, column, dtype=pl.Float64, nan_to_null=True))
    return pl.DataFrame(series)


def _account_for_damage(
    data: bytes, source: Path, header: _Header, parsed: _NativeRows, *, problems: list[Problem]
) -> np.ndarray:
    """Problems for damaged rows, worded as the PyArrow path words them. Runs only when damage exists."""
    text_lines = data.decode("utf-8", errors="replace").split("\n")
    status, stamps, bad, lines = parsed.status, parsed.stamps, parsed.bad, parsed.lines
    expected = len(header.paths) + 1
    truncated_tail = not data.endswith(b"\n")
    last_row = len(status) - 1
    for row in np.flatnonzero(status != 0):
        line = int(lines[row])
        if row == last_row and truncated_tail and status[row] in (1, 3):
            message = "last line is cut short (file truncated?); row dropped"
        else:
            raw = text_lines[line - 1].rstrip("\r")
            fields = len(next(csv.reader([raw], delimiter=header.separator, quotechar='"')))
            message = f"row has {fields} fields, expected {expected}; row dropped"
        problems.append(Problem(str(source), message, location=f"line {line}", severity="warning", lost=1))
    keep = status == 0
    per_column: dict[int, tuple[int, str, int]] = {}
    for row in np.flatnonzero(keep & (bad > 0)):
        raw = text_lines[int(lines[row]) - 1].rstrip("\r")
        cells = next(csv.reader([raw], delimiter=header.separator, quotechar='"'))
        for column, cell in enumerate(cells[1:], start=2):
            if cell.strip() and _as_float(cell) is None:
                count, first, first_row = per_column.get(column, (0, cell, int(row) + 1))
                per_column[column] = (count + 1, first, first_row)
    for column, (count, first, first_row) in sorted(per_column.items()):
        problems.append(
            Problem(
                str(source),
                f"{count} non-numeric cell(s) in column {column} (first: {first!r} at data row {first_row}); "
                "read as missing",
                location=f"column {column}",
                severity="warning",
                lost=count,
            )
        )
    unreadable = np.flatnonzero(keep & (stamps == _NO_STAMP))
    if len(unreadable):
        raw = text_lines[int(lines[unreadable[0]]) - 1].rstrip("\r")
        first = next(csv.reader([raw], delimiter=header.separator, quotechar='"'))[0]
        problems.append(
            Problem(
                str(source),
                f"{len(unreadable)} row(s) with an unreadable timestamp (first: {first!r}); rows dropped",
                severity="warning",
                lost=len(unreadable),
            )
        )
    readable: np.ndarray = keep & (stamps != _NO_STAMP)
    return readable


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def describe_counter_log(log: CounterLog) -> dict[str, object]:
    counters = log.counters
    samples = log.samples
    interval = None
    if samples.height > 1:
        diffs = samples["timestamp"].diff().dt.total_milliseconds().drop_nulls()
        interval = float(diffs.median() or 0) / 1000.0  # type: ignore[arg-type]
    per_object = (
        counters.group_by("object")
        .agg(
            pl.col("counter").n_unique().alias("counters"),
            pl.col("instance").drop_nulls().n_unique().alias("instances"),
        )
        .sort("object")
    )
    return {
        "dialect": log.format,
        "time_zone": log.time_zone_name,
        "utc_offset_minutes": log.utc_offset_minutes,
        "machines": sorted(m for m in counters["machine"].unique().to_list() if m is not None),
        "objects": {
            row["object"]: {"counters": row["counters"], "instances": row["instances"]}
            for row in per_object.iter_rows(named=True)
        },
        "counter_columns": counters.height,
        "duplicate_columns": int(counters["duplicate"].sum()),
        "first_sample": samples["timestamp"].min().isoformat() if samples.height else None,  # type: ignore[union-attr]
        "last_sample": samples["timestamp"].max().isoformat() if samples.height else None,  # type: ignore[union-attr]
        "samples": samples.height,
        "interval_seconds": interval,
        "missing_cells": int(sum(samples.drop("timestamp").null_count().row(0))),
        "problems": [p.describe() for p in log.problems],
    }
