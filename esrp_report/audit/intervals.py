"""Printed figures as intervals (``esrp_report.analysis.intervals.Iv``): the tolerances of the
audit's relations.

A value printed with n decimals stands for anything that rounds to it, and a figure summed from N
printed figures carries N such half-units: a relation fails only when no choice inside those
intervals satisfies it, so rounding alone never raises a finding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from esrp_report.analysis.intervals import Iv
from esrp_report.model import DocNumber

INSTANCE_HALF_UNIT = 0.0005  # Jetstress prints per-instance figures with three decimals


def summed_half(n: float, half: float = INSTANCE_HALF_UNIT) -> float:
    """How far a sum of ``n`` figures, each rounded to ``half``, may stray from the exact sum.

    The hard bound is n half-units, but rounding errors are independent and uniform: their sum
    has a standard deviation of half * sqrt(n / 3), and four of those are essentially never
    exceeded. A one-digit slip in a sum of 20 figures (0.010) is therefore caught, while the
    usual drift of a few thousandths is not reported."""
    n = max(n, 1)
    return min(n * half, max(half, 4 * half * math.sqrt(n / 3)))


def worst_half(n: float, half: float = INSTANCE_HALF_UNIT) -> float:
    """The hard bound of ``summed_half``: every one of ``n`` rounded figures off by its whole half
    unit the same way. A relation outside ``summed_half`` but inside this is improbable, not
    impossible, so it is no proof of a slip."""
    return max(n, 1) * half


def sum_of(ivs: Iterable[Iv]) -> Iv:
    """The sum of intervals."""
    lo = hi = 0.0
    for iv in ivs:
        lo += iv.lo
        hi += iv.hi
    return Iv(lo, hi)


def iv_or_none(value: DocNumber | None) -> Iv | None:
    """A printed figure's interval, or None."""
    return None if value is None else Iv.of(value)


def decimals_of(value: float) -> int:
    """The decimals of a value whose printed text was lost, from its shortest repr (only ever
    fewer than printed: a wider interval, never a narrower one)."""
    text = repr(value)
    return len(text.split(".", 1)[1]) if "." in text and not text.endswith(".0") else 0
