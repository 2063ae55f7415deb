"""Per-server tables: each server's achieved (or transfers) = reads + writes, the slip located by the
appendix, then by the aggregate; each server's figures against its own appendix report, with the
document's convention (transactional or total reads, facts §9) detected and stated; each server's
figures against the targets its row prints, or the pass thresholds (servers without an appendix
report too)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from esrp_report import model as m
from esrp_report.analysis import aggregate as agg
from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import Rule, may_hold
from esrp_report.audit.context import Column, Context, Term, heads, run_for
from esrp_report.audit.findings import fmt, relative, weighed
from esrp_report.audit.intervals import sum_of, summed_half, worst_half
from esrp_report.audit.result import RecomputedRow
from esrp_report.model import DocNumber, Generation, Run, TableKind, TestKind
from esrp_report.model.findings import ERROR, NOTE, WARNING


def _rate_half(ctx: Context) -> float:
    """A per-server rate may be the sum of its instances' printed figures."""
    return summed_half(ctx.databases.value if ctx.databases else 1)


def _rate_worst(ctx: Context) -> float:
    """The hard bound of ``_rate_half``: every instance's figure rounded the same way."""
    return worst_half(ctx.databases.value if ctx.databases else 1)


def achieved_sums(ctx: Context, test: TestKind, columns: list[Column]) -> None:
    """server.achieved_sum: achieved (or transfers) = reads + writes, per server; a slip found is
    kept in its column's ``corrected`` for the aggregate."""
    half = _rate_half(ctx)
    for col in columns:
        reads, writes = col.values.get("reads"), col.values.get("writes")
        total = col.values.get("achieved") or col.values.get("transfers")
        key = "achieved" if col.values.get("achieved") else "transfers"
        if reads is None or writes is None or total is None:
            continue
        expected = Iv.of(reads).widen(half) + Iv.of(writes).widen(half)
        # Each of the two rates may be a sum of its instances' rounded figures: all of them off
        # the same way is improbable, not impossible, so a miss inside that is no proof.
        worst = Iv.of(reads).widen(_rate_worst(ctx)) + Iv.of(writes).widen(_rate_worst(ctx))
        if Iv.of(total).meets(expected):
            ctx.cover(total, worst, (reads, writes), "server.achieved_sum").excess = 0.0
            continue
        if Iv.of(total).meets(worst):
            # Improbable: blame may count it as a hint where an error elsewhere needs one.
            record = ctx.cover(total, expected, (reads, writes), "server.achieved_sum")
            miss = abs(total.value - expected.mid)
            record.findings.append(
                ctx.add(
                    WARNING,
                    "server.achieved_sum",
                    f"{col.name} ({test.value}): {col.labels.get(key, key)} {total.text} against reads "
                    f"{reads.text} + writes {writes.text} = {fmt(expected.mid)}: "
                    + weighed(
                        miss, (expected.hi - expected.lo) / 2, "", why="the usual rounding drift allows"
                    )
                    + f", but inside the worst case of the printed rounding "
                    f"(±{fmt((worst.hi - worst.lo) / 2, 4)}): improbable, not proven",
                    section="Test results summary",
                    table=f"Individual server metrics ({test.value})",
                    row=col.labels.get(key, key),
                    column=col.name,
                    line=col.lines.get(key),
                    printed=total.text,
                    expected=fmt(expected.mid),
                    derivation=f"{key} = reads/sec + writes/sec",
                )
            )
            continue
        record = ctx.cover(total, expected, (reads, writes), "server.achieved_sum")
        # Which of the three is the slip? The appendix, then the aggregate, decide.
        culprit = _culprit(ctx, test, col, total=total, reads=reads, writes=writes, key=key)
        # The appendix or the aggregate decided; else the cell the failed relations share does.
        record.blamed = culprit != key
        if culprit == "reads":
            value = Iv.of(total) - Iv.of(writes).widen(half)
            printed, metric = reads, "reads"
        elif culprit == "writes":
            value = Iv.of(total) - Iv.of(reads).widen(half)
            printed, metric = writes, "writes"
        else:
            value, printed, metric = expected, total, key
        col.corrected[metric] = value
        record.excess = max(record.excess, 1e-12)
        finding = ctx.add(
            ERROR,
            "server.achieved_sum",
            f"{col.name} ({test.value}): {col.labels.get(metric, metric)} printed {printed.text}; "
            f"{col.labels.get(key, key)} {total.text} = reads {reads.text} + writes {writes.text} "
            f"gives {fmt(value.mid)}",
            section="Test results summary",
            table=f"Individual server metrics ({test.value})",
            row=col.labels.get(metric, metric),
            column=col.name,
            line=col.lines.get(metric),
            printed=printed.text,
            expected=fmt(value.mid),
            derivation=f"{key} = reads/sec + writes/sec",
            relative_difference=relative(printed.value, value.mid),
        )
        record.findings.append(finding)


