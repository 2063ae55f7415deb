"""The simulated configuration and storage facts against each other and the summary and reports."""

from __future__ import annotations

import re

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, fact_number
from esrp_report.audit.findings import fmt
from esrp_report.model.findings import ERROR


def facts(ctx: Context) -> None:
    """config.mailboxes: mailboxes per database x databases per host = mailboxes per server;
    config.target: target IOPS = mailboxes per server x IOPS per mailbox; config.memory: the host
    server's stated RAM against the reports' Available MBytes."""
    per_db = fact_number(ctx.doc, "mailboxes_per_database")
    per_server = fact_number(ctx.doc, "mailboxes_per_server")
    if per_db and per_server and ctx.databases:
        line = ctx.doc.facts["mailboxes_per_server"][1]
        ctx.relation(
            "config.mailboxes",
            per_server,
            Iv.of(per_db) * Iv.of(ctx.databases),
            what="active mailboxes per server",
            derivation=f"mailboxes per database {per_db.text} x databases per host {ctx.databases.text}",
            section="Simulated Exchange configuration",
            line=line,
        )
    iops = fact_number(ctx.doc, "iops_per_mailbox")
    if iops and per_server:
        for table in ctx.doc.summary_tables:
            for row in table.rows:
                if table.kind == "server" and row.key in ("achieved", "transfers") and row.target is not None:
                    ctx.relation(
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
    host = ctx.doc.facts.get("host_server")
    memory = re.search(r"(\d[\d,.]*)\s*(MB|GB|TB)\s*(?:of\s+)?RAM", host[0], re.IGNORECASE) if host else None
    if host and memory:
        factor = {"mb": 1, "gb": 1024, "tb": 1024 * 1024}[memory.group(2).casefold()]
        ram_mb = float(memory.group(1).replace(",", "")) * factor
        available = [
            (c.average, r.machine)
            for r in ctx.runs
            for c in r.host
            if c.name.casefold() == "available mbytes"
        ]
        over = [(a, machine) for a, machine in available if a is not None and a > ram_mb]
        if over:
            ctx.result.checked += 1
            a, machine = max(over)
            ctx.add(
                ERROR,
                "config.memory",
                f"the host server has {memory.group(0)} by the hardware table, "
                f"but {machine}'s reports show "
                f"{fmt(a)} MB available on average",
                section="Storage hardware",
                row="Host server type",
                line=host[1],
                printed=memory.group(0),
                expected=f"more than {fmt(a, 0)} MB",
                derivation="Available MBytes (host system performance) cannot exceed installed memory",
            )
