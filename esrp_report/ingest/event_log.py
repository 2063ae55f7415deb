"""Windows event logs saved beside Jetstress results: .evt (legacy, what Jetstress 2010 saves)
read with libevt (pyevt), .evtx read with python-evtx.

Only what the reliability statement needs is kept: when each event was written (UTC), its
level, id, source and computer. Records the library cannot read are counted, never dropped
silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyevt
from Evtx.Evtx import Evtx

from esrp_report.model import Problem
from esrp_report.model.errors import InputError

# Legacy event types (EVENTLOG_*_TYPE) and .evtx levels, mapped to one vocabulary.
_EVT_TYPES = {1: "error", 2: "warning", 4: "information", 8: "audit success", 16: "audit failure"}
_EVTX_LEVELS = {1: "critical", 2: "error", 3: "warning", 4: "information", 0: "information", 5: "verbose"}
ERROR_LEVELS = frozenset({"critical", "error"})


@dataclass(frozen=True)
class Event:
    """One event: its time (naive UTC), level, event id, source and computer."""

    time_utc: datetime  # naive UTC
    level: str
    event_id: int
    source: str
    computer: str


@dataclass
class EventLog:
    """A Windows event log (.evt or .evtx): its events, how many records could not be read, and problems."""

    source: str
    format: str  # "evt" | "evtx"
    events: list[Event] = field(default_factory=list)
    unreadable_records: int = 0
    problems: list[Problem] = field(default_factory=list)

    def errors_between(self, start_utc: datetime, end_utc: datetime) -> list[Event]:
        """The critical and error events from ``start_utc`` to ``end_utc`` inclusive (naive UTC)."""
        return [e for e in self.events if e.level in ERROR_LEVELS and start_utc <= e.time_utc <= end_utc]


def read_event_log(path: Path) -> EventLog:
    """Read a .evt or .evtx event log by its suffix; unreadable records are counted as problems. Raises
    InputError for another suffix or a file that cannot be opened as an event log."""
    suffix = path.suffix.casefold()
    if suffix == ".evt":
        return _read_evt(path)
    if suffix == ".evtx":
        return _read_evtx(path)
    raise InputError(path, "not an event log", expected="a .evt or .evtx file")


def _naive_utc(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def _read_evt(path: Path) -> EventLog:
    log = EventLog(str(path), "evt")
    reader = pyevt.file()
    try:
        reader.open(str(path))
    except OSError as exc:
        raise InputError(
            path,
            f"not a readable .evt event log: {exc}",
            location="header",
            expected="an ELF header ('LfLe' signature)",
        ) from exc
    try:
        count = reader.number_of_records
        for index in range(count):
            try:
                record = reader.get_record(index)
                log.events.append(
                    Event(
                        _naive_utc(record.written_time),
                        _EVT_TYPES.get(record.event_type, f"type {record.event_type}"),
                        int(record.event_identifier) & 0xFFFF,
                        record.source_name or "",
                        record.computer_name or "",
                    )
                )
            except OSError:
                log.unreadable_records += 1
        recovered = reader.number_of_recovered_records
    finally:
        reader.close()
    if log.unreadable_records:
        log.problems.append(
            Problem(
                str(path),
                f"{log.unreadable_records} of {count} event records unreadable; not counted",
                severity="warning",
            )
        )
    if recovered:
        log.problems.append(
            Problem(str(path), f"{recovered} overwritten records recoverable but not read", severity="note")
        )
    return log


_SYSTEM = re.compile(
    r"<Level>(?P<level>\d+)</Level>.*?<TimeCreated SystemTime=\"(?P<time>[^\"]+)\"", re.DOTALL
)
_EVENT_ID = re.compile(r"<EventID[^>]*>(?P<id>\d+)</EventID>")
_PROVIDER = re.compile(r"<Provider Name=\"(?P<name>[^\"]*)\"")
_COMPUTER = re.compile(r"<Computer>(?P<name>[^<]*)</Computer>")


def _evtx_time(text: str) -> datetime:
    text = text.rstrip("Z")
    whole, _, fraction = text.partition(".")
    base = datetime.fromisoformat(whole)
    micros = int((fraction + "000000")[:6]) if fraction else 0
    return base + timedelta(microseconds=micros)


def _read_evtx(path: Path) -> EventLog:
    log = EventLog(str(path), "evtx")
    try:
        with Evtx(str(path)) as archive:
            # python-evtx reads any bytes as a log with no records; an empty log would pass the
            # event-log rule, so a file that is not an .evtx at all is refused here.
            if not archive.get_file_header().check_magic():
                raise ValueError("no 'ElfFile' signature")
            for record in archive.records():
                try:
                    xml = record.xml()
                    system = _SYSTEM.search(xml)
                    event_id = _EVENT_ID.search(xml)
                    if system is None or event_id is None:
                        raise ValueError("no System/Level/TimeCreated")
                    provider = _PROVIDER.search(xml)
                    computer = _COMPUTER.search(xml)
                    log.events.append(
                        Event(
                            _evtx_time(system.group("time")),
                            _EVTX_LEVELS.get(int(system.group("level")), "information"),
                            int(event_id.group("id")),
                            provider.group("name") if provider else "",
                            computer.group("name") if computer else "",
                        )
                    )
                except Exception:
                    log.unreadable_records += 1
    except (OSError, ValueError) as exc:
        raise InputError(
            path,
            f"not a readable .evtx event log: {exc}",
            location="file header",
            expected="an 'ElfFile' header",
        ) from exc
    if log.unreadable_records:
        log.problems.append(
            Problem(
                str(path),
                f"{log.unreadable_records} event records unreadable; not counted",
                severity="warning",
            )
        )
    return log


def window_utc(
    start_local: datetime, end_local: datetime, utc_offset_minutes: int | None
) -> tuple[datetime, datetime, bool]:
    """A run's local-time window in UTC. Unknown offset: widened to every offset in use
    (UTC-12 to UTC+14), so no error event inside the real window can be missed."""
    if utc_offset_minutes is not None:
        shift = timedelta(minutes=utc_offset_minutes)
        return start_local - shift, end_local - shift, True
    return start_local - timedelta(hours=14), end_local + timedelta(hours=12), False


def describe_event_log(log: EventLog) -> dict[str, Any]:
    """What ``inspect`` shows of an event log: its kind, how many events and how many of them
    errors (what ``check`` counts within a test's window), their time span, and the records lost."""
    times = [e.time_utc for e in log.events]
    return {
        "log_format": log.format,
        "events": len(log.events),
        "error_events": sum(1 for e in log.events if e.level in ERROR_LEVELS),
        "first_utc": min(times).isoformat() if times else None,
        "last_utc": max(times).isoformat() if times else None,
        "machines": sorted({e.computer for e in log.events if e.computer}),
        "unreadable_records": log.unreadable_records,
        "problems": [p.as_dict() for p in log.problems],
    }
