"""Audit a published ESRP document against itself and against the rules (pure, no I/O).

Every relation a careful reader would check with a calculator: per-server sums, the aggregate
across servers, each server against its own appendix report, the appendix tables against each
other, host Min <= Avg <= Max, targets, backup and replay rates, trend percentages against their
bracketed values, worked formulas. Printed figures are intervals: a value printed with n
decimals stands for anything that rounds to it, and a figure summed from N printed figures
carries N such half-units. A relation fails only when no choice inside those intervals
satisfies it — so rounding alone never raises a finding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from esrp_report import model as m
from esrp_report.analysis import aggregate as agg
from esrp_report.analysis import formulas as fx
from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import Rule, RunEvidence, Status, evaluate_run, roll_up
from esrp_report.model import DocNumber, PublishedDocument, Run, SummaryTable, TableKind, TestKind
from esrp_report.model.findings import ERROR, NOTE, WARNING, Finding

INSTANCE_HALF_UNIT = 0.0005  # Jetstress prints per-instance figures with three decimals


def summed_half(n: float, half: float = INSTANCE_HALF_UNIT) -> float:
    """How far a sum of ``n`` figures, each rounded to ``half``, may stray from the exact sum.

    The hard bound is n half-units, but rounding errors are independent and uniform: their sum
    has a standard deviation of half * sqrt(n / 3), and four of those are essentially never
    exceeded. A one-digit slip in a sum of 20 figures (0.010) is therefore caught, while the
    usual drift of a few thousandths is not reported."""
    n = max(n, 1)
    return min(n * half, max(half, 4 * half * math.sqrt(n / 3)))


@dataclass
class RecomputedRow:
    """A summary figure beside its value rebuilt from the appendix (the --recompute view)."""

    test: str
    column: str
    metric: str
    printed: str | None
    recomputed: float | None
    source: str


@dataclass
class AuditResult:
    """What an audit of a published document found: findings, what could not be read, recomputed rows, and how
    many relations were checked over how many lines."""

    source: str
    format: str
    esrp_version: str | None
    summary_convention: str | None = None  # "transactional" or "total", when detectable
    findings: list[Finding] = field(default_factory=list)
    unread: list[m.Problem] = field(default_factory=list)
    recomputed: list[RecomputedRow] = field(default_factory=list)
    checked: int = 0  # relations evaluated
    lines_read: int = 0  # lines the document was reduced to
    recognised: list[str] = field(default_factory=list)  # what was found: "2 summary table(s)", ...
    # The ESRP results read: figures of servers in per-server tables, appendix reports with I/O
    # tables, trend tables. Without one, the document's results were not read, whatever else was.
    results_read: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def nothing_checked(self) -> bool:
        """No ESRP results table was read, or no relation between the document's figures was
        evaluated: "0 errors" would be a verdict given without reading the results (a junk file,
        a PDF of scans, a document whose result tables are in a layout not read), so there is none.
        Errors found elsewhere (a configuration fact) are still reported, with exit status 1."""
        return (self.checked == 0 or not self.results_read) and not self.errors

    def nothing_checked_message(self) -> str:
        """What was (not) found, for the exit-2 message of a document where nothing was checked."""
        if self.checked and not self.results_read:
            return (
                f"no ESRP results table read in {self.source} (no per-server results, appendix I/O "
                f"table or trend table): {self.checked} relation(s) between other figures "
                f"({', '.join(self.recognised) or 'nothing else recognised'}) say nothing of the results"
            )
        if not self.recognised:
            return (
                f"no ESRP tables recognised in {self.source} ({self.lines_read:,} line(s) read as "
                f"{self.format}; no summary table, trend table, formula or appendix test report): "
                "nothing was checked"
            )
        return (
            f"{', '.join(self.recognised)} recognised in {self.source}, but no relation between "
            "their figures could be checked: nothing was checked"
        )


# --- interval arithmetic on printed figures (Iv: esrp_report.analysis.intervals) -----------------


def _sum(ivs: Iterable[Iv]) -> Iv:
    lo = hi = 0.0
    for iv in ivs:
        lo += iv.lo
        hi += iv.hi
    return Iv(lo, hi)


def _rel(printed: float, expected: float) -> float | None:
    if expected == 0:
        return None if printed == 0 else math.inf
    return (printed - expected) / abs(expected)


def _fmt(value: float, decimals: int = 3) -> str:
    return f"{value:,.{decimals}f}"


# --- the audit -------------------------------------------------------------------------------------


def audit(doc: PublishedDocument, rules: list[Rule]) -> AuditResult:
    """Check a published document against itself and against the rules; findings are sorted errors first, then
    by line. Problems reading the document (other than notes) are carried as unread."""
    result = AuditResult(doc.source, doc.format, doc.convention)
    result.unread = [p for p in doc.problems if p.severity != NOTE]
    result.lines_read = len(doc.lines)
    result.recognised = _recognised(doc)
    auditor = _Auditor(doc, rules, result)
    auditor.run()
    result.results_read = auditor.results_read()
    result.findings = _merged(result.findings)
    result.findings.sort(key=lambda f: ({ERROR: 0, WARNING: 1, NOTE: 2}[f.severity], f.line or 0))
    return result


@dataclass
class _Column:
    """One server's column across the per-server tables of one test."""

    name: str
    values: dict[str, DocNumber | None] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    corrected: dict[str, Iv] = field(default_factory=dict)  # a printed slip, replaced by its relation


