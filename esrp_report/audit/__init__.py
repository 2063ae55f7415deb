"""Audit a published ESRP document against itself and against the rules (pure, no I/O).

Every relation a careful reader would check with a calculator: per-server sums, the aggregate
across servers, each server against its own appendix report, the appendix tables against each
other, host Min <= Avg <= Max, targets, backup and replay rates, trend percentages against their
bracketed values, worked formulas. Printed figures are intervals: a value printed with n
decimals stands for anything that rounds to it, and a figure summed from N printed figures
carries N such half-units. A relation fails only when no choice inside those intervals
satisfies it — so rounding alone never raises a finding.

This module only runs the relation groups in order; where each part lives:

- ``result.py``: ``AuditResult``, ``RecomputedRow``; ``findings.py``: one finding per printed
  cell, their order; ``intervals.py``: the tolerances (``summed_half``);
- ``context.py``: what every group is handed (``Context``: the document, the rules, the result
  being filled, each server's column, the appendix's runs);
- ``relations/``: the relations by kind of table: ``servers``, ``aggregate``, ``backup``,
  ``config``, ``appendix``, ``trends``, ``sizing``, ``formulas``;
- ``status.py``: what the verdict rests on (structures recognised, results read).
"""

from __future__ import annotations

from esrp_report.analysis.intervals import Iv
from esrp_report.analysis.rules import Rule
from esrp_report.audit.blame import blame
from esrp_report.audit.context import Context, build_context
from esrp_report.audit.coverage import coverage, guards
from esrp_report.audit.findings import merged, ordered
from esrp_report.audit.intervals import INSTANCE_HALF_UNIT, summed_half
from esrp_report.audit.promises import missing_promises
from esrp_report.audit.relations import (
    aggregate,
    appendix,
    backup,
    config,
    formulas,
    prose,
    servers,
    sizing,
    trends,
)
from esrp_report.audit.result import AuditResult, RecomputedRow
from esrp_report.audit.status import recognised, results_read
from esrp_report.model import PublishedDocument, TestKind
from esrp_report.model.findings import ERROR, NOTE, WARNING, Finding

__all__ = [
    "ERROR",
    "INSTANCE_HALF_UNIT",
    "NOTE",
    "WARNING",
    "AuditResult",
    "Finding",
    "Iv",
    "RecomputedRow",
    "audit",
    "summed_half",
]

# The relations of one appendix report, in the order they are checked.
_REPORT_RELATIONS = (
    appendix.achieved_iops,
    appendix.total_table,
    appendix.read_size,
    appendix.host_range,
    backup.backup_rows,
    backup.checksum,
    appendix.verdict,
    appendix.jetstress_log,
    appendix.log_latencies,
    appendix.log_settings,
)


def audit(doc: PublishedDocument, rules: list[Rule]) -> AuditResult:
    """Check a published document against itself and against the rules; findings are sorted errors first, then
    by line. Problems reading the document (other than notes) are carried as unread."""
    result = AuditResult(doc.source, doc.format, doc.convention)
    result.unread = [p for p in doc.problems if p.severity != NOTE]
    result.lines_read = len(doc.lines)
    result.recognised = recognised(doc)
    ctx = build_context(doc, rules, result)
    _relations(ctx)
    blame(ctx.evaluated)
    result.guards = guards(ctx.evaluated)
    result.coverage = coverage(doc, result.guards)
    result.coverage.missing = missing_promises(doc, result.coverage.numbers)
    result.results_read = results_read(ctx)
    result.findings = ordered(merged(result.findings))
    return result


def _relations(ctx: Context) -> None:
    """Every relation group, in an order that matters: a per-server slip found by
    ``servers.achieved_sums`` is what ``aggregate`` then sums, and the convention the first
    column shows (``servers.against_appendix``) is the one the document is said to follow."""
    for test in (TestKind.PERFORMANCE, TestKind.STRESS):
        columns = ctx.columns[test]
        if columns:
            servers.achieved_sums(ctx, test, columns)
            servers.against_appendix(ctx, test, columns)
            servers.against_targets(ctx, test)
            aggregate.against_servers(ctx, test, columns)
        servers.printed_targets(ctx, test)
    backup.summaries(ctx)
    config.facts(ctx)
    config.tested(ctx)
    prose.users_across_servers(ctx)
    prose.restated(ctx)
    for report in ctx.doc.reports:
        if report.run is not None:
            for relations in _REPORT_RELATIONS:
                relations(ctx, report.run, report)
    trends.percentages(ctx)
    trends.series(ctx)
    sizing.products(ctx)
    formulas.worked_formulas(ctx)
    if not (ctx.columns[TestKind.PERFORMANCE] or ctx.doc.trend_tables or ctx.doc.formulas or ctx.runs):
        ctx.add(NOTE, "read", "nothing checkable was found in this document")
