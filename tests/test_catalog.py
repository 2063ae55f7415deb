"""The catalog: ingest, incremental re-ingest, replacement, queries, migrations, hostile archives,
kill -9 at random moments, and a real Dask LocalCluster giving the same catalog as local mode."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from esrp_report.app.catalog import ingest
from esrp_report.catalog import parse, query
from esrp_report.catalog.archive import Limits
from esrp_report.catalog.migrations import LATEST
from esrp_report.catalog.store import Catalog, CatalogError
from esrp_report.cli.main import app
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.model import StreamedCounterLog

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NETAPP_PERF = "Performance_2012_4_25_15_29_35.html"
runner = CliRunner()


def snapshot(catalog_dir: Path) -> dict[str, Any]:
    return query.contents(catalog_dir)


@pytest.fixture
def netapp(tmp_path: Path) -> Path:
    target = tmp_path / "lab" / "netapp" / "3650-4"
    shutil.copytree(SAMPLES / "3650-4", target)
    return target


def test_ingest_lists_one_entry_per_run_with_verdicts_and_series(tmp_path: Path) -> None:
    catalog_dir = tmp_path / "cat"
    report = ingest([SAMPLES / "EMAIL5", SAMPLES / "3650-4"], catalog_dir, jobs=1)
    assert (report.folders, report.runs_added, report.file_errors) == (2, 9, 0)
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        runs = query.list_runs(catalog)
        assert runs.height == 9
        assert sorted(runs.filter(pl.col("server") == "EMAIL5")["kind"].to_list()) == [
            "DatabaseBackup",
            "Performance",
            "SoftRecovery",
            "Stress",
        ]
        perf = runs.filter((pl.col("server") == "EMAIL5") & (pl.col("kind") == "Performance")).row(
            0, named=True
        )
        assert perf["verdict"] == "pass" and perf["target_iops"] == 1400.0
        assert perf["achieved_iops"] == pytest.approx(1445.341)
        detail = query.show_run(catalog, perf["run_id"][:6])
        # The report and its perfmon CSV are one run: both are its sources.
        assert sorted(detail.sources["role"].to_list()) == ["config", "counter log", "report", "result xml"]
        failing = detail.verdicts.filter(pl.col("status") == "fail")
        assert failing.height == 0 and detail.verdicts.height > 40
        stored = catalog.frame(
            "SELECT series_file, samples FROM runs WHERE run_id = ?", [perf["run_id"]]
        ).row(0)
        series = pl.read_parquet(catalog_dir / stored[0])
        assert stored[1] == 498
        assert series["timestamp"].n_unique() == 498 and series["value"].null_count() == 0
        counters = catalog.frame(
            "SELECT count(*) AS n FROM counters WHERE run_id = ?", [perf["run_id"]]
        ).item()
        # Every non-missing cell of the perfmon CSV is one series row; missing cells are absent.
        log = read_counter_csv(SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv")
        cells = log.samples.drop("timestamp")
        assert counters == log.counters.height
        assert series.height == cells.height * cells.width - sum(cells.null_count().row(0))


def test_reingest_unchanged_skips_everything_and_a_changed_file_replaces_its_run(
    tmp_path: Path, netapp: Path
) -> None:
    catalog_dir = tmp_path / "cat"
    first = ingest([tmp_path / "lab"], catalog_dir, jobs=1)
    assert first.runs_added == 5
    before = snapshot(catalog_dir)
    again = ingest([tmp_path / "lab"], catalog_dir, jobs=1)
    assert (again.folders_unchanged, again.folders_parsed, again.runs_added) == (1, 0, 0)
    assert snapshot(catalog_dir) == before

    report = netapp / NETAPP_PERF
    html = report.read_text(encoding="utf-8")
    report.write_text(html.replace("<td>15.079</td>", "<td>23.079</td>"), encoding="utf-8")
    changed = ingest([tmp_path / "lab"], catalog_dir, jobs=1)
    # The folder is parsed again; only the run whose file changed is replaced.
    assert (changed.runs_replaced, changed.runs_unchanged, changed.runs_added) == (1, 4, 0)
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        assert catalog.frame("SELECT count(*) FROM runs").item() == 5
        failed = query.list_runs(catalog, failed=True)
        assert failed["kind"].to_list() == ["Performance"]
        run_id = failed["run_id"][0]
        assert catalog.frame("SELECT count(*) FROM sources WHERE run_id = ?", [run_id]).item() == 1
        assert (
            catalog.frame(
                "SELECT count(*) FROM verdicts WHERE run_id = ? AND status = 'fail' AND instance = 'Instance4760.1'",
                [run_id],
            ).item()
            == 1
        )


def test_zip_archive_ingests_in_place_and_is_not_opened_again_when_unchanged(tmp_path: Path) -> None:
    archive = tmp_path / "netapp-2012.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((SAMPLES / "3650-4").iterdir()):
            zf.write(path, f"3650-4/{path.name}")
    catalog_dir = tmp_path / "cat"
    first = ingest([archive], catalog_dir, jobs=1)
    assert (first.archives, first.runs_added) == (1, 5)
    assert not (catalog_dir / "staging").exists()
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        locations = set(catalog.frame("SELECT DISTINCT location FROM runs")["location"].to_list())
        sources = catalog.frame("SELECT name FROM sources")["name"].to_list()
    assert locations == {"netapp-2012.zip/3650-4"}
    assert all(name.startswith("netapp-2012.zip/3650-4/") for name in sources)
    again = ingest([archive], catalog_dir, jobs=1)
    assert (again.archives_unchanged, again.files, again.runs_added) == (1, 0, 0)


def _zip(path: Path, members: list[tuple[str, bytes]], *, symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_hostile_archives_are_refused_and_nothing_is_written_outside_the_catalog(tmp_path: Path) -> None:
    report = (SAMPLES / "3650-4" / NETAPP_PERF).read_bytes()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _zip(inbox / "traversal.zip", [("ok/" + NETAPP_PERF, report), ("../../escaped.html", report)])
    _zip(inbox / "absolute.zip", [(str(tmp_path / "absolute.html"), report)])
    _zip(inbox / "backslash.zip", [("..\\..\\windows.html", report)])
    _zip(inbox / "link.zip", [("ok/" + NETAPP_PERF, report)], symlink="ok/passwd")
    _zip(inbox / "bomb.zip", [("bomb/" + NETAPP_PERF, report), ("bomb/zeros.csv", b"\0" * (64 << 20))])
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / NETAPP_PERF).write_bytes(report)
    (inbox / "linked").symlink_to(outside, target_is_directory=True)
    (inbox / "file-link.html").symlink_to(outside / NETAPP_PERF)
    before = set(tmp_path.rglob("*"))

    catalog_dir = tmp_path / "cat"
    result = runner.invoke(app, ["catalog", "ingest", str(inbox), "--catalog", str(catalog_dir), "--json"])
    assert result.exit_code == 1, result.output
    refused = {r["source"]: r["reason"] for r in json.loads(result.output)["refusals"]}
    assert "absolute path" in refused["inbox/absolute.zip"]
    assert "'..'" in refused["inbox/traversal.zip"]
    assert "'..'" in refused["inbox/backslash.zip"]
    assert "symbolic link" in refused["inbox/link.zip"]
    assert "zip bomb" in refused["inbox/bomb.zip"]
    assert any("linked" in s and "symbolic link" in r for s, r in refused.items())
    assert any("file-link.html" in s for s in refused)
    created = set(tmp_path.rglob("*")) - before
    assert created and all(p.is_relative_to(catalog_dir) for p in created), sorted(created)
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        assert catalog.frame("SELECT count(*) FROM runs").item() == 0
        assert catalog.frame("SELECT count(*) FROM refusals").item() == len(refused)


def test_a_member_expanding_past_the_limits_is_stopped_while_extracting(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "big.zip", [("a/x.csv", os.urandom(300_000)), ("a/y.csv", os.urandom(300_000))])
    report = ingest([archive], tmp_path / "cat", jobs=1, limits=Limits(max_total_bytes=500_000))
    assert [r.source for r in report.refusals] == ["big.zip"]
    assert "500,000" in report.refusals[0].reason


def test_damaged_file_is_reported_and_costs_only_itself(tmp_path: Path, netapp: Path) -> None:
    (netapp / "Stress_2012_4_23_8_6_56.blg").write_bytes(b"not a perfmon log" * 100)
    (netapp / "README.txt").write_text("lab notes: not evidence", "utf-8")
    catalog_dir = tmp_path / "cat"
    result = runner.invoke(app, ["catalog", "ingest", str(tmp_path / "lab"), "--catalog", str(catalog_dir)])
    assert result.exit_code == 1, result.output
    assert "5 added" in result.output and "1 unreadable" in result.output
    problems = query.run_sql(
        catalog_dir, "SELECT source, severity, message FROM problems WHERE run_id IS NULL"
    )
    errors = problems.filter(pl.col("severity") == "error")
    assert errors["source"].to_list() == ["lab/netapp/3650-4/Stress_2012_4_23_8_6_56.blg"]
    assert "lab/netapp/3650-4/Stress_2012_4_23_8_6_56.blg" in errors["message"][0]  # named as catalogued
    notes = problems.filter(pl.col("severity") == "note")["source"].to_list()
    assert notes == ["lab/netapp/3650-4/README.txt"]


def test_migrations_are_named_recorded_and_applied_in_order(tmp_path: Path) -> None:
    catalog_dir = tmp_path / "cat"
    catalog_dir.mkdir()
    import duckdb

    con = duckdb.connect(str(catalog_dir / "catalog.duckdb"))
    old = Catalog(catalog_dir, con)
    assert old.migrate(up_to=1) == [1]
    old.con.execute("INSERT INTO folders VALUES ('old/folder', 'abc', 0)")
    old.close()
    with pytest.raises(Exception, match="version 1"):
        Catalog.open(catalog_dir, read_only=True)
    with Catalog.open(catalog_dir) as catalog:
        assert catalog.version() == LATEST
        rows = catalog.frame("SELECT version, name FROM schema_migrations ORDER BY version").rows()
        assert [r[0] for r in rows] == list(range(1, LATEST + 1))
        assert rows[1][1].startswith("refusals")
        assert catalog.frame("SELECT location FROM folders").item() == "old/folder"
        assert catalog.migrate() == []


def test_catalog_cli_list_filters_sql_show_and_export(tmp_path: Path, netapp: Path) -> None:
    report = netapp / NETAPP_PERF
    report.write_text(report.read_text("utf-8").replace("<td>15.079</td>", "<td>23.079</td>"), "utf-8")
    shutil.copytree(SAMPLES / "EMAIL5", tmp_path / "lab" / "vmax" / "EMAIL5")
    catalog_dir = tmp_path / "cat"
    assert (
        runner.invoke(
            app, ["catalog", "ingest", str(tmp_path / "lab"), "--catalog", str(catalog_dir)]
        ).exit_code
        == 0
    )
    listed = runner.invoke(app, ["catalog", "list", "--catalog", str(catalog_dir), "--json"])
    runs = json.loads(listed.output)
    assert len(runs) == 9 and {r["design"] for r in runs} == {"lab/netapp", "lab/vmax"}
    failed = json.loads(
        runner.invoke(app, ["catalog", "list", "--catalog", str(catalog_dir), "--failed", "--json"]).output
    )
    assert [(r["server"], r["kind"]) for r in failed] == [("3650-4", "Performance")]
    email5 = json.loads(
        runner.invoke(
            app, ["catalog", "list", "--catalog", str(catalog_dir), "--server", "email5", "--json"]
        ).output
    )
    assert len(email5) == 4
    since = json.loads(
        runner.invoke(
            app, ["catalog", "list", "--catalog", str(catalog_dir), "--since", "2012-01-01", "--json"]
        ).output
    )
    assert {r["server"] for r in since} == {"3650-4"}
    bad = runner.invoke(app, ["catalog", "list", "--catalog", str(catalog_dir), "--since", "yesterday"])
    assert bad.exit_code == 2 and "expected a date" in bad.output

    sql = runner.invoke(
        app,
        [
            "catalog",
            "sql",
            "--catalog",
            str(catalog_dir),
            "--json",
            "SELECT r.server, count(*) AS n FROM series s JOIN runs r USING (run_id) GROUP BY 1",
        ],
    )
    assert sql.exit_code == 0, sql.output
    assert json.loads(sql.output)[0]["server"] == "EMAIL5"
    refused = runner.invoke(app, ["catalog", "sql", "--catalog", str(catalog_dir), "DELETE FROM runs"])
    assert refused.exit_code == 2 and "read-only" in refused.output.lower()

    run_id = failed[0]["run_id"]
    shown = runner.invoke(app, ["catalog", "show", run_id[:8], "--catalog", str(catalog_dir), "--json"])
    detail = json.loads(shown.output)
    fails = [v for v in detail["verdicts"] if v["status"] == "fail"]
    assert [(v["rule_id"], v["instance"], v["value"]) for v in fails] == [
        ("db-read-latency-avg", "Instance4760.1", 23.079)
    ]
    missing = runner.invoke(app, ["catalog", "show", "zzz", "--catalog", str(catalog_dir)])
    assert missing.exit_code == 2 and "no run 'zzz'" in missing.output

    out = tmp_path / "export"
    assert (
        runner.invoke(
            app, ["catalog", "export", "--catalog", str(catalog_dir), "--parquet", str(out)]
        ).exit_code
        == 0
    )
    assert pl.read_parquet(out / "runs.parquet").height == 9
    assert len(list((out / "series").rglob("*.parquet"))) == 2  # EMAIL5: Performance and Stress logs
    nowhere = runner.invoke(app, ["catalog", "list", "--catalog", str(tmp_path / "nothing")])
    assert nowhere.exit_code == 2 and "no catalog here" in nowhere.output


@pytest.fixture(scope="module")
def archive_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten servers' results (the VMAX sample) as one design folder and the NetApp server as a zip."""
    root = tmp_path_factory.mktemp("archives")
    shutil.copytree(SAMPLES / "vmax", root / "lab" / "vmax")
    shutil.copytree(SAMPLES / "EMAIL5", root / "lab" / "vmax" / "EMAIL5")
    with zipfile.ZipFile(root / "lab" / "netapp.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((SAMPLES / "3650-4").iterdir()):
            zf.write(path, f"3650-4/{path.name}")
    return root / "lab"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from esrp_report.cli.main import main; main()", *args]


@pytest.fixture(scope="module")
def reference_catalog(
    archive_set: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], float]:
    """The catalog of one uninterrupted ingest (as the CLI runs it), and how long that took."""
    catalog_dir = tmp_path_factory.mktemp("reference") / "cat"
    started = time.perf_counter()
    done = subprocess.run(
        _cli("catalog", "ingest", str(archive_set), "--catalog", str(catalog_dir), "--json"),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["runs_added"] == 45 and not report["failures"] and not report["refusals"]
    return snapshot(catalog_dir), elapsed


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_gives_the_uninterrupted_catalog(
    archive_set: Path, reference_catalog: tuple[dict[str, Any], float], tmp_path: Path
) -> None:
    reference, duration = reference_catalog
    started = time.perf_counter()
    subprocess.run(_cli("version"), capture_output=True, check=True)
    startup = time.perf_counter() - started  # the interpreter and the imports: no work done yet
    chance = random.Random(20261123)
    catalogs = [tmp_path / "cat0"]
    killed = attempts = 0
    # Each kill lands after the start-up, somewhere in the first 70 % of an uninterrupted
    # ingest's work; an ingest that finished anyway starts a new catalog, so later kills still
    # land in work. Every catalog is then resumed to the end and must equal the reference.
    while killed < 5 and attempts < 15:
        attempts += 1
        command = _cli("catalog", "ingest", str(archive_set), "--catalog", str(catalogs[-1]), "--jobs", "2")
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        time.sleep(startup + chance.uniform(0.0, 0.7) * max(duration - startup, 0.5))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)  # the ingest and its workers, at once
            killed += 1
        else:
            catalogs.append(tmp_path / f"cat{attempts}")
        process.wait()
    assert killed >= 3, f"only {killed} of {attempts} kills landed while the ingest ran"
    for catalog_dir in catalogs:
        final = subprocess.run(
            _cli("catalog", "ingest", str(archive_set), "--catalog", str(catalog_dir)),
            capture_output=True,
            text=True,
            check=False,
        )
        assert final.returncode == 0, final.stdout + final.stderr
        assert snapshot(catalog_dir) == reference, catalog_dir


