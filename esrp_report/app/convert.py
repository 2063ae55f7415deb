r"""``convert``: counter logs to relog-style CSV/TSV or to Parquet, streaming from a .blg.

CSV/TSV follow what perfmon and relog write: every field double-quoted, CRLF line ends, a first
header cell ``(PDH-CSV 4.0) (<time zone>)(<bias minutes>)``, counter paths as column names,
local time stamps ``MM/DD/YYYY HH:MM:SS.mmm`` and a single space for a missing value. Numbers
are written at full precision in their shortest exact form (relog pads them to 20 significant
digits; the extra digits carry no information and every CSV reader takes both).

Parquet holds ``timestamp`` (UTC) and one Float64 column per counter path; the log's time zone,
bias and source are in the file's key-value metadata. Row groups hold about ``ROW_GROUP_BYTES``
of values. The Parquet writer needs about 2 kB of memory per column chunk (a column in a row
group) by the time it closes a file, so a file holds at most ``PARQUET_CHUNK_BUDGET`` column
chunks. A log that needs more (only very wide and long logs, such as a 13,441-counter ``.blg``
of more than about 700 MB) is written as a Parquet dataset instead: a directory at the output
path holding ``part-00000.parquet``, ``part-00001.parquet``, ... with the same schema and
metadata, each part the next stretch of samples. Read it as one table with
``pl.scan_parquet("OUT/*.parquet")``, ``pyarrow.dataset.dataset("OUT")`` or DuckDB's
``read_parquet('OUT/*.parquet')``.

A counter path holding a control character (a NUL, a line break, a tab, DEL: only a damaged or
hostile log has one) is *sanitised*, not refused: every output writes it with each control
character replaced by U+FFFD, and the conversion reports a warning naming the column and the
path as read. Arrow refuses (Polars panics on) a column name with a NUL, and a line break in a
header cell breaks line-based perfmon readers; one damaged name should not cost the other
columns. Parquet keeps the paths exactly as read, JSON-escaped, in its
``esrp_report.counter_paths`` metadata.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from esrp_report.app import evidence
from esrp_report.files.safe import refuse_overwriting
from esrp_report.ingest import formats
from esrp_report.ingest.guards import printable, require_regular_file
from esrp_report.ingest.perfmon import blg, counter_csv
from esrp_report.model import Problem
from esrp_report.model.errors import InputError

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}
ROW_GROUP_BYTES = 128 << 20  # values per Parquet row group (batches are gathered to this size)
# Column chunks (row groups x columns) per Parquet file. The writer holds about 0.9 kB of metadata
# per column chunk until it closes the file, and writing the footer takes as much again, while
# the next batch is in memory. For a 13,441-counter .blg of 10 GB, 50,000 (3 row groups a file)
# peaked at 816 MB and 100,000 (7 a file) at 880 MB, against 1,365 MB for one file of 45.
PARQUET_CHUNK_BUDGET = 50_000
PART_NAME = "part-{:05d}.parquet"
_PART = re.compile(r"part-\d{5,}\.parquet")


@dataclass
class ConvertResult:
    """What a conversion wrote: the output file or folder, its format, how many counter columns and samples,
    problems, and for a Parquet dataset its part files and column chunks."""

    output: Path
    format: str
    columns: int
    samples: int
    problems: list[Problem] = field(default_factory=list)
    # A Parquet dataset: the part files in ``output`` (a directory), in time order; empty when
    # ``output`` is one file.
    parts: list[Path] = field(default_factory=list)
    column_chunks: int = 0  # Parquet: row groups x columns (timestamp included), every part
    # The first and last sample read, kept or not, in the log's local time (as --begin/--end
    # are typed): what a window that keeps none is told.
    span: tuple[datetime, datetime] | None = None


class _Span:
    """The first and last time stamp seen in the batches read, before the window filters them."""

    def __init__(self, offset: int | None, zone: ZoneInfo | None = None) -> None:
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.offset, self.zone = offset, zone

    def see(self, stamps: pl.Series) -> None:
        if stamps.is_empty():
            return
        low, high = stamps.min(), stamps.max()
        if isinstance(low, datetime) and (self.first is None or low < self.first):
            self.first = low
        if isinstance(high, datetime) and (self.last is None or high > self.last):
            self.last = high

    def pair(self) -> tuple[datetime, datetime] | None:
        if self.first is None or self.last is None:
            return None
        return self._local(self.first), self._local(self.last)

    def _local(self, moment: datetime) -> datetime:
        """The inverse of blg.aware: a UTC stamp as the log's local time."""
        utc = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        if self.zone is not None:
            return utc.astimezone(self.zone).replace(tzinfo=None)
        return (utc + timedelta(minutes=self.offset or 0)).replace(tzinfo=None)


