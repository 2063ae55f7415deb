"""The simulated configuration and storage facts against each other and the summary and reports."""

from __future__ import annotations

import re

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, fact_number
from esrp_report.audit.findings import fmt
from esrp_report.model import DocNumber, TestKind
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


# --- the tested deployment's own figures against each other and the results -------------------

_CAPACITY = re.compile(r"^\s*([\d,]*\.?\d+)\s*(MB|GB|TB|PB)\b", re.IGNORECASE)
_POWERS = {"mb": 0, "gb": 1, "tb": 2, "pb": 3}
_SECTION = "Simulated Exchange configuration"


def tested(ctx: Context) -> None:
    """config.servers_tested: the number of servers tested = the per-server columns (else the
    servers of the appendix's performance reports); config.target_all: the target per server x
    the servers tested = the target of all tested servers; config.target: the target per server
    the configuration states = its mailboxes per server x the tested IOPS per mailbox;
    config.raw_capacity, config.capacity_utilization, config.formatted_capacity_used: capacities
    against the disks and each other."""
    servers = fact_number(ctx.doc, "servers_tested")
    if servers is not None:
        columns = ctx.columns[TestKind.PERFORMANCE]
        machines = {r.machine.casefold() for r in ctx.runs if r.kind is TestKind.PERFORMANCE and r.machine}
        count, counted = (
            (len(columns), "per-server columns of the performance results")
            if columns
            else (len(machines), "servers of the appendix's performance reports")
        )
        if count:
            ctx.relation(
                "config.servers_tested",
                servers,
                Iv(count, count),
                what="number of servers tested",
                derivation=f"{count} {counted}",
                section=_SECTION,
                row="Number of servers tested",
            )
    per_server = fact_number(ctx.doc, "target_per_server")
    total = fact_number(ctx.doc, "target_all_servers")
    if per_server is not None and total is not None and servers is not None:
        ctx.relation(
            "config.target_all",
            total,
            Iv.of(per_server) * Iv.of(servers, 0.0),  # a count is exact
            what="target transactional IOPS of all tested servers",
            derivation=f"target per server {per_server.text} x {servers.text} servers tested",
            terms=[(per_server, servers.value), (servers, per_server.value)],
            section=_SECTION,
            row="Target transactional IOPS, all tested servers",
        )
    mailboxes = fact_number(ctx.doc, "mailboxes_per_server")
    iops = _tested_iops(ctx)
    fact = ctx.doc.facts.get("iops_per_mailbox")
    if per_server is not None and mailboxes is not None and iops is not None and fact is not None:
        iops = iops.at(fact[1], 1)
        ctx.relation(
            "config.target",
            per_server,
            Iv.of(mailboxes, 0.0) * Iv.of(iops),  # a count is exact
            what="target transactional IOPS per server",
            derivation=f"{mailboxes.text} mailboxes per server x {iops.text} IOPS per mailbox (tested)",
            terms=[(mailboxes, iops.value), (iops, mailboxes.value)],
            section=_SECTION,
            row="Target transactional IOPS per server",
        )
    _capacities(ctx)


def _capacity(ctx: Context, key: str) -> tuple[DocNumber, int] | None:
    """A capacity fact's figure (placed) and its unit's power of a thousand (or 1024) in MB."""
    fact = ctx.doc.facts.get(key)
    found = _CAPACITY.match(fact[0]) if fact else None
    number = DocNumber.parse(found.group(1)) if found else None
    if fact is None or found is None or number is None:
        return None
    return number.at(fact[1], 1), _POWERS[found.group(2).casefold()]


def _capacities(ctx: Context) -> None:
    disks = fact_number(ctx.doc, "disks")
    per_disk = _capacity(ctx, "raw_capacity_per_disk")
    raw = _capacity(ctx, "raw_capacity")
    if disks is not None and per_disk is not None and raw is not None:
        _ratio(
            ctx,
            "config.raw_capacity",
            raw[0],
            (per_disk[0], per_disk[1] - raw[1]),
            None,
            factor=disks,
            what="total raw storage capacity",
            derivation=f"{disks.text} disks x {per_disk[0].text} per disk",
            row="Total raw storage capacity",
        )
    formatted = _capacity(ctx, "formatted_capacity")
    utilization = fact_number(ctx.doc, "capacity_utilization")
    if formatted is not None and raw is not None and utilization is not None:
        _ratio(
            ctx,
            "config.capacity_utilization",
            utilization,
            (formatted[0], formatted[1] - raw[1]),
            raw[0],
            what="storage capacity utilization",
            derivation=f"total formatted capacity {formatted[0].text} / total raw capacity {raw[0].text}",
            row="Storage capacity utilization",
        )
    databases = _capacity(ctx, "database_size_tested")
    used = fact_number(ctx.doc, "formatted_capacity_used")
    formatted = _capacity(ctx, "formatted_capacity_databases") or formatted
    if databases is not None and formatted is not None and used is not None:
        _ratio(
            ctx,
            "config.formatted_capacity_used",
            used,
            (databases[0], databases[1] - formatted[1]),
            formatted[0],
            what="% formatted storage capacity used by Exchange databases",
            derivation=(
                f"total database size {databases[0].text} / total formatted capacity {formatted[0].text}"
            ),
            row="% formatted storage capacity used by Exchange databases",
        )


def _ratio(
    ctx: Context,
    check: str,
    printed: DocNumber,
    numerator: tuple[DocNumber, int],
    denominator: DocNumber | None,
    *,
    factor: DocNumber | None = None,
    what: str,
    derivation: str,
    row: str,
) -> None:
    """``printed`` = numerator (x factor) / denominator (x 100 when printed as a percentage), the
    numerator's unit ``power`` steps of a thousand above the denominator's: where the units differ,
    either a thousand or 1,024 a step holds (documents use both), and the closer is reported."""
    number, power = numerator
    value = Iv.of(number)
    if factor is not None:
        value = value * Iv.of(factor, 0.0)  # a count is exact
    if denominator is not None:
        value = value / Iv.of(denominator)
        value = value.scale(100.0)  # a share, printed as a percentage
    bases = (1000.0, 1024.0) if power else (1000.0,)
    options = [value.scale(base**power) for base in bases]
    mine = Iv.of(printed)
    chosen = next(
        (o for o in options if mine.meets(o)), min(options, key=lambda o: abs(o.mid - printed.value))
    )
    # Each term's coefficient: how much what the printed figure should be moves per unit of the
    # term, at the terms as printed (a product is linear in each factor: exact; a quotient in its
    # denominator only near it). Taken at what the terms give, not at the printed figure: where
    # the relation fails, the printed figure is no point on it, and a slip of 7 disks printed as 1
    # is a change of 6 disks only at the product's own slope.
    expected = chosen.mid
    terms: list[tuple[DocNumber | None, float]] = [(number, expected / (number.value or 1.0))]
    if factor is not None:
        terms.append((factor, expected / (factor.value or 1.0)))
    if denominator is not None:
        terms.append((denominator, -expected / (denominator.value or 1.0)))
    ctx.relation(
        check,
        printed,
        chosen,
        what=what,
        derivation=derivation,
        terms=terms,
        section="Tested deployment",
        row=row,
    )
