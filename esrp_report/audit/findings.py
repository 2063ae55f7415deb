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


def weighed(
    difference: float,
    allowed: float,
    unit: str,
    *,
    figure: float | None = None,
    why: str = "",
    decimals: int | None = None,
) -> str:
    """A contradiction's size in words, so that a reader tells a slip from a near miss: how far
    apart the figures are, against what ``why`` allows (``allowed``) and, for a large one, against
    the figure itself ("differs by 23,000 s, 92x the 250 s clocks read apart explain, 11x the
    figure itself" against "differs by 2 s, within the 250 s ..."). ``decimals``: the printed
    figure's, when it has them."""
    places = (_places(difference), _places(allowed)) if decimals is None else (decimals, decimals + 1)
    size = f"{fmt(difference, places[0])} {unit}".rstrip()
    bound = f"{fmt(allowed, places[1])} {unit}".rstrip()
    if difference <= allowed:
        return f"differs by {size}, within the {bound} {why}".rstrip()
    times = difference / allowed if allowed > 0 else math.inf
    text = f"differs by {size}, {times:,.0f}x the {bound} {why}".rstrip()
    if times < 10:
        text = f"differs by {size}, {times:,.1f}x the {bound} {why}".rstrip()
    if figure:
        share = difference / abs(figure)
        text += f", {share:,.0f}x the figure itself" if share >= 2 else f", {share:.0%} of the figure"
    return text


def _places(value: float) -> int:
    return 0 if abs(value) >= 10 or value == round(value) else 3


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