def output_format(path: Path) -> str:
    """The output format ("csv", "tsv" or "parquet") a file name's suffix asks for; raises InputError for any
    other suffix."""
    fmt = FORMATS.get(path.suffix.casefold())
    if fmt is None:
        raise InputError(
            path, "unknown output format", expected="a file name ending in .csv, .tsv or .parquet"
        )
    return fmt


def convert(
    source: Path,
    output: Path,
    *,
    counters: Sequence[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
    encoding: str | None = None,
    progress: Callable[[int], None] = lambda _written: None,
) -> ConvertResult:
    """Write ``source`` (.blg, or a perfmon CSV/TSV) to ``output``.

    ``counters``: path patterns to keep; naive ``begin``/``end`` are in the log's local time;
    ``encoding``: a CSV/TSV's code page instead of the one found from its bytes; ``progress``
    is told the samples written so far after each batch.
    """
    fmt = output_format(output)
    folder = output.parent if str(output.parent) else Path()
    if not folder.is_dir():
        # Checked before reading: a missing folder would otherwise surface as an OSError halfway.
        raise InputError(output, "the folder to write into does not exist", expected=f"a folder {folder}")
    require_regular_file(source)  # a FIFO would block the first open forever
    refuse_overwriting([output], [source])  # the writer truncates its file before the reader starts
    # The registry says whether the file has samples to stream; a format without them is refused
    # with its own reason, whatever it is (app/evidence.py).
    found = evidence.streaming_format(source, purpose="convert takes counter logs")
    try:
        if found is formats.BLG:
            result = _convert_blg(
                source, output, fmt, counters=counters, bounds=(begin, end), progress=progress
            )
        elif found is formats.COUNTER_CSV:
            result = _convert_csv(
                source,
                output,
                fmt,
                counters=counters,
                bounds=(begin, end),
                encoding=encoding,
                progress=progress,
            )
        else:
            result = _convert_log(
                source,
                output,
                fmt,
                found,
                counters=counters,
                bounds=(begin, end),
                encoding=encoding,
                progress=progress,
            )
    except OSError as exc:
        # A full disk, a folder made read-only, the source gone: the writer has removed what it
        # wrote (``_Writer.__exit__``), so the message can say nothing was kept.
        raise InputError(
            exc.filename or output,
            f"cannot convert: {exc.strerror or exc}; nothing was kept: the partial {output} was removed",
            expected="a source that stays in place and an output folder with room this user can write",
        ) from None
    if result.samples == 0 and (begin is not None or end is not None):
        # A window outside the log wrote a header and no sample, and said so only as "0 samples"
        # with exit 0 (issue 32): the file is removed and the window set beside the log's span.
        if output.is_file():
            output.unlink()
        raise InputError(
            source, _outside(begin, end, result.span), expected="--begin/--end inside the log's span"
        )
    return result


def _outside(begin: datetime | None, end: datetime | None, span: tuple[datetime, datetime] | None) -> str:
    window = f"{_shown(begin) if begin else 'its start'} to {_shown(end) if end else 'its end'}"
    where = f"; the log runs from {_shown(span[0])} to {_shown(span[1])} (its local time)" if span else ""
    return f"no sample in the window {window}{where}; nothing was written"


def _shown(moment: datetime) -> str:
    return moment.isoformat(sep=" ", timespec="milliseconds" if moment.microsecond else "seconds")


def _convert_log(
    source: Path,
    output: Path,
    fmt: str,
    found: formats.EvidenceFormat,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
    encoding: str | None,
    progress: Callable[[int], None],
) -> ConvertResult:
    """Any other streaming format, through its ``stream`` part: the counter log's batches, as
    read. The two perfmon formats have writers of their own above because their headers carry
    what a counter log does not keep (a CSV's first cell as written, a .blg's zone per stamp)."""
    log = evidence.open_stream(source, evidence.ReadOptions(encoding), found=found)
    selector = blg.Selector(counters)
    chosen = log.counters.filter(pl.col("path").map_elements(selector.wants, return_dtype=pl.Boolean))
    offset = log.utc_offset_minutes
    selection = ["timestamp", *chosen.get_column("column")]
    keep = _window(*bounds, offset)
    paths = chosen.get_column("path").to_list()
    written = 0
    span = _Span(offset)
    with _Writer(output, fmt, paths, zone=log.time_zone_name, offset=offset, source=str(source)) as writer:
        for batch in log.sample_batches():
            span.see(batch.get_column("timestamp"))
            samples = batch.select(selection).filter(keep)
            writer.write(samples.get_column("timestamp"), samples.drop("timestamp"))
            written += samples.height
            progress(written)
    return writer.result(
        ConvertResult(output, fmt, len(paths), written, list(log.problems), span=span.pair())
    )


def _convert_csv(
    source: Path,
    output: Path,
    fmt: str,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
    progress: Callable[[int], None],
    encoding: str | None = None,
) -> ConvertResult:
    """A perfmon CSV/TSV read a window of rows at a time, each written as it is read."""
    stream = counter_csv.CounterCsvStream(source, encoding=encoding)
    selector = blg.Selector(counters)
    chosen = stream.counters.filter(pl.col("path").map_elements(selector.wants, return_dtype=pl.Boolean))
    offset = stream.utc_offset_minutes
    selection = ["timestamp", *chosen.get_column("column")]
    keep = _window(*bounds, offset)
    paths = chosen.get_column("path").to_list()
    while True:
        written = 0
        span = _Span(offset)
        try:
            with _Writer(
                output,
                fmt,
                paths,
                zone=stream.header.zone,
                offset=offset,
                source=str(source),
                first_cell=stream.header.first_cell,
            ) as writer:
                for batch in stream.batches():
                    span.see(batch.get_column("timestamp"))
                    samples = batch.select(selection).filter(keep)
                    writer.write(samples.get_column("timestamp"), samples.drop("timestamp"))
                    written += samples.height
                    progress(written)
            break
        except counter_csv.ReadAgain:
            continue  # not UTF-8 after all: written again, decoded leniently
    if stream.samples_read == 0:
        output.unlink(missing_ok=True)
        raise stream.no_samples()
    return writer.result(
        ConvertResult(output, fmt, len(paths), written, list(stream.problems), span=span.pair())
    )


class _ColumnsGrew(Exception):
    """A column first seen after the header was written: the log is converted again in two passes."""


def _convert_blg(
    source: Path,
    output: Path,
    fmt: str,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
    progress: Callable[[int], None],
) -> ConvertResult:
    # The header needs every column. The log is written in one pass with the columns the first
    # batch knows, which in a log whose counters never change are all of them: a second pass over
    # the file cost as much as decoding it. A log whose counter set grows (an instance started
    # later) is found out when the new column shows, its partial output removed, and converted in
    # two passes. A Parquet output that exists takes two passes too: the first counts the samples
    # kept, so that one that cannot be replaced (a file where a dataset directory is needed, or
    # the reverse) is refused before any work.
    if fmt != "parquet" or not output.exists():
        with contextlib.suppress(_ColumnsGrew):
            return _blg_one_pass(source, output, fmt, counters=counters, bounds=bounds, progress=progress)
    with blg.BlgFile(source) as log:
        local = [batch.stamps for batch in log.batches(counters=counters, values=False)]
        if log.samples_read == 0:
            raise blg.no_samples_error(log)
        if not log.columns:
            raise blg.no_columns_error(log, counters)
        columns = list(log.columns)
        offset = log.utc_offset_minutes
        tz = log.zone
        zone = blg.zone_name(log.header, offset, log.time_zone)
    paths = [c.path for c in columns]
    keep = _window(*bounds, offset, tz)
    rows = pl.DataFrame([blg.utc_stamps(np.concatenate(local), offset, tz)]).filter(keep).height
    del local
    with (
        blg.BlgFile(source) as log,
        _Writer(output, fmt, paths, zone=zone, offset=offset, source=str(source), rows=rows, tz=tz) as writer,
    ):
        span = _Span(offset, tz)
        written = _write_batches(
            log.batches(counters=counters), writer, (offset, tz), keep=keep, span=span, progress=progress
        )
        problems = list(log.problems)
    return writer.result(ConvertResult(output, fmt, len(paths), written, problems, span=span.pair()))


def _blg_one_pass(
    source: Path,
    output: Path,
    fmt: str,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
    progress: Callable[[int], None],
) -> ConvertResult:
    """The log decoded once, its header (or schema) from the columns its first batch knows; raises
    :class:`_ColumnsGrew` (nothing kept) when a later one adds a column."""
    with blg.BlgFile(source) as log:
        batches = log.batches(counters=counters)
        first = next(batches, None)
        if first is None or not log.columns:
            raise _ColumnsGrew  # no sample or no column: the two-pass path says which
        paths = [c.path for c in log.columns]
        offset, tz = log.utc_offset_minutes, log.zone
        zone = blg.zone_name(log.header, offset, log.time_zone)
        keep = _window(*bounds, offset, tz)
        with _Writer(output, fmt, paths, zone=zone, offset=offset, source=str(source), tz=tz) as writer:
            span = _Span(offset, tz)
            everything = itertools.chain([first], batches)
            written = _write_batches(
                everything, writer, (offset, tz), keep=keep, span=span, progress=progress
            )
            if len(log.columns) != len(paths):
                raise _ColumnsGrew
        problems = list(log.problems)
    return writer.result(ConvertResult(output, fmt, len(paths), written, problems, span=span.pair()))


def _write_batches(
    batches: Iterator[blg.BlgBatch],
    writer: _Writer,
    clock: tuple[int | None, ZoneInfo | None],
    *,
    keep: pl.Expr,
    span: _Span,
    progress: Callable[[int], None],
) -> int:
    """Decoded batches, padded to the writer's columns and kept to the window, written; the rows
    written. ``clock``: the log's UTC offset and zone, as the first sample gave them; ``span``
    sees every stamp read."""
    width = len(writer.paths)
    written = 0
    for batch in batches:
        values = batch.values
        if values.shape[1] > width:
            raise _ColumnsGrew
        if values.shape[1] < width:
            values = np.hstack([values, np.full((values.shape[0], width - values.shape[1]), np.nan)])
        times = blg.utc_stamps(batch.stamps, *clock)
        span.see(times)
        kept = times.to_frame().select(keep).to_series()
        if not kept.all():
            times, values = times.filter(kept), values[kept.to_numpy()]
        if len(times):
            writer.write(times, _matrix_frame(values))
        written += len(times)
        progress(written)
    return written


def _matrix_frame(values: np.ndarray[Any, Any]) -> pl.DataFrame:
    """A samples-by-counters matrix as a frame of one Float64 column per counter, NaN as null.

    Built inside Polars from the flat values (a fixed-size array per row, unnested): a frame built
    from a 2-D array makes a Series per column in Python, which cost as much as writing them."""
    rows, width = values.shape
    flat = pl.Series(np.ascontiguousarray(values).reshape(-1), dtype=pl.Float64).fill_nan(None)
    return flat.reshape((rows, width)).arr.to_struct().struct.unnest()


def _window(
    begin: datetime | None, end: datetime | None, offset: int | None, zone: ZoneInfo | None = None
) -> pl.Expr:
    keep = pl.lit(value=True)
    if begin is not None:
        keep &= pl.col("timestamp") >= blg.aware(begin, offset, zone)
    if end is not None:
        keep &= pl.col("timestamp") <= blg.aware(end, offset, zone)
    return keep


class _Writer:
    """Appends batches of rows to one CSV or TSV file, or to Parquet (:class:`_ParquetParts`).

    ``rows``, when known before writing, is how many rows will be written: a Parquet output that
    would have to be a directory where a file is (or the reverse) is then refused before any work.
    """

    def __init__(
        self,
        path: Path,
        fmt: str,
        paths: list[str],
        *,
        zone: str | None,
        offset: int | None,
        source: str,
        rows: int | None = None,
        first_cell: str | None = None,
        tz: ZoneInfo | None = None,
    ) -> None:
        self.path = path
        self.fmt = fmt
        self.paths = paths
        self.problems: list[Problem] = []
        self.shown = [printable(p) for p in paths]  # what the output's header names each column
        for number, (read, shown) in enumerate(zip(paths, self.shown, strict=True), start=2):
            if shown != read:
                self.problems.append(
                    Problem(
                        source,
                        f"counter path {read!r} holds control characters; written as {shown!r}",
                        location=f"column {number} (counter {number - 1})",
                    )
                )
        self.offset = offset or 0
        self.local = offset is None  # no offset stated: local wall-clock time, not UTC
        self.first_cell = first_cell
        self.zone = zone
        self.tz = tz  # the log's resolved zone: local times written per stamp in it
        self.source = source
        self.rows = rows
        self._parquet: _ParquetParts | None = None
        self._text: Any = None

    def __enter__(self) -> _Writer:
        if self.fmt == "parquet":
            names = _unique(self.shown)
            # A log that states no offset keeps its local wall-clock times, naive, and says so:
            # labelling them UTC would state an offset (0) the source never did.
            stamps = pa.timestamp("us") if self.local else pa.timestamp("us", tz="UTC")
            schema = pa.schema(
                [pa.field("timestamp", stamps)] + [pa.field(n, pa.float64()) for n in names],
                metadata={
                    "esrp_report.source": self.source,
                    "esrp_report.time_zone": self.zone or "",
                    "esrp_report.utc_offset_minutes": "" if self.local else str(self.offset),
                    "esrp_report.time_basis": "local" if self.local else "utc",
                    "esrp_report.counter_paths": json.dumps(self.paths),
                },
            )
            self._names = names
            self._parquet = _ParquetParts(self.path, schema, rows=self.rows)
            if self.local:
                self.problems.append(
                    Problem(
                        self.source,
                        "the source states no time-zone offset: time stamps stored as its local times "
                        "(timestamp without a zone, esrp_report.time_basis = local), not as UTC",
                        location="line 1, column 1",
                        severity="note",
                    )
                )
        else:
            separator = "," if self.fmt == "csv" else "\t"
            kind = "CSV" if self.fmt == "csv" else "TSV"
            bias = -self.offset
            first = f"(PDH-{kind} 4.0) ({self.zone or ''})({bias})"
            if self.local:
                first = _unstated_offset_cell(self.first_cell, kind, self.zone)
                self.problems.append(
                    Problem(
                        self.source,
                        f"the source states no time-zone offset: time stamps written as its local times and "
                        f"the first header cell kept as the source had it ({first!r}), no bias invented",
                        location="line 1, column 1",
                        severity="note",
                    )
                )
            cells = [printable(first), *self.shown]
            self._text = self.path.open("wb")
            header = separator.join('"' + c.replace('"', '""') + '"' for c in cells) + "\r\n"
            try:
                self._text.write(header.encode("utf-8"))
            except OSError:  # __exit__ is not called when __enter__ fails: clean up here
                self.__exit__(OSError)
                raise
        return self

    def write(self, timestamps: pl.Series, values: pl.DataFrame) -> None:
        if self._parquet is not None:
            table = values.rename(dict(zip(values.columns, self._names, strict=True))).insert_column(
                0, timestamps
            )
            arrow, schema = table.to_arrow(), self._parquet.schema
            # Float64 columns and the stamps are the schema's types already: only its metadata is
            # missing. Arrow's Table.cast goes column by column in Python (13,441 of them).
            if arrow.schema.equals(schema):
                self._parquet.write(arrow.replace_schema_metadata(schema.metadata))
            else:
                self._parquet.write(arrow.cast(schema))
            return
        local = blg.local_times(timestamps, self.offset, self.tz).dt.strftime("%m/%d/%Y %H:%M:%S%.3f")
        frame = values.insert_column(0, local.alias("time"))
        frame.write_csv(
            self._text,
            include_header=False,
            separator="," if self.fmt == "csv" else "\t",
            quote_style="always",
            null_value=" ",
            line_terminator="\r\n",
        )

    def result(self, result: ConvertResult) -> ConvertResult:
        result.problems.extend(self.problems)
        if self._parquet is not None:
            result.parts = list(self._parquet.parts)
            result.column_chunks = self._parquet.chunks
        return result

    def __exit__(self, kind: type[BaseException] | None, *_exc: object) -> None:
        if self._parquet is not None:
            if kind is None:
                self._parquet.close()
            else:
                self._parquet.abort()
        if self._text is not None:
            try:
                self._text.close()  # flushes: the last write can find the disk full here
            except OSError:
                if kind is None:
                    self._remove_text()
                    raise
            if kind is not None:
                self._remove_text()

    def _remove_text(self) -> None:
        # A half-written log reads as a whole, shorter one: removed, never left as the output.
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


class _ParquetParts:
    """Row groups of ``group_rows`` rows (the last one shorter) in one Parquet file, or in the part
    files of a dataset directory when one file would hold more than ``PARQUET_CHUNK_BUDGET``
    column chunks.

    Until that is known, the first file is written beside the output under a temporary name: it
    becomes the output, or ``part-00000.parquet`` once a next row group does not fit in it.
    Where the output exists as a file and a directory is needed, or as a directory and a file is
    needed, the conversion is refused (as soon as ``rows`` tells, else when it is found out), and
    nothing is left behind. A directory is only ever replaced when it holds part files alone.
    """

    def __init__(self, output: Path, schema: pa.Schema, *, rows: int | None) -> None:
        self.output = output
        self.schema = schema
        width = len(schema)
        self.group_rows = max(1, ROW_GROUP_BYTES // (8 * width))
        self.groups_per_file = max(1, PARQUET_CHUNK_BUDGET // width)
        self.rows_per_file = self.group_rows * self.groups_per_file
        self.chunks = 0
        self.parts: list[Path] = []
        self._made_directory = False
        self._check(dataset=None if rows is None else rows > self.rows_per_file, rows=rows)
        # A name of its own beside the output (same file system, so it is renamed, not copied).
        self._first = output.with_name(f".{output.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        self._file: pq.ParquetWriter | None = self._open(self._first)
        self._groups = 0  # in the open file
        self._pending: list[pa.Table] = []
        self._pending_rows = 0

    def _open(self, path: Path) -> pq.ParquetWriter:
        # Statistics for the time stamps only: they are the ones a reader filters on.
        return pq.ParquetWriter(path, self.schema, write_statistics=["timestamp"])

    def write(self, table: pa.Table) -> None:
        self._pending.append(table)
        self._pending_rows += table.num_rows
        if self._pending_rows >= self.group_rows:
            self._flush(final=False)

    def _flush(self, *, final: bool) -> None:
        if not self._pending:
            return
        table = pa.concat_tables(self._pending)
        self._pending = []
        start = 0
        while table.num_rows - start >= self.group_rows or (final and start < table.num_rows):
            rows = min(self.group_rows, table.num_rows - start)
            self._row_group(table.slice(start, rows))
            start += rows
        rest = table.slice(start)
        del table  # the rows written: a full file is closed below without them
        self._pending = [rest] if rest.num_rows else []
        self._pending_rows = rest.num_rows
        self._close_if_full()

    def _row_group(self, group: pa.Table) -> None:
        self._close_if_full()  # when one flush fills a file and goes on
        if self._file is None:  # the open file was full: the next part
            if not self.parts:
                self._become_dataset()
            path = self.output / PART_NAME.format(len(self.parts))
            self.parts.append(path)
            self._file = self._open(path)
            self._groups = 0
        self._file.write_table(group, row_group_size=group.num_rows)
        self._groups += 1
        self.chunks += group.num_columns

    def _close_if_full(self) -> None:
        # As soon as it is full, with the rows written let go: writing the footer takes about as
        # much memory again as the metadata held, so no row group should be waiting meanwhile.
        if self._file is not None and self._groups == self.groups_per_file:
            pa.default_memory_pool().release_unused()
            self._file.close()
            self._file = None

    def _become_dataset(self) -> None:
        """The first file is full: the output becomes a directory, the first file its first part."""
        self._check(dataset=True)
        if self.output.is_dir():
            for old in self.output.iterdir():
                old.unlink()  # part files of an earlier conversion (``_check``)
        else:
            self.output.mkdir()
            self._made_directory = True
        first = self.output / PART_NAME.format(0)
        self._first.replace(first)
        self.parts.append(first)

    def close(self) -> None:
        try:
            self._flush(final=True)
            if self._file is not None:
                self._file.close()
                self._file = None
            if not self.parts:
                self._check(dataset=False)
                self._first.replace(self.output)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Leave nothing behind: no temporary file, no part of a dataset."""
        if self._file is not None:
            with contextlib.suppress(Exception):  # already failing; the files are removed below
                self._file.close()
            self._file = None
        self._first.unlink(missing_ok=True)
        for part in self.parts:
            part.unlink(missing_ok=True)
        if self._made_directory:
            with contextlib.suppress(OSError):
                self.output.rmdir()
        self.parts = []
        self._pending = []

    def _check(self, *, dataset: bool | None, rows: int | None = None) -> None:
        """Refuse an output that is a file where a directory is needed, or the reverse, or a
        directory holding anything but part files (``dataset`` None: not known yet)."""
        width = len(self.schema)
        budget = f"the budget of {PARQUET_CHUNK_BUDGET:,} per file (convert.PARQUET_CHUNK_BUDGET)"
        if rows is None:
            why = f"one file would hold more than {self.groups_per_file * width:,} column chunks, {budget}"
        else:
            groups = -(-rows // self.group_rows)
            why = (
                f"one file would hold {groups * width:,} column chunks ({rows:,} samples in {groups:,} "
                f"row group(s) of {self.group_rows:,} rows x {width:,} columns), more than {budget}"
            )
        if self.output.is_dir():
            foreign = sorted(p.name for p in self.output.iterdir() if not _PART.fullmatch(p.name))
            if foreign:
                raise InputError(
                    self.output,
                    "is a directory holding other files than the parts of a Parquet dataset",
                    expected="a new path, a file, or a dataset directory written by convert",
                    found=", ".join(foreign[:3]),
                )
            if dataset is False:
                raise InputError(
                    self.output,
                    "is a directory, but this log is written as one Parquet file",
                    expected="a path that is not a directory (remove it, or name another output)",
                )
        elif dataset and self.output.exists():
            raise InputError(
                self.output,
                f"exists as a file, but this log is written as a Parquet dataset directory: {why}",
                expected="a path that is not a file (remove it, or name another output)",
            )


def _unstated_offset_cell(cell: str | None, kind: str, zone: str | None) -> str:
    """The source's first header cell, its signature naming the output's kind (CSV or TSV)."""
    if not cell:
        return f"(PDH-{kind} 4.0) ({zone or ''}"
    return re.sub(r"\(PDH-(CSV|TSV)", f"(PDH-{kind}", cell, count=1, flags=re.IGNORECASE)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name} [{count + 1}]")
    return out
