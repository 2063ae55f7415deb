"""Backup and replay: the summary's backup and replay figures against each other and the appendix's
backup and soft-recovery reports; a backup report's own rates and checksum statistics."""

from __future__ import annotations

import math
import re

from esrp_report import model as m
from esrp_report.analysis import aggregate as agg
from esrp_report.analysis.intervals import Iv
from esrp_report.audit import jetstress
from esrp_report.audit.context import Context, Mend, Term, run_for
from esrp_report.audit.findings import relative, weighed
from esrp_report.audit.intervals import sum_of
from esrp_report.audit.result import CellKey, cell_key
from esrp_report.model import DocNumber, Run, SummaryTable, TestKind
from esrp_report.model.findings import ERROR, WARNING


def summaries(ctx: Context) -> None:
    """backup.per_server, backup.appendix, replay.appendix: the summary's backup and replay tables."""
    backups = [r for r in ctx.runs if r.kind is TestKind.DATABASE_BACKUP]
    recoveries = [r for r in ctx.runs if r.kind is TestKind.SOFT_RECOVERY]
    for table in ctx.doc.summary_tables:
        if table.kind == "backup":
            _backup_table(ctx, table, backups)
        elif table.kind == "replay":
            _replay_table(ctx, table, recoveries)


def _backup_table(ctx: Context, table: SummaryTable, runs: list[Run]) -> None:
    rows = {row.key: row for row in table.rows}
    per_db, per_server = rows.get("backup_per_database"), rows.get("backup_per_server")
    for index, name in enumerate(table.columns):
        db_value = per_db.values[index] if per_db and index < len(per_db.values) else None
        server_value = per_server.values[index] if per_server and index < len(per_server.values) else None
        run = next((r for r in runs if r.machine and r.machine.casefold() in name.casefold()), None)
        if run is None and len(runs) == 1 and _one_server(ctx):
            run = runs[0]
        if run is not None:
            figures = agg.backup_figures(run)
            rates = [ctx.cell(run, "backup", r.instance, "mb_per_sec") for r in run.backup]
            if figures and db_value is not None and figures.mb_per_sec_per_database is not None:
                ctx.relation(
                    "backup.appendix",
                    db_value,
                    Iv.of(figures.mb_per_sec_per_database, 0.005),
                    what=f"{name} MB read/sec per database",
                    derivation=f"mean of the {figures.databases} instances' MBytes Transferred/sec",
                    table="Database read-only performance",
                    column=name,
                    line=per_db.line if per_db else None,
                    terms=[(rate, 1 / figures.databases) for rate in rates],
                )
            if figures and server_value is not None and figures.mb_per_sec_per_server is not None:
                ctx.relation(
                    "backup.appendix",
                    server_value,
                    Iv.of(figures.mb_per_sec_per_server, 0.005 * figures.databases),
                    what=f"{name} MB read/sec total per server",
                    derivation=f"sum of the {figures.databases} instances' MBytes Transferred/sec",
                    table="Database read-only performance",
                    column=name,
                    line=per_server.line if per_server else None,
                    terms=rates,
                )
        if db_value is not None and server_value is not None and ctx.databases is not None:
            ctx.relation(
                "backup.per_server",
                server_value,
                Iv.of(db_value).scale(ctx.databases.value),
                what=f"MB read/sec total per server ({name})",
                derivation=f"MB read/sec per database {db_value.text} x {ctx.databases.text} "
                "databases per server",
                table="Database read-only performance",
                column=name,
                line=per_server.line if per_server else None,
                terms=[(db_value, ctx.databases.value), (ctx.databases, db_value.value)],
            )


