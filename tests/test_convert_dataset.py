"""``convert`` to Parquet past the column-chunk budget: a dataset directory of part files.

The budget (``convert.PARQUET_CHUNK_BUDGET``) and the row-group size are forced down so that a
small generated .blg (169 counters, 48 samples) needs several part files. The parts, read back
as one table by Polars, PyArrow and DuckDB, must be the single-file conversion bit for bit.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from benchmarks.generate import generate_jetstress_blg
from esrp_report.app import convert as cv
from esrp_report.cli.main import app
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.model.errors import InputError

SAMPLES = 48
GROUP_ROWS = 4  # rows per row group once forced down


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("blg")
    return generate_jetstress_blg(folder / "wide.blg", samples=SAMPLES, interval=15, instances=2, counters=10)


@pytest.fixture(scope="module")
def single(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conversion at the real budget and row-group size: one ordinary file."""
    result = cv.convert(source, tmp_path_factory.mktemp("single") / "one.parquet")
    assert result.parts == [] and result.output.is_file()
    assert result.samples == SAMPLES and result.column_chunks == result.columns + 1  # one row group
    return result.output


def _budget(monkeypatch: pytest.MonkeyPatch, width: int, groups_per_file: int) -> None:
    """Row groups of GROUP_ROWS rows, ``groups_per_file`` of them per file (``width``: columns)."""
    monkeypatch.setattr(cv, "ROW_GROUP_BYTES", 8 * width * GROUP_ROWS)
    monkeypatch.setattr(cv, "PARQUET_CHUNK_BUDGET", width * groups_per_file)


def _bits(frame: pl.DataFrame) -> dict[str, tuple[list[bool], bytes]]:
    """Each column's null mask and the bytes of its values (float bits, microseconds)."""
    out = {}
    for series in frame.iter_columns():
        raw = series.to_physical().to_numpy()
        out[series.name] = (series.is_null().to_list(), np.ascontiguousarray(raw).tobytes())
    return out


