from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from esrp_report import model as m
from esrp_report.errors import ReportFormatError, UnsupportedFormatError
from esrp_report.ingest.report_html import parse_report_html, read_report
from esrp_report.model import HostCounter, InstanceRow, InstanceTable, Run, TableKind, TestKind
from esrp_report.synth.jetstress_html import WIDE_COLUMNS, ReportStyle, write_report_html


def test_performance_sample_sections(samples: Path) -> None:
    run = read_report(samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.html")
    assert run.kind is TestKind.PERFORMANCE and run.machine == "EMAIL5" and run.overall_result == "Pass"
    assert run.collection_start == datetime(2011, 3, 11, 13, 32, 28)
    assert run.jetstress_version == "14.01.0225.017" and run.generation is m.Generation.JETSTRESS_2010
    assert (
        run.sizing.achieved_iops == 1445.341
        and run.sizing.target_iops == 1400
        and run.sizing.database_files == 20
    )
    assert run.parameters["Thread Count"] == "5 (per database)"
    assert {k: len(t.rows) for k, t in run.tables.items()} == dict.fromkeys(TableKind, 20)
    total = run.tables[TableKind.TOTAL].row("Instance2756.1")
    assert (
        total is not None
        and total.values[m.DB_READS] == 75.472
        and total.values[m.LOG_READ_BYTES] == 180732.473
    )
    replication = run.tables[TableKind.LOG_REPLICATION].row("Instance2756.20")
    assert replication is not None and replication.values == {
        m.LOG_READS: 0.466,
        m.LOG_READ_BYTES: 177566.561,
    }
    assert run.databases[14].log_path == r"C:\MP\LOG\LOG15"
    assert run.databases[0].database_paths == [r"C:\MP\DB\DB1\Jetstress001001.edb"]
    stalls = run.host_counter("Database Page Fault Stalls/sec")
    assert stalls == HostCounter("Database Page Fault Stalls/sec", 0.0, 0.0, 0.0)
    assert run.test_log is not None and run.test_log.thresholds.db_read_max_ms == 100
    assert run.test_log.sample_counts[0][1] == 495
    assert not run.problems


def test_stress_backup_recovery_and_checksum_samples(samples: Path) -> None:
    stress = read_report(samples / "3650-4" / "Stress_2012_4_23_8_6_56.html")
    assert stress.kind is TestKind.STRESS and stress.test_log is not None
    assert stress.test_log.thresholds.db_read_max_ms == 200
    backup = read_report(samples / "3650-4" / "DatabaseBackup_2012_4_26_11_59_0.html")
    assert backup.kind is TestKind.DATABASE_BACKUP and backup.machine == "3650-4"
    assert [(b.instance, b.elapsed_seconds, b.mb_per_sec) for b in backup.backup] == [
        ("Instance4256.1", 30915.0, 32.46),
        ("Instance4256.2", 30138.0, 33.29),
    ]
    recovery = read_report(samples / "3650-4" / "SoftRecovery_2012_4_27_21_31_53.html")
    assert [(r.logs_replayed, r.elapsed_seconds) for r in recovery.soft_recovery] == [
        (501, 1823.567),
        (508, 1807.816),
    ]
    checksum = read_report(samples / "3650-4" / "DBChecksum_2012_4_24_8_14_1.html")
    assert checksum.kind is TestKind.DB_CHECKSUM
    sums = [c for c in checksum.checksum if c.is_sum]
    assert len(sums) == 1 and sums[0].seen_pages == 64202372 and sums[0].file_length_mb == 2006324
    assert [c.bad_pages for c in checksum.checksum] == [0, 0, 0]


_instance_names = st.lists(
    st.from_regex(r"Instance[0-9]{2,5}\.[0-9]{1,2}", fullmatch=True), min_size=1, max_size=5, unique=True
)
_value = st.floats(min_value=0, max_value=1e7, allow_nan=False).map(lambda v: round(v, 3))
_styles = st.builds(
    ReportStyle,
    upper_tags=st.booleans(),
    quote=st.sampled_from(['"', "'", ""]),
    newline=st.sampled_from(["\n", "", "\r\n"]),
    indent=st.sampled_from(["", "  ", "\t"]),
    title_tag=st.sampled_from(["legend", "h2", "h3", "b", "div", "td"]),
    header_cell=st.sampled_from(["th", "td"]),
    bold_labels=st.booleans(),
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
    log_path_label=st.booleans(),
    total_heading=st.booleans(),
    replication_repeats_bdm_header=st.booleans(),
    title_case=st.booleans(),
)


@st.composite
def _runs(draw: st.DrawFn) -> Run:
    names = draw(_instance_names)
    run = Run(
        TestKind.PERFORMANCE,
        "MBX-01",
        overall_result=draw(st.sampled_from(["Pass", "Fail"])),
        jetstress_version="15.01.0466.031",
        test_start=datetime(2016, 5, 1, 13, 5, 7),
        collection_start=datetime(2016, 5, 1, 13, 9, 59),
        collection_end=datetime(2016, 5, 1, 15, 9, 58),
    )
    run.sizing.achieved_iops = draw(_value)
    run.sizing.target_iops = draw(_value)
    present = draw(st.sets(st.sampled_from(list(TableKind)), min_size=1))
    keys = {
        TableKind.TRANSACTIONAL: [k for _, k in WIDE_COLUMNS],
        TableKind.TOTAL: [k for _, k in WIDE_COLUMNS],
        TableKind.BACKGROUND_MAINTENANCE: [m.BDM_READS, m.BDM_READ_BYTES],
        TableKind.LOG_REPLICATION: [m.LOG_READS, m.LOG_READ_BYTES],
    }
    for kind in TableKind:
        if kind in present:
            rows = [InstanceRow(n, {k: draw(_value) for k in keys[kind]}) for n in names]
            run.tables[kind] = InstanceTable(kind, rows)
    run.host = [HostCounter("% Processor Time", draw(_value), draw(_value), draw(_value))]
    return run


@given(run=_runs(), style=_styles, encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_reports_with_varied_markup_parse_back_exactly(
    tmp_path: Path, run: Run, style: ReportStyle, encoding: str
) -> None:
    # An untitled table that is the only one cannot be told apart from the Transactional table.
    assume(style.total_heading or set(run.tables) != {TableKind.TOTAL})
    path = tmp_path / "Performance_2016_5_1_13_5_7.html"
    path.write_bytes(write_report_html(run, style).encode(encoding))
    parsed = read_report(path)
    assert parsed.kind is TestKind.PERFORMANCE
    assert (parsed.machine, parsed.overall_result, parsed.collection_end) == (
        "MBX-01",
        run.overall_result,
        run.collection_end,
    )
    assert parsed.sizing.achieved_iops == run.sizing.achieved_iops
    assert {k: [(r.instance, r.values) for r in t.rows] for k, t in parsed.tables.items()} == {
        k: [(r.instance, r.values) for r in t.rows] for k, t in run.tables.items()
    }
    assert parsed.host == run.host


def _perf_html(samples: Path) -> str:
    return (samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.html").read_text(encoding="utf-8")


def test_non_jetstress_page_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<html><body><h1>Quarterly numbers</h1><table><tr><td>a</td></tr></table></body></html>")
    with pytest.raises(UnsupportedFormatError, match="not a Jetstress report"):
        read_report(page)


def test_missing_test_summary_names_the_section(samples: Path) -> None:
    run = read_report(samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.html")
    run.overall_result = None
    text = write_report_html(run)
    start = text.index("<fieldset>")
    text = text[:start] + text[text.index("</fieldset>", start) + len("</fieldset>") :]
    with pytest.raises(ReportFormatError, match="required section missing: Test Summary") as info:
        parse_report_html(text, "Performance_x.html")
    assert "Performance_x.html" in str(info.value)


def test_a_missing_optional_table_gives_a_partial_run(samples: Path) -> None:
    run = read_report(samples / "EMAIL5" / "Performance_2011_3_11_13_27_46.html")
    del run.tables[TableKind.LOG_REPLICATION]
    run.host = []
    parsed = parse_report_html(write_report_html(run), "x.html")
    assert set(parsed.tables) == {TableKind.TRANSACTIONAL, TableKind.BACKGROUND_MAINTENANCE, TableKind.TOTAL}
    assert parsed.host == [] and not parsed.problems


def test_a_bad_cell_is_left_empty_and_reported_with_its_place(samples: Path) -> None:
    text = _perf_html(samples).replace(">44.293<", ">abc<", 1)
    run = parse_report_html(text, "x.html")
    row = run.tables[TableKind.TRANSACTIONAL].row("Instance2756.2")
    assert row is not None and m.DB_READS not in row.values
    (problem,) = run.problems
    assert problem.location == "table 'transactional', row 3, column 4"
    assert "'abc'" in problem.message


def test_entities_never_pull_in_local_files(samples: Path) -> None:
    text = (
        _perf_html(samples)
        .replace("<!DOCTYPE html>", '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>', 1)
        .replace("N/A", "&e;")
    )
    run = parse_report_html(text, "x.html")
    assert "root:" not in repr(run)
