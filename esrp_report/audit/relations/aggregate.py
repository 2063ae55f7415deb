"""The aggregate table ("Values across all servers") against the per-server tables."""

from __future__ import annotations

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Column, Context
from esrp_report.audit.intervals import iv_or_none, sum_of
from esrp_report.model import TestKind
from esrp_report.model.findings import WARNING


def against_servers(ctx: Context, test: TestKind, columns: list[Column]) -> None:
    """aggregate.servers: rates = sum over servers, latencies = mean of servers (a server's slip
    replaced by what its own row implies); aggregate.target = servers x per-server target."""
    tables = [t for t in ctx.doc.summary_tables if t.kind == "aggregate" and t.test is test]
    if tables and ctx.doc.unread_summary_rows:
        ctx.add(
            WARNING,
            "aggregate.skipped",
            f"the aggregate table ({test.value}) is not checked: "
            f"{ctx.doc.unread_summary_rows} per-server row(s) could not be read, so the servers' sums "
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
            parts = [c.corrected.get(row.key) or iv_or_none(c.values.get(row.key)) for c in columns]
            if not parts or any(p is None for p in parts):
                continue
            known = [p for p in parts if p is not None]
            is_rate = row.key in ("achieved", "transfers", "reads", "writes", "log_writes")
            expected = sum_of(known) if is_rate else sum_of(known).scale(1 / len(known))
            corrected = [c.name for c in columns if row.key in c.corrected]
            share = 1.0 if is_rate else 1 / len(known)
            terms = [(c.values.get(row.key), share) for c in columns if row.key not in c.corrected]
            how = "sum over servers" if is_rate else "mean of the servers"
            if corrected:
                how += f" (with {', '.join(corrected)} as their own rows imply)"
            ctx.relation(
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
                terms=terms,
            )
            if row.target is not None and row.key == "achieved":
                targets = [
                    r.target
                    for t in ctx.doc.summary_tables
                    if t.kind == "server" and t.test is test
                    for r in t.rows
                    if r.key == "achieved" and r.target
                ]
                if targets:
                    per_server = targets[0]
                    ctx.relation(
                        "aggregate.target",
                        row.target,
                        Iv.of(per_server).scale(len(columns)),
                        what="aggregate target",
                        derivation=f"{len(columns)} servers x {per_server.text}",
                        table="Aggregate performance across all servers",
                        row=row.label,
                        column="Target values",
                        line=row.line,
                        terms=[(per_server, len(columns))],
                    )
