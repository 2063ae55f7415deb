"""One appendix test report against itself: its achieved IOPS against its instances, the Total I/O
table against the others (its read size between the two it averages), host counters
Min <= Avg <= Max, its stated verdict against the rules, its test log. (Its backup rows and
checksum statistics are ``backup.py``'s.)"""

from __future__ import annotations

import math
import re

from esrp_report import model as m
from esrp_report.analysis import aggregate as agg
from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import RunEvidence, Status, evaluate_run, roll_up
from esrp_report.audit import jetstress
from esrp_report.audit.context import Context, Evaluated, Term
from esrp_report.audit.intervals import INSTANCE_HALF_UNIT, decimals_of, summed_half, worst_half
from esrp_report.model import (  # bound once: ``m.X`` goes through model's lazy loader each time
    BDM_READ_BYTES,
    BDM_READS,
    DB_READ_BYTES,
    DB_READ_LATENCY,
    DB_READS,
    DB_WRITES,
    LOG_WRITE_LATENCY,
    TABLE_TITLES,
    DocNumber,
    Run,
    TableKind,
    TestKind,
)
from esrp_report.model.findings import ERROR, WARNING


def achieved_iops(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.achieved: Achieved Transactional I/O per Second = sum of reads + writes of the
    instances."""
    table = run.tables.get(TableKind.TRANSACTIONAL)
    achieved = run.sizing.achieved_iops
    if table is None or achieved is None or not table.rows:
        return
    figures = agg.figures_from_table(table)
    if figures.transfers is None:
        return
    # The report reader keeps the value, not its text: the decimals are those of the shortest
    # repr, which can only drop trailing zeros — a wider interval, never a narrower one.
    decimals = decimals_of(achieved)
    printed = report.cells.get(("sizing", "achieved_iops")) or DocNumber(
        achieved, decimals, f"{achieved:.{decimals}f}"
    )
    ctx.relation(
        "appendix.achieved",
        printed,
        Iv.of(figures.transfers, summed_half(2 * figures.instances)),
        worst=Iv.of(figures.transfers, worst_half(2 * figures.instances)),
        what=f"{run.machine} {run.kind.value}: Achieved Transactional I/O per Second",
        derivation=f"sum of reads/sec + writes/sec over the {figures.instances} instances",
        section=f"Appendix: {report.title}",
        table="Database sizing and throughput",
        line=report.first_line,
        terms=ctx.column_cells(run, TableKind.TRANSACTIONAL.value, (DB_READS, DB_WRITES)),
    )


def total_table(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.total_table: Total I/O = transactional + maintenance reads; its other columns are
    copies of the Transactional, Log Replication (or, in soft recovery, Transactional) tables'
    (``jetstress.toml``). A copy that disagrees is two printed figures against each other: blame
    places the slip at the one whose own table's other relations break too, else names both."""
    total = run.tables.get(TableKind.TOTAL)
    trans = run.tables.get(TableKind.TRANSACTIONAL)
    if total is None or trans is None:
        return
    sources = {kind: {r.instance: r.values for r in table.rows} for kind, table in run.tables.items()}
    bdm = sources.get(TableKind.BACKGROUND_MAINTENANCE, {})
    tr = sources[TableKind.TRANSACTIONAL]
    copies = [c for c in jetstress.copies() if run.kind in c.tests and c.source in sources]
    h = INSTANCE_HALF_UNIT
    cells = report.cells
    # key -> (instance, printed, expected, line)
    failures: dict[str, list[tuple[str, float, float, int | None]]] = {}
    records: dict[str, list[Evaluated]] = {}
    origin: dict[str, TableKind] = {}
    transactional, maintenance = TableKind.TRANSACTIONAL.value, TableKind.BACKGROUND_MAINTENANCE.value
    for row in total.rows:
        t = tr.get(row.instance)
        if t is None:
            continue
        pairs: list[tuple[str, float | None, Iv | None, list[Term]]] = []
        b = bdm.get(row.instance, {})
        instance = row.instance
        if BDM_READS in b and DB_READS in t:
            pairs.append(
                (
                    DB_READS,
                    row.values.get(DB_READS),
                    Iv.of(t[DB_READS], h) + Iv.of(b[BDM_READS], h),
                    [
                        cells.get(("instance", transactional, instance, DB_READS)),
                        cells.get(("instance", maintenance, instance, BDM_READS)),
                    ],
                )
            )
        for copy in copies:
            values = sources[copy.source].get(instance, {})
            if copy.column in values:
                origin[copy.column] = copy.source
                term = cells.get(("instance", copy.source.value, instance, copy.column))
                copied = Iv.of(values[copy.column], h)
                pairs.append((copy.column, row.values.get(copy.column), copied, [term]))
        for key, printed, expected, terms in pairs:
            if printed is None or expected is None:
                continue
            cell = cells.get(("instance", TableKind.TOTAL.value, instance, key))
            record = ctx.cover(
                cell or DocNumber(printed, 3, f"{printed:.3f}"), expected, terms, "appendix.total_table"
            )
            if Iv.of(printed, h).meets(expected):
                record.excess = 0.0
            else:
                record.excess = max(record.excess, 1e-12)
                records.setdefault(key, []).append(record)
                failures.setdefault(key, []).append(
                    (row.instance, printed, expected.mid, cell.line if cell else None)
                )
    for key, rows in failures.items():
        source = TABLE_TITLES[origin.get(key, TableKind.TRANSACTIONAL)]
        formula = "transactional + maintenance reads" if key == DB_READS else f"the {source} table's value"
        finding = ctx.add(
            ERROR,
            "appendix.total_table",
            f"{run.machine} {run.kind.value}: Total I/O Performance column {key} "
            f"disagrees with {formula} "
            f"in {len(rows)} of {len(total.rows)} rows (first: {rows[0][0]}, {rows[0][1]:.3f} "
            f"against {rows[0][2]:.3f})",
            section=f"Appendix: {report.title}",
            table="Total I/O Performance",
            column=key,
            line=rows[0][3] or report.first_line,
            lines=tuple(line for *_, line in rows if line),
            printed=f"{rows[0][1]:.3f}",
            expected=f"{rows[0][2]:.3f}",
            derivation=f"Total I/O Performance = {formula}",
        )
        for record in records[key]:
            record.findings.append(finding)


def read_size(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.read_size: the Total I/O table's database read size lies between the transactional
    and the maintenance read sizes. At every sample it is their mean weighted by the two read
    rates, so it lies between them, and so does its average over the test (the sizes keep their
    order: transactional reads are small pages, maintenance reads large runs). The weighted mean
    of the printed averages is not an equation: Jetstress averages each sample's ratio over time,
    and in the VMAX sample's reports the two differ by up to 0.59 %."""
    total = run.tables.get(TableKind.TOTAL)
    if (
        total is None
        or TableKind.TRANSACTIONAL not in run.tables
        or TableKind.BACKGROUND_MAINTENANCE not in run.tables
    ):
        return
    transactional = {r.instance: r.values for r in run.tables[TableKind.TRANSACTIONAL].rows}
    maintenance = {r.instance: r.values for r in run.tables[TableKind.BACKGROUND_MAINTENANCE].rows}
    h = INSTANCE_HALF_UNIT
    for row in total.rows:
        size = row.values.get(DB_READ_BYTES)
        small = transactional.get(row.instance, {}).get(DB_READ_BYTES)
        large = maintenance.get(row.instance, {}).get(BDM_READ_BYTES)
        if size is None or small is None or large is None:
            continue
        cells = report.cells
        printed = cells.get(("instance", TableKind.TOTAL.value, row.instance, DB_READ_BYTES)) or DocNumber(
            size, 3, f"{size:.3f}"
        )
        bounds = [
            (cells.get(("instance", TableKind.TRANSACTIONAL.value, row.instance, DB_READ_BYTES)), 0.0),
            (
                cells.get(("instance", TableKind.BACKGROUND_MAINTENANCE.value, row.instance, BDM_READ_BYTES)),
                0.0,
            ),
        ]
        lo, hi = min(small, large) - h, max(small, large) + h
        record = ctx.cover(printed, Iv(lo, hi), bounds, "appendix.read_size")
        if record.excess == 0.0:  # within the bounds, the printed figure's own rounding allowed for
            continue
        record.blamed = True  # the Total's figure is named: its bounds are two figures against one
        finding = ctx.add(
            ERROR,
            "appendix.read_size",
            f"{run.machine} {run.kind.value}: {row.instance} I/O Database Reads Average Bytes in the Total "
            f"I/O table is {printed.text}, outside the transactional ({small:,.3f}) and maintenance "
            f"({large:,.3f}) read sizes it is a rate-weighted mean of",
            section=f"Appendix: {report.title}",
            table="Total I/O Performance",
            row=row.instance,
            column=DB_READ_BYTES,
            line=printed.line if printed.placed else report.first_line,
            printed=printed.text,
            expected=f"between {min(small, large):.3f} and {max(small, large):.3f}",
            derivation="a rate-weighted mean lies between what it averages",
        )
        record.findings.append(finding)


def host_range(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.host_range: host counters' Minimum <= Average <= Maximum."""
    for counter in run.host:
        lo, avg, hi = counter.minimum, counter.average, counter.maximum
        if lo is None or avg is None or hi is None:
            continue
        cells = [report.cells.get(("host", counter.name, s)) for s in ("minimum", "average", "maximum")]
        record = ctx.cover(cells[1], Iv(lo, hi).widen(0.0005), [(cells[0], 0.0), (cells[2], 0.0)])
        if lo - 0.0005 <= avg <= hi + 0.0005 and lo <= hi:
            continue
        wrong = "Average" if (avg < lo or avg > hi) else "Minimum/Maximum"
        record.excess = max(record.excess, 1e-12)
        record.blamed = True  # the average is named: its bounds are two figures against one
        finding = ctx.add(
            ERROR,
            "appendix.host_range",
            f"{run.machine} {run.kind.value}: {counter.name} has Minimum {lo:,.3f}, Average {avg:,.3f}, "
            f"Maximum {hi:,.3f}; the average must lie between minimum and maximum",
            section=f"Appendix: {report.title}",
            table="Host system performance",
            row=counter.name,
            column=wrong,
            line=placed.line if (placed := cells[1] or cells[0]) else report.first_line,
            printed=f"{avg:.3f}",
            expected=f"between {lo:.3f} and {hi:.3f}",
            derivation="Minimum <= Average <= Maximum",
        )
        record.findings.append(finding)


def verdict(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.verdict: a stated Pass (or Fail) against the rules on the report's own figures."""
    if run.kind not in (TestKind.PERFORMANCE, TestKind.STRESS) or not run.overall_result:
        return
    evidence = RunEvidence(
        run=run, server=run.machine, target_iops=run.sizing.target_iops, target_source="report"
    )
    # Judge the figures, not Jetstress's own verdict: leave out the rules that measure it.
    stated = {rule.id for rule in ctx.rules if rule.measure == "reported_result"}
    results = [r for r in evaluate_run(evidence, ctx.rules) if r.rule_id not in stated]
    status = roll_up(results)
    ctx.cover(None, None)
    verdict = run.overall_result.strip().casefold()
    if verdict == "pass" and status is Status.FAIL:
        failed = next(r for r in results if r.status is Status.FAIL)
        ctx.add(
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
        ctx.add(
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


# The latencies a performance or stress test log states per instance, and the Transactional
# table's column each is ("Instance2756.1 has 18.4 for I/O Database Reads Average Latency").
_LOG_LATENCIES = {
    "I/O Database Reads Average Latency": DB_READ_LATENCY,
    "I/O Log Writes Average Latency": LOG_WRITE_LATENCY,
}
_LOG_HALF_UNIT = 0.05  # the log prints one decimal, rounded


def log_latencies(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.log_latency: each instance's latency in the Transactional table against the one its
    test log states. Only for performance and stress tests: a soft-recovery log's figures are
    those of the performance phase before the recovery its tables measure."""
    log, table = run.test_log, run.tables.get(TableKind.TRANSACTIONAL)
    if log is None or table is None or run.kind not in (TestKind.PERFORMANCE, TestKind.STRESS):
        return
    transactional = TableKind.TRANSACTIONAL.value
    for instance, counters in log.instance_latencies.items():
        row = table.row(instance)
        if row is None:
            continue
        for counter, key in _LOG_LATENCIES.items():
            stated, value = counters.get(counter), row.values.get(key)
            if stated is None or value is None:
                continue
            printed = report.cells.get(("instance", transactional, instance, key)) or DocNumber(
                value, 3, f"{value:.3f}"
            )
            ctx.relation(
                "appendix.log_latency",
                printed,
                Iv.of(stated, _LOG_HALF_UNIT),
                what=f"{run.machine} {run.kind.value}: {instance} {counter} in the Transactional table",
                derivation=f"the test log states {stated:g} ms for {instance} (one decimal, rounded)",
                section=f"Appendix: {report.title}",
                table="Transactional I/O Performance",
                row=instance,
                column=key,
                line=report.first_line,
            )


def jetstress_log(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.log_thresholds, appendix.samples: the test log's latency thresholds against the test
    kind; samples queried against collection window / logging interval."""
    where = {"section": f"Appendix: {report.title}", "line": report.first_line}
    log = run.test_log
    if log is None:
        return
    maximum = log.thresholds.db_read_max_ms
    expected = {TestKind.PERFORMANCE: 100.0, TestKind.STRESS: 200.0}.get(run.kind)
    if maximum is not None and expected is not None:
        ctx.cover(None, None)
        if maximum != expected:
            ctx.add(
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
            ctx.cover(None, None)
            expected_samples = seconds / interval
            if abs(queried - expected_samples) > max(3, 0.02 * expected_samples):
                ctx.add(
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


_UNIT_MB = {"KB": 1 / 1024, "MB": 1.0, "GB": 1024.0}


def _megabytes(figure: str, unit: str) -> Iv:
    """A cache size the log prints with one decimal of its unit ("1.2 GB" for 1,280 MB: the
    log's figure may be cut, not rounded), in MB."""
    value = float(figure)
    return Iv(value - 0.05, value + 0.1).scale(_UNIT_MB[unit])


def log_settings(ctx: Context, run: Run, report: m.PublishedReport) -> None:
    """appendix.log_settings: the test log's cache settings and operation mix against the
    report's System Parameters, the cache prerequisite attained and its bound against the
    maximum cache, the mix adding up (``jetstress.toml`` [log])."""
    log = run.test_log
    if log is None:
        return
    rules = jetstress.settings()["log"]
    where: dict[str, object] = {
        "section": f"Appendix: {report.title}",
        "table": "Test log",
        "line": report.first_line,
    }
    problems: list[tuple[str, str, str]] = []  # (what, printed, expected)
    max_cache: Iv | None = None
    for entry in log.entries:
        if cache := re.search(rules["cache"], entry.message):
            for bound in ("min", "max"):
                logged = _megabytes(cache[bound], cache[f"{bound}_unit"])
                max_cache = logged if bound == "max" else max_cache
                stated = run.parameters.get(rules[f"{bound}_cache"], "")
                figure = re.match(r"\s*([\d.]+)\s*([KMG]B)", stated)
                if figure is None:
                    continue
                ctx.cover(None, None)
                parameter = _megabytes(figure[1], figure[2])
                if not logged.meets(parameter):
                    problems.append(
                        (
                            f"the log's {bound}imum database cache",
                            f"{cache[bound]} {cache[bound + '_unit']}",
                            stated,
                        )
                    )
        elif prerequisite := re.search(rules["prerequisite"], entry.message):
            last, lower = float(prerequisite["last"]), float(prerequisite["bound"])
            ctx.cover(None, None)
            if last < lower:
                problems.append(
                    ("the database cache size attained", f"{last:,.0f}", f"at least {lower:,.0f}")
                )
            if max_cache is not None:
                ctx.cover(None, None)
                digits = 10.0 ** (math.floor(math.log10(lower)) + 1 - int(rules["bound_digits"]))
                preload = max_cache.scale(2**20 * float(rules["preload_share"])).widen(digits)
                if not Iv(lower, lower).meets(preload):
                    problems.append(
                        (
                            "the cache prerequisite's lower bound",
                            f"{lower:,.0f}",
                            f"{rules['preload_share']} x the maximum cache ({preload.mid:,.0f})",
                        )
                    )
        elif mix := re.search(rules["mix"], entry.message):
            shares = {name: float(mix[name]) for name in rules["operations"]}
            ctx.cover(None, None)
            if sum(shares.values()) != float(rules["mix_total"]):
                problems.append(("the operation mix", f"{sum(shares.values()):g}%", f"{rules['mix_total']}%"))
            for name, label in rules["operations"].items():
                share = run.parameters.get(label, "").strip().rstrip("%")
                if not share.replace(".", "", 1).isdigit():
                    continue
                ctx.cover(None, None)
                if float(share) != shares[name]:
                    problems.append((f"the log's {label}", f"{shares[name]:g}%", f"{share}%"))
    for what, printed, expected in problems:
        ctx.add(
            ERROR,
            "appendix.log_settings",
            f"{run.machine} {run.kind.value}: {what} is {printed}, the report's own figures give {expected}",
            printed=printed,
            expected=expected,
            derivation="Jetstress test log settings (audit/jetstress.toml [log])",
            **where,
        )
