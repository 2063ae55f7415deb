"""`convert` of a .blg decodes the log once (issue 36): the header takes the columns
the first batch knows, and a log whose counter set grows later is converted again in two passes,
to the same bytes a two-pass conversion writes. Parquet over an existing output keeps its
counting pass.

Batches are forced down to one sample record (the reader's ``batch_bytes``) so that a column first
seen at the fourth sample arrives in a later batch than the header.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from esrp_report.app import convert as cv
from esrp_report.ingest.perfmon.blg import BlgFile
from esrp_synth import blg_raw_writer as rw

BLG = Path(__file__).parent / "data" / "blg"
# 275 samples of 26 counters in 9 batches (its layout changes), every column in the first.
STEADY = BLG / "powershell" / "BadCounterSamples.blg"
# 11 samples whose counters grow from 1,664 to 1,832 (disks and processes appear).
GROWING = BLG / "SampleLog.blg"


def _late_column_log(path: Path) -> Path:
    """A raw-counter log whose wildcard instance "b" appears at the fourth of eight samples."""
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
    rw.write_raw_blg(path, counters, samples, header=rw.LogHeader(perf_freq=freq))
    return path


def _spy(monkeypatch: pytest.MonkeyPatch, batch_bytes: int | None = None) -> list[bool]:
    """Each walk of a log by BlgFile.batches, as its ``values`` flag (False: the structure pass);
    ``batch_bytes``: the reader's batch forced to that size."""
    seen: list[bool] = []
    original = BlgFile.batches

    def batches(self: BlgFile, **kwargs: Any) -> Iterator[Any]:
        seen.append(kwargs.get("values", True))
        if batch_bytes is not None:
            kwargs["batch_bytes"] = batch_bytes
        return original(self, **kwargs)

    monkeypatch.setattr(BlgFile, "batches", batches)
    return seen


def test_a_log_whose_columns_are_known_at_once_is_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = _spy(monkeypatch)
    whole = cv.convert(STEADY, tmp_path / "steady.csv")
    assert walks == [True]
    assert whole.samples == 275 and whole.columns == 26
    parquet = cv.convert(STEADY, tmp_path / "steady.parquet").output
    assert walks == [True, True]
    # Over an existing output, Parquet counts first (to refuse a file where a dataset directory
    # is needed before any work), then writes the same table.
    first = pl.read_parquet(parquet)
    cv.convert(STEADY, parquet)
    assert walks == [True, True, False, True]
    assert pl.read_parquet(parquet).equals(first)
    walks.clear()
    # A real log whose counters grow: the one pass stops at the first new column.
    grown = cv.convert(GROWING, tmp_path / "grown.csv")
    assert walks == [True, False, True]
    assert grown.samples == 11 and grown.columns == 1832
    assert (tmp_path / "grown.csv").read_bytes().split(b"\r\n")[0].count(b'","') == 1832


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_column_first_seen_later_converts_again_to_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    log = _late_column_log(tmp_path / "late.blg")
    one = tmp_path / f"one{suffix}"
    # The log read in one batch: every column known before the header, one pass.
    assert cv.convert(log, one).columns == 3
    walks = _spy(monkeypatch, batch_bytes=1)
    result = cv.convert(log, tmp_path / f"late{suffix}")
    # The one pass stopped at the new column; the two passes (structure, then values) followed.
    assert walks == [True, False, True]
    assert result.columns == 3 and result.samples == 8
    text = (tmp_path / f"late{suffix}").read_bytes()
    assert one.read_bytes() == text
    lines = text.split(b"\r\n")
    assert lines[0].count(b"\\\\s1\\") == 3
    separator = b"," if suffix == ".csv" else b"\t"
    # The late instance is " " (no value) before it appears, a value (or " " for its first
    # two-sample rate) after: the rows have every column.
    assert all(line.count(separator) == 3 for line in lines[1:-1])
    assert lines[1].endswith(separator + b'" "')
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_batch_frame_is_the_frame_of_rows() -> None:
    """The frame a decoded batch is written from (built inside Polars from the flat values) holds
    what a frame built from the rows held, NaN as null, and writes the same CSV bytes."""
    values = np.array(
        [
            [1e16, 1e-7, np.nan, -0.0, np.inf, 5e-324],
            [np.nan, 0.1 + 0.2, 1.7976931348623157e308, 2.0**53, -np.inf, 123456.789],
        ]
    )
    rows = pl.DataFrame(values, schema=[f"c{i}" for i in range(6)], orient="row", nan_to_null=True)
    built = cv._matrix_frame(values)
    assert built.rename(dict(zip(built.columns, rows.columns, strict=True))).equals(rows)
    options: dict[str, Any] = {
        "include_header": False,
        "quote_style": "always",
        "null_value": " ",
        "line_terminator": "\r\n",
    }
    assert built.write_csv(**options) == rows.write_csv(**options)
    # A batch of a Fortran-ordered or sliced matrix is read in row order too.
    assert cv._matrix_frame(np.asfortranarray(values)).equals(built)
    assert cv._matrix_frame(values[:, :3]).to_numpy().shape == (2, 3)
