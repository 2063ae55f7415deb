"""Findings as the audit reports them: one per printed cell, errors first, then by line; the
figures they show."""

from __future__ import annotations

import math

from esrp_report.model.findings import ERROR, NOTE, WARNING, Finding


def relative(printed: float, expected: float) -> float | None:
    """How far the printed figure is from the expected one, relative to it (None when both are 0)."""
    if expected == 0:
        return None if printed == 0 else math.inf
    return (printed - expected) / abs(expected)


def fmt(value: float, decimals: int = 3) -> str:
    """A figure as a finding shows it: thousands separated, ``decimals`` places."""
    return f"{value:,.{decimals}f}"


def merged(findings: list[Finding]) -> list[Finding]:
    """One finding per printed cell: a slip that two relations expose is reported once, with
    both derivations."""
    kept: dict[tuple[object, ...], Finding] = {}
    out: list[Finding] = []
    for f in findings:
        key = (f.severity, f.line, f.column, f.printed) if f.line and f.printed else (id(f),)
        first = kept.get(key)
        if first is None:
            kept[key] = f
            out.append(f)
        elif f.derivation and f.derivation not in (first.derivation or ""):
            first.derivation = f"{first.derivation}; also {f.message}" if first.derivation else f.message
    return out


def ordered(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes; each by line."""
    findings.sort(key=lambda f: ({ERROR: 0, WARNING: 1, NOTE: 2}[f.severity], f.line or 0))
    return findings