def _replay_table(ctx: Context, table: SummaryTable, runs: list[Run]) -> None:
    for row in table.rows:
        for name, printed in zip(table.columns, row.values, strict=False):
            run = next((r for r in runs if r.machine and r.machine.casefold() in name.casefold()), None)
            if run is None and len(runs) == 1 and printed is not None:
                run = runs[0] if _one_server(ctx) else _match_replay(ctx, runs[0], table, name, printed)
            if run is None or printed is None:
                continue
            rows = [r for r in run.soft_recovery if r.logs_replayed and r.elapsed_seconds is not None]
            if not rows:
                continue
            ratios = [Iv.of(r.elapsed_seconds or 0.0, 0.0005) / Iv.of(r.logs_replayed or 1.0) for r in rows]
            expected = sum_of(ratios).scale(1 / len(ratios))
            terms: list[Term] = []
            exact: dict[CellKey, Mend] = {}
            for r in rows:
                logs, seconds = r.logs_replayed or 1.0, r.elapsed_seconds or 0.0
                terms.append(
                    (ctx.cell(run, "recovery", r.instance, "elapsed_seconds"), 1 / (len(rows) * logs))
                )
                # More logs, a smaller quotient: the slope is negative.
                count = ctx.cell(run, "recovery", r.instance, "logs_replayed")
                terms.append((count, -seconds / (len(rows) * logs**2)))
                if count is not None:
                    exact[cell_key(count)] = _logs_mend(seconds, logs, len(rows))
            ctx.relation(
                "replay.appendix",
                printed,
                expected,
                what=f"{name} average time to play one log file",
                derivation=f"mean over {len(rows)} instances of Elapsed seconds / Log files replayed",
                table="Transaction log recovery/replay performance",
                column=name,
                line=row.line,
                terms=terms,
            )
            ctx.evaluated[-1].exact.update(exact)


def _logs_mend(seconds: float, logs: float, n: int) -> Mend:
    """The changes of one instance's log count that mend a mean of n quotients seconds / logs:
    its quotient must move by n times what the mean is off (``offset``, printed minus expected,
    within ``tolerance``), and the count is its seconds over the quotient so moved. Exact where
    the slope at the printed count is not: a count printed 421 for 521 is 100 logs off, which
    the slope puts at 80."""

    def mend(offset: float, tolerance: float) -> tuple[float, float]:
        ratio = seconds / logs
        lo, hi = ratio + n * (offset - tolerance), ratio + n * (offset + tolerance)
        if hi <= 0:
            return (1.0, 0.0)  # no positive count mends it: an empty range
        most = math.inf if lo <= 0 else seconds / lo - logs
        return (seconds / hi - logs, most)

    return mend


def _one_server(ctx: Context) -> bool:
    """Does the document test one server: every report names the same machine, and no summary
    table has more than one server's column? Its backup and replay figures, printed for "all
    servers", are then that server's."""
    machines = {r.machine.casefold() for r in ctx.runs if r.machine}
    columns = max((len(c) for c in ctx.columns.values()), default=0)
    return len(machines) == 1 and columns <= 1


def _match_replay(ctx: Context, run: Run, table: SummaryTable, name: str, printed: DocNumber) -> Run | None:
    perf = next((r for r in ctx.runs if r.kind is TestKind.PERFORMANCE and r.machine == run.machine), None)
    if perf is None:
        return None
    columns = ctx.columns[TestKind.PERFORMANCE]
    col = next((c for c in columns if c.name == name), None)
    if col is not None and run_for(ctx, TestKind.PERFORMANCE, col) is perf:
        return run
    return None


