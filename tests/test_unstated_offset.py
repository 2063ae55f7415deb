"""A log that states no time-zone offset stays local (issue 29, "time as the source stated it"):
convert invents no bias, inspect --json and check --json print no "+00:00", Parquet holds naive
local times and says so. The real case: a Chinese-locale writer cut its zone name, `(PDH-CSV 4.0) (`."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.render.payload import stamp

SOURCE = Path(__file__).resolve().parent / "data" / "csv" / "ysu_disk_zh-CN.csv"
STATED = Path(__file__).resolve().parent / "data" / "blg" / "powershell" / "CounterSamples.csv"
runner = CliRunner()


def _rows(path: Path, separator: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline=""), delimiter=separator))


@pytest.mark.parametrize(("suffix", "separator"), [(".csv", ","), (".tsv", "\t")])
def test_convert_keeps_the_first_cell_and_the_local_times(
    tmp_path: Path, suffix: str, separator: str
) -> None:
    out = tmp_path / f"out{suffix}"
    result = runner.invoke(app, ["convert", str(SOURCE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    written, source = _rows(out, separator), _rows(SOURCE)
    kind = "TSV" if separator == "\t" else "CSV"
    assert written[0][0] == f"(PDH-{kind} 4.0) ("  # no "()(0)": the source stated no bias
    assert [r[0] for r in written[1:]] == [r[0] for r in source[1:]]  # the source's wall-clock times
    assert "states no time-zone offset" in result.output and "no bias invented" in result.output


def test_convert_of_a_stated_offset_writes_it(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    assert runner.invoke(app, ["convert", str(STATED), "-o", str(out)]).exit_code == 0
    assert _rows(out)[0][0] == "(PDH-CSV 4.0) (Pacific Standard Time)(480)"


def test_parquet_holds_naive_local_times_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    result = runner.invoke(app, ["convert", str(SOURCE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.schema.field("timestamp").type == pa.timestamp("us")  # no zone
    meta = table.schema.metadata
    assert meta[b"esrp_report.time_basis"] == b"local" and meta[b"esrp_report.utc_offset_minutes"] == b""
    assert table.column("timestamp")[0].as_py() == datetime(2022, 10, 9, 18, 45, 27, 748000)
    stated = tmp_path / "stated.parquet"
    assert runner.invoke(app, ["convert", str(STATED), "-o", str(stated)]).exit_code == 0
    assert pq.read_table(stated).schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert pq.read_table(stated).schema.metadata[b"esrp_report.time_basis"] == b"utc"


def test_inspect_json_states_no_offset_it_was_not_given() -> None:
    local = json.loads(runner.invoke(app, ["inspect", str(SOURCE), "--json"]).output)
    assert (local["time_basis"], local["utc_offset_minutes"]) == ("local", None)
    assert local["first_sample"] == "2022-10-09T18:45:27.748000"
    assert local["last_sample"] == "2022-10-09T18:55:22.755000"
    stated = json.loads(runner.invoke(app, ["inspect", str(STATED), "--json"]).output)
    assert stated["time_basis"] == "utc" and stated["first_sample"].endswith("+00:00")


def test_check_json_stamps_of_a_local_log_carry_no_offset() -> None:
    moment = datetime(2022, 10, 9, 18, 45, 27, tzinfo=UTC)
    assert stamp(moment, "local") == "2022-10-09T18:45:27"
    assert stamp(moment, "utc") == "2022-10-09T18:45:27+00:00"
    assert stamp(None, "local") is None
