"""Perflib counter types and the published formulas that turn raw values into displayed ones.

A raw sample of a counter is N (its data), D (a time stamp or the value of its base counter),
B (a multi-count or base where a formula needs both a time and a base) and F (ticks per second).
Instantaneous types need one sample; the others compare two samples (index 0 = previous).
The functions here are pure and vectorised: they take NumPy arrays of raw values and return
float64 arrays in which NaN means "no value" (first sample, a raw value that went backwards,
no time elapsed).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

Array = np.ndarray[Any, np.dtype[Any]]


class Second(Enum):
    """Where a counter's second value D comes from."""

    NONE = "none"
    BASE = "base"  # the base definition that follows the counter
    PERF_TIME = "perf_time"  # the data block's high-resolution clock
    TIME_100NS = "time_100ns"  # the data block's 100 ns clock (F = 10,000,000)
    OBJECT_TIME = "object_time"  # the object's own clock


class Formula(Enum):
    """How a counter type turns raw values into the displayed one (N data, D second value, B base, F ticks per
    second; d is the change between two samples)."""

    RAW = "raw"  # N
    FRACTION = "fraction"  # 100 N / D
    ELAPSED = "elapsed"  # (D - N) / F
    RATE = "rate"  # dN / (dD / F)
    TIMER = "timer"  # 100 dN / dD
    TIMER_INV = "timer_inv"  # 100 (1 - dN / dD)
    QUEUE = "queue"  # dN / dD
    AVERAGE_TIMER = "average_timer"  # (dN / F) / dD
    AVERAGE = "average"  # dN / dD, 0 when the base did not move
    SAMPLE_FRACTION = "sample_fraction"  # 100 dN / dD, 0 when the base did not move
    DELTA = "delta"  # dN
    MULTI_TIMER = "multi_timer"  # 100 (dN / dD) / B


@dataclass(frozen=True)
class CounterType:
    """A perflib counter type: its code, name, formula and where its second value comes from; ``base`` marks a
    base definition, ``multi`` one whose B comes from a following multi-base."""

    code: int
    name: str
    formula: Formula
    second: Second
    base: bool = False  # a base definition (not displayed)
    multi: bool = False  # B comes from a following MULTI_BASE


def _t(code: int, name: str, formula: Formula, second: Second = Second.NONE, **kw: bool) -> CounterType:
    return CounterType(code, name, formula, second, **kw)


F, S = Formula, Second
KNOWN: dict[int, CounterType] = {
    t.code: t
    for t in (
        _t(0x00000000, "PERF_COUNTER_RAWCOUNT_HEX", F.RAW),
        _t(0x00000100, "PERF_COUNTER_LARGE_RAWCOUNT_HEX", F.RAW),
        _t(0x00010000, "PERF_COUNTER_RAWCOUNT", F.RAW),
        _t(0x00010100, "PERF_COUNTER_LARGE_RAWCOUNT", F.RAW),
        _t(0x20020400, "PERF_RAW_FRACTION", F.FRACTION, S.BASE),
        _t(0x20020500, "PERF_LARGE_RAW_FRACTION", F.FRACTION, S.BASE),
        _t(0x30240500, "PERF_ELAPSED_TIME", F.ELAPSED, S.OBJECT_TIME),
        _t(0x10410400, "PERF_COUNTER_COUNTER", F.RATE, S.PERF_TIME),
        _t(0x10410500, "PERF_COUNTER_BULK_COUNT", F.RATE, S.PERF_TIME),
        _t(0x00410400, "PERF_SAMPLE_COUNTER", F.RATE, S.PERF_TIME),
        _t(0x20410500, "PERF_COUNTER_TIMER", F.TIMER, S.PERF_TIME),
        _t(0x21410500, "PERF_COUNTER_TIMER_INV", F.TIMER_INV, S.PERF_TIME),
        _t(0x20510500, "PERF_100NSEC_TIMER", F.TIMER, S.TIME_100NS),
        _t(0x21510500, "PERF_100NSEC_TIMER_INV", F.TIMER_INV, S.TIME_100NS),
        _t(0x20610500, "PERF_OBJ_TIME_TIMER", F.TIMER, S.OBJECT_TIME),
        _t(0x20470500, "PERF_PRECISION_SYSTEM_TIMER", F.TIMER, S.BASE),
        _t(0x20570500, "PERF_PRECISION_100NS_TIMER", F.TIMER, S.BASE),
        _t(0x20670500, "PERF_PRECISION_OBJECT_TIMER", F.TIMER, S.BASE),
        _t(0x00450400, "PERF_COUNTER_QUEUELEN_TYPE", F.QUEUE, S.PERF_TIME),
        _t(0x00450500, "PERF_COUNTER_LARGE_QUEUELEN_TYPE", F.QUEUE, S.PERF_TIME),
        _t(0x00550500, "PERF_COUNTER_100NS_QUEUELEN_TYPE", F.QUEUE, S.TIME_100NS),
        _t(0x00650500, "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE", F.QUEUE, S.OBJECT_TIME),
        _t(0x30020400, "PERF_AVERAGE_TIMER", F.AVERAGE_TIMER, S.BASE),
        _t(0x40020500, "PERF_AVERAGE_BULK", F.AVERAGE, S.BASE),
        _t(0x20C20400, "PERF_SAMPLE_FRACTION", F.SAMPLE_FRACTION, S.BASE),
        _t(0x00400400, "PERF_COUNTER_DELTA", F.DELTA),
        _t(0x00400500, "PERF_COUNTER_LARGE_DELTA", F.DELTA),
        _t(0x22410500, "PERF_COUNTER_MULTI_TIMER", F.MULTI_TIMER, S.PERF_TIME, multi=True),
        _t(0x22510500, "PERF_100NSEC_MULTI_TIMER", F.MULTI_TIMER, S.TIME_100NS, multi=True),
        # Bases: never displayed, read as the D (or B) of the counter they follow.
        _t(0x40030401, "PERF_SAMPLE_BASE", F.RAW, base=True),
        _t(0x40030402, "PERF_AVERAGE_BASE", F.RAW, base=True),
        _t(0x40030403, "PERF_RAW_BASE", F.RAW, base=True),
        _t(0x40030500, "PERF_LARGE_RAW_BASE", F.RAW, base=True),  # also PERF_PRECISION_TIMESTAMP
        _t(0x42030500, "PERF_COUNTER_MULTI_BASE", F.RAW, base=True),
    )
}