@pytest.mark.slow
def test_dask_local_cluster_with_two_workers_gives_the_local_catalog(
    archive_set: Path, reference_catalog: tuple[dict[str, Any], float], tmp_path: Path
) -> None:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        report = ingest([archive_set], tmp_path / "cat", dask_address=cluster.scheduler_address)
    assert report.runs_added == 45 and not report.failures
    assert snapshot(tmp_path / "cat") == reference_catalog[0]


def test_a_catalogued_run_comes_back_as_the_model_run_for_comparisons(tmp_path: Path) -> None:
    from esrp_report.app.evidence import solution

    ingest([SAMPLES / "EMAIL5"], tmp_path / "cat", jobs=1)
    original = next(
        r for r in solution([SAMPLES / "EMAIL5"]).servers[0].runs if r.kind.value == "Performance"
    )
    with Catalog.open(tmp_path / "cat", read_only=True) as catalog:
        (run,) = query.load_runs(catalog, "EMAIL5")  # a design: its Performance runs
        assert query.load_runs(catalog, run.sources[0].removeprefix("catalog:")[:10])[0].tables == run.tables
    assert (run.machine, run.kind, run.test_start) == (original.machine, original.kind, original.test_start)
    assert run.config is not None and original.config is not None
    assert run.config.target_iops == original.config.target_iops == pytest.approx(1400)
    assert run.sizing.achieved_iops == original.sizing.achieved_iops
    assert set(run.tables) == set(original.tables)
    for kind, table in original.tables.items():
        assert {r.instance: r.values for r in run.tables[kind].rows} == {
            r.instance: {k: v for k, v in r.values.items() if v is not None} for r in table.rows
        }, kind


