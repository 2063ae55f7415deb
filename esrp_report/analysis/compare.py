"""Comparing the same figures from two sources (report vs counter log, HTML vs XML).

Pure and at the model's level, so readers, metrics and audits can all use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from esrp_report.model import HostCounter, InstanceTable, TableKind

# Relative difference above which two sources of the same figure are said to disagree.
DISAGREEMENT_TOLERANCE = 0.005


def instance_key(name: str) -> str:
    """Match instance names across sources: perfmon may prefix the process (``JetstressWin/``)."""
    return name.rsplit("/", 1)[-1].strip().casefold()


@dataclass(frozen=True)
class Disagreement:
    """The same figure from two sources, differing by more than the tolerance."""

    table: str
    instance: str
    metric: str
    first_source: str
    first_value: float
    second_source: str
    second_value: float

    @property
    def relative_difference(self) -> float:
        return relative_difference(self.first_value, self.second_value)


def relative_difference(a: float, b: float) -> float:
    """How far apart two figures are, relative to the larger in size: |a - b| / max(|a|, |b|), 0 when both are
    0."""
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf  # a figure that is not finite agrees with no other
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def compare_tables(
    first: dict[TableKind, InstanceTable],
    first_source: str,
    second: dict[TableKind, InstanceTable],
    second_source: str,
    *,
    tolerance: float = DISAGREEMENT_TOLERANCE,
    absolute_tolerance: float = 0.0,
) -> list[Disagreement]:
    """Every figure present in both sources whose relative difference exceeds ``tolerance``
    and whose absolute difference exceeds ``absolute_tolerance``."""
    found: list[Disagreement] = []
    for kind, table in first.items():
        other = second.get(kind)
        if other is None:
            continue
        other_rows = {instance_key(row.instance): row for row in other.rows}
        for row in table.rows:
            match = other_rows.get(instance_key(row.instance))
            if match is None:
                continue
            for metric, value in row.values.items():
                theirs = match.values.get(metric)
                if theirs is None:
                    continue
                if (
                    relative_difference(value, theirs) > tolerance
                    and not abs(value - theirs) <= absolute_tolerance  # NaN differs
                ):
                    found.append(
                        Disagreement(
                            kind.value, row.instance, metric, first_source, value, second_source, theirs
                        )
                    )
    return found


def compare_host(
    first: list[HostCounter],
    first_source: str,
    second: list[HostCounter],
    second_source: str,
    *,
    tolerance: float = DISAGREEMENT_TOLERANCE,
) -> list[Disagreement]:
    """The host counters (matched by name, case-insensitive) whose average, minimum or maximum differ between
    the two sources by more than ``tolerance`` (relative); a figure missing on either side is not compared."""
    theirs = {c.name.casefold(): c for c in second}
    found: list[Disagreement] = []
    for counter in first:
        match = theirs.get(counter.name.casefold())
        if match is None:
            continue
        for stat in ("average", "minimum", "maximum"):
            a, b = getattr(counter, stat), getattr(match, stat)
            if a is not None and b is not None and relative_difference(a, b) > tolerance:
                found.append(Disagreement("host", counter.name, stat, first_source, a, second_source, b))
    return found
