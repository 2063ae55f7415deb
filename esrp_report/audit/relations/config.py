"""The simulated configuration and storage facts against each other and the summary and reports."""

from __future__ import annotations

import re

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, fact_number
from esrp_report.audit.findings import fmt
from esrp_report.model import DocNumber
from esrp_report.model.findings import ERROR


def facts(ctx: Context) -> None:
    """config.mailboxes: mailboxes per database x databases per host = mailboxes per server;
    config.target: target IOPS = mailboxes per server x IOPS per mailbox, in the per-server tables
    and in the appendix reports; config.memory: the host server's stated RAM against the reports'
    Available MBytes."""
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
    _report_targets(ctx, per_server)
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
            ctx.cover(None, None)
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


_TESTED = re.compile(r"(\d*\.\d+|\d+)\s*(?:iops\s*)?tested", re.IGNORECASE)


def _tested_iops(ctx: Context) -> DocNumber | None:
    """The IOPS per mailbox the servers were tested at: the figure marked "tested" when the fact
    states two (".084 (.10 tested)"), else its leading figure (the profile with headroom)."""
    fact = ctx.doc.facts.get("iops_per_mailbox")
    if fact is None:
        return None
    tested = _TESTED.search(fact[0])
    return DocNumber.parse(tested.group(1)) if tested else DocNumber.leading(fact[0])


def _report_targets(ctx: Context, per_server: DocNumber | None) -> None:
    """Each target the appendix's reports state (Jetstress's target = the server's mailboxes x
    the tested IOPS per mailbox) against the configuration's mailboxes per server: a relation
    per distinct target, at the configuration line (the reports agreeing among themselves)."""
    iops = _tested_iops(ctx)
    if per_server is None or iops is None:
        return
    targets = sorted({t for r in ctx.runs if (t := r.sizing.target_iops) is not None})
    for target in targets:
        machines = ", ".join(sorted({r.machine for r in ctx.runs if r.sizing.target_iops == target}))
        printed = DocNumber.parse(f"{target:.0f}" if float(target).is_integer() else repr(target))
        if printed is None:
            continue
        ctx.relation(
            "config.report_target",
            printed,
            Iv.of(per_server) * Iv.of(iops),
            what=f"target transactional IOPS of the appendix reports ({machines})",
            derivation=f"active mailboxes per server {per_server.text} x tested IOPS per mailbox {iops.text}",
            section="Simulated Exchange configuration",
            row="mailboxes per server",
            line=ctx.doc.facts["mailboxes_per_server"][1],
        )