class _Auditor:
    def __init__(self, doc: PublishedDocument, rules: list[Rule], result: AuditResult) -> None:
        self.doc = doc
        self.rules = rules
        self.result = result
        self.databases = self._fact_number("databases_per_host")
        self.runs = [r.run for r in doc.reports if r.run is not None]
        self._columns: dict[TestKind, list[_Column]] = {}
        self._name_reports()

    # -- helpers

    def add(self, severity: str, check: str, message: str, **where: object) -> None:
        self.result.findings.append(Finding(severity, check, message, **where))  # type: ignore[arg-type]

    def relation(
        self,
        check: str,
        printed: DocNumber,
        expected: Iv,
        *,
        what: str,
        derivation: str,
        severity: str = ERROR,
        printed_iv: Iv | None = None,
        **where: object,
    ) -> bool:
        """Does a printed figure meet what the document's other figures say it must be?"""
        self.result.checked += 1
        mine = printed_iv or Iv.of(printed)
        if mine.meets(expected):
            return True
        best = min(max(printed.value, expected.lo), expected.hi)
        shown = _fmt(expected.mid, max(printed.decimals, 0))
        self.add(
            severity,
            check,
            f"{what}: printed {printed.text}, expected {shown}",
            printed=printed.text,
            expected=shown,
            derivation=derivation,
            relative_difference=_rel(printed.value, best),
            **where,
        )
        return False

    def _fact_number(self, key: str) -> DocNumber | None:
        fact = self.doc.facts.get(key)
        if fact is None:
            return None
        return DocNumber.leading(fact[0])

    def _name_reports(self) -> None:
        """A report without a machine name (backup, soft recovery in 000) follows the one before."""
        previous = ""
        for report in self.doc.reports:
            if report.run is None:
                continue
            if report.run.machine:
                previous = report.run.machine
            elif previous:
                report.run.machine = previous
                self.add(
                    NOTE,
                    "appendix.machine",
                    f"the report '{report.title}' names no server; taken as {previous}'s, "
                    "like the report before it",
                    section="Appendix",
                    line=report.first_line,
                )

    # -- the whole document

    def run(self) -> None:
        servers = self.server_columns(TestKind.PERFORMANCE)
        stress = self.server_columns(TestKind.STRESS)
        for test, columns in ((TestKind.PERFORMANCE, servers), (TestKind.STRESS, stress)):
            if columns:
                self.server_relations(test, columns)
                self.against_appendix(test, columns)
                self.aggregate(test, columns)
        self.backup_and_replay()
        self.facts()
        for report in self.doc.reports:
            if report.run is not None:
                self.appendix_report(report)
        self.trends()
        self.series()
        self.formulas()
        if not (servers or self.doc.trend_tables or self.doc.formulas or self.runs):
            self.add(NOTE, "read", "nothing checkable was found in this document")

    def results_read(self) -> list[str]:
        """The ESRP results this audit read (see AuditResult.results_read), counted."""
        read = []
        for test in (TestKind.PERFORMANCE, TestKind.STRESS):
            servers = [
                c for c in self._columns.get(test, []) if any(v is not None for v in c.values.values())
            ]
            if servers:
                read.append(f"{test.value} results of {len(servers)} server(s)")
        reports = [r for r in self.runs if r.tables]
        if reports:
            read.append(f"{len(reports)} appendix report(s) with I/O tables")
        if self.doc.trend_tables:
            read.append(f"{len(self.doc.trend_tables)} trend table(s)")
        return read

    # -- per-server tables

    def server_columns(self, test: TestKind) -> list[_Column]:
        """Each server's column across the per-server tables of one test (built once)."""
        if test in self._columns:
            return self._columns[test]
        columns: dict[str, _Column] = {}
        for table in self.doc.summary_tables:
            if table.kind != "server" or table.test is not test:
                continue
            for row in table.rows:
                for name, value in zip(table.columns, row.values, strict=False):
                    column = columns.setdefault(name, _Column(name))
                    if row.key not in column.values:
                        column.values[row.key] = value
                        column.lines[row.key] = row.line
                        column.labels[row.key] = row.label
        self._columns[test] = list(columns.values())
        return self._columns[test]

    def _rate_half(self) -> float:
        """A per-server rate may be the sum of its instances' printed figures."""
        return summed_half(self.databases.value if self.databases else 1)

    def server_relations(self, test: TestKind, columns: list[_Column]) -> None:
        half = self._rate_half()
        for col in columns:
            reads, writes = col.values.get("reads"), col.values.get("writes")
            total = col.values.get("achieved") or col.values.get("transfers")
            key = "achieved" if col.values.get("achieved") else "transfers"
            if reads is None or writes is None or total is None:
                continue
            expected = Iv.of(reads).widen(half) + Iv.of(writes).widen(half)
            self.result.checked += 1
            if Iv.of(total).meets(expected):
                continue
            # Which of the three is the slip? The appendix, then the aggregate, decide.
            culprit = self._culprit(test, col, total=total, reads=reads, writes=writes, key=key)
            if culprit == "reads":
                value = Iv.of(total) - Iv.of(writes).widen(half)
                printed, metric = reads, "reads"
            elif culprit == "writes":
                value = Iv.of(total) - Iv.of(reads).widen(half)
                printed, metric = writes, "writes"
            else:
                value, printed, metric = expected, total, key
            col.corrected[metric] = value
            self.add(
                ERROR,
                "server.achieved_sum",
                f"{col.name} ({test.value}): {col.labels.get(metric, metric)} printed {printed.text}; "
                f"{col.labels.get(key, key)} {total.text} = reads {reads.text} + writes {writes.text} "
                f"gives {_fmt(value.mid)}",
                section="Test results summary",
                table=f"Individual server metrics ({test.value})",
                row=col.labels.get(metric, metric),
                column=col.name,
                line=col.lines.get(metric),
                printed=printed.text,
                expected=_fmt(value.mid),
                derivation=f"{key} = reads/sec + writes/sec",
                relative_difference=_rel(printed.value, value.mid),
            )

    def _culprit(
        self, test: TestKind, col: _Column, *, total: DocNumber, reads: DocNumber, writes: DocNumber, key: str
    ) -> str:
        run = self._run_for(test, col)
        if run is not None and TableKind.TRANSACTIONAL in run.tables:
            figures = agg.figures_from_table(run.tables[TableKind.TRANSACTIONAL])
            n = summed_half(figures.instances)
            for name, printed, value in (("reads", reads, figures.reads), ("writes", writes, figures.writes)):
                if value is not None and not Iv.of(printed).meets(Iv.of(value, n)):
                    return name
        aggregate = self._aggregate_row(test, "reads")
        if aggregate is not None:
            others = [
                c.corrected.get("reads") or Iv.of(c.values["reads"])  # type: ignore[arg-type]
                for c in self.server_columns(test)
                if c is not col and c.values.get("reads")
            ]
            candidate = _sum(others) + (Iv.of(total) - Iv.of(writes).widen(self._rate_half()))
            if Iv.of(aggregate).meets(candidate.widen(self._rate_half())):
                return "reads"
        return key

    def _aggregate_row(self, test: TestKind, key: str) -> DocNumber | None:
        for table in self.doc.summary_tables:
            if table.kind == "aggregate" and table.test is test:
                for row in table.rows:
                    if row.key == key and row.values and row.values[-1] is not None:
                        return row.values[-1]
        return None

    def aggregate(self, test: TestKind, columns: list[_Column]) -> None:
        tables = [t for t in self.doc.summary_tables if t.kind == "aggregate" and t.test is test]
        if tables and self.doc.unread_summary_rows:
            self.add(
                WARNING,
                "aggregate.skipped",
                f"the aggregate table ({test.value}) is not checked: "
                f"{self.doc.unread_summary_rows} per-server row(s) could not be read, so the servers' sums "
                "are incomplete",
                table="Aggregate performance across all servers",
                line=tables[0].first_line,
            )
            return
        for table in tables:
            for row in table.rows:
                printed = row.values[-1] if row.values else None
                if printed is None:
                    continue
                parts = [c.corrected.get(row.key) or _iv_or_none(c.values.get(row.key)) for c in columns]
                if not parts or any(p is None for p in parts):
                    continue
                known = [p for p in parts if p is not None]
                is_rate = row.key in ("achieved", "transfers", "reads", "writes", "log_writes")
                expected = _sum(known) if is_rate else _sum(known).scale(1 / len(known))
                corrected = [c.name for c in columns if row.key in c.corrected]
                how = "sum over servers" if is_rate else "mean of the servers"
                if corrected:
                    how += f" (with {', '.join(corrected)} as their own rows imply)"
                self.relation(
                    "aggregate.servers",
                    printed,
                    expected,
                    what=f"aggregate {row.label} ({test.value})",
                    derivation=how,
                    section="Test results summary",
                    table="Aggregate performance across all servers",
                    row=row.label,
                    column="Values across all servers",
                    line=row.line,
                )
                if row.target is not None and row.key == "achieved":
                    targets = [
                        r.target
                        for t in self.doc.summary_tables
                        if t.kind == "server" and t.test is test
                        for r in t.rows
                        if r.key == "achieved" and r.target
                    ]
                    if targets:
                        per_server = targets[0]
                        self.relation(
                            "aggregate.target",
                            row.target,
                            Iv.of(per_server).scale(len(columns)),
                            what="aggregate target",
                            derivation=f"{len(columns)} servers x {per_server.text}",
                            table="Aggregate performance across all servers",
                            row=row.label,
                            column="Target values",
                            line=row.line,
                        )

    # -- per-server tables against each server's appendix report

    def _run_for(self, test: TestKind, col: _Column) -> Run | None:
        candidates = [r for r in self.runs if r.kind is test]
        name = col.name.casefold()
        for run in candidates:
            if run.machine and run.machine.casefold() in name:
                return run
        # Columns named "Server N": the report whose achieved IOPS only that column matches.
        for run in candidates:
            achieved = run.sizing.achieved_iops
            if achieved is None:
                continue
            own = col.values.get("achieved") or col.values.get("transfers")
            if own is None or abs(own.value - achieved) > own.half_unit + INSTANCE_HALF_UNIT:
                continue
            columns = self.server_columns(test)
            others = [
                c
                for c in columns
                if c is not col
                and (c.values.get("achieved") or c.values.get("transfers"))
                and abs((c.values.get("achieved") or c.values["transfers"]).value - achieved)  # type: ignore[union-attr]
                <= own.half_unit + INSTANCE_HALF_UNIT
            ]
            if not others:
                return run
        return None

    def against_appendix(self, test: TestKind, columns: list[_Column]) -> None:
        for col in columns:
            run = self._run_for(test, col)
            if run is None:
                continue
            if run.machine.casefold() not in col.name.casefold():
                self.add(
                    NOTE,
                    "appendix.match",
                    f"the appendix's {test.value} report of {run.machine} is taken as {col.name}: "
                    "its achieved IOPS matches that column only",
                    column=col.name,
                )
            convention = self._convention(run, col)
            table = run.tables.get(agg.CONVENTIONS[convention])
            if table is None:
                continue
            figures = agg.figures_from_table(table)
            n = figures.instances
            expected = {
                "reads": (figures.reads, n),
                "writes": (figures.writes, n),
                "read_latency": (figures.read_latency_ms, 1),
                "write_latency": (figures.write_latency_ms, 1),
                "log_writes": (figures.log_writes, n),
                "log_latency": (figures.log_write_latency_ms, 1),
                "transfers": (figures.transfers, 2 * n),
                "achieved": (run.sizing.achieved_iops if convention == "transactional" else None, 1),
            }
            for key, (value, count) in expected.items():
                printed = col.values.get(key)
                self.result.recomputed.append(
                    RecomputedRow(
                        test.value, col.name, key, printed.text if printed else None, value, run.machine
                    )
                )
                if printed is None or value is None:
                    continue
                self.relation(
                    "server.appendix",
                    printed,
                    Iv.of(value, summed_half(count)),
                    what=f"{col.name} {col.labels.get(key, key)} ({test.value}) "
                    f"against {run.machine}'s appendix report",
                    derivation=(
                        f"{'sum' if count > 1 and 'latency' not in key else 'mean'} over the {n} instances "
                        f"of the appendix's {agg.CONVENTIONS[convention].value} table"
                        if key != "achieved"
                        else "the appendix report's Achieved Transactional I/O per Second"
                    ),
                    section="Test results summary",
                    table=f"Individual server metrics ({test.value})",
                    row=col.labels.get(key, key),
                    column=col.name,
                    line=col.lines.get(key),
                )

    def _convention(self, run: Run, col: _Column) -> str:
        """Which sum a per-server table follows (facts §9): transactional or total reads."""
        printed = col.values.get("reads")
        choice = "transactional"
        if printed is not None and TableKind.TOTAL in run.tables:
            trans = agg.figures_from_table(
                run.tables.get(TableKind.TRANSACTIONAL) or run.tables[TableKind.TOTAL]
            )
            total = agg.figures_from_table(run.tables[TableKind.TOTAL])
            if (
                total.reads is not None
                and trans.reads is not None
                and abs(printed.value - total.reads) < abs(printed.value - trans.reads)
            ):
                choice = "total"
        if self.result.summary_convention is None:
            self.result.summary_convention = choice
            self.add(
                NOTE,
                "server.convention",
                f"the per-server tables follow the {choice} convention: database reads are the sum of the "
                + (
                    "transactional reads"
                    if choice == "transactional"
                    else "total (transactional + maintenance) reads"
                ),
                column=col.name,
            )
        return choice

    # -- backup and replay summaries

    def backup_and_replay(self) -> None:
        backups = [r for r in self.runs if r.kind is TestKind.DATABASE_BACKUP]
        recoveries = [r for r in self.runs if r.kind is TestKind.SOFT_RECOVERY]
        for table in self.doc.summary_tables:
            if table.kind == "backup":
                self._backup_table(table, backups)
            elif table.kind == "replay":
                self._replay_table(table, recoveries)

    def _backup_table(self, table: SummaryTable, runs: list[Run]) -> None:
        rows = {row.key: row for row in table.rows}
        per_db, per_server = rows.get("backup_per_database"), rows.get("backup_per_server")
        for index, name in enumerate(table.columns):
            db_value = per_db.values[index] if per_db and index < len(per_db.values) else None
            server_value = per_server.values[index] if per_server and index < len(per_server.values) else None
            run = next((r for r in runs if r.machine and r.machine.casefold() in name.casefold()), None)
            if run is not None:
                figures = agg.backup_figures(run)
                if figures and db_value is not None and figures.mb_per_sec_per_database is not None:
                    self.relation(
                        "backup.appendix",
                        db_value,
                        Iv.of(figures.mb_per_sec_per_database, 0.005),
                        what=f"{name} MB read/sec per database",
                        derivation=f"mean of the {figures.databases} instances' MBytes Transferred/sec",
                        table="Database read-only performance",
                        column=name,
                        line=per_db.line if per_db else None,
                    )
                if figures and server_value is not None and figures.mb_per_sec_per_server is not None:
                    self.relation(
                        "backup.appendix",
                        server_value,
                        Iv.of(figures.mb_per_sec_per_server, 0.005 * figures.databases),
                        what=f"{name} MB read/sec total per server",
                        derivation=f"sum of the {figures.databases} instances' MBytes Transferred/sec",
                        table="Database read-only performance",
                        column=name,
                        line=per_server.line if per_server else None,
                    )
            if db_value is not None and server_value is not None and self.databases is not None:
                self.relation(
                    "backup.per_server",
                    server_value,
                    Iv.of(db_value).scale(self.databases.value),
                    what=f"MB read/sec total per server ({name})",
                    derivation=f"MB read/sec per database {db_value.text} x {self.databases.text} "
                    "databases per server",
                    table="Database read-only performance",
                    column=name,
                    line=per_server.line if per_server else None,
                )

    def _replay_table(self, table: SummaryTable, runs: list[Run]) -> None:
        for row in table.rows:
            for name, printed in zip(table.columns, row.values, strict=False):
                run = next((r for r in runs if r.machine and r.machine.casefold() in name.casefold()), None)
                if run is None and len(runs) == 1 and printed is not None:
                    run = self._match_replay(runs[0], table, name, printed)
                if run is None or printed is None:
                    continue
                rows = [r for r in run.soft_recovery if r.logs_replayed and r.elapsed_seconds is not None]
                if not rows:
                    continue
                ratios = [
                    Iv.of(r.elapsed_seconds or 0.0, 0.0005) / Iv.of(r.logs_replayed or 1.0) for r in rows
                ]
                expected = _sum(ratios).scale(1 / len(ratios))
                self.relation(
                    "replay.appendix",
                    printed,
                    expected,
                    what=f"{name} average time to play one log file",
                    derivation=f"mean over {len(rows)} instances of Elapsed seconds / Log files replayed",
                    table="Transaction log recovery/replay performance",
                    column=name,
                    line=row.line,
                )

    def _match_replay(self, run: Run, table: SummaryTable, name: str, printed: DocNumber) -> Run | None:
        perf = next(
            (r for r in self.runs if r.kind is TestKind.PERFORMANCE and r.machine == run.machine), None
        )
        if perf is None:
            return None
        columns = self.server_columns(TestKind.PERFORMANCE)
        col = next((c for c in columns if c.name == name), None)
        if col is not None and self._run_for(TestKind.PERFORMANCE, col) is perf:
            return run
        return None

    # -- simulated configuration and storage facts

    def facts(self) -> None:
        per_db = self._fact_number("mailboxes_per_database")
        per_server = self._fact_number("mailboxes_per_server")
        if per_db and per_server and self.databases:
            line = self.doc.facts["mailboxes_per_server"][1]
            self.relation(
                "config.mailboxes",
                per_server,
                Iv.of(per_db) * Iv.of(self.databases),
                what="active mailboxes per server",
                derivation=f"mailboxes per database {per_db.text} x databases per host {self.databases.text}",
                section="Simulated Exchange configuration",
                line=line,
            )
        iops = self._fact_number("iops_per_mailbox")
        if iops and per_server:
            for table in self.doc.summary_tables:
                for row in table.rows:
                    if (
                        table.kind == "server"
                        and row.key in ("achieved", "transfers")
                        and row.target is not None
                    ):
                        self.relation(
                            "config.target",
                            row.target,
                            Iv.of(per_server) * Iv.of(iops),
                            what="target transactional IOPS per server",
                            derivation=f"{per_server.text} mailboxes x {iops.text} IOPS per mailbox",
                            table="Individual server metrics",
                            row=row.label,
                            column="Target values",
                            line=row.line,
                        )
                        break
        host = self.doc.facts.get("host_server")
        memory = (
            re.search(r"(\d[\d,.]*)\s*(MB|GB|TB)\s*(?:of\s+)?RAM", host[0], re.IGNORECASE) if host else None
        )
        if host and memory:
            factor = {"mb": 1, "gb": 1024, "tb": 1024 * 1024}[memory.group(2).casefold()]
            ram_mb = float(memory.group(1).replace(",", "")) * factor
            available = [
                (c.average, r.machine)
                for r in self.runs
                for c in r.host
                if c.name.casefold() == "available mbytes"
            ]
            over = [(a, machine) for a, machine in available if a is not None and a > ram_mb]
            if over:
                self.result.checked += 1
                a, machine = max(over)
                self.add(
                    ERROR,
                    "config.memory",
                    f"the host server has {memory.group(0)} by the hardware table, "
                    f"but {machine}'s reports show "
                    f"{_fmt(a)} MB available on average",
                    section="Storage hardware",
                    row="Host server type",
                    line=host[1],
                    printed=memory.group(0),
                    expected=f"more than {_fmt(a, 0)} MB",
                    derivation="Available MBytes (host system performance) cannot exceed installed memory",
                )

    # -- one appendix report

    def appendix_report(self, report: m.PublishedReport) -> None:
        run = report.run
        assert run is not None
        where = {"section": f"Appendix: {report.title}", "line": report.first_line}
        self._achieved(run, report)
        self._total_table(run, report)
        self._host(run, report)
        self._backup_rows(run, report)
        self._checksum(run, report)
        self._verdict(run, report)
        self._test_log(run, report, where)

    def _achieved(self, run: Run, report: m.PublishedReport) -> None:
        table = run.tables.get(TableKind.TRANSACTIONAL)
        achieved = run.sizing.achieved_iops
        if table is None or achieved is None or not table.rows:
            return
        figures = agg.figures_from_table(table)
        if figures.transfers is None:
            return
        # The report reader keeps the value, not its text: the decimals are those of the shortest
        # repr, which can only drop trailing zeros — a wider interval, never a narrower one.
        decimals = _decimals_of(achieved)
        printed = DocNumber(achieved, decimals, f"{achieved:.{decimals}f}")
        self.relation(
            "appendix.achieved",
            printed,
            Iv.of(figures.transfers, summed_half(2 * figures.instances)),
            what=f"{run.machine} {run.kind.value}: Achieved Transactional I/O per Second",
            derivation=f"sum of reads/sec + writes/sec over the {figures.instances} instances",
            section=f"Appendix: {report.title}",
            table="Database sizing and throughput",
            line=report.first_line,
        )

    def _total_table(self, run: Run, report: m.PublishedReport) -> None:
        total = run.tables.get(TableKind.TOTAL)
        trans = run.tables.get(TableKind.TRANSACTIONAL)
        if total is None or trans is None:
            return
        bdm = (
            {r.instance: r.values for r in run.tables[TableKind.BACKGROUND_MAINTENANCE].rows}
            if TableKind.BACKGROUND_MAINTENANCE in run.tables
            else {}
        )
        repl = (
            {r.instance: r.values for r in run.tables[TableKind.LOG_REPLICATION].rows}
            if TableKind.LOG_REPLICATION in run.tables
            else {}
        )
        tr = {r.instance: r.values for r in trans.rows}
        h = INSTANCE_HALF_UNIT
        failures: dict[str, list[tuple[str, float, float]]] = {}  # key -> (instance, printed, expected)
        for row in total.rows:
            t = tr.get(row.instance)
            if t is None:
                continue
            pairs: list[tuple[str, float | None, Iv | None]] = []
            b = bdm.get(row.instance, {})
            r = repl.get(row.instance, {})
            if m.BDM_READS in b and m.DB_READS in t:
                pairs.append(
                    (
                        m.DB_READS,
                        row.values.get(m.DB_READS),
                        Iv.of(t[m.DB_READS], h) + Iv.of(b[m.BDM_READS], h),
                    )
                )
            for key in (
                m.DB_WRITES,
                m.LOG_WRITES,
                m.DB_WRITE_LATENCY,
                m.LOG_WRITE_LATENCY,
                m.LOG_WRITE_BYTES,
                m.DB_WRITE_BYTES,
            ):
                if key in t:
                    pairs.append((key, row.values.get(key), Iv.of(t[key], h)))
            for key in (m.LOG_READS, m.LOG_READ_BYTES):
                if key in r:
                    pairs.append((key, row.values.get(key), Iv.of(r[key], h)))
            for key, printed, expected in pairs:
                if printed is None or expected is None:
                    continue
                self.result.checked += 1
                if not Iv.of(printed, h).meets(expected):
                    failures.setdefault(key, []).append((row.instance, printed, expected.mid))
        for key, rows in failures.items():
            source = (
                "Log Replication" if key in (m.LOG_READS, m.LOG_READ_BYTES) else "Transactional"
            ) + " I/O Performance"
            formula = (
                "transactional + maintenance reads" if key == m.DB_READS else f"the {source} table's value"
            )
            self.add(
                ERROR,
                "appendix.total_table",
                f"{run.machine} {run.kind.value}: Total I/O Performance column {key} "
                f"disagrees with {formula} "
                f"in {len(rows)} of {len(total.rows)} rows (first: {rows[0][0]}, {rows[0][1]:.3f} "
                f"against {rows[0][2]:.3f})",
                section=f"Appendix: {report.title}",
                table="Total I/O Performance",
                column=key,
                line=report.first_line,
                printed=f"{rows[0][1]:.3f}",
                expected=f"{rows[0][2]:.3f}",
                derivation=f"Total I/O Performance = {formula}",
            )

    def _host(self, run: Run, report: m.PublishedReport) -> None:
        for counter in run.host:
            lo, avg, hi = counter.minimum, counter.average, counter.maximum
            if lo is None or avg is None or hi is None:
                continue
            self.result.checked += 1
            if lo - 0.0005 <= avg <= hi + 0.0005 and lo <= hi:
                continue
            wrong = "Average" if (avg < lo or avg > hi) else "Minimum/Maximum"
            self.add(
                ERROR,
                "appendix.host_range",
                f"{run.machine} {run.kind.value}: {counter.name} has Minimum {lo:,.3f}, Average {avg:,.3f}, "
                f"Maximum {hi:,.3f}; the average must lie between minimum and maximum",
                section=f"Appendix: {report.title}",
                table="Host system performance",
                row=counter.name,
                column=wrong,
                line=report.first_line,
                printed=f"{avg:.3f}",
                expected=f"between {lo:.3f} and {hi:.3f}",
                derivation="Minimum <= Average <= Maximum",
            )

    def _backup_rows(self, run: Run, report: m.PublishedReport) -> None:
        for row in run.backup:
            if not (row.database_size_mb and row.elapsed_seconds and row.mb_per_sec is not None):
                continue
            # The elapsed time is printed truncated to the second.
            expected = Iv.of(row.database_size_mb, 0.005) / Iv(row.elapsed_seconds, row.elapsed_seconds + 1)
            self.relation(
                "appendix.backup_rate",
                DocNumber(row.mb_per_sec, 2, f"{row.mb_per_sec:.2f}"),
                expected,
                what=f"{run.machine} backup, {row.instance}: MBytes Transferred/sec",
                derivation="Database Size (MBytes) / Elapsed Backup Time",
                section=f"Appendix: {report.title}",
                table="Database backup statistics",
                row=row.instance,
                line=report.first_line,
            )

    def _checksum(self, run: Run, report: m.PublishedReport) -> None:
        rows = [r for r in run.checksum if not r.is_sum]
        sums = [r for r in run.checksum if r.is_sum]
        if not rows or not sums:
            return
        total = sums[0]
        for attribute, label in (
            ("seen_pages", "Seen pages"),
            ("bad_pages", "Bad pages"),
            ("file_length_mb", "File length (MB)"),
        ):
            values = [getattr(r, attribute) for r in rows]
            printed = getattr(total, attribute)
            if printed is None or any(v is None for v in values):
                continue
            self.relation(
                "appendix.checksum_sum",
                DocNumber(printed, 0, f"{printed:.0f}"),
                Iv.of(sum(values)),
                what=f"{run.machine} checksum (Sum) {label}",
                derivation="sum of the databases' rows",
                section=f"Appendix: {report.title}",
                table="Checksum statistics",
                row="(Sum)",
                line=report.first_line,
            )
        longest = max((r.seconds_taken or 0.0) for r in rows)
        if total.seconds_taken is not None and longest > total.seconds_taken + 1:
            self.result.checked += 1
            self.add(
                WARNING,
                "appendix.checksum_time",
                f"{run.machine} checksum: the (Sum) row took {total.seconds_taken:.0f} s, "
                "but one database alone "
                f"took {longest:.0f} s (the databases are checked in parallel)",
                section=f"Appendix: {report.title}",
                table="Checksum statistics",
                row="(Sum)",
                line=report.first_line,
                printed=f"{total.seconds_taken:.0f}",
                expected=f"at least {longest:.0f}",
                derivation="the whole run lasts at least as long as its longest database",
                relative_difference=_rel(total.seconds_taken, longest),
            )

    def _verdict(self, run: Run, report: m.PublishedReport) -> None:
        if run.kind not in (TestKind.PERFORMANCE, TestKind.STRESS) or not run.overall_result:
            return
        evidence = RunEvidence(
            run=run, server=run.machine, target_iops=run.sizing.target_iops, target_source="report"
        )
        # Judge the figures, not Jetstress's own verdict: leave out the rules that measure it.
        stated = {rule.id for rule in self.rules if rule.measure == "reported_result"}
        results = [r for r in evaluate_run(evidence, self.rules) if r.rule_id not in stated]
        status = roll_up(results)
        self.result.checked += 1
        verdict = run.overall_result.strip().casefold()
        if verdict == "pass" and status is Status.FAIL:
            failed = next(r for r in results if r.status is Status.FAIL)
            self.add(
                ERROR,
                "appendix.verdict",
                f"{run.machine} {run.kind.value}: the report states Pass, but {failed.subject} fails "
                f"'{failed.description}': {failed.value!r} {failed.unit}, "
                f"limit {failed.operator} {failed.threshold!r}",
                section=f"Appendix: {report.title}",
                table="Test summary",
                row="Overall Test Result",
                line=report.first_line,
                printed="Pass",
                expected="Fail",
                derivation=f"rule {failed.rule_id} ({failed.evidence})",
            )
        elif verdict == "fail" and status in (Status.PASS, Status.INCOMPLETE):
            # A document's report holds no samples, so the maxima are never evaluated here.
            unevaluated = sorted({r.rule_id for r in results if r.status is not Status.PASS})
            beyond = f" (not evaluable from the document: {', '.join(unevaluated)})" if unevaluated else ""
            self.add(
                WARNING,
                "appendix.verdict",
                f"{run.machine} {run.kind.value}: the report states Fail, "
                f"yet every rule that its figures allow passes{beyond}",
                section=f"Appendix: {report.title}",
                row="Overall Test Result",
                line=report.first_line,
                printed="Fail",
                expected="Pass",
            )

    def _test_log(self, run: Run, report: m.PublishedReport, where: dict[str, object]) -> None:
        log = run.test_log
        if log is None:
            return
        maximum = log.thresholds.db_read_max_ms
        expected = {TestKind.PERFORMANCE: 100.0, TestKind.STRESS: 200.0}.get(run.kind)
        if maximum is not None and expected is not None:
            self.result.checked += 1
            if maximum != expected:
                self.add(
                    WARNING,
                    "appendix.log_thresholds",
                    f"{run.machine} {run.kind.value}: the test log sets a maximum database read latency of "
                    f"{maximum:g} ms; a {run.kind.value} test uses {expected:g} ms",
                    printed=f"{maximum:g}",
                    expected=f"{expected:g}",
                    derivation="Jetstress thresholds by test kind (facts §9)",
                    **where,
                )
        if run.collection_start and run.collection_end and log.logging_intervals_ms and log.samples_queried:
            seconds = (run.collection_end - run.collection_start).total_seconds()
            interval = log.logging_intervals_ms[0] / 1000
            queried = log.samples_queried[-1][1]
            if seconds > 0 and interval > 0:
                self.result.checked += 1
                expected_samples = seconds / interval
                if abs(queried - expected_samples) > max(3, 0.02 * expected_samples):
                    self.add(
                        WARNING,
                        "appendix.samples",
                        f"{run.machine} {run.kind.value}: {queried} samples queried, "
                        "but the collection window "
                        f"of {seconds:,.0f} s at {interval:g} s gives about {expected_samples:,.0f}",
                        printed=str(queried),
                        expected=f"{expected_samples:,.0f}",
                        derivation="collection window / logging interval",
                        **where,
                    )

    # -- trend tables (004)

    def trends(self) -> None:
        for table in self.doc.trend_tables:
            base = (
                next(
                    (
                        i
                        for i in range(len(table.rows[0][2]))
                        if all(len(c) > i and c[i].percent.value == 100 for _l, _n, c in table.rows)
                    ),
                    0,
                )
                if table.rows
                else 0
            )
            baseline = table.columns[base] if base < len(table.columns) else "baseline"
            for label, line, cells in table.rows:
                if len(cells) <= base:
                    continue
                reference = cells[base].absolute
                for index, cell in enumerate(cells):
                    ratio = (Iv.of(cell.absolute) / Iv.of(reference)).scale(100)
                    column = table.columns[index] if index < len(table.columns) else f"column {index + 1}"
                    self.relation(
                        "trend.percentage",
                        cell.percent,
                        ratio,
                        what=f"{table.title.split(' Test results')[0]}, {label}, {column}",
                        derivation=(
                            f"{cell.absolute.text} / {reference.text} (the {baseline} column), "
                            "with both bracketed values taken as rounded"
                        ),
                        table=table.title,
                        row=label,
                        column=column,
                        line=line,
                    )

    # -- test series defined in several tables (004 §5.6)

    def series(self) -> None:
        groups: dict[tuple[str, str], list[m.SeriesUsers]] = {}
        for entry in self.doc.series:
            groups.setdefault((entry.section, entry.label), []).append(entry)
        for (section, label), entries in groups.items():
            if len(entries) < 3:
                continue
            self.result.checked += 1
            votes: dict[tuple[int, ...], int] = {}
            for entry in entries:
                votes[entry.users] = votes.get(entry.users, 0) + 1
            majority, count = max(votes.items(), key=lambda kv: kv[1])
            if count * 2 <= len(entries):
                continue
            for entry in entries:
                if entry.users == majority:
                    continue
                swapped = next(
                    (
                        other
                        for (sec, other), others in groups.items()
                        if sec == section and other != label and any(o.users == entry.users for o in others)
                    ),
                    None,
                )
                users = " / ".join(f"{u:,}" for u in entry.users)
                hint = f"; those are series {swapped}'s" if swapped else ""
                self.add(
                    ERROR,
                    "series.users",
                    f"{entry.table.split(' ', 2)[0]} {entry.table.split(' ', 2)[1]} gives series {label} "
                    f"{users} users, but {count} other tables of section {section} give "
                    f"{' / '.join(f'{u:,}' for u in majority)}{hint}",
                    section=f"Section {section}",
                    table=entry.table,
                    row=label,
                    line=entry.line,
                    printed=users,
                    expected=" / ".join(f"{u:,}" for u in majority),
                    derivation="the same series in the other tables of the section",
                )

    # -- worked formulas (004 §6.3)

    def formulas(self) -> None:
        for finding in fx.check_formulas(self.doc.formulas, self.doc.all_facts):
            self.result.checked += 1
            self.result.findings.append(finding)