def _culprit(
    ctx: Context,
    test: TestKind,
    col: Column,
    *,
    total: DocNumber,
    reads: DocNumber,
    writes: DocNumber,
    key: str,
) -> str:
    run = run_for(ctx, test, col)
    tables = [run.tables[k] for k in (TableKind.TRANSACTIONAL, TableKind.TOTAL) if run and k in run.tables]
    if tables:
        # The convention is not known yet: a figure is the slip when it is neither sum.
        every = [agg.figures_from_table(table) for table in tables]
        n = summed_half(every[0].instances)
        for name, printed in (("reads", reads), ("writes", writes)):
            sums = [getattr(f, name) for f in every if getattr(f, name) is not None]
            if sums and not any(Iv.of(printed).meets(Iv.of(value, n)) for value in sums):
                return name
    aggregate = _aggregate_row(ctx, test, "reads")
    if aggregate is not None:
        others = [
            c.corrected.get("reads") or Iv.of(c.values["reads"])  # type: ignore[arg-type]
            for c in ctx.columns[test]
            if c is not col and c.values.get("reads")
        ]
        candidate = sum_of(others) + (Iv.of(total) - Iv.of(writes).widen(_rate_half(ctx)))
        if Iv.of(aggregate).meets(candidate.widen(_rate_half(ctx))):
            return "reads"
    return key


def _aggregate_row(ctx: Context, test: TestKind, key: str) -> DocNumber | None:
    for table in ctx.doc.summary_tables:
        if table.kind == "aggregate" and table.test is test:
            for row in table.rows:
                if row.key == key and row.values and row.values[-1] is not None:
                    return row.values[-1]
    return None


def against_appendix(ctx: Context, test: TestKind, columns: list[Column]) -> None:
    """server.appendix: each per-server figure against the sum or mean of its appendix report's
    per-instance table (and the recomputed rows of --recompute)."""
    for col in columns:
        run = run_for(ctx, test, col)
        if run is None:
            continue
        if run.machine.casefold() not in col.name.casefold():
            ctx.add(
                NOTE,
                "appendix.match",
                f"the appendix's {test.value} report of {run.machine} is taken as {col.name}: "
                + (
                    "the report is headed so"
                    if heads(ctx, run, col.name)
                    else "its achieved IOPS matches that column only"
                ),
                column=col.name,
            )
        convention = _convention(ctx, run, col)
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
        kind = agg.CONVENTIONS[convention].value
        for key, (value, count) in expected.items():
            printed = col.values.get(key)
            ctx.result.recomputed.append(
                RecomputedRow(
                    test.value, col.name, key, printed.text if printed else None, value, run.machine
                )
            )
            if printed is None or value is None:
                continue
            ctx.relation(
                "server.appendix",
                printed,
                Iv.of(value, summed_half(count)),
                worst=Iv.of(value, worst_half(count)),
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
                terms=_instance_terms(ctx, run, kind, key, n),
            )