def test_compare_takes_catalogued_runs_and_designs_and_gives_the_folders_figures(tmp_path: Path) -> None:
    trends = SAMPLES / "trends"
    data = SAMPLES / "data" / "trends-004.toml"
    catalog_dir = tmp_path / "cat"
    ingest([trends / "table-04", trends / "table-20-series-1"], catalog_dir, jobs=1)
    with Catalog.open(catalog_dir, read_only=True) as catalog:
        runs = query.list_runs(catalog).sort("location")
    table_04 = runs.filter(pl.col("design") == "table-04")["run_id"].to_list()
    assert len(table_04) == 3  # one server per column: a column is one run

    def compared(*args: str) -> dict[str, Any]:
        result = runner.invoke(app, ["compare", *args, "--json", "--published", str(data)])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)  # type: ignore[no-any-return]

    folders = sorted(str(p) for p in (trends / "table-04").iterdir())
    by_folder = compared(*folders, "--table", "table-04")
    by_catalog = compared(*table_04, "--catalog", str(catalog_dir), "--table", "table-04")
    assert [r["cells"] for r in by_catalog["rows"]] == [r["cells"] for r in by_folder["rows"]]
    assert by_catalog["published"]["flags"] == 0 and len(by_catalog["published"]["cells"]) == 15

    # Several hosts in one column: the column is a design (its Performance runs, one per server).
    first = runs.filter(pl.col("design") == "table-20-series-1")["run_id"].to_list()
    designs = ["table-20-series-1/2-10000-users", "table-20-series-1/3-15000-users"]
    series = compared(*first, *designs, "--catalog", str(catalog_dir), "--table", "table-20-series-1")
    total = next(r for r in series["rows"] if r["figure"] == "total")
    assert [c["text"] for c in total["cells"]] == ["100% [1530 IOPS]", "177% [2714 IOPS]", "280% [4286 IOPS]"]
    unknown = runner.invoke(app, ["compare", "nope", *first, "--catalog", str(catalog_dir)])
    assert unknown.exit_code == 2 and "no run 'nope'" in unknown.output