def backup_rows(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.backup_rate: Database Size / Elapsed Backup Time = MBytes Transferred/sec."""
    for row in run.backup:
        if not (row.database_size_mb and row.elapsed_seconds and row.mb_per_sec is not None):
            continue
        # The elapsed time is printed truncated to the second.
        expected = Iv.of(row.database_size_mb, 0.005) / Iv(row.elapsed_seconds, row.elapsed_seconds + 1)
        ctx.relation(
            "appendix.backup_rate",
            report.cells.get(("backup", row.instance, "mb_per_sec"))
            or DocNumber(row.mb_per_sec, 2, f"{row.mb_per_sec:.2f}"),
            expected,
            what=f"{run.machine} backup, {row.instance}: MBytes Transferred/sec",
            derivation="Database Size (MBytes) / Elapsed Backup Time",
            section=f"Appendix: {report.title}",
            table="Database backup statistics",
            row=row.instance,
            line=report.first_line,
            terms=[(report.cells.get(("backup", row.instance, "database_size_mb")), 1 / row.elapsed_seconds)],
        )


def _checksum_pages(ctx: Context, run: Run, report: m.PublishedReport, total: m.ChecksumRow) -> None:
    """appendix.checksum_pages: each row's file length in MB = its seen pages x the page size (the
    one of ``jetstress.toml``'s that the (Sum) row fits; none fits: not checked). It pins each
    database's page count on its own row, so a slip in one database's pages is told from the
    (Sum) row's by blame."""
    if not total.seen_pages or total.file_length_mb is None:
        return
    mb = float(2**20)
    sizes = [float(size) for size in jetstress.settings()["checksum"]["page_bytes"]]
    header = jetstress.number("checksum", "header_pages")
    databases = len(run.checksum) - 1
    size = next(
        (
            s
            for s in sizes
            if -0.5 <= total.file_length_mb - total.seen_pages * s / mb <= 0.5 + header * databases * s / mb
        ),
        None,
    )
    if size is None:
        return
    for row in run.checksum:
        if row.seen_pages is None or row.file_length_mb is None:
            continue
        pages = report.cells.get(("checksum", row.database, "seen_pages"))
        length = report.cells.get(("checksum", row.database, "file_length_mb"))
        low = row.seen_pages * size / mb
        # The Sum row holds every file's header pages; a database row its own.
        headers = header * (databases if row.is_sum else 1)
        ctx.relation(
            "appendix.checksum_pages",
            length or DocNumber(row.file_length_mb, 0, f"{row.file_length_mb:.0f}"),
            Iv(low, low + headers * size / mb),
            what=f"{run.machine} checksum {row.database} file length (MB)",
            derivation=f"{row.seen_pages:,.0f} seen pages x {size / 1024:.0f} KB",
            section=f"Appendix: {report.title}",
            table="Checksum statistics",
            row=row.database,
            # The file length is read with its seconds ("1003146 MB/25030 sec"), in no cell of its
            # own: the row is where its pages are.
            line=pages.line if pages is not None and pages.placed else report.first_line,
            terms=[(pages, size / mb)] if pages is not None else [],
        )


def checksum(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.checksum_sum, appendix.checksum_time, appendix.checksum_log: the (Sum) row adds
    up, lasts as long as the longest database, and as long as the test log says the pass took;
    appendix.checksum_pages: each row's file length against its pages."""
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
        ctx.relation(
            "appendix.checksum_sum",
            report.cells.get(("checksum", total.database, attribute))
            or DocNumber(printed, 0, f"{printed:.0f}"),
            Iv.of(sum(values)),
            what=f"{run.machine} checksum (Sum) {label}",
            derivation="sum of the databases' rows",
            section=f"Appendix: {report.title}",
            table="Checksum statistics",
            row="(Sum)",
            line=report.first_line,
            terms=[report.cells.get(("checksum", r.database, attribute)) for r in rows],
        )
    _checksum_pages(ctx, run, report, total)
    if total.seconds_taken is None:
        return
    seconds = report.cells.get(("checksum", total.database, "seconds_taken"))
    line = seconds.line if seconds is not None and seconds.placed else report.first_line
    longest_row = max(rows, key=lambda r: r.seconds_taken or 0.0)
    longest = longest_row.seconds_taken or 0.0
    # A shortfall of a few seconds is two clocks read apart; one no clock explains is proof.
    allowed = max(jetstress.number("checksum", "tolerance"), jetstress.number("checksum", "share") * longest)
    longest_cell = ctx.cell(run, "checksum", longest_row.database, "seconds_taken")
    # A bound on one side only: no coefficient, so blame never takes either figure for the slip.
    record = ctx.cover(None, None, [(seconds, 0.0), (longest_cell, 0.0)], "appendix.checksum_time")
    confirmed = _checksum_log(
        ctx, run, report, printed=total.seconds_taken, cell=seconds, line=line, allowed=allowed
    )
    if longest > total.seconds_taken + 1:
        short = longest - total.seconds_taken
        severity = ERROR if short > allowed else WARNING
        size = weighed(short, allowed, "s", figure=total.seconds_taken, why="clocks read apart explain")
        finding = ctx.add(
            severity,
            "appendix.checksum_time",
            f"{run.machine} checksum: the (Sum) row took {total.seconds_taken:,.0f} s, "
            "but one database alone "
            f"took {longest:,.0f} s (the databases are checked in parallel): {size}",
            section=f"Appendix: {report.title}",
            table="Checksum statistics",
            row="(Sum)",
            line=line,
            printed=f"{total.seconds_taken:.0f}",
            expected=f"at least {longest:.0f}",
            derivation="the whole run lasts at least as long as its longest database",
            relative_difference=relative(total.seconds_taken, longest),
        )
        if confirmed and longest_cell is not None and longest_cell.placed and severity == ERROR:
            # The test log times the whole pass as the (Sum) row does: the slip is the database's.
            finding.line = longest_cell.line
            finding.row = longest_row.database
            finding.printed = longest_cell.text
            finding.expected = f"at most {total.seconds_taken:.0f}"
            finding.message += (
                f"; the test log times the pass as the (Sum) row does, so the slip is most likely "
                f"the printed {longest_cell.text} at line {longest_cell.line}"
            )
        record.findings.append(finding)
        record.blamed = True  # one figure against the longest of its rows: named here, not by blame
        record.excess = short


def _checksum_log(
    ctx: Context,
    run: Run,
    report: m.PublishedReport,
    *,
    printed: float,
    cell: DocNumber | None,
    line: int,
    allowed: float,
) -> bool | None:
    """appendix.checksum_log: the (Sum) row's seconds against the span the test log gives the
    checksum pass (``jetstress.toml`` [checksum]). Whether the log confirms the printed
    seconds; None when the log does not time the pass."""
    log = run.test_log
    if log is None:
        return None
    start_pattern = re.compile(jetstress.text("checksum", "start"), re.IGNORECASE)
    end_pattern = re.compile(jetstress.text("checksum", "end"), re.IGNORECASE)
    start = next((e for e in log.entries if start_pattern.search(e.message)), None)
    if start is None:
        return None
    end = next(
        (e for e in log.entries if e.line > start.line and end_pattern.search(e.message)),
        None,
    )
    if end is None:
        return None
    span = (end.timestamp - start.timestamp).total_seconds()
    rounding = jetstress.number("checksum", "rounding")
    record = ctx.cover(cell, Iv(span - rounding, span + rounding))
    difference = abs(printed - span)
    if difference <= rounding:
        record.excess = 0.0
        return True
    # Beyond the rounding of whole seconds, but a clock read apart may still explain a little.
    severity = ERROR if difference > allowed else WARNING
    size = weighed(
        difference,
        allowed if severity == ERROR else rounding,
        "s",
        figure=printed if severity == ERROR else None,
        why="clocks read apart explain" if severity == ERROR else "the whole seconds printed allow",
    )
    if severity == WARNING:
        size += f", but within the {allowed:,.0f} s two clocks read apart may explain: not proven"
    finding = ctx.add(
        severity,
        "appendix.checksum_log",
        f"{run.machine} checksum: the (Sum) row took {printed:,.0f} s, but the test log's checksum pass "
        f"ran {span:,.0f} s (line {start.line} to line {end.line}): {size}",
        section=f"Appendix: {report.title}",
        table="Checksum statistics",
        row="(Sum)",
        line=line,
        lines=(start.line, end.line),
        printed=f"{printed:.0f}",
        expected=f"{span:.0f}",
        derivation="the checksum pass's span in the test log",
        relative_difference=relative(printed, span),
    )
    record.findings.append(finding)
    record.blamed = True  # the (Sum) row is named: the log's two times are read, not typed
    if severity == ERROR:
        record.excess = max(record.excess, 1e-12)
    return False
