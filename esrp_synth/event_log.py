"""Write legacy Windows event logs (.evt, the format Jetstress 2010 saves) for samples and tests.

The layout is the documented EventLog file format (ELF): a 48-byte header, EVENTLOGRECORD
records, and a 40-byte end-of-file record, all little-endian.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

EVENT_TYPES = {"error": 0x0001, "warning": 0x0002, "information": 0x0004, "audit success": 0x0008}
_HEADER = struct.Struct("<12I")
_RECORD_FIXED = struct.Struct("<IIIIIIHHHHIIIIII")
_EOF = struct.Struct("<10I")
SIGNATURE = 0x654C664C  # "LfLe"


@dataclass(frozen=True)
class EventRecord:
    time: datetime  # naive = UTC
    event_id: int
    event_type: str  # a key of EVENT_TYPES
    source: str
    computer: str
    strings: Sequence[str] = field(default_factory=tuple)


def _utf16z(text: str) -> bytes:
    return (text + "\0").encode("utf-16-le")


def _epoch(time: datetime) -> int:
    aware = time if time.tzinfo else time.replace(tzinfo=UTC)
    return int(aware.timestamp())


def _record(number: int, record: EventRecord) -> bytes:
    names = _utf16z(record.source) + _utf16z(record.computer)
    pad = b"\0" * (-(_RECORD_FIXED.size + len(names)) % 4)
    strings = b"".join(_utf16z(s) for s in record.strings)
    strings += b"\0" * (-len(strings) % 4)
    string_offset = _RECORD_FIXED.size + len(names) + len(pad)
    length = string_offset + len(strings) + 4
    fixed = _RECORD_FIXED.pack(
        length,
        SIGNATURE,
        number,
        _epoch(record.time),
        _epoch(record.time),
        record.event_id,
        EVENT_TYPES[record.event_type],
        len(record.strings),
        0,  # category
        0,  # reserved flags
        0,  # closing record number
        string_offset,
        0,  # user SID length
        string_offset,  # user SID offset (no SID)
        0,  # data length
        string_offset + len(strings),  # data offset
    )
    return fixed + names + pad + strings + struct.pack("<I", length)


def write_evt(records: Sequence[EventRecord]) -> bytes:
    body = b"".join(_record(i + 1, r) for i, r in enumerate(records))
    start = _HEADER.size
    end = start + len(body)
    next_number = len(records) + 1
    eof = _EOF.pack(0x28, 0x11111111, 0x22222222, 0x33333333, 0x44444444, start, end, next_number, 1, 0x28)
    max_size = end + len(eof)
    header = _HEADER.pack(0x30, SIGNATURE, 1, 1, start, end, next_number, 1, max_size, 0, 0, 0x30)
    return header + body + eof
