from __future__ import annotations

import pytest

from esrp_report import model as m
from esrp_report.analysis import aggregate as agg
from esrp_report.model import BackupRow, InstanceRow, InstanceTable, Run, SoftRecoveryRow, TableKind, TestKind


def _table(kind: TableKind, rows: list[dict[str, float]]) -> InstanceTable:
    return InstanceTable(kind, [InstanceRow(f"I.{i}", values) for i, values in enumerate(rows, 1)])


def test_per_server_sums_rates_and_averages_latencies_001() -> None:
    # 001 appendix, 3650-4 performance run: the document prints 185.74 / 113.14 / 72.60 / 14.96 / 1.02.
    table = _table(
        TableKind.TRANSACTIONAL,
        [
            {
                m.DB_READ_LATENCY: 15.079,
                m.DB_WRITE_LATENCY: 1.021,
                m.DB_READS: 56.901,
                m.DB_WRITES: 36.476,
                m.LOG_WRITE_LATENCY: 0.984,
                m.LOG_WRITES: 31.003,
            },
            {
                m.DB_READ_LATENCY: 14.842,
                m.DB_WRITE_LATENCY: 1.021,
                m.DB_READS: 56.235,
                m.DB_WRITES: 36.127,
                m.LOG_WRITE_LATENCY: 0.994,
                m.LOG_WRITES: 30.957,
            },
        ],
    )
    f = agg.figures_from_table(table)
    assert f.transfers == pytest.approx(185.739)
    assert f.reads == pytest.approx(113.136)
    assert f.read_latency_ms == pytest.approx(14.9605)
    assert f.log_writes == pytest.approx(61.960)
    assert f.log_write_latency_ms == pytest.approx(0.989)


def test_a_missing_cell_makes_the_figure_unknown_not_zero() -> None:
    table = _table(TableKind.TRANSACTIONAL, [{m.DB_READS: 1.0}, {}])
    assert agg.figures_from_table(table).reads is None


def test_log_replication_reads_are_summed_per_server_and_across_servers() -> None:
    total = _table(
        TableKind.TOTAL, [{m.LOG_READS: 0.25, m.LOG_WRITES: 10.0}, {m.LOG_READS: 0.5, m.LOG_WRITES: 9.0}]
    )
    other = _table(TableKind.TOTAL, [{m.LOG_READS: 1.0, m.LOG_WRITES: 8.0}])
    unprinted = _table(TableKind.TOTAL, [{m.LOG_WRITES: 8.0}])
    one, two = agg.figures_from_table(total), agg.figures_from_table(other)
    assert one.log_reads == 0.75
    assert agg.combine_servers([one, two]).log_reads == 1.75
    assert agg.figures_from_table(unprinted).log_reads is None
    assert agg.combine_servers([one, agg.figures_from_table(unprinted)]).log_reads is None


def test_both_conventions_and_across_servers() -> None:
    run = Run(TestKind.PERFORMANCE, "S1")
    run.tables[TableKind.TRANSACTIONAL] = _table(
        TableKind.TRANSACTIONAL, [{m.DB_READS: 44.658, m.DB_WRITES: 27.88}]
    )
    run.tables[TableKind.TOTAL] = _table(TableKind.TOTAL, [{m.DB_READS: 75.472, m.DB_WRITES: 27.88}])
    s1 = agg.server_summary("S1", run, 1400.0)
    s2 = agg.server_summary("S2", run, 1400.0)
    assert s1.conventions["transactional"].reads == pytest.approx(44.658)
    assert s1.conventions["total"].transfers == pytest.approx(103.352)
    combined = agg.aggregate([s1, s2])
    assert combined is not None
    assert combined.target_iops == 2800.0
    assert combined.conventions["total"].reads == pytest.approx(150.944)


def test_backup_and_soft_recovery_001() -> None:
    run = Run(
        TestKind.DATABASE_BACKUP,
        "3650-4",
        backup=[BackupRow("I.1", 1003410.09, 30915, 32.46), BackupRow("I.2", 1003450.09, 30138, 33.29)],
    )
    b = agg.backup_figures(run)
    assert b is not None
    assert b.mb_per_sec_per_database == pytest.approx(32.875)
    assert b.mb_per_sec_per_server == pytest.approx(65.75)
    rec = Run(
        TestKind.SOFT_RECOVERY,
        "3650-4",
        soft_recovery=[SoftRecoveryRow("I.1", 501, 1823.567), SoftRecoveryRow("I.2", 508, 1807.816)],
    )
    r = agg.recovery_figures(rec)
    assert r is not None
    assert round(r.seconds_per_log, 3) == 3.599
