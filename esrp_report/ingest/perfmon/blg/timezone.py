"""The time zone a .blg header names, resolved to an IANA zone so that daylight saving is applied
per sample: a ``@tzres.dll,-ID`` reference through the table of known tzres.dll ids
(``tzres.toml``), a Windows zone name through CLDR's windowsZones map (territory 001, as shipped
by ``tzlocal``). What cannot be resolved says why; no zone is ever guessed (docs/blg.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tzlocal.windows_tz import win_tz

from esrp_report.ingest.perfmon.blg.filetime import _FILETIME_EPOCH, _minutes
from esrp_report.ingest.perfmon.blg.header import BlgHeader
from esrp_report.model.data import package_toml

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


def zone_name(header: BlgHeader, offset: int | None, found: BlgZone | None = None) -> str | None:
    """The time zone's name as Windows prints it for the first sample (relog's CSV header): the
    daylight name when the UTC offset in minutes is the daylight one, else the standard name; the
    English text of a resolved zone (``found``), else the header's own words; None when it has none."""
    standard, daylight = header.standard_name, header.daylight_name
    if found is not None and found.iana is not None:
        standard, daylight = found.standard_text or standard, found.daylight_text or daylight
    if offset is None:
        return standard or None
    if -offset == header.bias_minutes + header.daylight_bias and header.daylight_bias:
        return daylight or standard or None
    return standard or None