# Known to exist but not cooked: the formula is disputed (MULTI_TIMER_INV) or there is no number.
NOT_COOKED: dict[int, str] = {
    0x23410500: "PERF_COUNTER_MULTI_TIMER_INV",
    0x23510500: "PERF_100NSEC_MULTI_TIMER_INV",
    0x00000B00: "PERF_COUNTER_TEXT",
    0x40000200: "PERF_COUNTER_NODATA",
    0x80000000: "PERF_COUNTER_HISTOGRAM_TYPE",
}
_NOSHOW = 0x40000000


def type_name(code: int) -> str:
    """The perflib name of a counter type code ("PERF_COUNTER_COUNTER"), or the code in hex ("0x12345678")
    when it is not known."""
    known = KNOWN.get(code)
    if known is not None:
        return known.name
    return NOT_COOKED.get(code, f"0x{code:08X}")


def is_base(code: int) -> bool:
    """Is this counter type a base definition, not displayed itself? Unknown codes are judged by their flag
    bits."""
    known = KNOWN.get(code)
    return (
        known.base if known is not None else (code & 0xF0000C00) == (_NOSHOW | 0x400) and code != 0x40020500
    )


def cook(
    formula: Formula,
    n1: Array,
    *,
    n0: Array | None = None,
    d1: Array | None = None,
    d0: Array | None = None,
    f: Array | float | None = None,
    b1: Array | None = None,
) -> Array:
    """Displayed values from raw int64 values of the current sample (1) and the previous one (0)."""
    two = KNOWN_TWO_SAMPLE[formula]
    dn = n1 - n0 if two and n0 is not None else None
    dd = d1 - d0 if two and d1 is not None and d0 is not None else None
    return cook_deltas(formula, n1=n1, dn=dn, d1=d1, dd=dd, f=f, b1=b1)


