"""FILETIME, the clock of a .blg: 100 ns ticks since 1601-01-01. Events are stamped in the
collector's local time; the log-file header and the samples' own clocks are UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from esrp_report.ingest.perfmon.blg.timezone import local_offsets, utc_offsets

_FILETIME_EPOCH = datetime(1601, 1, 1)
_FILETIME_UNIX = 116_444_736_000_000_000  # 1970-01-01
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
