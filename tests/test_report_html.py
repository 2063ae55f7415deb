"""The Jetstress HTML report reader: every section of the bundled samples, a round trip through
the report writer in varied markup and encodings, and damaged or foreign input."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from esrp_report import model as m
from esrp_report.ingest.jetstress.labels import EMPTY_CELLS, SUMMARY_ROW_LABELS
from esrp_report.ingest.jetstress.report_html import parse_report_html, read_report, sniff_report_html
from esrp_report.model import (
    BackupRow,
    ChecksumRow,
    DatabaseConfig,
    HostCounter,
    LogEntry,
    Run,
    SoftRecoveryRow,
    TableKind,
    TestKind,
    TestLog,
)
from esrp_report.model.errors import ReportFormatError, UnsupportedFormatError
from esrp_report.render.jetstress_text import TABLE_COLUMNS
from esrp_synth.jetstress_html import ReportStyle, write_report_html

EMAIL5_PERF = "EMAIL5/Performance_2011_3_11_13_27_46.html"
EMAIL5_STRESS = "EMAIL5/Stress_2011_3_14_9_2_3.html"
EMAIL5_BACKUP = "EMAIL5/DatabaseBackup_2011_3_17_16_42_29.html"
EMAIL5_RECOVERY = "EMAIL5/SoftRecovery_2011_3_16_13_19_46.html"
NETAPP_CHECKSUM = "3650-4/DBChecksum_2012_4_24_8_14_1.html"
NETAPP_STRESS = "3650-4/Stress_2012_4_23_8_6_56.html"
NETAPP_PERF = "3650-4/Performance_2012_4_25_15_29_35.html"
NETAPP_BACKUP = "3650-4/DatabaseBackup_2012_4_26_11_59_0.html"
NETAPP_RECOVERY = "3650-4/SoftRecovery_2012_4_27_21_31_53.html"

ALL = frozenset(TableKind)
NO_REPLICATION = frozenset(ALL - {TableKind.LOG_REPLICATION})


# --- the samples, section by section ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "machine", "tables", "instances", "host_rows", "databases", "log_entries"),
    [
        (EMAIL5_PERF, TestKind.PERFORMANCE, "EMAIL5", ALL, 20, 7, 20, 83),
        (EMAIL5_STRESS, TestKind.STRESS, "EMAIL5", ALL, 20, 7, 20, 30),
        (EMAIL5_BACKUP, TestKind.DATABASE_BACKUP, "EMAIL5", {TableKind.TOTAL}, 20, 7, 20, 10),
        (EMAIL5_RECOVERY, TestKind.SOFT_RECOVERY, "EMAIL5", NO_REPLICATION, 20, 7, 20, 19),
        (NETAPP_CHECKSUM, TestKind.DB_CHECKSUM, "3650-4", set(), 0, 6, 0, 35),
        (NETAPP_STRESS, TestKind.STRESS, "3650-4", ALL, 2, 7, 2, 29),
        (NETAPP_PERF, TestKind.PERFORMANCE, "3650-4", ALL, 2, 7, 2, 29),
        (NETAPP_BACKUP, TestKind.DATABASE_BACKUP, "3650-4", {TableKind.TRANSACTIONAL}, 2, 7, 2, 10),
        (NETAPP_RECOVERY, TestKind.SOFT_RECOVERY, "3650-4", NO_REPLICATION, 2, 7, 2, 36),
    ],
)
def test_every_sample_reads_completely(
    samples: Path,
    name: str,
    kind: TestKind,
    machine: str,
    tables: set[TableKind],
    instances: int,
    host_rows: int,
    databases: int,
    log_entries: int,
) -> None:
    run = read_report(samples / name)
    assert (run.kind, run.machine, run.sources) == (kind, machine, [str(samples / name)])
    assert set(run.tables) == set(tables)
    assert {len(table.rows) for table in run.tables.values()} <= {instances}
    for table in run.tables.values():
        # Every cell of every row was read: no key is missing anywhere.
        wanted = {key for _, key in TABLE_COLUMNS[table.kind]}
        assert all(set(row.values) == wanted for row in table.rows), table.kind
    assert len(run.host) == host_rows
    assert all(None not in (h.average, h.minimum, h.maximum) for h in run.host)
    assert len(run.databases) == databases
    assert run.test_log is not None and len(run.test_log.entries) == log_entries
    assert run.problems == []


def test_email5_performance_summary_sizing_parameters_and_databases(samples: Path) -> None:
    run = read_report(samples / EMAIL5_PERF)
    assert run.overall_result == "Pass" and run.test_description == "N/A"
    assert (run.test_start, run.test_end) == (
        datetime(2011, 3, 11, 13, 27, 1),
        datetime(2011, 3, 11, 15, 33, 50),
    )
    assert (run.collection_start, run.collection_end) == (
        datetime(2011, 3, 11, 13, 32, 28),
        datetime(2011, 3, 11, 15, 32, 18),
    )
    assert (run.jetstress_version, run.ese_version) == ("14.01.0225.017", "14.01.0218.012")
    assert run.generation is m.Generation.JETSTRESS_2010
    assert run.operating_system == "Windows Server 2008 R2 Enterprise (6.1.7600.0)"
    assert run.performance_log == r"C:\Program Files\Exchange Jetstress\Performance_2011_3_11_13_27_46.blg"
    assert run.summary["Ese Version"] == "14.01.0218.012" and len(run.summary) == 11
    assert run.sizing == m.Sizing(1445.341, 1400, 21497143099392, 21501899440128, 20)
    assert run.parameters["Thread Count"] == "5 (per database)"
    assert run.parameters["Maximum Database Cache"] == "5120.0" and len(run.parameters) == 10
    # Instances 15-17 are printed without the "Log path:" label (facts §9).
    assert run.databases[14] == DatabaseConfig(
        "Instance2756.15", r"C:\MP\LOG\LOG15", [r"C:\MP\DB\DB15\Jetstress015001.edb"]
    )
    assert run.databases[0].log_path == r"C:\MP\LOG\LOG1"


def test_email5_performance_instance_tables_host_and_log(samples: Path) -> None:
    run = read_report(samples / EMAIL5_PERF)
    first = run.tables[TableKind.TRANSACTIONAL].rows[0]
    assert first.instance == "Instance2756.1"
    assert first.values[m.DB_READ_LATENCY] == 18.471 and first.values[m.LOG_WRITE_BYTES] == 4626.481
    assert first.values[m.LOG_READS] == 0.0  # printed 0.000: a real zero, not a missing value
    maintenance = run.tables[TableKind.BACKGROUND_MAINTENANCE].row("Instance2756.20")
    assert maintenance is not None and maintenance.values == {
        m.BDM_READS: 30.826,
        m.BDM_READ_BYTES: 261740.868,
    }
    # Header "I/O Log I/O Reads Average Bytes" (000 appendix) is the log read size.
    replication = run.tables[TableKind.LOG_REPLICATION].row("Instance2756.20")
    assert replication is not None and replication.values == {
        m.LOG_READS: 0.466,
        m.LOG_READ_BYTES: 177566.561,
    }
    total = run.tables[TableKind.TOTAL].row("Instance2756.1")
    assert total is not None and total.values[m.DB_READS] == 75.472
    assert run.host_counter("Free System Page Table Entries") == HostCounter(
        "Free System Page Table Entries", 33555334.975, 33555331.0, 33555335.0
    )
    assert run.host_counter("database page fault stalls/sec") == HostCounter(
        "Database Page Fault Stalls/sec", 0.0, 0.0, 0.0
    )
    log = run.test_log
    assert log is not None
    # Only the run the report is about: the previous day's run is not in the sample.
    assert log.entries[0].timestamp == datetime(2011, 3, 11, 13, 27, 1)
    assert log.entries[0].message == "Jetstress testing begins ..."
    assert log.thresholds == m.Thresholds(20.0, 100.0, 10.0, 100.0)
    assert log.sample_counts == [
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 11 13 27 46.blg", 495)
    ]


def test_test_log_entries_point_at_their_lines_in_the_report(samples: Path) -> None:
    path = samples / EMAIL5_PERF
    lines = path.read_text(encoding="utf-8").splitlines()
    run = read_report(path)
    assert run.test_log is not None
    for entry in (run.test_log.entries[0], run.test_log.entries[-1]):
        assert entry.message[:30] in lines[entry.line - 1]


def test_email5_stress_replication_table_with_maintenance_header(samples: Path) -> None:
    run = read_report(samples / EMAIL5_STRESS)
    assert run.kind is TestKind.STRESS and run.collection_end == datetime(2011, 3, 15, 9, 6, 23)
    # The header repeats "Database Maintenance I/O Reads/sec": still the log replication reads.
    replication = run.tables[TableKind.LOG_REPLICATION].row("Instance2908.10")
    assert replication is not None and replication.values == {
        m.LOG_READS: 0.449,
        m.LOG_READ_BYTES: 172377.496,
    }
    assert run.test_log is not None and run.test_log.thresholds.db_read_max_ms == 200
    assert [d.log_path for d in run.databases[14:17]] == [rf"C:\MP\LOG\LOG{i}" for i in (15, 16, 17)]


def test_email5_backup_and_soft_recovery_statistics(samples: Path) -> None:
    backup = read_report(samples / EMAIL5_BACKUP)
    assert backup.summary == {} and backup.overall_result is None and backup.test_start is None
    assert backup.backup[13] == BackupRow("Instance2672.14", 1031218.09, 8 * 3600 + 11 * 60 + 54, 34.94)
    assert len(backup.backup) == 20 and len(backup.parameters) == 8
    available = backup.host_counter("Available MBytes")
    # The published appendix prints the average above the maximum (124,865.000); the sample
    # corrects that slip (samples/README.md), and the reader reads what is printed.
    assert available is not None and available.average == 124884.213 and available.maximum == 124965.0
    recovery = read_report(samples / EMAIL5_RECOVERY)
    assert recovery.soft_recovery[-1] == SoftRecoveryRow("Instance2196.20", 501, 1908.764238)
    repaired = recovery.tables[TableKind.BACKGROUND_MAINTENANCE].row("Instance2196.5")
    assert repaired is not None and repaired.values[m.BDM_READS] == 30.441
    assert recovery.test_log is not None and recovery.test_log.logging_intervals_ms == [15000]


def test_netapp_checksum_report(samples: Path) -> None:
    run = read_report(samples / NETAPP_CHECKSUM)
    assert run.kind is TestKind.DB_CHECKSUM and run.tables == {} and run.summary == {}
    assert run.checksum[0] == ChecksumRow(
        r"E:\db\Jetstress001001.edb", 32100674, 0, 0, 0, file_length_mb=1003146, seconds_taken=25030
    )
    (total,) = [row for row in run.checksum if row.is_sum]
    assert total == ChecksumRow("(Sum)", 64202372, 0, 0, 0, 2006324, 25028, is_sum=True)
    # "Memory System Performance (of checksum)" is the host table of this report.
    assert run.host[0] == HostCounter("% Processor Time", 14.296, 5.703, 19.956)
    assert run.test_log is not None
    assert run.test_log.sample_counts[-1] == (
        r"C:\Program Files\Exchange Jetstress\results\DBChecksum_2012_4_24_8_14_1.blg",
        834,
    )


def test_netapp_stress_total_table_without_heading(samples: Path) -> None:
    text = (samples / NETAPP_STRESS).read_text(encoding="utf-8")
    assert "<legend>Total I/O Performance</legend>" not in text  # the sample keeps the printed layout
    run = read_report(samples / NETAPP_STRESS)
    total = run.tables[TableKind.TOTAL]
    assert total.instances() == ["Instance37680.1", "Instance37680.2"]
    assert total.rows[1].values[m.DB_READS] == 91.998 and total.rows[0].values[m.LOG_READ_LATENCY] == 9.11
    assert run.host_counter("Pool Paged Bytes") == HostCounter(
        "Pool Paged Bytes", 242155092.963, 240934912, 323309568
    )
    assert run.ese_version == "14.01.0322.000" and run.test_description is None


def test_netapp_spelling_variants(samples: Path) -> None:
    perf = read_report(samples / NETAPP_PERF)
    assert "MSEXchange Database ==&gt; Instances" in (samples / NETAPP_PERF).read_text(encoding="utf-8")
    row = perf.tables[TableKind.TRANSACTIONAL].row("Instance4760.1")
    assert row is not None and row.values[m.LOG_WRITE_BYTES] == 4570.83
    assert perf.parameters["Number of Copies per Database"] == "2"
    backup = read_report(samples / NETAPP_BACKUP)  # "MExchange Database ==> Instances"
    assert backup.tables[TableKind.TRANSACTIONAL].instances() == ["Instance4256.1", "Instance4256.2"]
    assert [(b.elapsed_seconds, b.mb_per_sec) for b in backup.backup] == [(30915, 32.46), (30138, 33.29)]
    recovery = read_report(samples / NETAPP_RECOVERY)  # "I/O Database Reads/s"
    first = recovery.tables[TableKind.TRANSACTIONAL].rows[0]
    assert first.values[m.DB_READS] == 216.171 and first.values[m.LOG_WRITES] == 0.0
    assert [(r.logs_replayed, r.elapsed_seconds) for r in recovery.soft_recovery] == [
        (501, 1823.567),
        (508, 1807.816),
    ]
    assert recovery.test_log is not None and recovery.test_log.logging_intervals_ms == [15000, 2000]


def test_sniffing(samples: Path) -> None:
    head = (samples / EMAIL5_PERF).read_text(encoding="utf-8")[:8192]
    assert sniff_report_html(head)
    assert not sniff_report_html(
        (samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.csv")
        .read_bytes()[:8192]
        .decode("utf-8", "replace")
    )
    assert not sniff_report_html("3/11/2011 1:27:01 PM -- Jetstress testing begins ...\n")
    assert not sniff_report_html("<html><body><h1>Holiday photos</h1></body></html>")


# --- round trip through the writer, any markup, three encodings ---------------------------

_text = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ._&<>'\"()%-]{0,24}", fullmatch=True).map(
    lambda s: " ".join(s.split())
)
_name = _text.filter(lambda s: s.casefold() not in SUMMARY_ROW_LABELS | EMPTY_CELLS)
_value = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
_maybe_value = st.one_of(st.none(), _value)
_whole = st.integers(min_value=0, max_value=10**9).map(float)
_time = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda t: t.replace(microsecond=0)
)
_path = st.from_regex(r"[C-Z]:\\[A-Za-z0-9 _.\\]{0,20}[A-Za-z0-9]", fullmatch=True).map(
    lambda s: " ".join(s.split())
)
_message = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,.%()/=&'-]{0,40}", fullmatch=True).map(
    lambda s: " ".join(s.split())
)

_styles = st.builds(
    ReportStyle,
    upper_tags=st.booleans(),
    upper_attributes=st.booleans(),
    quote=st.sampled_from(['"', "'", ""]),
    newline=st.sampled_from(["\n", "", "\r\n", "\n\n"]),
    indent=st.sampled_from(["", "  ", "\t"]),
    title_tag=st.sampled_from(["legend", "h2", "h3", "b", "div", "td"]),
    title_case=st.sampled_from(["title", "lower", "upper"]),
    header_cell=st.sampled_from(["th", "td"]),
    label_class=st.booleans(),
    bold_labels=st.booleans(),
    layout_table=st.booleans(),
    first_header=st.sampled_from(
        [
            "MSExchange Database ==> Instances",
            "MSEXchange Database ==> Instances",
            "MExchange Database ==> Instances",
            "msexchange database==>instances",
        ]
    ),
    msec_suffix=st.booleans(),
    per_sec=st.sampled_from(["/sec", " /sec", "/ sec", "/s"]),
    bdm_io=st.sampled_from(["IO", "I/O"]),
    replication_repeats_bdm_header=st.booleans(),
    log_path_label=st.booleans(),
    total_heading=st.booleans(),
    decimals=st.sampled_from([None, 3]),
)


@st.composite
def _runs(draw: st.DrawFn) -> Run:
    kind = draw(st.sampled_from(list(TestKind)))
    names = draw(st.lists(_name, min_size=1, max_size=4, unique_by=str.casefold))
    start = draw(_time)
    stamp = f"{start.year}_{start.month}_{start.day}_{start.hour}_{start.minute}_{start.second}"
    run = Run(
        kind,
        draw(st.from_regex(r"[A-Z][A-Z0-9-]{0,14}", fullmatch=True)),
        overall_result=draw(st.sampled_from(["Pass", "Fail"])),
        test_description=draw(st.one_of(st.none(), _text)),
        jetstress_version=draw(st.sampled_from(["14.01.0225.017", "15.00.0995.000", "15.01.0466.031"])),
        ese_version=draw(st.one_of(st.none(), st.just("15.00.0847.030"))),
        operating_system=draw(st.one_of(st.none(), _text)),
        performance_log=draw(st.sampled_from([None, rf"C:\Jetstress\{kind.value}_{stamp}.blg"])),
        test_start=start,
        test_end=draw(st.one_of(st.none(), _time)),
        collection_start=draw(st.one_of(st.none(), _time)),
        collection_end=draw(_time),
    )
    run.sizing = m.Sizing(
        draw(_maybe_value), draw(_maybe_value), draw(_whole), draw(_whole), draw(st.integers(1, 200))
    )
    run.parameters = {"Thread Count": draw(_text), "Lazy Commits": draw(_text)}
    run.databases = [
        DatabaseConfig(n, draw(st.one_of(st.none(), _path)), draw(st.lists(_path, min_size=1, max_size=2)))
        for n in names
    ]
    for table_kind in draw(st.sets(st.sampled_from(list(TableKind)))):
        keys = [key for _, key in TABLE_COLUMNS[table_kind]]
        rows = [
            m.InstanceRow(n, {k: v for k in keys if (v := draw(_maybe_value)) is not None}) for n in names
        ]
        run.tables[table_kind] = m.InstanceTable(table_kind, rows, source="")
    run.host = [
        HostCounter(counter, draw(_maybe_value), draw(_value), draw(_value))
        for counter in draw(st.lists(st.sampled_from(["% Processor Time", "Available MBytes"]), unique=True))
    ]
    if kind is TestKind.DATABASE_BACKUP:
        elapsed = st.one_of(_whole, _value)
        run.backup = [BackupRow(n, draw(_value), draw(elapsed), draw(_value)) for n in names]
    if kind is TestKind.SOFT_RECOVERY:
        run.soft_recovery = [SoftRecoveryRow(n, draw(_whole), draw(_value)) for n in names]
    if kind is TestKind.DB_CHECKSUM:
        run.checksum = [
            ChecksumRow(n, draw(_whole), draw(_whole), draw(_whole), draw(_whole), draw(_value), draw(_value))
            for n in names
        ]
        run.checksum.append(
            ChecksumRow("(Sum)", draw(_whole), 0.0, 0.0, 0.0, draw(_value), draw(_value), True)
        )
    entries = [LogEntry(draw(_time), draw(_message), 0) for _ in range(draw(st.integers(0, 4)))]
    run.test_log = TestLog("x", entries) if entries else None
    return run


def _sections(run: Run) -> dict[str, object]:
    """Everything the writer writes, in comparable form."""
    return {
        "kind": run.kind,
        "machine": run.machine,
        "summary": (
            run.overall_result,
            run.test_description,
            run.jetstress_version,
            run.ese_version,
            run.operating_system,
            run.performance_log,
            run.test_start,
            run.test_end,
            run.collection_start,
            run.collection_end,
        ),
        "sizing": run.sizing,
        "parameters": run.parameters,
        "databases": run.databases,
        "tables": {k: [(r.instance, r.values) for r in t.rows] for k, t in run.tables.items()},
        "host": run.host,
        "backup": run.backup,
        "soft_recovery": run.soft_recovery,
        "checksum": run.checksum,
        "log": [(e.timestamp, e.message) for e in run.test_log.entries] if run.test_log else [],
    }


@given(
    run=_runs(),
    style=_styles,
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le"]),
)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_reports_in_varied_markup_parse_back_exactly(
    tmp_path: Path, run: Run, style: ReportStyle, encoding: str
) -> None:
    # An untitled Total table with no per-instance table before it looks like a Transactional one.
    others = set(run.tables) - {TableKind.TOTAL}
    assume(style.total_heading or TableKind.TOTAL not in run.tables or others)
    path = tmp_path / "report.html"
    path.write_bytes(write_report_html(run, style=style).encode(encoding))
    parsed = read_report(path)
    assert _sections(parsed) == _sections(run)
    # Only notes (empty cells); nothing damaged.
    assert [p for p in parsed.problems if p.severity != "note"] == []


# --- damaged and foreign input -------------------------------------------------------------


def _sample_text(samples: Path, name: str = EMAIL5_PERF) -> str:
    return (samples / name).read_text(encoding="utf-8")


def _without_section(text: str, legend: str) -> str:
    start = text.index(f"<legend>{legend}</legend>")
    start = text.rindex("<fieldset>", 0, start)
    end = text.index("</fieldset>", start) + len("</fieldset>")
    return text[:start] + text[end:]


@pytest.mark.parametrize(
    "page",
    [
        "<html><body><h1>Quarterly numbers</h1><table><tr><td>a</td><td>1</td></tr></table></body></html>",
        # Mentions Jetstress, but is an article, not a report.
        "<html><body><p>We ran Jetstress last week.</p><table><tr><th>Counter</th><th>Average</th>"
        "<th>Minimum</th><th>Maximum</th></tr><tr><td>x</td><td>1</td><td>1</td><td>1</td></tr></table></body></html>",
        "",
        "\x00\x01 not html at all",
    ],
)
def test_a_page_that_is_no_jetstress_report_is_refused(tmp_path: Path, page: str) -> None:
    path = tmp_path / "index.html"
    path.write_text(page, encoding="utf-8")
    with pytest.raises(UnsupportedFormatError, match="not a Jetstress report") as info:
        read_report(path)
    assert str(path) in str(info.value)


def test_a_missing_test_summary_is_named_and_the_rest_of_the_report_kept(
    samples: Path, tmp_path: Path
) -> None:
    path = tmp_path / "Performance_x.html"
    path.write_text(_without_section(_sample_text(samples), "Test Summary"), encoding="utf-8")
    run = read_report(path)
    assert run.kind is TestKind.PERFORMANCE and run.overall_result is None
    assert len(run.tables[TableKind.TRANSACTIONAL].rows) == 20  # the figures it has are kept
    [missing] = [p for p in run.problems if p.unread]
    assert missing.source == str(path) and missing.severity == "error"
    assert missing.message.startswith("required section missing: Test Summary")


@pytest.mark.parametrize(
    ("name", "legend", "section"),
    [
        (EMAIL5_BACKUP, "Database Backup Statistics - All", "Database Backup Statistics"),
        (NETAPP_RECOVERY, "Soft Recovery Statistics - All", "Soft Recovery Statistics"),
        (NETAPP_CHECKSUM, "Checksum Statistics - All", "Checksum Statistics"),
    ],
)
def test_a_missing_statistics_table_is_named_and_the_summary_kept(
    samples: Path, name: str, legend: str, section: str
) -> None:
    run = parse_report_html(_without_section(_sample_text(samples, name), legend), "x.html")
    assert run.machine and run.test_log is not None  # the rest of the report is read
    assert [p.message.split(" (")[0] for p in run.problems if p.unread] == [
        f"required section missing: {section}"
    ]


def test_a_report_with_nothing_but_its_title_is_still_refused(samples: Path) -> None:
    text = _sample_text(samples, NETAPP_RECOVERY)
    while "<legend>" in text:
        text = _without_section(text, text.split("<legend>", 1)[1].split("</legend>", 1)[0])
    with pytest.raises(ReportFormatError, match="required section missing: Soft Recovery Statistics"):
        parse_report_html(text, "x.html")


def test_missing_optional_tables_give_a_partial_run(samples: Path) -> None:
    text = _sample_text(samples)
    for legend in ("Log Replication I/O Performance", "Host System Performance", "Database Configuration"):
        text = _without_section(text, legend)
    run = parse_report_html(text, "x.html")
    assert set(run.tables) == NO_REPLICATION
    assert run.host == [] and run.databases == [] and run.problems == []
    assert run.sizing.achieved_iops == 1445.341


def test_a_bad_cell_is_left_empty_and_named_by_table_row_and_column(samples: Path) -> None:
    text = _sample_text(samples).replace("<td>44.293</td>", "<td>abc</td>", 1)
    run = parse_report_html(text, "x.html")
    row = run.tables[TableKind.TRANSACTIONAL].row("Instance2756.2")
    assert row is not None and m.DB_READS not in row.values
    assert row.values[m.DB_WRITES] == 27.818  # the rest of the row is kept
    (problem,) = run.problems
    assert problem.location == (
        "table 'Transactional I/O Performance', row 3 ('Instance2756.2'), column 4 ('I/O Database Reads/sec')"
    )
    assert "'abc'" in problem.message and problem.lost == 1 and problem.source == "x.html"


def test_damaged_times_durations_and_lengths_are_reported(samples: Path) -> None:
    perf = parse_report_html(
        _sample_text(samples).replace("3/11/2011 1:32:28 PM</td>", "yesterday</td>", 1), "p"
    )
    assert perf.collection_start is None
    assert [p.location for p in perf.problems] == ["table 'Test Summary', row 6 ('Collection Start Time')"]
    backup = parse_report_html(_sample_text(samples, NETAPP_BACKUP).replace("08:35:15", "8h35"), "b")
    assert backup.backup[0].elapsed_seconds is None and backup.backup[0].mb_per_sec == 32.46
    assert "'8h35'" in backup.problems[0].message
    checksum = parse_report_html(
        _sample_text(samples, NETAPP_CHECKSUM).replace("1003146 MB/25030 sec", "lots"), "c"
    )
    assert checksum.checksum[0].file_length_mb is None and checksum.checksum[0].seen_pages == 32100674
    assert "'lots'" in checksum.problems[0].message


def test_unknown_columns_and_thousands_separators(samples: Path) -> None:
    text = _sample_text(samples, NETAPP_PERF)
    text = text.replace("<th>I/O Log Writes Average Bytes</th>", "<th>I/O Log Flush Depth</th>", 1)
    text = text.replace("<td>56.901</td>", "<td>5,690.1</td>", 1)
    run = parse_report_html(text, "x.html")
    row = run.tables[TableKind.TRANSACTIONAL].rows[0]
    assert row.values[m.DB_READS] == 5690.1 and m.LOG_WRITE_BYTES not in row.values
    assert run.tables[TableKind.TOTAL].rows[0].values[m.LOG_WRITE_BYTES] == 4570.83
    (note,) = run.problems
    assert note.severity == "note" and "I/O Log Flush Depth" in note.message


def test_title_and_performance_log_disagreeing_is_reported(samples: Path) -> None:
    text = _sample_text(samples, NETAPP_STRESS).replace(
        "Stress Test Result Report", "Performance Test Result Report"
    )
    run = parse_report_html(text, "x.html")
    assert run.kind is TestKind.PERFORMANCE
    assert "Stress_2012_4_23_8_6_56.blg" in run.problems[0].message


def test_without_a_title_the_performance_log_names_the_test(samples: Path) -> None:
    text = re.sub(r"Stress Test Result Report", "Report", _sample_text(samples, NETAPP_STRESS))
    run = parse_report_html(text, "x.html")
    assert run.kind is TestKind.STRESS and run.problems == []


def test_a_declared_charset_does_not_override_the_decoding(samples: Path, tmp_path: Path) -> None:
    text = _sample_text(samples, NETAPP_PERF).replace("Instance4760.1", "Instance-é–1")
    path = tmp_path / "r.html"
    path.write_bytes(text.replace("<head>", '<head><meta charset="utf-16">').encode("utf-8"))
    assert read_report(path).tables[TableKind.TRANSACTIONAL].instances()[0] == "Instance-é–1"
    path.write_bytes(text.replace("<head>", '<head><meta charset="windows-1252">').encode("utf-16"))
    assert read_report(path).tables[TableKind.TRANSACTIONAL].instances()[0] == "Instance-é–1"


def test_entities_never_pull_in_local_files(samples: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-7731", encoding="utf-8")
    passwd = Path("/etc/passwd")
    passwd_line = passwd.read_text(encoding="utf-8").splitlines()[0] if passwd.exists() else "root:x:0:0"
    doctype = f'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd"><!ENTITY s SYSTEM "{secret.as_uri()}">]>'
    text = _sample_text(samples).replace("<!DOCTYPE html>", doctype, 1).replace("N/A", "&e;&s;")
    path = tmp_path / "r.html"
    path.write_text(text, encoding="utf-8")
    run = read_report(path)
    assert passwd_line not in repr(run) and "TOP-SECRET-7731" not in repr(run)
    assert run.sizing.achieved_iops == 1445.341
