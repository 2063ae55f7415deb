r"""``convert``: counter logs to relog-style CSV/TSV or to Parquet, streaming from a .blg.

CSV/TSV follow what perfmon and relog write: every field double-quoted, CRLF line ends, a first
header cell ``(PDH-CSV 4.0) (<time zone>)(<bias minutes>)``, counter paths as column names,
local time stamps ``MM/DD/YYYY HH:MM:SS.mmm`` and a single space for a missing value. Numbers
are written at full precision in their shortest exact form (relog pads them to 20 significant
digits; the extra digits carry no information and every CSV reader takes both).

Parquet holds ``timestamp`` (UTC) and one Float64 column per counter path; the log's time zone,
bias and source are in the file's key-value metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from esrp_report.errors import InputError
from esrp_report.ingest import blg, counter_csv
from esrp_report.model import Problem

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}
ROW_GROUP_BYTES = 128 << 20  # values per Parquet row group (batches are gathered to this size)


@dataclass
class ConvertResult:
    output: Path
    format: str
    columns: int
    samples: int
    problems: list[Problem] = field(default_factory=list)


def output_format(path: Path) -> str:
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
) -> ConvertResult:
    """Write ``source`` (.blg, or a perfmon CSV/TSV) to ``output``.

    ``counters``: path patterns to keep; naive ``begin``/``end`` are in the log's local time.
    """
    fmt = output_format(output)
    if blg.sniff_blg(_head(source)):
        return _convert_blg(source, output, fmt, counters=counters, bounds=(begin, end))
    return _convert_csv(source, output, fmt, counters=counters, bounds=(begin, end))


def _convert_csv(
    source: Path,
    output: Path,
    fmt: str,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
) -> ConvertResult:
    """A perfmon CSV/TSV read a window of rows at a time, each written as it is read."""
    stream = counter_csv.CounterCsvStream(source)
    selector = blg.Selector(counters)
    chosen = stream.counters.filter(pl.col("path").map_elements(selector.wants, return_dtype=pl.Boolean))
    offset = stream.utc_offset_minutes
    selection = ["timestamp", *chosen.get_column("column")]
    keep = _window(*bounds, offset)
    paths = chosen.get_column("path").to_list()
    while True:
        written = 0
        try:
            with _Writer(
                output, fmt, paths, zone=stream.header.zone, offset=offset, source=str(source)
            ) as writer:
                for batch in stream.batches():
                    samples = batch.select(selection).filter(keep)
                    writer.write(samples.get_column("timestamp"), samples.drop("timestamp"))
                    written += samples.height
            break
        except counter_csv.ReadAgain:
            continue  # not UTF-8 after all: written again, decoded leniently
    if stream.samples_read == 0:
        output.unlink(missing_ok=True)
        raise stream.no_samples()
    return ConvertResult(output, fmt, len(paths), written, list(stream.problems))


def _convert_blg(
    source: Path,
    output: Path,
    fmt: str,
    *,
    counters: Sequence[str] | None,
    bounds: tuple[datetime | None, datetime | None],
) -> ConvertResult:
    # The header needs every column: a first pass learns them (structure only, no values).
    with blg.BlgFile(source) as log:
        for _ in log.batches(counters=counters, values=False):
            pass
        if log.samples_read == 0:
            raise blg.no_samples_error(log)
        columns = list(log.columns)
        offset = log.utc_offset_minutes
        zone = blg.zone_name(log.header, offset)
    paths = [c.path for c in columns]
    written = 0
    keep = _window(*bounds, offset)
    with (
        blg.BlgFile(source) as log,
        _Writer(output, fmt, paths, zone=zone, offset=offset, source=str(source)) as writer,
    ):
        for stamps, values in _aligned(log.batches(counters=counters), len(columns)):
            frame = pl.DataFrame(
                values, schema=[f"c{i}" for i in range(len(columns))], orient="row", nan_to_null=True
            )
            times = blg.utc_stamps(stamps, offset)
            frame = frame.insert_column(0, times).filter(keep)
            writer.write(frame.get_column("timestamp"), frame.drop("timestamp"))
            written += frame.height
        problems = list(log.problems)
    return ConvertResult(output, fmt, len(paths), written, problems)


def _aligned(
    batches: Iterator[blg.BlgBatch], width: int
) -> Iterator[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    for batch in batches:
        values = batch.values
        if values.shape[1] < width:
            values = np.hstack([values, np.full((values.shape[0], width - values.shape[1]), np.nan)])
        yield batch.stamps, values


def _window(begin: datetime | None, end: datetime | None, offset: int | None) -> pl.Expr:
    keep = pl.lit(value=True)
    if begin is not None:
        keep &= pl.col("timestamp") >= _utc(begin, offset)
    if end is not None:
        keep &= pl.col("timestamp") <= _utc(end, offset)
    return keep


def _utc(moment: datetime, offset: int | None) -> datetime:
    if moment.tzinfo is not None:
        return moment
    return (moment - timedelta(minutes=offset or 0)).replace(tzinfo=UTC)


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(4096)
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc


class _Writer:
    """Appends batches of rows to one CSV, TSV or Parquet file."""

    def __init__(
        self, path: Path, fmt: str, paths: list[str], *, zone: str | None, offset: int | None, source: str
    ) -> None:
        self.path = path
        self.fmt = fmt
        self.paths = paths
        self.offset = offset or 0
        self.zone = zone
        self.source = source
        self._parquet: pq.ParquetWriter | None = None
        self._text: Any = None

    def __enter__(self) -> _Writer:
        if self.fmt == "parquet":
            names = _unique(self.paths)
            schema = pa.schema(
                [pa.field("timestamp", pa.timestamp("us", tz="UTC"))]
                + [pa.field(n, pa.float64()) for n in names],
                metadata={
                    "esrp_report.source": self.source,
                    "esrp_report.time_zone": self.zone or "",
                    "esrp_report.utc_offset_minutes": str(self.offset),
                    "esrp_report.counter_paths": json.dumps(self.paths),
                },
            )
            self._names = names
            # Every row group adds metadata for each column that the writer holds until it closes
            # (about 1 kB per column chunk with statistics): row groups of about ROW_GROUP_BYTES,
            # and statistics for the time stamps only, keep a wide log's footer small.
            self._parquet = pq.ParquetWriter(self.path, schema, write_statistics=["timestamp"])
            self._group_rows = max(1, ROW_GROUP_BYTES // (8 * (len(names) + 1)))
            self._pending: list[pa.Table] = []
            self._pending_rows = 0
        else:
            separator = "," if self.fmt == "csv" else "\t"
            kind = "CSV" if self.fmt == "csv" else "TSV"
            bias = -self.offset
            first = f"(PDH-{kind} 4.0) ({self.zone or ''})({bias})"
            cells = [first, *self.paths]
            self._text = self.path.open("wb")
            header = separator.join('"' + c.replace('"', '""') + '"' for c in cells) + "\r\n"
            self._text.write(header.encode("utf-8"))
        return self

    def write(self, timestamps: pl.Series, values: pl.DataFrame) -> None:
        if self._parquet is not None:
            table = values.rename(dict(zip(values.columns, self._names, strict=True))).insert_column(
                0, timestamps
            )
            self._pending.append(table.to_arrow().cast(self._parquet.schema))
            self._pending_rows += table.height
            if self._pending_rows >= self._group_rows:
                self._flush()
            return
        local = (timestamps.dt.replace_time_zone(None) + timedelta(minutes=self.offset)).dt.strftime(
            "%m/%d/%Y %H:%M:%S%.3f"
        )
        frame = values.insert_column(0, local.alias("time"))
        frame.write_csv(
            self._text,
            include_header=False,
            separator="," if self.fmt == "csv" else "\t",
            quote_style="always",
            null_value=" ",
            line_terminator="\r\n",
        )

    def _flush(self) -> None:
        assert self._parquet is not None
        if self._pending:
            table = pa.concat_tables(self._pending)
            self._pending, self._pending_rows = [], 0
            self._parquet.write_table(table, row_group_size=max(table.num_rows, 1))

    def __exit__(self, *_exc: object) -> None:
        if self._parquet is not None:
            self._flush()
            self._parquet.close()
        if self._text is not None:
            self._text.close()


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name} [{count + 1}]")
    return out
