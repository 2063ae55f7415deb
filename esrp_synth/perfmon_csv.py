"""Write perfmon-style PDH-CSV/TSV files (for samples, tests and benchmarks).

Vectorised through Polars. Values are written in shortest round-trip form (the digits of
``repr``), so they read back exactly; a missing sample is written as perfmon writes it, a quoted
single space. Every field is quoted and lines end in CRLF, as perfmon and relog do.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

# Windows ANSI code pages PDH writes CSV/TSV in (the machine's), besides the Unicode forms.
CODE_PAGES = (
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
    "cp874", "cp932", "cp936", "cp949", "cp950",
)  # fmt: skip
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", *CODE_PAGES)
SEPARATORS = (",", "\t")


def write_pdh_csv(
    path: str | Path,
    paths: Sequence[str],
    timestamps_local: Sequence[datetime] | pl.Series,
    values: np.ndarray | pl.DataFrame,
    *,
    separator: str = ",",
    encoding: str = "utf-8",
    time_zone_name: str = "Pacific Standard Time",
    bias_minutes: int | None = 480,
) -> None:
    """Write one PDH-CSV (``separator=","``) or PDH-TSV (``"\\t"``) file.

    ``values`` has one row per timestamp and one column per path; None/NaN is a missing sample.
    ``encoding`` "utf-16" is little-endian with a BOM (what perfmon writes); "utf-16-le" has no BOM;
    a Windows code page (``CODE_PAGES``) is what PDH writes on a machine whose ANSI code page it is.
    ``bias_minutes`` None writes the first cell a non-English writer does: the zone name cut at
    its first character outside ASCII, no bias (``time_zone_name`` "" gives ``(PDH-CSV 4.0) (``).
    Timestamps are local wall-clock times, written to the millisecond (perfmon's resolution).
    """
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, not {encoding!r}")
    if separator not in SEPARATORS:
        raise ValueError(f"separator must be ',' or a tab, not {separator!r}")
    stamps = _timestamps(timestamps_local)
    frame = _values_frame(values, len(stamps), len(paths))
    kind = "TSV" if separator == "\t" else "CSV"
    header = io.StringIO()
    csv.writer(header, delimiter=separator, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerow(
        [_first_cell(kind, time_zone_name, bias_minutes), *paths]
    )
    body = frame.insert_column(0, stamps.dt.strftime("%m/%d/%Y %H:%M:%S%.3f")).write_csv(
        None,
        include_header=False,
        separator=separator,
        quote_style="always",
        null_value=" ",
        line_terminator="\r\n",
    )
    # Python's "utf-16" follows the machine's byte order; perfmon's files are little-endian.
    bom, codec = (codecs.BOM_UTF16_LE, "utf-16-le") if encoding == "utf-16" else (b"", encoding)
    Path(path).write_bytes(bom + (header.getvalue() + body).encode(codec))


def _first_cell(kind: str, zone: str, bias: int | None) -> str:
    if bias is None:
        return f"(PDH-{kind} 4.0) ({zone}"
    return f"(PDH-{kind} 4.0) ({zone})({bias})"


def _timestamps(timestamps_local: Sequence[datetime] | pl.Series) -> pl.Series:
    if isinstance(timestamps_local, pl.Series):
        return timestamps_local.cast(pl.Datetime("us")).alias("timestamp")
    return pl.Series("timestamp", list(timestamps_local), dtype=pl.Datetime("us"))


def _values_frame(values: np.ndarray | pl.DataFrame, rows: int, columns: int) -> pl.DataFrame:
    shape = values.shape if isinstance(values, pl.DataFrame) else np.shape(values)
    if tuple(shape) != (rows, columns):
        raise ValueError(f"values have shape {tuple(shape)}; expected {rows} timestamps x {columns} paths")
    if isinstance(values, pl.DataFrame):
        frame = values.rename({name: f"v{i}" for i, name in enumerate(values.columns)})
    else:
        array = np.asarray(values, dtype=np.float64)
        frame = pl.DataFrame({f"v{i}": array[:, i] for i in range(columns)}, height=rows)
    return frame.with_columns(pl.all().cast(pl.Float64).fill_nan(None))