# The per-instance fields a per-server figure is the sum (or, for latencies, the mean) of.
_INSTANCE_FIELDS = {
    "reads": (m.DB_READS,),
    "writes": (m.DB_WRITES,),
    "transfers": (m.DB_READS, m.DB_WRITES),
    "log_writes": (m.LOG_WRITES,),
    "read_latency": (m.DB_READ_LATENCY,),
    "write_latency": (m.DB_WRITE_LATENCY,),
    "log_latency": (m.LOG_WRITE_LATENCY,),
}


def _instance_terms(ctx: Context, run: Run, kind: str, key: str, instances: int) -> list[Term]:
    if key == "achieved":
        return [ctx.cell(run, "sizing", "achieved_iops")]
    fields = _INSTANCE_FIELDS.get(key, ())
    return ctx.column_cells(run, kind, fields, 1 / max(instances, 1) if "latency" in key else 1.0)


def _convention(ctx: Context, run: Run, col: Column) -> str:
    """Which sum a per-server table follows (facts §9): transactional or total reads."""
    printed = col.values.get("reads")
    choice = "transactional"
    if printed is not None and TableKind.TOTAL in run.tables:
        trans = agg.figures_from_table(run.tables.get(TableKind.TRANSACTIONAL) or run.tables[TableKind.TOTAL])
        total = agg.figures_from_table(run.tables[TableKind.TOTAL])
        if (
            total.reads is not None
            and trans.reads is not None
            and abs(printed.value - total.reads) < abs(printed.value - trans.reads)
        ):
            choice = "total"
    if ctx.result.summary_convention is None:
        ctx.result.summary_convention = choice
        ctx.add(
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


# A latency target printed in a row ("< 20 msec", "<10 msec**", "<= 12.25 ms"), and the rule measure
# that is its pass criterion where the row prints none (a per-server mean beyond an instance rule's
# threshold means some instance is beyond it). Write latency is no pass criterion.
_LATENCY_TARGET = re.compile(r"(<\s*=?)\s*(\d+(?:\.\d+)?)\s*(?:msec|ms)\b", re.IGNORECASE)
_PASS_MEASURES = {"read_latency": "db_read_latency_avg", "log_latency": "log_write_latency_avg"}
_RELATIONS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least"}


@dataclass(frozen=True)
class _Bound:
    """What a row's figures are held to: the operator and limit (a rule's own, or as the row prints
    them), where that is said, and the printed target cell (None for a latency)."""

    operator: str
    limit: float
    said: str
    target: DocNumber | None = None


def against_targets(ctx: Context, test: TestKind) -> None:
    """server.target: each server's achieved IOPS at least the target its row prints; its database
    read and log write latency within the target its row prints (with the operator printed), else
    within the pass threshold of the rules (asked of the rule: its operator, its generation's
    limit). An ESRP document publishes passing tests only: a figure beyond is a contradiction,
    whether or not the server's appendix report is printed."""
    for table in ctx.doc.summary_tables:
        if table.kind != "server" or table.test is not test:
            continue
        for row in table.rows:
            bound = _target(ctx, test, row)
            if bound is None:
                continue
            for column, value in zip(table.columns, row.values, strict=False):
                if value is None:
                    continue
                record = ctx.cover(None, None, [(value, 0.0), (bound.target, 0.0)], "server.target")
                if may_hold(bound.operator, value.value, value.half_unit, bound.limit):
                    continue
                record.excess, record.blamed = 1e-12, True
                relation = _RELATIONS[bound.operator]
                finding = ctx.add(
                    ERROR,
                    "server.target",
                    f"{column} {row.label} ({test.value}) is {value.text}, not {relation} {bound.said}: the "
                    "document publishes passing tests only",
                    section="Test results summary",
                    table=f"Individual server metrics ({test.value})",
                    row=row.label,
                    column=column,
                    line=value.line if value.placed else row.line,
                    printed=value.text,
                    expected=f"{relation} {bound.limit:g}",
                    derivation=f"{row.label} {relation} {bound.said}",
                )
                record.findings.append(finding)


def _target(ctx: Context, test: TestKind, row: m.SummaryRow) -> _Bound | None:
    """What a row's figures are held to, or None."""
    if row.key in ("achieved", "transfers") and row.target is not None:
        return _Bound(">=", row.target.value, f"the target {row.target.text} its row prints", row.target)
    if row.key not in _PASS_MEASURES:
        return None
    printed = _printed_target(ctx, row)
    if printed is not None:
        operator, limit = printed
        return _Bound(operator, limit, f"the target {operator} {limit:g} ms its row prints")
    found = _pass_rule(ctx, test, _PASS_MEASURES[row.key])
    if found is None:
        return None
    rule, threshold = found
    return _Bound(
        rule.operator, threshold, f"the pass threshold {rule.operator} {threshold:g} ms (rule {rule.id})"
    )


def _printed_target(ctx: Context, row: m.SummaryRow) -> tuple[str, float] | None:
    """The one latency target a row prints (operator, limit), or None."""
    printed = _LATENCY_TARGET.findall(_target_text(ctx, row))
    if len(printed) != 1:
        return None
    return re.sub(r"\s", "", printed[0][0]), float(printed[0][1])


def _pass_rule(ctx: Context, test: TestKind, measure: str) -> tuple[Rule, float] | None:
    """The rule that judges a measure for this test, and its limit for the document's Jetstress
    generation (unknown unless every run of the test names the same one)."""
    generations = {run.generation for run in ctx.runs if run.kind is test}
    generation = generations.pop() if len(generations) == 1 else Generation.UNKNOWN
    for rule in ctx.rules:
        threshold = rule.limit(test, generation)
        if rule.measure == measure and threshold is not None:
            return rule, threshold
    return None


def _target_text(ctx: Context, row: m.SummaryRow) -> str:
    """The row's label and the cell before its first figure (where a target is printed). A row of
    a table flattened onto one line has its target in its label ("... (msec) < 20 msec")."""
    first = next((v for v in row.values if v is not None and v.placed), None)
    line = ctx.lines_by_number.get(row.line)
    if first is None or line is None or _LATENCY_TARGET.search(row.label):
        return row.label
    cells = line.cells or []
    if 0 < first.column < len(cells) and cells[first.column] == first.text:
        return f"{row.label} {cells[first.column - 1]}"
    return row.label


def printed_targets(ctx: Context, test: TestKind) -> None:
    """server.target_text: a latency target a summary row prints ("< 20 msec" beside log write
    latency) is the pass threshold the rules hold that measure to, for the document's Jetstress
    generation. A document that prints another limit states a criterion ESRP does not apply, and
    its figures are then held to the printed one by ``against_targets``: both are said. Rows whose
    measure no rule judges (write latency, "< 20 msec**" as general advice) are left alone."""
    for table in ctx.doc.summary_tables:
        if table.kind not in ("server", "aggregate") or table.test is not test:
            continue
        for row in table.rows:
            measure = _PASS_MEASURES.get(row.key)
            printed = _printed_target(ctx, row) if measure else None
            found = _pass_rule(ctx, test, measure) if measure and printed else None
            if printed is None or found is None:
                continue
            (operator, limit), (rule, threshold) = printed, found
            ctx.result.checked += 1
            name = "Individual server" if table.kind == "server" else "Aggregate"
            if math.isclose(limit, threshold) and operator == rule.operator:
                continue
            ctx.add(
                ERROR if not math.isclose(limit, threshold) else WARNING,
                "server.target_text",
                f"{row.label} ({test.value}): the target printed is {operator} {limit:g} ms, but the pass "
                f"threshold is {rule.operator} {threshold:g} ms (rule {rule.id})",
                section="Test results summary",
                table=f"{name} metrics ({test.value})",
                row=row.label,
                line=row.line,
                printed=f"{operator} {limit:g} msec",
                expected=f"{rule.operator} {threshold:g} msec",
            )
