"""Per-server and across-server figures, as ESRP documents print them (facts §9).

Per server: over the database instances, rates are summed and latencies are plain means.
Across servers: server rates summed, server latencies averaged. Two conventions exist for the
read figures and vendors choose either: "transactional" (the Transactional I/O table) and
"total" (the Total I/O table: transactional + maintenance + replication reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean

from esrp_report import model as m
from esrp_report.model import InstanceTable, Run, TableKind

CONVENTIONS = {"transactional": TableKind.TRANSACTIONAL, "total": TableKind.TOTAL}


@dataclass(frozen=True)
class IoFigures:
    """The rows of an ESRP per-server (or aggregate) table in one convention."""

    reads: float | None
    writes: float | None
    read_latency_ms: float | None
    write_latency_ms: float | None
    log_writes: float | None
    log_write_latency_ms: float | None
    instances: int
    log_reads: float | None = None  # the Total I/O table's log replication reads; None where not printed

    @property
    def transfers(self) -> float | None:
        if self.reads is None or self.writes is None:
            return None
        return self.reads + self.writes


def _sum(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)


def _mean(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else fmean(v for v in values if v is not None)


def figures_from_table(table: InstanceTable) -> IoFigures:
    """One server's figures from one per-instance table. A missing cell makes its figure None."""

    def col(key: str) -> list[float | None]:
        return [row.values.get(key) for row in table.rows]

    return IoFigures(
        reads=_sum(col(m.DB_READS)),
        writes=_sum(col(m.DB_WRITES)),
        read_latency_ms=_mean(col(m.DB_READ_LATENCY)),
        write_latency_ms=_mean(col(m.DB_WRITE_LATENCY)),
        log_writes=_sum(col(m.LOG_WRITES)),
        log_write_latency_ms=_mean(col(m.LOG_WRITE_LATENCY)),
        instances=len(table.rows),
        log_reads=_sum(col(m.LOG_READS)),
    )


def combine_servers(figures: list[IoFigures]) -> IoFigures:
    """Across servers: rates summed, latencies averaged over servers."""
    return IoFigures(
        reads=_sum([f.reads for f in figures]),
        writes=_sum([f.writes for f in figures]),
        read_latency_ms=_mean([f.read_latency_ms for f in figures]),
        write_latency_ms=_mean([f.write_latency_ms for f in figures]),
        log_writes=_sum([f.log_writes for f in figures]),
        log_write_latency_ms=_mean([f.log_write_latency_ms for f in figures]),
        instances=sum(f.instances for f in figures),
        log_reads=_sum([f.log_reads for f in figures]),
    )


@dataclass(frozen=True)
class BackupFigures:
    """A backup test's rates in MB/s: the mean per database and the sum for the server (None when a database's
    rate is missing), and how many databases."""

    mb_per_sec_per_database: float | None
    mb_per_sec_per_server: float | None
    databases: int


def backup_figures(run: Run) -> BackupFigures | None:
    """The backup figures of a run, or None when it has no backup rows."""
    if not run.backup:
        return None
    rates = [row.mb_per_sec for row in run.backup]
    return BackupFigures(_mean(rates), _sum(rates), len(rates))


@dataclass(frozen=True)
class RecoveryFigures:
    """A soft recovery test's figures: mean seconds per log replayed, logs replayed in all (None when a
    database's figure is missing), and how many databases."""

    seconds_per_log: float | None
    logs_replayed: float | None
    databases: int


def recovery_figures(run: Run) -> RecoveryFigures | None:
    """The soft recovery figures of a run, or None when it has no soft recovery rows."""
    if not run.soft_recovery:
        return None
    return RecoveryFigures(
        _mean([row.seconds_per_log for row in run.soft_recovery]),
        _sum([row.logs_replayed for row in run.soft_recovery]),
        len(run.soft_recovery),
    )


@dataclass
class ServerSummary:
    """One server's figures for one test type: achieved and target IOPS, the I/O figures in each convention,
    and where they came from ("report" or "counter log")."""

    server: str
    kind: str
    # Jetstress's own "Achieved Transactional I/O per Second" when the report states it (it is
    # computed from unrounded samples and can differ from reads + writes by a few thousandths);
    # else transactional reads + writes summed over instances.
    achieved_iops: float | None
    target_iops: float | None
    conventions: dict[str, IoFigures] = field(default_factory=dict)
    source: str = ""  # "report" or "counter log"


def server_summary(
    server: str,
    run: Run,
    target_iops: float | None,
    counter_tables: dict[TableKind, InstanceTable] | None = None,
) -> ServerSummary:
    """Both conventions for one run; falls back to counter-log tables when the report has none."""
    tables = run.tables
    source = "report"
    if not tables.get(TableKind.TRANSACTIONAL) and counter_tables:
        tables, source = counter_tables, "counter log"
    conventions = {
        name: figures_from_table(tables[kind]) for name, kind in CONVENTIONS.items() if kind in tables
    }
    transactional = conventions.get("transactional")
    achieved = run.sizing.achieved_iops if source == "report" else None
    if achieved is None and transactional is not None:
        achieved = transactional.transfers
    return ServerSummary(
        server=server,
        kind=run.kind.value,
        achieved_iops=achieved,
        target_iops=target_iops,
        conventions=conventions,
        source=source,
    )


@dataclass(frozen=True)
class AggregateSummary:
    """The figures across servers for one test type: rates and IOPS summed, latencies averaged over servers,
    in each convention every server has."""

    kind: str
    servers: int
    target_iops: float | None
    achieved_iops: float | None
    conventions: dict[str, IoFigures]


def aggregate(summaries: list[ServerSummary]) -> AggregateSummary | None:
    """The summary across these servers' summaries, or None when there are none; a target or achieved IOPS
    missing on any server makes the sum None."""
    if not summaries:
        return None
    conventions = {
        name: combine_servers([s.conventions[name] for s in summaries])
        for name in CONVENTIONS
        if all(name in s.conventions for s in summaries)
    }
    return AggregateSummary(
        kind=summaries[0].kind,
        servers=len(summaries),
        target_iops=_sum([s.target_iops for s in summaries]),
        achieved_iops=_sum([s.achieved_iops for s in summaries]),
        conventions=conventions,
    )


def backup_across_servers(per_server: list[BackupFigures]) -> BackupFigures | None:
    """000 prints the mean over servers of both figures ("average rate ... across all 10 servers")."""
    if not per_server:
        return None
    return BackupFigures(
        _mean([f.mb_per_sec_per_database for f in per_server]),
        _mean([f.mb_per_sec_per_server for f in per_server]),
        sum(f.databases for f in per_server),
    )
