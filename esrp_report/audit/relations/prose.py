"""Figures a sentence states together: users = servers x users per server."""

from __future__ import annotations

from esrp_report.analysis.intervals import Iv
from esrp_report.audit.context import Context


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
