"""Worked formulas (004 §6.3), checked by ``esrp_report.analysis.formulas``."""

from __future__ import annotations

from esrp_report.analysis import formulas as fx
from esrp_report.audit.context import Context


def worked_formulas(ctx: Context) -> None:
    """formula.*: each worked formula's arithmetic, units and substitutions."""
    for finding in fx.check_formulas(ctx.doc.formulas, ctx.doc.all_facts):
        ctx.cover(None, None)
        ctx.result.findings.append(finding)
