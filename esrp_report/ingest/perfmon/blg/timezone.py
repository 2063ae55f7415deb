"""The time zone a .blg header names, resolved to an IANA zone so that daylight saving is applied
per sample: a ``@tzres.dll,-ID`` reference through the table of known tzres.dll ids
(``tzres.toml``), a Windows zone name through CLDR's windowsZones map (territory 001, as shipped
by ``tzlocal``). What cannot be resolved says why; no zone is ever guessed (docs/blg.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
from tzlocal.windows_tz import win_tz

from esrp_report.model.data import package_toml

if TYPE_CHECKING:  # header.py imports filetime.py, which imports this module
    from esrp_report.ingest.perfmon.blg.header import BlgHeader

_FILETIME_EPOCH = datetime(1601, 1, 1)
_UNIX_EPOCH = datetime(1970, 1, 1)
_DAY_TICKS = 864_000_000_000  # 100 ns ticks in a day
_DAY_MICROS = 86_400_000_000
_TZRES = re.compile(r"@tzres\.dll,\s*-(\d+)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Names:
    key: str  # the Windows zone key (CLDR's "other" name)
    text: str  # what Windows prints for this id in English
    daylight: bool


@dataclass(frozen=True)
class BlgZone:
    """The header's zone: as written, the Windows zone and IANA zone it resolved to, or why not."""

    written: str  # the standard name as the header holds it
    written_daylight: str
    windows: str | None = None  # the Windows zone key (e.g. "Pacific Standard Time")
    iana: str | None = None
    why: str | None = None  # why it is unresolved; None when resolved
    standard_text: str | None = None  # English names Windows prints (relog's CSV header)
    daylight_text: str | None = None

    @property
    def zone(self) -> ZoneInfo | None:
        return None if self.iana is None else ZoneInfo(self.iana)


@cache
def _tzres_ids() -> dict[int, _Names]:
    table = package_toml(__package__ or "esrp_report.ingest.perfmon.blg", "tzres.toml")
    ids: dict[int, _Names] = {}
    for entry in table["zones"]:
        key = entry["key"]
        ids[entry["std"]] = _Names(key, entry.get("std_text", key), daylight=False)
        ids[entry["dlt"]] = _Names(
            key, entry.get("dlt_text", key.replace("Standard", "Daylight")), daylight=True
        )
    return ids


@cache
def _texts() -> dict[str, _Names]:
    """Every English name of the table and every CLDR key, by text (a header in plain text)."""
    found = {names.text: names for names in _tzres_ids().values()}
    for key in win_tz:
        found.setdefault(key, _Names(key, key, daylight=False))
    return found


def _names_of(written: str) -> tuple[_Names | None, str | None]:
    """The table entry a header name stands for, else None and why."""
    if not written:
        return None, "the header names no time zone"
    match = _TZRES.match(written.strip())
    if match is not None:
        names = _tzres_ids().get(int(match.group(1)))
        if names is None:
            return None, (
                f"{written} is a tzres.dll resource id not in the table of known ids "
                "(esrp_report/ingest/perfmon/blg/tzres.toml)"
            )
        return names, None
    names = _texts().get(written.strip())
    if names is None:
        return None, (
            f"{written!r} is not a Windows time-zone name known to CLDR's map "
            "(a name in another display language is not translated back)"
        )
    return names, None


def resolve_zone(header: BlgHeader, first_local: int | None = None) -> BlgZone:
    """The header's zone resolved; ``first_local`` (the first sample's local FILETIME) picks the
    year whose offsets must include the header's bias, so a zone that contradicts it is refused."""
    written, daylight = header.standard_name, header.daylight_name
    names, why = _names_of(written)
    if names is None:
        names, _ = _names_of(daylight)  # the daylight id alone still names the zone
        if names is None:
            return BlgZone(written, daylight, why=why)
    iana = win_tz.get(names.key)
    if iana is None:
        return BlgZone(written, daylight, windows=names.key, why=f"CLDR maps no IANA zone to {names.key!r}")
    try:
        zone = ZoneInfo(iana)
    except (ZoneInfoNotFoundError, ValueError):
        return BlgZone(written, daylight, windows=names.key, why=f"the IANA zone {iana} is not installed")
    year = _year(first_local)
    offsets = {_minutes(datetime(year, month, 1, tzinfo=zone).utcoffset()) for month in (1, 7)}
    if -header.bias_minutes not in offsets:
        return BlgZone(
            written,
            daylight,
            windows=names.key,
            why=(
                f"{names.key} ({iana}) is at UTC{_signed(offsets)} in {year}, not at the header's bias "
                f"({header.bias_minutes} min)"
            ),
        )
    std = next((n.text for n in _tzres_ids().values() if n.key == names.key and not n.daylight), names.key)
    dlt = next(
        (n.text for n in _tzres_ids().values() if n.key == names.key and n.daylight),
        names.key.replace("Standard", "Daylight"),
    )
    return BlgZone(written, daylight, windows=names.key, iana=iana, standard_text=std, daylight_text=dlt)


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


def _year(first_local: int | None) -> int:
    if first_local is None or first_local <= 0:
        return datetime.now().year
    try:
        return (_FILETIME_EPOCH + timedelta(microseconds=first_local // 10)).year
    except OverflowError:
        return 9999


def _signed(offsets: set[int]) -> str:
    return " and UTC".join(
        f"{'+' if m >= 0 else '-'}{abs(m) // 60:02d}:{abs(m) % 60:02d}" for m in sorted(offsets)
    )
