"""Interval arithmetic on printed figures.

A figure printed to N decimals stands for any value within half a unit of its last decimal, so a
sum, ratio or product of printed figures is an interval; a printed result is consistent when its
own interval meets the computed one. The audit and the trend checks both judge figures this way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from esrp_report.model import DocNumber


@dataclass(frozen=True)
class Iv:
    """A closed interval [lo, hi] of values: a printed figure stands for anything that rounds to it."""

    lo: float
    hi: float

    @staticmethod
    def of(x: DocNumber | float, half: float | None = None) -> Iv:
        """The interval a printed number stands for (its value plus or minus half its last digit, or ``half``
        when given), or a float plus or minus ``half`` (0 by default)."""
        if isinstance(x, DocNumber):
            h = x.half_unit if half is None else half
            return Iv(x.value - h, x.value + h)
        h = half or 0.0
        return Iv(x - h, x + h)

    @property
    def mid(self) -> float:
        return (self.lo + self.hi) / 2

    def widen(self, h: float) -> Iv:
        """The interval grown by ``h`` on both sides."""
        return Iv(self.lo - h, self.hi + h)

    def __add__(self, o: Iv) -> Iv:
        return Iv(self.lo + o.lo, self.hi + o.hi)

    def __sub__(self, o: Iv) -> Iv:
        return Iv(self.lo - o.hi, self.hi - o.lo)

    def __mul__(self, o: Iv) -> Iv:
        c = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi]
        return Iv(min(c), max(c))

    def __truediv__(self, o: Iv) -> Iv:
        if o.lo <= 0 <= o.hi:
            return Iv(-math.inf, math.inf)
        return self * Iv(1 / o.hi, 1 / o.lo)

    def scale(self, k: float) -> Iv:
        """The interval multiplied by the constant ``k`` (its ends swap when ``k`` is negative)."""
        return Iv(min(self.lo * k, self.hi * k), max(self.lo * k, self.hi * k))

    def meets(self, o: Iv, slack: float = 1e-9) -> bool:
        """Do the two intervals overlap, allowing ``slack`` for float error?"""
        return self.lo <= o.hi + slack and o.lo <= self.hi + slack
