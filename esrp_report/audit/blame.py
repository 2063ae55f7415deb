"""Which printed cell of a failed relation is the slip.

A relation that fails names its subject, but the slip may be any cell it was worked out from: a
per-instance figure summed into a server's row, a maintenance read added into the Total table.
For each of its cells the relation says which changes of that cell would mend it. A cell is
cleared when no change of one of its printed digits is among them (a slip is one wrong digit,
not a wrong number), or when a relation that holds would surely break under the smallest of
them (its guard there is smaller). Of the cells left, the slip is the one that alone mends the
most failed relations with one change (their mending changes overlap); the findings of the
relation are then placed at its line and say so. Otherwise the subject stays named and the
cells left are its ``suspects``. Every cell of a failed relation is listed in its findings'
``lines``.
"""

from __future__ import annotations

import math
from collections import defaultdict

from esrp_report.audit.context import Evaluated
from esrp_report.audit.result import CellKey, cell_key
from esrp_report.model import DocNumber
from esrp_report.model.findings import ERROR, WARNING


def blame(evaluated: list[Evaluated]) -> None:
    """Place each failed relation's findings at the cell that is most likely the slip."""
    held_guard: dict[CellKey, float] = defaultdict(lambda: math.inf)
    # For each cell, the changes that would mend each failed relation it is in.
    mends: dict[CellKey, list[tuple[float, float]]] = defaultdict(list)
    failed = [r for r in evaluated if r.findings and any(f.severity == ERROR for f in r.findings)]
    if not failed:
        return
    suspected = {cell_key(n) for record in failed for n, _c in record.cells}
    for record in evaluated:
        if record.excess == 0.0 and not record.findings:
            for number, coefficient in record.cells:
                key = cell_key(number)
                if coefficient and key in suspected:
                    held_guard[key] = min(held_guard[key], record.slack / abs(coefficient))
    # A relation that misses by more than the usual rounding but less than its worst case is a
    # warning, not proof; it still hints which cell an error elsewhere should be placed at.
    improbable = [
        r for r in evaluated if r.excess > 0 and r.findings and all(f.severity == WARNING for f in r.findings)
    ]
    for record in failed + improbable:
        for number, coefficient in record.cells:
            mends[cell_key(number)].append(record.shift(number, coefficient))
    for record in failed:
        lines = tuple(sorted({n.line for n, _c in record.cells}))
        for finding in record.findings:
            finding.lines = tuple(sorted({*finding.lines, *lines}))
        if record.blamed or len(record.cells) < 2:
            continue
        slip, suspects = _slip(record, held_guard, mends)
        if slip is None:
            for finding in record.findings:
                finding.suspects = tuple(sorted({*finding.suspects, *suspects}))
                if len(finding.suspects) == 2:
                    first, second = finding.suspects
                    finding.message += (
                        f"; the slip is the printed figure at line {first} or the one at line {second}: "
                        "nothing else in the document tells which"
                    )
            continue
        for finding in record.findings:
            finding.line = slip.line
            finding.message += (
                f"; the slip is most likely the printed {slip.text} at line {slip.line}, "
                "the one figure whose correction mends this relation without breaking one that holds"
            )


def _slip(
    record: Evaluated,
    held_guard: dict[CellKey, float],
    mends: dict[CellKey, list[tuple[float, float]]],
) -> tuple[DocNumber | None, list[int]]:
    """The one cell of a failed relation that is the likeliest slip, when it is not its subject;
    else None and the lines of the cells that could be."""
    suspects: list[tuple[int, DocNumber]] = []
    for number, coefficient in record.cells:
        key = cell_key(number)
        lo, hi = record.shift(number, coefficient)
        smallest = 0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))
        if held_guard[key] < smallest or not one_digit_mends(number.text, lo, hi):
            continue
        support = sum(1 for a, b in mends[key] if a <= hi and lo <= b)
        suspects.append((support, number))
    if not suspects:
        return None, []
    most = max(support for support, _n in suspects)
    top = [n for support, n in suspects if support == most]
    if len(top) != 1 or top[0] is record.subject:
        return None, sorted({n.line for n in top})
    return top[0], []


def one_digit_mends(text: str, lo: float, hi: float) -> bool:
    """Could a change of one printed digit of ``text`` move it by an amount in [lo, hi]?"""
    if lo == -math.inf or hi == math.inf:
        return True
    for index, place in digit_places(text):
        unit, digit = 10.0**place, int(text[index])
        if any(lo <= (other - digit) * unit <= hi for other in range(10)):
            return True
    return False


def digit_places(text: str) -> list[tuple[int, int]]:
    """Each digit of a printed number: its index in ``text`` and its place (10**place is its
    unit: 0 for units, -1 for tenths), thousands separators skipped."""
    end = len(text.rstrip("%*").rstrip())
    dot = text.find(".", 0, end)
    integer_end = dot if dot >= 0 else end
    out: list[tuple[int, int]] = []
    place = 0
    for index in range(integer_end - 1, -1, -1):
        if text[index].isdigit():
            out.append((index, place))
            place += 1
    if dot >= 0:
        out += [(dot + k, -k) for k in range(1, end - dot) if text[dot + k].isdigit()]
    return out