def _same_table(ours: pl.DataFrame, theirs: pl.DataFrame) -> None:
    assert ours.schema == theirs.schema  # names, order and dtypes (timestamp in UTC, Float64)
    assert ours.height == theirs.height
    assert _bits(ours) == _bits(theirs)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_past_the_budget_a_dataset_of_parts_is_the_single_file_bit_for_bit(
    source: Path, single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = pl.read_parquet(single)
    _budget(monkeypatch, whole.width, groups_per_file=3)  # 12 rows per file: 4 parts
    result = cv.convert(source, tmp_path / "wide.parquet")
    assert result.output == tmp_path / "wide.parquet" and result.output.is_dir()
    assert [p.name for p in result.parts] == [f"part-{k:05d}.parquet" for k in range(4)]
    assert sorted(result.output.iterdir()) == result.parts
    assert _leftovers(tmp_path) == []
    assert result.samples == SAMPLES and result.column_chunks == 12 * whole.width

    frames = [pl.read_parquet(p) for p in result.parts]
    assert [f.height for f in frames] == [12, 12, 12, 12]
    _same_table(pl.concat(frames), whole)
    # Consecutive in time: every part starts after the previous one ends.
    stamps = [f.get_column("timestamp") for f in frames]
    assert all(a.max() < b.min() for a, b in itertools.pairwise(stamps))  # type: ignore[operator]
    assert pl.concat(stamps).is_sorted()

    # Every part: the single file's schema and metadata; row groups of GROUP_ROWS rows.
    schema = pq.read_schema(single)
    for part in result.parts:
        meta = pq.ParquetFile(part).metadata
        assert meta.schema.to_arrow_schema().equals(schema, check_metadata=True)
        assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [GROUP_ROWS] * 3

    # One table for Polars (a glob or the directory), PyArrow datasets and DuckDB.
    _same_table(pl.scan_parquet(f"{result.output}/*.parquet").collect(), whole)
    _same_table(pl.read_parquet(result.output), whole)
    _same_table(pl.from_arrow(ds.dataset(result.output).to_table()), whole)  # type: ignore[arg-type]
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{result.output}/*.parquet')")
    assert relation is not None
    got = relation.pl()
    # DuckDB hands back its session's time zone: the same instants, shown in UTC again.
    _same_table(got.with_columns(pl.col("timestamp").dt.convert_time_zone("UTC")), whole)


def test_the_budget_boundary(
    source: Path, single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = pl.read_parquet(single)
    # 12 row groups of 4 rows fit exactly: still one ordinary file, with 12 row groups.
    _budget(monkeypatch, whole.width, groups_per_file=12)
    result = cv.convert(source, tmp_path / "fits.parquet")
    assert result.parts == [] and result.output.is_file()
    assert pq.ParquetFile(result.output).metadata.num_row_groups == 12
    _same_table(pl.read_parquet(result.output), whole)
    # One row group fewer per file: the 48th sample starts a second part... of one row group.
    _budget(monkeypatch, whole.width, groups_per_file=11)
    result = cv.convert(source, tmp_path / "over.parquet")
    assert [pl.read_parquet(p).height for p in result.parts] == [44, 4]
    _same_table(pl.read_parquet(result.output), whole)
    # A window that keeps 44 samples fits again: decided on the samples kept, not the log's.
    begin = pl.read_parquet(single).get_column("timestamp")[4]
    result = cv.convert(source, tmp_path / "window.parquet", begin=begin)
    assert result.parts == [] and result.samples == 44
    _same_table(pl.read_parquet(result.output), whole.slice(4))


def test_a_wide_csv_is_split_while_it_is_read(
    source: Path, single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CSV's sample count is not known before it is read: the first file becomes part 0 once
    full. Tiny read windows cut row groups across batches; the table is still the same."""
    csv = cv.convert(source, tmp_path / "wide.csv").output
    whole = pl.read_parquet(cv.convert(csv, tmp_path / "whole.parquet").output)
    _same_table(whole, pl.read_parquet(single))  # the CSV round trip loses nothing
    _budget(monkeypatch, whole.width, groups_per_file=5)  # 20 rows per file: 3 parts
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 5_000)  # about 1 row per window
    result = cv.convert(csv, tmp_path / "split.parquet")
    assert [pl.read_parquet(p).height for p in result.parts] == [20, 20, 8]
    _same_table(pl.read_parquet(result.output), whole)
    assert _leftovers(tmp_path) == []


def test_cli_says_a_dataset_was_written_and_why(
    source: Path, single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _budget(monkeypatch, pl.read_parquet_schema(single).__len__(), groups_per_file=3)
    out = tmp_path / "wide.parquet"
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"wrote a Parquet dataset (a directory, not one file): {out}{os.sep} 4 part files" in text
    assert f"{out}{os.sep}*.parquet" in text  # how to read it as one table
    assert "column chunks" in text and "budget" in text
    # Converting again over the dataset replaces it, stale parts included.
    _budget(monkeypatch, pl.read_parquet_schema(single).__len__(), groups_per_file=6)
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    _same_table(pl.read_parquet(out), pl.read_parquet(single))


def test_refuses_a_file_where_a_directory_is_needed_and_the_reverse(
    source: Path, single: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    width = len(pl.read_parquet_schema(single))
    taken = tmp_path / "taken.parquet"
    taken.write_bytes(b"not mine")
    _budget(monkeypatch, width, groups_per_file=3)
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(taken)])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "exists as a file, but this log is written as a Parquet dataset directory" in text
    assert taken.read_bytes() == b"not mine" and _leftovers(tmp_path) == []

    # A CSV learns it while writing: refused when the first file is full, nothing left behind.
    csv = cv.convert(source, tmp_path / "wide.csv").output
    _budget(monkeypatch, width, groups_per_file=3)
    with pytest.raises(InputError, match="exists as a file"):
        cv.convert(csv, taken)
    assert taken.read_bytes() == b"not mine" and _leftovers(tmp_path) == []

    # A directory where one file is needed (at the real budget), from a .blg and from a CSV.
    monkeypatch.undo()
    folder = tmp_path / "folder.parquet"
    folder.mkdir()
    for log in (source, csv):
        result = CliRunner().invoke(app, ["convert", str(log), "-o", str(folder)])
        assert result.exit_code == 2
        assert "is a directory, but this log is written as one Parquet file" in " ".join(
            result.output.split()
        )
        assert list(folder.iterdir()) == [] and _leftovers(tmp_path) == []

    # A directory that is not a dataset of ours is never written into.
    (folder / "notes.txt").write_text("keep")
    _budget(monkeypatch, width, groups_per_file=3)
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(folder)])
    assert result.exit_code == 2 and "other files than the parts" in " ".join(result.output.split())
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
