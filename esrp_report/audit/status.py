"""What the audit's verdict rests on: the structures recognised in the document, and the ESRP
results read (without one, ``AuditResult.nothing_checked``: exit 2, no verdict)."""

from __future__ import annotations

from esrp_report.audit.context import Context
from esrp_report.model import PublishedDocument, TestKind


def recognised(doc: PublishedDocument) -> list[str]:
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


def results_read(ctx: Context) -> list[str]:
    """The ESRP results this audit read (see AuditResult.results_read), counted."""
    read = []
    for test in (TestKind.PERFORMANCE, TestKind.STRESS):
        servers = [c for c in ctx.columns[test] if any(v is not None for v in c.values.values())]
        if servers:
            read.append(f"{test.value} results of {len(servers)} server(s)")
    reports = [r for r in ctx.runs if r.tables]
    if reports:
        read.append(f"{len(reports)} appendix report(s) with I/O tables")
    if ctx.doc.trend_tables:
        read.append(f"{len(ctx.doc.trend_tables)} trend table(s)")
    return read