def test_catalog_sql_reads_only_the_catalog_writes_nothing_and_loads_nothing(tmp_path: Path) -> None:
    catalog_dir = tmp_path / "cat"
    ingest([SAMPLES / "EMAIL5"], catalog_dir, jobs=1)
    assert query.run_sql(catalog_dir, "SELECT count(*) AS n FROM series").item() > 100_000
    secret = tmp_path / "secret.csv"
    secret.write_text("a,b\n1,2\n", "utf-8")
    refused = {
        f"SELECT * FROM read_csv('{secret}')": "disabled by configuration",
        f"COPY (SELECT 1) TO '{catalog_dir / 'series' / 'x.csv'}'": "COPY statements are refused",
        f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'": "COPY statements are refused",
        "SET enable_external_access = true": "SET statements are refused",
        f"ATTACH '{tmp_path / 'other.db'}'": "ATTACH statements are refused",
        "INSTALL httpfs": "refused",
        "SELECT 1; DELETE FROM runs": "DELETE statements are refused",
    }
    before = sorted(tmp_path.rglob("*"))
    for statement, reason in refused.items():
        with pytest.raises(CatalogError, match=reason):
            query.run_sql(catalog_dir, statement)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_streamed_log_is_catalogued_a_batch_at_a_time_with_the_same_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log above the streaming line never becomes one frame: not in the parser, not in the writer;
    its series file holds the rows a whole read gives (grouped by batch, so compared in one order)."""

    ingest([SAMPLES / "EMAIL5"], tmp_path / "whole", jobs=1)
    monkeypatch.setattr(counter_csv, "STREAM_BYTES", 0)
    monkeypatch.setattr(counter_csv, "BATCH_BYTES", 200_000)
    streamed_log = StreamedCounterLog.samples

    def whole(_log: StreamedCounterLog) -> pl.DataFrame:
        raise AssertionError("a streamed log was read whole")

    monkeypatch.setattr(StreamedCounterLog, "samples", streamed_log.setter(None).getter(whole))
    frames: list[int] = []
    long_form = parse._long_form

    def counted(samples: pl.DataFrame, ids: dict[str, int]) -> pl.DataFrame:
        frames.append(samples.height)
        return long_form(samples, ids)

    monkeypatch.setattr(parse, "_long_form", counted)
    report = ingest([SAMPLES / "EMAIL5"], tmp_path / "streamed", jobs=1)
    assert not report.failures
    assert len(frames) > 2  # the performance and stress logs, each in several batches
    series = {}
    for name in ("whole", "streamed"):
        with Catalog.open(tmp_path / name, read_only=True) as catalog:
            files = catalog.con.execute("SELECT run_id, series_file FROM runs ORDER BY run_id").fetchall()
            series[name] = [
                (run, pl.read_parquet(tmp_path / name / file).sort("counter_id", "timestamp"))
                for run, file in files
                if file
            ]
    assert [run for run, _ in series["streamed"]] == [run for run, _ in series["whole"]]
    for (_, streamed), (_, whole) in zip(series["streamed"], series["whole"], strict=True):
        assert streamed.height > 0 and streamed.equals(whole)
