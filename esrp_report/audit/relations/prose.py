"""Figures a sentence states together (users = servers x users per server), and a sentence's
figure that restates a fact of the tables ("supporting 100,000 users" against "Number of Exchange
mailboxes simulated 100,000")."""

from __future__ import annotations

import re

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context, fact_number

# Decimal units, as the ESRP documents print sizes (001: "2000MB mailboxes" for a 2 GB quota).
_UNITS = {"": 1.0, "KB": 1e-3, "MB": 1.0, "GB": 1e3, "TB": 1e6}
_FACT_UNIT = re.compile(r"^\s*[\d,]*\.?\d+\s*(?P<unit>[KMGT]B)\b", re.IGNORECASE)


def users_across_servers(ctx: Context) -> None:
    """prose.users: "N across K servers, with M users per server" states N = K x M."""
    for stated in ctx.doc.prose_users:
        ctx.relation(
            "prose.users",
            stated.total,
            Iv.of(stated.per_server).scale(stated.servers),
            what=f"users stated in a sentence ('{stated.sentence[:90]}')",
            derivation=f"{stated.servers_text} servers x {stated.per_server.text} users per server",
            section="Solution description",
            line=stated.line,
        )


def restated(ctx: Context) -> None:
    """prose.restated: a sentence's figure equals the table fact it restates, each at its printed
    precision, units converted. Holds in 9 of 9 sentences of the published seeds (000, 001, 002;
    ``ingest/documents/vocabulary/prose.toml``)."""
    for stated in ctx.doc.prose_facts:
        fact = ctx.doc.facts.get(stated.fact)
        figure = fact_number(ctx.doc, stated.fact)
        if fact is None or figure is None:
            continue
        unit = _FACT_UNIT.match(fact[0])
        fact_unit = unit.group("unit").upper() if unit else ""
        if bool(fact_unit) != bool(stated.unit):
            continue  # one has a unit, the other not: not the same kind of figure
        scale = _UNITS[fact_unit] / _UNITS[stated.unit]
        # Rounding intervals are half open: a figure printed 2 and one printed 3 cannot both be
        # 2.5 under one rounding rule, so their shared edge is not an agreement.
        edge = 1e-6 * min(stated.figure.half_unit, figure.half_unit * scale)
        mine = Iv.of(stated.figure)
        ctx.relation(
            "prose.restated",
            stated.figure,
            Iv.of(figure).scale(scale).widen(-edge),
            printed_iv=Iv(mine.lo + edge, mine.hi - edge),
            what=f"a sentence restating {stated.fact.replace('_', ' ')} ('{stated.sentence[:90]}')",
            derivation=f"the table's {fact[0].strip()} (line {fact[1]})",
            section="Solution description",
            line=stated.line,
            terms=[(figure, scale)],
        )