def cook_deltas(
    formula: Formula,
    *,
    n1: Array | None = None,
    dn: Array | None = None,
    d1: Array | None = None,
    dd: Array | None = None,
    f: Array | float | None = None,
    b1: Array | None = None,
) -> Array:
    """Displayed values from raw values (one-sample formulas) or their movements (two-sample ones).

    Arguments broadcast: a clock shared by many counters can be a column vector. NaN = no value.
    The operations, and their order, are the ones whose results equal Windows' own cooked values
    bit for bit where a log and its CSV export show them (rates, timers, raw fractions: docs/blg.md);
    the others follow the same pattern (the ratio first, then the factor of 100).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if formula is Formula.RAW:
            assert n1 is not None
            return n1.astype(np.float64)
        if formula is Formula.FRACTION:
            assert n1 is not None and d1 is not None
            return np.where(d1 == 0, 0.0, n1.astype(np.float64) / d1 * 100.0)
        if formula is Formula.ELAPSED:
            assert n1 is not None and d1 is not None and f is not None
            return np.where(np.asarray(f) > 0, (d1 - n1).astype(np.float64) / f, np.nan)
        assert dn is not None
        if formula is Formula.DELTA:
            return np.where(dn >= 0, dn.astype(np.float64), np.nan)
        assert dd is not None
        dnf = dn.astype(np.float64)
        if formula is Formula.RATE:
            assert f is not None
            out = dnf / (dd / np.asarray(f, dtype=np.float64))
        elif formula is Formula.TIMER:
            out = dnf / dd * 100.0
        elif formula is Formula.TIMER_INV:
            out = 100.0 * (1.0 - dnf / dd)
        elif formula is Formula.QUEUE:
            out = dnf / dd
        elif formula is Formula.MULTI_TIMER:
            assert b1 is not None
            out = np.where(b1 > 0, dnf / dd * 100.0 / b1, np.nan)
        else:  # averages and sample fractions: a base that did not move means no events, shown as 0
            if formula is Formula.AVERAGE_TIMER:
                assert f is not None
                out = dnf / np.asarray(f, dtype=np.float64) / dd
            elif formula is Formula.SAMPLE_FRACTION:
                out = dnf / dd * 100.0
            else:
                out = dnf / dd
            # Checked with a reduction first: the masks are rarely needed and cost a pass each.
            if np.min(dd, initial=1) <= 0:
                out[np.broadcast_to(dd == 0, out.shape)] = 0.0
                out[np.broadcast_to(dd < 0, out.shape)] = np.nan
            if np.min(dn, initial=0) < 0:
                out[dn < 0] = np.nan
            return out
        if np.min(dd, initial=1) <= 0:
            out[np.broadcast_to(dd <= 0, out.shape)] = np.nan
        if np.min(dn, initial=0) < 0:
            out[dn < 0] = np.nan
        return out


KNOWN_TWO_SAMPLE = {f: f not in (Formula.RAW, Formula.FRACTION, Formula.ELAPSED) for f in Formula}


# --- exact averages over a window ----------------------------------------------------------------

# Why a window has no exact average (0 = it has one). Codes, not strings: the function is vectorised.
WINDOW_OK = 0
WINDOW_WHY: dict[int, str] = {
    1: "instantaneous type: a first/last average does not exist; the mean of the samples is given",
    2: "type not cooked by this reader",
    3: "no sample of this counter inside the window",
    4: "the instance is absent at the window's first sample",
    5: "the instance is absent at the window's last sample",
    6: "the instance vanished and returned inside the window: a first/last average would span a "
    "counter reset",
    7: "only one sample inside the window",
    8: "a raw value went backwards inside the window (counter reset or wrap)",
    9: "no time elapsed between the window's first and last sample",
    10: "the multi count changed inside the window",
    11: "the multi count is zero",
}
WHY_INSTANTANEOUS, WHY_NOT_COOKED, WHY_NEVER, WHY_ABSENT_FIRST, WHY_ABSENT_LAST = 1, 2, 3, 4, 5
WHY_RESET, WHY_ONE_SAMPLE, WHY_BACKWARDS, WHY_NO_TIME, WHY_MULTI, WHY_MULTI_ZERO = 6, 7, 8, 9, 10, 11


@dataclass(frozen=True)
class RawEnds:
    """Raw values of many counters at one end of a window (int64 arrays of one length).

    ``d``/``b``/``f`` are 0 where the counter type has no such value.
    """

    n: Array
    d: Array
    b: Array
    f: Array


def window_average(
    formula: Formula | None,
    first: RawEnds,
    last: RawEnds,
    *,
    intervals: Array,
    why: Array,
) -> tuple[Array, Array]:
    """The exact average over [first, last]: the type's formula applied to the two ends' raw values.

    Over a window, the difference types measure the same thing as over one interval (events per
    second, fraction of time busy, time-weighted queue, operation-weighted average time): their
    displayed value for the window is the formula on the window's ends, which the mean of the
    per-interval values only equals when the intervals (and, for averages, the operation counts)
    are equal. A delta has no time in its formula: its window figure is the total movement per
    sample interval (``intervals`` = sample intervals between the ends).

    ``why`` holds what the caller already knows (absent ends, a reset inside the window, a raw
    that went backwards between two samples; 0 otherwise). Returns (values, why codes): NaN with a
    code from ``WINDOW_WHY`` where there is no value; never a zero in place of one.
    """
    size = len(first.n)
    why = np.asarray(why, dtype=np.int64).copy()
    if formula is None:
        return np.full(size, np.nan), np.full(size, WHY_NOT_COOKED, dtype=np.int64)
    if not KNOWN_TWO_SAMPLE[formula]:
        return np.full(size, np.nan), np.full(size, WHY_INSTANTANEOUS, dtype=np.int64)
    dn = last.n - first.n
    dd = last.d - first.d
    pending = why == WINDOW_OK
    why[pending & (intervals <= 0)] = WHY_ONE_SAMPLE
    pending = why == WINDOW_OK
    why[pending & (dn < 0)] = WHY_BACKWARDS
    if formula is Formula.DELTA:
        with np.errstate(divide="ignore", invalid="ignore"):
            values = dn.astype(np.float64) / intervals
    else:
        values = cook_deltas(formula, n1=last.n, dn=dn, d1=last.d, dd=dd, f=last.f, b1=last.b)
        pending = why == WINDOW_OK
        # A time that did not move has no rate; a base that did not move is 0 for the averages
        # (no operations in the window), as for one interval.
        averages = formula in (Formula.AVERAGE, Formula.AVERAGE_TIMER, Formula.SAMPLE_FRACTION)
        why[pending & ((dd < 0) if averages else (dd <= 0))] = WHY_BACKWARDS if averages else WHY_NO_TIME
    if formula is Formula.MULTI_TIMER:
        pending = why == WINDOW_OK
        why[pending & (first.b != last.b)] = WHY_MULTI
        why[(why == WINDOW_OK) & (last.b <= 0)] = WHY_MULTI_ZERO
    values = np.where(why == WINDOW_OK, values, np.nan)
    return values, why
