"""FILETIME, the clock of a .blg: 100 ns ticks since 1601-01-01. Events are stamped in the
collector's local time; the log-file header and the samples' own clocks are UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

_FILETIME_EPOCH = datetime(1601, 1, 1)
_FILETIME_UNIX = 116_444_736_000_000_000  # 1970-01-01
_UNIX_EPOCH = datetime(1970, 1, 1)
_DAY_TICKS = 864_000_000_000  # 100 ns ticks in a day
_DAY_MICROS = 86_400_000_000
_TICKS_100NS = 10_000_000
_LAST_FILETIME = 2_650_467_743_999_999_999  # 9999-12-31 23:59:59.9999999


def utc_stamps(
    stamps: np.ndarray[Any, np.dtype[np.int64]], offset_minutes: int | None, zone: ZoneInfo | None = None
) -> pl.Series:
    """FILETIME local stamps as UTC datetimes (microseconds): with a resolved ``zone`` each stamp
    takes its own offset (daylight saving), else the one fixed offset."""
    shift: Any = (offset_minutes or 0) * 600_000_000
    if zone is not None:
        shift = local_offsets(stamps, zone) * 600_000_000
    micros = (stamps - shift - _FILETIME_UNIX) // 10
    return pl.Series("timestamp", micros, dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))


def local_times(utc: pl.Series, offset_minutes: int | None, zone: ZoneInfo | None = None) -> pl.Series:
    """UTC datetimes back as naive local ones, per stamp in ``zone`` when given."""
    naive = utc.dt.replace_time_zone(None)
    if zone is None:
        return naive + timedelta(minutes=offset_minutes or 0)
    micros = naive.dt.epoch("us").to_numpy()
    minutes = utc_offsets(micros, zone)
    return (pl.Series(micros + minutes * 60_000_000, dtype=pl.Int64)).cast(pl.Datetime("us"))


def _utc(filetime: int) -> datetime | None:
    if filetime <= 0:
        return None
    try:
        return (_FILETIME_EPOCH + timedelta(microseconds=filetime // 10)).replace(tzinfo=UTC)
    except OverflowError:
        return None


def _local_text(filetime: int) -> str:
    try:
        if filetime > 0:
            moment = _FILETIME_EPOCH + timedelta(microseconds=filetime // 10)
            return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " local"
    except OverflowError:
        pass
    return f"an unreadable time (FILETIME {filetime})"


def local_offsets(stamps: np.ndarray[Any, np.dtype[np.int64]], zone: ZoneInfo) -> np.ndarray[Any, Any]:
    """Local minus UTC in minutes for each local FILETIME stamp. A day whose two ends share one
    offset has it throughout; only the stamps of a day with a change are looked up one by one. In
    the repeated hour of a change back, a stamp not later than one before it is the second pass."""
    if not len(stamps):
        return np.zeros(0, np.int64)
    days = stamps // _DAY_TICKS
    unique = np.unique(days)
    start = np.array([_local_offset(int(d) * _DAY_TICKS, zone) for d in unique], np.int64)
    end = np.array([_local_offset(int(d + 1) * _DAY_TICKS - 1, zone) for d in unique], np.int64)
    where = np.searchsorted(unique, days)
    out = start[where]
    mixed = np.flatnonzero((start != end)[where])
    if len(mixed):
        latest = np.maximum.accumulate(stamps)
        for i in mixed:
            second = i > 0 and latest[i - 1] >= stamps[i]
            out[i] = _local_offset(int(stamps[i]), zone, fold=int(second))
    return out


def utc_offsets(micros: np.ndarray[Any, Any], zone: ZoneInfo) -> np.ndarray[Any, Any]:
    """Local minus UTC in minutes for each UTC instant (microseconds since 1970), as the reverse
    of :func:`local_offsets`: what convert needs to write local times."""
    if not len(micros):
        return np.zeros(0, np.int64)
    days = micros // _DAY_MICROS
    unique = np.unique(days)
    start = np.array([_utc_offset(int(d) * _DAY_MICROS, zone) for d in unique], np.int64)
    end = np.array([_utc_offset(int(d + 1) * _DAY_MICROS - 1, zone) for d in unique], np.int64)
    where = np.searchsorted(unique, days)
    out = start[where]
    for i in np.flatnonzero((start != end)[where]):
        out[i] = _utc_offset(int(micros[i]), zone)
    return out


def _local_offset(ticks: int, zone: ZoneInfo, fold: int = 0) -> int:
    try:
        moment = _FILETIME_EPOCH + timedelta(microseconds=ticks // 10)
    except OverflowError:  # past year 9999: the last representable day's offset
        moment = datetime.max
    return _minutes(moment.replace(tzinfo=zone, fold=fold).utcoffset())


def _utc_offset(micros: int, zone: ZoneInfo) -> int:
    try:
        moment = _UNIX_EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        moment = datetime.max - timedelta(days=2)
    return _minutes(moment.replace(tzinfo=UTC).astimezone(zone).utcoffset())


def _minutes(delta: timedelta | None) -> int:
    return 0 if delta is None else int(delta.total_seconds() // 60)