def _recognised(doc: PublishedDocument) -> list[str]:
    """The structures rebuilt from the document, counted (what an unusable input did contain)."""
    counts = (
        (len(doc.summary_tables), "summary table(s)"),
        (len(doc.facts), "configuration fact(s)"),
        (len(doc.trend_tables), "trend table(s)"),
        (len(doc.formulas), "formula(s)"),
        (len(doc.series), "test series"),
        (len(doc.reports), "appendix test report(s)"),
    )
    return [f"{n:,} {what}" for n, what in counts if n]


def _iv_or_none(value: DocNumber | None) -> Iv | None:
    return None if value is None else Iv.of(value)


def _merged(findings: list[Finding]) -> list[Finding]:
    """One finding per printed cell: a slip that two relations expose is reported once, with
    both derivations."""
    kept: dict[tuple[object, ...], Finding] = {}
    out: list[Finding] = []
    for f in findings:
        key = (f.severity, f.line, f.column, f.printed) if f.line and f.printed else (id(f),)
        first = kept.get(key)
        if first is None:
            kept[key] = f
            out.append(f)
        elif f.derivation and f.derivation not in (first.derivation or ""):
            first.derivation = f"{first.derivation}; also {f.message}" if first.derivation else f.message
    return out


def _decimals_of(value: float) -> int:
    text = repr(value)
    return len(text.split(".", 1)[1]) if "." in text and not text.endswith(".0") else 0
