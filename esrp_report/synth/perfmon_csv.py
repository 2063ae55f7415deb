"""Write perfmon-style PDH-CSV/TSV files (for samples, tests and benchmarks).

Vectorised through Polars; values are written in shortest round-trip form so they read back
exactly; missing samples are written as perfmon does, a quoted single space.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "cp1252")


def write_pdh_csv(
    path: str | Path,
    paths: Sequence[str],
    timestamps_local: Sequence[datetime] | pl.Series,
    values: np.ndarray | pl.DataFrame,
    *,
    separator: str = ",",
    encoding: str = "utf-8",
    time_zone_name: str = "Pacific Standard Time",
    bias_minutes: int = 480,
) -> None:
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}")
    kind = "TSV" if separator == "\t" else "CSV"
    header = io.StringIO()
    csv.writer(
        header, delimiter=separator, quotechar='"', quoting=csv.QUOTE_ALL, lineterminator="\r\n"
    ).writerow([f"(PDH-{kind} 4.0) ({time_zone_name})({bias_minutes})", *paths])
    if isinstance(values, pl.DataFrame):
        frame = values.rename(dict(zip(values.columns, [f"v{i}" for i in range(values.width)], strict=True)))
    else:
        array = np.asarray(values, dtype=np.float64).reshape(len(timestamps_local), len(paths))
        frame = pl.DataFrame({f"v{i}": array[:, i] for i in range(array.shape[1])})
    frame = frame.with_columns(pl.all().cast(pl.Float64).fill_nan(None))
    stamps = pl.Series("timestamp", list(timestamps_local), dtype=pl.Datetime("us"))
    frame = frame.insert_column(0, stamps.dt.strftime("%m/%d/%Y %H:%M:%S%.3f"))
    body = frame.write_csv(
        None,
        include_header=False,
        separator=separator,
        quote_style="always",
        null_value=" ",
        line_terminator="\r\n",
    )
    text = header.getvalue() + body
    Path(path).write_bytes(text.encode(encoding))
