"""Which reads ``I/O Database Reads/sec`` counts is decided from the evidence, stated, and used;
a figure that cannot exist is never printed (issue "One evidence pipeline", figures that can exist).

The EMAIL5 log is written the way published reports imply (the counter includes background
maintenance reads). The other reading is built from it: each sample's reads less maintenance
reads, with the read size of what remains, so the log carries transactional reads only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_synth.perfmon_csv import write_pdh_csv

runner = CliRunner()
PERF = "Performance_2011_3_11_13_27_46"


def _transactional_only(source: Path, target: Path) -> None:
    log = read_counter_csv(source)
    samples = log.samples
    columns = {row["path"]: row["column"] for row in log.counters.iter_rows(named=True)}
    updates = []
    for path, column in columns.items():
        if not path.endswith("\\I/O Database Reads/sec"):
            continue
        stem = path[: -len("I/O Database Reads/sec")]
        bdm = columns[stem + "Database Maintenance IO Reads/sec"]
        size = columns[stem + "I/O Database Reads Average Bytes"]
        bdm_size = columns[stem + "Database Maintenance IO Reads Average Bytes"]
        reads = pl.col(column) - pl.col(bdm)
        moved = pl.col(column) * pl.col(size) - pl.col(bdm) * pl.col(bdm_size)
        updates += [reads.alias(column), pl.when(reads > 0).then(moved / reads).alias(size)]
    samples = samples.with_columns(updates)
    stamps = [t.replace(tzinfo=None) for t in samples["timestamp"].dt.offset_by("-5h").to_list()]
    values = samples.drop("timestamp").to_numpy().astype(float)
    write_pdh_csv(
        target,
        log.counters["path"].to_list(),
        stamps,
        values,
        time_zone_name="Eastern Standard Time",
        bias_minutes=300,
    )


def test_a_log_of_transactional_reads_is_recognised_against_its_report(samples: Path, tmp_path: Path) -> None:
    folder = tmp_path / "EMAIL5"
    folder.mkdir()
    shutil.copy(samples / "EMAIL5" / f"{PERF}.html", folder)
    _transactional_only(samples / "EMAIL5" / f"{PERF}.csv", folder / f"{PERF}.csv")
    out = json.loads(runner.invoke(app, ["check", str(folder), "--json"]).output)
    run = out["servers"][0]["runs"][0]
    notes = [p["message"] for p in run["problems"]]
    assert any("I/O Database Reads/sec transactional reads only: its transactional reads" in n for n in notes)
    # Read the right way, the log agrees with the report: no disagreement on reads or sizes.
    assert not [d for d in run["disagreements"] if d["metric"].startswith("db_reads")]
    assert run["status"] == "pass"


def test_without_a_report_the_impossible_reading_is_ruled_out(samples: Path, tmp_path: Path) -> None:
    path = tmp_path / f"{PERF}.csv"
    _transactional_only(samples / "EMAIL5" / f"{PERF}.csv", path)
    result = runner.invoke(app, ["check", str(path), "--json", "--target-iops", "1400"])
    out = json.loads(result.output)
    run = out["servers"][0]["runs"][0]
    notes = [p["message"] for p in run["problems"]]
    # Read as including maintenance reads, this log's transactional sizes would be negative.
    assert any(
        "is read as transactional reads only: read as includes maintenance reads" in n for n in notes
    ), notes
    figures = out["servers"][0]["summaries"]["Performance"]["conventions"]
    transactional, total = figures["transactional"], figures["total"]
    assert 0 < transactional["reads_per_sec"] < total["reads_per_sec"]
    for convention in figures.values():
        assert all(v is not None and v >= 0 for k, v in convention.items() if k != "instances"), convention


def test_the_expected_reading_confirmed_by_the_report_is_not_a_note(samples: Path) -> None:
    out = json.loads(runner.invoke(app, ["check", str(samples / "EMAIL5"), "--json"]).output)
    messages = [p["message"] for run in out["servers"][0]["runs"] for p in run["problems"]]
    assert not [m for m in messages if "I/O Database Reads/sec" in m]
