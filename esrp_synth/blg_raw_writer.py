"""Write binary perfmon logs (.blg) in the raw-counter layout ("BL 03 01" / "BL 03 02" samples).

The layout of Windows Server 2003 writers, PowerShell ``Export-Counter`` and data collectors on
Windows 8 and later, from the project's format study (``blg-format-newer.md``, clean-room, from the
bytes of two real logs) and public structure layouts (TRACE_LOGFILE_HEADER, PDH_RAW_COUNTER,
winperf.h counter types, pdhmsg.h status codes). No Microsoft source was consulted. Used by tests
that need logs with known raw values; ``blg_writer`` writes the other (Vista, PERF_DATA_BLOCK)
layout. The container (buffers, header event, PDH events, fragments) is ``blg_container``'s.

What a file holds (all little-endian, strings UTF-16LE with their NUL):

* Buffer 0: the log-file header event, system header type 0x02 (SYSTEM64) for a 64-bit writer
  (``pointer_size=8``) or 0x01 (SYSTEM32), then TRACE_LOGFILE_HEADER (OS version and build,
  PerfFreq, time-zone block, start/end/boot times, the log GUID as logger name, the file path).
* Buffers 1..N: PDH events with full trace header 0x14 (FULL_HEADER64) or 0x0A (FULL_HEADER32),
  the log GUID and fragment number/count; records longer than ``fragment_data`` are cut into
  fragments, which may cross buffers. Record kinds: 32 once (the counter list), then 34 once per
  ``add_sample``. No name table (36) and no closing catalog (35).
* Record 32: 0x000006FF, 0x00020008, then one entry per ``RawCounter``: size, flags, user data,
  CounterType, time base (int64), DefaultScale, offsets (from entry + 52) of machine, object,
  instance (-1 none), parent instance (-1 none), instance index, counter; then the strings.
* Record 34: "BL 03 00" + record length, then one sub-record per entry, in entry order:
  "BL 03 01" (length 48) = PDH_RAW_COUNTER {CStatus, FILETIME local stamp at +4, pad,
  FirstValue, SecondValue, MultiCount, pad} for a single counter; "BL 03 02" for a wildcard
  entry (instance "*") = {body size, item count, group CStatus, pad, FILETIME local stamp,
  items of 24 bytes {name offset from the body start, MultiCount, FirstValue, SecondValue},
  instance names}.

Compared with the two real logs of the study (a throwaway decoder, field by field): given the
counters, header facts, stamps and raw values of CounterSamples.blg (Windows 10, 64-bit writer),
the file written here is the same 131,072 bytes except the 16 pointer-garbage bytes of the data
buffer's header (and the entries' user-data DWORDs unless given); for BadCounterSamples.blg
(Server 2003, 32-bit, 26 machines, ``entry_slack=8``) record 32 and all 275 sample records are
byte-identical and every event sits at the same offset, the differences being the older buffer
headers, the events' processor-time slots, the header's pointer slots and its 2 pad bytes.
``tests/test_blg_raw_writer.py`` keeps a few of CounterSamples' structures as expected bytes.

Choices of this writer, where the notes and the two real files leave freedom:

* Record 32: the second DWORD is always 0x00020008 (all three known files). Entries are
  rounded up to 8 bytes after their strings (plus ``entry_slack``). Entry flags default
  to 0x20000000 for 64-bit writers and 0 for 32-bit ones (as the two files), plus bit 0 for a
  wildcard entry (the Windows 10 file; the meaning is inferred). The user-data DWORD (+8)
  defaults to the entry's running index (the 2003 file; the Windows 10 file holds pointer-like
  values). A parent instance string, never seen, is placed after the instance string; the
  instance index (+44) defaults to 0. Padding is zeros.
* Time base per entry (+16), unless given: 10,000,000 for 100 ns timer types, the object's
  clock frequency ``object_time_base`` (default 10,000,000, as Process/System objects) for
  object-timer types, else the header's PerfFreq (both files agree for the types they hold).
* "BL 03 02": the 24-byte item form of the 64-bit writer is also written for 32-bit writers (a
  32-bit form was never seen); each item's name is written once per item in item order, even
  when names repeat; the name area is padded with zeros to a multiple of 8 (the one real
  array happened to end on 8); the DWORD after the group CStatus is 0.
* Stamps: a sub-record's stamp defaults to the sample's ``local_time``; when that is not given
  the event stamp is the last sub-record's stamp (as the 2003 file). The record-32 event is
  stamped 1 µs (10 ticks) before the first sample's event, as in both real files.
* Header: StartTime/EndTime default to the first/last sample event stamps in UTC (the real
  files hold the time the file was written instead); BootTime defaults to StartTime - 1 h; the
  two pointer slots are 0; the system header version word is 0 (64-bit) or 1 (32-bit), its
  kernel/user times ``header_times`` (default 0, 0); the header event's size is exact (the
  2003 file adds 2 bytes).
  Local = UTC + ``utc_offset_minutes`` (default -Bias, standard time) turns stamps into UTC.
* Container: buffer style ``"win10"`` for 64-bit writers, ``"vista"`` for 32-bit ones (see
  ``blg_container``; the 2003 file's older buffer header is not imitated); each buffer's flush
  stamp is the latest of StartTime and the UTC stamps of the events so far, and of a given
  EndTime for the last buffer (the Windows 10 file: EndTime); the PDH events' processor-time slot is
  ``event_times`` (default 0, 0; the Windows 10 file has 0, 0x001A0200, the 2003 file counters
  that grow from event to event).
* ``second_value``: 0 for types without a denominator (RAWCOUNT observed; DELTA, HEX and
  text types assumed); a precision timer without an explicit base gets its clock (the 100 ns
  clock for PRECISION_100NS_TIMER, as observed).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Final

from esrp_synth import blg_writer as bw
from esrp_synth.blg_container import (
    HEADER_FULL32,
    HEADER_FULL64,
    BufferStyle,
    EtwContainer,
    LogFileHeader,
    TimeZone,
    align8,
    check_geometry,
    utf16z,
)

__all__ = [
    "PDH_CSTATUS_NEW_DATA",
    "PDH_CSTATUS_NO_COUNTER",
    "PDH_CSTATUS_NO_INSTANCE",
    "PDH_CSTATUS_NO_MACHINE",
    "PDH_CSTATUS_NO_OBJECT",
    "PDH_CSTATUS_VALID_DATA",
    "Clock",
    "LogHeader",
    "RawArray",
    "RawBlgWriter",
    "RawCounter",
    "RawItem",
    "RawSample",
    "RawValue",
    "SampleValue",
    "Stamp",
    "TimeZone",
    "filetime",
    "fixed_time_zone",
    "raw_item",
    "raw_value",
    "sample_values",
    "second_value",
    "write_raw_blg",
]

# --- pdhmsg.h counter status codes (CStatus) --------------------------------------------------
PDH_CSTATUS_VALID_DATA: Final = 0x00000000
PDH_CSTATUS_NEW_DATA: Final = 0x00000001
PDH_CSTATUS_NO_MACHINE: Final = 0x800007D0
PDH_CSTATUS_NO_INSTANCE: Final = 0x800007D1
PDH_CSTATUS_NO_OBJECT: Final = 0xC0000BB8
PDH_CSTATUS_NO_COUNTER: Final = 0xC0000BB9

# --- record layout -----------------------------------------------------------------------------
RECORD_PATHS: Final = 32
RECORD_SAMPLE: Final = 34
PATHS_MAGIC: Final = 0x000006FF
PATHS_SECOND: Final = 0x00020008
ENTRY_FIXED_SIZE: Final = 52
SAMPLE_TAG: Final = b"BL\x03\x00"
SINGLE_TAG: Final = b"BL\x03\x01"
ARRAY_TAG: Final = b"BL\x03\x02"
SINGLE_LENGTH: Final = 48
ARRAY_HEAD_SIZE: Final = 24
ARRAY_ITEM_SIZE: Final = 24
FLAG_WILDCARD: Final = 0x00000001
FLAG_64BIT_WRITER: Final = 0x20000000
PATHS_STAMP_LEAD: Final = 10  # ticks: the record-32 event precedes the first sample by 1 µs

_ENTRY = struct.Struct("<IIIIqiiiiiii")
_SINGLE_BODY = struct.Struct("<IqIQQII")
_ARRAY_HEAD = struct.Struct("<IIIIq")
_ARRAY_ITEM = struct.Struct("<IIQQ")
_FILETIME_EPOCH: Final = datetime(1601, 1, 1)
_TICKS_PER_MINUTE: Final = 600_000_000
_BOOT_BEFORE_START: Final = 3_600 * 10_000_000
_HUNDRED_NS_PER_SECOND: Final = 10_000_000
_I64_MIN: Final = -(2**63)
_U64_MAX: Final = 2**64 - 1
_U32_MAX: Final = 2**32 - 1

Stamp = datetime | int
"""A local time stamp: a naive wall-clock datetime, or FILETIME ticks (100 ns since 1601)."""


# --- time helpers ------------------------------------------------------------------------------
def filetime(dt: datetime) -> int:
    """FILETIME ticks of a datetime: a naive one as it stands (wall clock), an aware one in UTC."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    delta = dt - _FILETIME_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def _stamp(value: Stamp) -> int:
    if isinstance(value, datetime):
        return filetime(value.replace(tzinfo=None))
    if not 0 <= value <= 2**63 - 1:
        raise ValueError(f"a FILETIME must be 0..2**63-1, not {value}")
    return value


def fixed_time_zone(utc_offset_minutes: int, name: str | None = None) -> TimeZone:
    """A time-zone block without daylight rule: Bias = -offset, both names ``name`` (default
    "UTC+hh:mm"). For resource-style names pass e.g. ``"@tzres.dll,-212"``."""
    if name is None:
        sign = "+" if utc_offset_minutes >= 0 else "-"
        hours, minutes = divmod(abs(utc_offset_minutes), 60)
        name = f"UTC{sign}{hours:02d}:{minutes:02d}"
    return TimeZone(-utc_offset_minutes, name, name)


# --- what is logged ----------------------------------------------------------------------------
@dataclass(frozen=True)
class RawCounter:
    """One entry of record 32: one counter path of one machine.

    ``instance`` None = an object without instances; ``"*"`` = a wildcard entry, whose samples are
    arrays (``RawArray``); anything else = one instance (``RawValue`` samples). ``machine`` is
    written with a leading ``\\\\``. ``time_base`` None = the writer's default for the type (see
    the module docstring); ``flags`` / ``user_data`` None = the writer's defaults.
    """

    machine: str
    object: str
    counter: str
    counter_type: int
    instance: str | None = None
    scale: int = 0
    time_base: int | None = None
    parent: str | None = None
    instance_index: int = 0
    flags: int | None = None
    user_data: int | None = None

    def __post_init__(self) -> None:
        for what, text in (
            ("machine", self.machine.lstrip("\\")),
            ("object", self.object),
            ("counter", self.counter),
        ):
            if not text:
                raise ValueError(f"a counter needs a {what} name")
        for text in (self.machine, self.object, self.counter, self.instance or "", self.parent or ""):
            if "\0" in text:
                raise ValueError(f"name {text!r} contains a NUL")
        if not 0 <= self.counter_type <= _U32_MAX:
            raise ValueError(f"counter type {self.counter_type:#x} is not a DWORD")
        if not -(2**31) <= self.scale < 2**31:
            raise ValueError(f"scale {self.scale} is not a signed DWORD")
        if self.time_base is not None and not 0 < self.time_base < 2**63:
            raise ValueError(f"time base {self.time_base} must be positive")
        if self.parent is not None and self.instance is None:
            raise ValueError("a parent instance needs an instance")

    @classmethod
    def from_path(cls, path: str, counter_type: int, **fields: Any) -> RawCounter:
        """From ``\\\\machine\\object(parent/instance#index)\\counter`` (parent and index optional,
        no instance part for objects without instances)."""
        if not path.startswith("\\\\"):
            raise ValueError(f"a counter path starts with \\\\machine: {path!r}")
        machine, sep, rest = path[2:].partition("\\")
        head, sep2, counter = rest.rpartition("\\")
        if not sep or not sep2:
            raise ValueError(f"not a counter path: {path!r}")
        obj, instance, parent, index = head, None, None, 0
        if head.endswith(")") and "(" in head:
            obj, _, inner = head[:-1].partition("(")
            parent_part, slash, instance = inner.rpartition("/")
            parent = parent_part if slash else None
            name, hash_sign, number = instance.rpartition("#")
            if hash_sign and number.isdigit():
                instance, index = name, int(number)
        return cls(
            machine, obj, counter, counter_type, instance, parent=parent, instance_index=index, **fields
        )

    @property
    def wildcard(self) -> bool:
        """True for a wildcard-instance entry (instance "*"): its samples are arrays."""
        return self.instance == "*"

    @property
    def machine_path(self) -> str:
        """The machine as written: ``\\\\name``."""
        return "\\\\" + self.machine.lstrip("\\")

    @property
    def path(self) -> str:
        """The counter path, ``\\\\machine\\object(instance)\\counter``."""
        inner = ""
        if self.instance is not None:
            inner = self.instance if self.parent is None else f"{self.parent}/{self.instance}"
            inner = f"({inner}#{self.instance_index})" if self.instance_index else f"({inner})"
        return f"{self.machine_path}\\{self.object}{inner}\\{self.counter}"


@dataclass(frozen=True)
class RawValue:
    """One PDH_RAW_COUNTER ("BL 03 01"). ``first``/``second`` are int64 (unsigned values up to
    2**64-1 are written as their two's complement); ``status`` is the CStatus DWORD; ``stamp`` the
    sub-record's local time, None = the sample's ``local_time``."""

    first: int
    second: int = 0
    multi_count: int = 1
    status: int = PDH_CSTATUS_VALID_DATA
    stamp: Stamp | None = None

    @classmethod
    def failed(cls, status: int = PDH_CSTATUS_NO_MACHINE, stamp: Stamp | None = None) -> RawValue:
        """A failed collection as Windows logs it: the status, zero values, MultiCount 1."""
        return cls(0, 0, 1, status, stamp)


@dataclass(frozen=True)
class RawItem:
    """One instance of a wildcard array: its name and raw values (no status or stamp of its own)."""

    name: str
    first: int
    second: int = 0
    multi_count: int = 1


@dataclass(frozen=True)
class RawArray:
    """The instances of a wildcard entry at one sample ("BL 03 02"); the set may change from one
    sample to the next (or be empty). ``status`` is the group CStatus."""

    items: tuple[RawItem, ...]
    status: int = PDH_CSTATUS_VALID_DATA
    stamp: Stamp | None = None
    # How many bytes the body-size field falls short of length - 8 (0 = as Windows 10 writes it;
    # Windows 11 writes the end of the last name, its length rounded up to 8: docs/blg.md).
    size_short: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        if not 0 <= self.size_short <= 7:
            raise ValueError(f"size_short must be 0..7, not {self.size_short}")


@dataclass(frozen=True)
class OpaqueSubRecord:
    """A sub-record of a kind a reader may not know (``BL 03 kind``) in an entry's place: its body
    as given, padded to 8 bytes. Tests a reader's tolerance: the sample's other values stand."""

    kind: int
    body: bytes = b""
    stamp: Stamp | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.kind <= 0xFF:
            raise ValueError(f"kind must be a byte, not {self.kind}")


SampleValue = RawValue | RawArray | OpaqueSubRecord


@dataclass(frozen=True)
class RawSample:
    """The arguments of one ``RawBlgWriter.add_sample`` call, for ``write_raw_blg``."""

    values: Sequence[SampleValue]
    local_time: Stamp | None = None


@dataclass(frozen=True)
class LogHeader:
    """Facts of the log-file header (buffer 0) and of the writing process.

    Times: a naive datetime is UTC, an aware one is converted, an int is FILETIME ticks.
    ``start_utc``/``end_utc`` None = first/last sample; ``boot_utc`` None = start - 1 h.
    ``utc_offset_minutes`` None = -``time_zone.bias``. ``log_guid`` None = derived from the first
    machine and the start time (reproducible). ``log_file_mode`` None = 0x30020801 for 64-bit
    writers (Windows 10 file), 0x01000001 for 32-bit ones (2003 and Vista files). Defaults for
    the rest are those of CounterSamples.blg.
    """

    perf_freq: int = 10_000_000
    time_zone: TimeZone = field(default_factory=lambda: fixed_time_zone(0))
    utc_offset_minutes: int | None = None
    os_version: tuple[int, int, int, int] = (10, 0, 1, 5)
    os_build: int = 14393
    processors: int = 1
    cpu_mhz: int = 2694
    timer_resolution: int = 156_250
    log_file_mode: int | None = None
    log_guid: uuid.UUID | None = None
    log_file_name: str = "C:\\PerfLogs\\Admin\\CounterLog.blg"
    start_utc: datetime | int | None = None
    end_utc: datetime | int | None = None
    boot_utc: datetime | int | None = None
    thread_id: int = 0x3EF0
    process_id: int = 0x0D9C
    event_times: tuple[int, int] = (0, 0)
    header_times: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.perf_freq <= 0:
            raise ValueError(f"perf_freq must be positive, not {self.perf_freq}")

    @property
    def offset_minutes(self) -> int:
        """Local = UTC + this many minutes."""
        return -self.time_zone.bias if self.utc_offset_minutes is None else self.utc_offset_minutes


def _utc_ticks(value: datetime | int) -> int:
    return filetime(value) if isinstance(value, datetime) else _stamp(value)


# --- SecondValue the way Windows fills it ------------------------------------------------------
@dataclass(frozen=True)
class Clock:
    """The clocks of one machine at one sample: ``perf_time`` in ticks of the log's PerfFreq,
    ``time_100ns`` the UTC FILETIME, ``object_time`` the object's own clock (None = time_100ns,
    a 10 MHz object clock); ``stamp`` the sub-record's local stamp (None = the sample's)."""

    perf_time: int
    time_100ns: int
    object_time: int | None = None
    stamp: Stamp | None = None


_PERF_TIME: Final = "perf_time"
_TIME_100NS: Final = "time_100ns"
_OBJECT_TIME: Final = "object_time"
_BASE: Final = "base"
_NONE: Final = "none"

# counter type -> (what SecondValue holds, MultiCount holds the base, base required)
_SECOND: Final[dict[int, tuple[str, bool]]] = {
    bw.PERF_COUNTER_RAWCOUNT_HEX: (_NONE, False),
    bw.PERF_COUNTER_LARGE_RAWCOUNT_HEX: (_NONE, False),
    bw.PERF_COUNTER_RAWCOUNT: (_NONE, False),
    bw.PERF_COUNTER_LARGE_RAWCOUNT: (_NONE, False),
    bw.PERF_COUNTER_DELTA: (_NONE, False),
    bw.PERF_COUNTER_LARGE_DELTA: (_NONE, False),
    bw.PERF_RAW_FRACTION: (_BASE, False),
    bw.PERF_LARGE_RAW_FRACTION: (_BASE, False),
    bw.PERF_SAMPLE_FRACTION: (_BASE, False),
    bw.PERF_AVERAGE_TIMER: (_BASE, False),
    bw.PERF_AVERAGE_BULK: (_BASE, False),
    bw.PERF_PRECISION_SYSTEM_TIMER: (_PERF_TIME, False),  # the base if given
    bw.PERF_PRECISION_100NS_TIMER: (_TIME_100NS, False),  # the base if given
    bw.PERF_PRECISION_OBJECT_TIMER: (_OBJECT_TIME, False),  # the base if given
    bw.PERF_COUNTER_COUNTER: (_PERF_TIME, False),
    bw.PERF_COUNTER_BULK_COUNT: (_PERF_TIME, False),
    bw.PERF_SAMPLE_COUNTER: (_PERF_TIME, False),
    bw.PERF_COUNTER_TIMER: (_PERF_TIME, False),
    bw.PERF_COUNTER_TIMER_INV: (_PERF_TIME, False),
    bw.PERF_COUNTER_QUEUELEN_TYPE: (_PERF_TIME, False),
    bw.PERF_COUNTER_LARGE_QUEUELEN_TYPE: (_PERF_TIME, False),
    bw.PERF_100NSEC_TIMER: (_TIME_100NS, False),
    bw.PERF_100NSEC_TIMER_INV: (_TIME_100NS, False),
    bw.PERF_COUNTER_100NS_QUEUELEN_TYPE: (_TIME_100NS, False),
    bw.PERF_OBJ_TIME_TIMER: (_OBJECT_TIME, False),
    bw.PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE: (_OBJECT_TIME, False),
    bw.PERF_ELAPSED_TIME: (_OBJECT_TIME, False),
    bw.PERF_COUNTER_MULTI_TIMER: (_PERF_TIME, True),
    bw.PERF_COUNTER_MULTI_TIMER_INV: (_PERF_TIME, True),
    bw.PERF_100NSEC_MULTI_TIMER: (_TIME_100NS, True),
    bw.PERF_100NSEC_MULTI_TIMER_INV: (_TIME_100NS, True),
}
_PRECISION: Final = frozenset(
    (bw.PERF_PRECISION_SYSTEM_TIMER, bw.PERF_PRECISION_100NS_TIMER, bw.PERF_PRECISION_OBJECT_TIMER)
)
PERF_COUNTER_TEXT: Final = 0x00000B00
PERF_COUNTER_NODATA: Final = 0x40000200


def second_value(counter_type: int, clock: Clock, base: int | None = None) -> tuple[int, int]:
    """(SecondValue, MultiCount) of a counter of ``counter_type`` at ``clock``.

    Perf-time types get ``clock.perf_time``; 100 ns types the UTC ``clock.time_100ns``;
    object-time types (and PERF_ELAPSED_TIME, whose FirstValue is the start time) the object
    clock; fraction, sample-fraction and average types their ``base`` (required); precision
    timers their ``base`` (the PERF_PRECISION_TIMESTAMP), by default their clock; multi-timers
    the clock, with MultiCount = ``base`` (the instance count, required); raw counts, deltas,
    text and no-data types 0. Base types (PERF_*_BASE) are not entries of this layout.
    """
    if counter_type in (PERF_COUNTER_TEXT, PERF_COUNTER_NODATA):
        return 0, 1
    try:
        kind, multi = _SECOND[counter_type]
    except KeyError:
        raise ValueError(f"counter type {counter_type:#010x} has no known second value") from None
    clocks = {
        _PERF_TIME: clock.perf_time,
        _TIME_100NS: clock.time_100ns,
        _OBJECT_TIME: clock.time_100ns if clock.object_time is None else clock.object_time,
        _NONE: 0,
    }
    if multi:
        if base is None:
            raise ValueError(f"counter type {counter_type:#010x} needs its base (the multi count)")
        return clocks[kind], base
    if kind == _BASE:
        if base is None:
            raise ValueError(f"counter type {counter_type:#010x} needs its base")
        return base, 1
    if counter_type in _PRECISION and base is not None:
        return base, 1
    return clocks[kind], 1


def raw_value(
    counter_type: int,
    first: int,
    clock: Clock,
    base: int | None = None,
    *,
    status: int = PDH_CSTATUS_VALID_DATA,
) -> RawValue:
    """A single counter's raw value with SecondValue and MultiCount as Windows fills them; the
    stamp is ``clock.stamp``."""
    second, multi = second_value(counter_type, clock, base)
    return RawValue(first, second, multi, status, clock.stamp)


def raw_item(name: str, counter_type: int, first: int, clock: Clock, base: int | None = None) -> RawItem:
    """One wildcard instance's raw value, SecondValue and MultiCount filled as ``raw_value``."""
    second, multi = second_value(counter_type, clock, base)
    return RawItem(name, first, second, multi)


InstanceValues = Mapping[str, int] | Sequence[tuple[str, int]]


def _pairs(values: InstanceValues) -> list[tuple[str, int]]:
    return list(values.items()) if isinstance(values, Mapping) else [(n, v) for n, v in values]


def sample_values(
    counters: Sequence[RawCounter],
    clock: Clock | Sequence[Clock],
    firsts: Sequence[int | InstanceValues],
    bases: Sequence[int | InstanceValues | None] | None = None,
) -> list[SampleValue]:
    """The values of one sample for ``RawBlgWriter.add_sample`` from FirstValues alone.

    ``clock`` is one for all entries or one per entry (several machines sampled at different
    moments). ``firsts[i]`` is an int for a single entry, and instance -> FirstValue (mapping,
    or (name, value) pairs, names may repeat) for a wildcard entry. ``bases[i]`` likewise, for
    the types that need one (None elsewhere); a wildcard's bases follow its instances in order.
    """
    n = len(counters)
    clocks = [clock] * n if isinstance(clock, Clock) else list(clock)
    base_list: list[int | InstanceValues | None] = [None] * n if bases is None else list(bases)
    if not len(clocks) == len(firsts) == len(base_list) == n:
        raise ValueError(f"{n} counters need {n} clocks, first values and bases")
    out: list[SampleValue] = []
    for counter, c, first, base in zip(counters, clocks, firsts, base_list, strict=True):
        if counter.wildcard:
            if isinstance(first, int):
                raise TypeError(f"{counter.path}: a wildcard entry needs instance -> value, not an int")
            pairs = _pairs(first)
            base_pairs = _pairs(base) if base is not None and not isinstance(base, int) else None
            if base_pairs is not None and [p[0] for p in base_pairs] != [p[0] for p in pairs]:
                raise ValueError(f"{counter.path}: bases must list the same instances as the values")
            items = tuple(
                raw_item(
                    name, counter.counter_type, value, c, None if base_pairs is None else base_pairs[k][1]
                )
                for k, (name, value) in enumerate(pairs)
            )
            out.append(RawArray(items, stamp=c.stamp))
        else:
            if not isinstance(first, int):
                raise TypeError(f"{counter.path}: a single entry needs an int first value")
            if base is not None and not isinstance(base, int):
                raise TypeError(f"{counter.path}: a single entry needs an int base")
            out.append(raw_value(counter.counter_type, first, c, base))
    return out


# --- encoding ------------------------------------------------------------------------------------
def _i64(value: int, what: str) -> int:
    if not _I64_MIN <= value <= _U64_MAX:
        raise ValueError(f"{what} {value} does not fit 64 bits")
    return value & _U64_MAX


def _u32(value: int, what: str) -> int:
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{what} {value} is not a DWORD")
    return value


def _entry(counter: RawCounter, time_base: int, flags: int, user_data: int, slack: int) -> bytes:
    area = bytearray()

    def put(text: str | None) -> int:
        if text is None:
            return -1
        at = len(area)
        area.extend(utf16z(text))
        return at

    machine_at = put(counter.machine_path)
    object_at = put(counter.object)
    instance_at = put(counter.instance)
    parent_at = put(counter.parent)
    counter_at = put(counter.counter)
    size = align8(ENTRY_FIXED_SIZE + len(area) + slack)
    head = _ENTRY.pack(
        size,
        _u32(flags, "flags"),
        _u32(user_data, "user data"),
        counter.counter_type,
        time_base,
        counter.scale,
        machine_at,
        object_at,
        instance_at,
        parent_at,
        counter.instance_index,
        counter_at,
    )
    return head + bytes(area).ljust(size - ENTRY_FIXED_SIZE, b"\0")


def _single(value: RawValue, stamp: int) -> bytes:
    body = _SINGLE_BODY.pack(
        _u32(value.status, "CStatus"),
        stamp,
        0,
        _i64(value.first, "FirstValue"),
        _i64(value.second, "SecondValue"),
        _u32(value.multi_count, "MultiCount"),
        0,
    )
    return SINGLE_TAG + struct.pack("<I", SINGLE_LENGTH) + body


def _array(value: RawArray, stamp: int) -> bytes:
    names = bytearray()
    items = bytearray()
    start = ARRAY_HEAD_SIZE + ARRAY_ITEM_SIZE * len(value.items)
    for item in value.items:
        if "\0" in item.name:
            raise ValueError(f"instance name {item.name!r} contains a NUL")
        items += _ARRAY_ITEM.pack(
            start + len(names),
            _u32(item.multi_count, "MultiCount"),
            _i64(item.first, "FirstValue"),
            _i64(item.second, "SecondValue"),
        )
        names += utf16z(item.name)
    body_size = align8(start + len(names))
    # With size_short the field stops short of the body and the names stay where they are, so the
    # last one may end past it, as in the Windows 11 logs.
    head = _ARRAY_HEAD.pack(
        body_size - value.size_short, len(value.items), _u32(value.status, "CStatus"), 0, stamp
    )
    body = head + bytes(items) + bytes(names).ljust(body_size - start, b"\0")
    return ARRAY_TAG + struct.pack("<I", body_size + 8) + body


def _opaque(value: OpaqueSubRecord) -> bytes:
    body = value.body.ljust(align8(len(value.body)), b"\0")
    return b"BL\x03" + bytes([value.kind]) + struct.pack("<I", len(body) + 8) + body


# --- the writer ----------------------------------------------------------------------------------
class RawBlgWriter:
    """Stream a raw-counter .blg to ``stream`` (binary, seekable: the header is patched at close).

    ``counters`` are the record-32 entries, in sample order. ``pointer_size`` 8 = a 64-bit writer
    (header types 0x02/0x14), 4 = a 32-bit one (0x01/0x0A). ``buffer_style`` None = "win10" for
    64-bit and "vista" for 32-bit writers. ``object_time_base`` is the default time base of
    object-timer types. ``paths_stamp`` is the record-32 event stamp (default: 1 µs before the
    first sample's). ``entry_slack`` zero bytes are added after each entry's strings before its
    size is rounded up to 8 (0 = as the Windows 10 file; the 2003 file's entries carry 8 bytes
    more than their strings need). The header and record 32 are written with the first sample
    (or at close).
    """

    def __init__(
        self,
        stream: BinaryIO,
        counters: Sequence[RawCounter],
        *,
        header: LogHeader | None = None,
        pointer_size: int = 8,
        buffer_size: int = 65536,
        fragment_data: int = 8000,
        buffer_style: BufferStyle | None = None,
        object_time_base: int = _HUNDRED_NS_PER_SECOND,
        paths_stamp: Stamp | None = None,
        entry_slack: int = 0,
    ) -> None:
        check_geometry(pointer_size, buffer_size, fragment_data)
        if not 0 <= entry_slack <= 1024:
            raise ValueError(f"entry_slack must be 0..1024, not {entry_slack}")
        self._entry_slack = entry_slack
        if not counters:
            raise ValueError("a log needs at least one counter")
        if not stream.seekable():
            raise ValueError("the stream must be seekable (the log-file header is patched at close)")
        self._header = header if header is not None else LogHeader()
        self._pointer_size = pointer_size
        self._counters = tuple(counters)
        self._object_time_base = object_time_base
        self._time_bases = tuple(self._time_base(c) for c in self._counters)
        self._paths = self._paths_record()
        self._paths_stamp = None if paths_stamp is None else _stamp(paths_stamp)
        self._offset_ticks = self._header.offset_minutes * _TICKS_PER_MINUTE
        self._container = EtwContainer(
            stream,
            buffer_size=buffer_size,
            fragment_data=fragment_data,
            utc_offset_ticks=self._offset_ticks,
            event_header_type=HEADER_FULL64 if pointer_size == 8 else HEADER_FULL32,
            thread_id=self._header.thread_id,
            process_id=self._header.process_id,
            event_times=self._header.event_times,
            style=buffer_style or ("win10" if pointer_size == 8 else "vista"),
        )
        self._samples = 0
        self._first_local = 0
        self._last_local = 0
        self._start_ft = 0
        self._started = False
        self._closed = False

    # -- context manager ------------------------------------------------------------------------
    def __enter__(self) -> RawBlgWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- public API -----------------------------------------------------------------------------
    @property
    def counters(self) -> tuple[RawCounter, ...]:
        """The record-32 entries, in order."""
        return self._counters

    @property
    def time_bases(self) -> tuple[int, ...]:
        """The time base written for each entry."""
        return self._time_bases

    @property
    def samples(self) -> int:
        """Samples written so far."""
        return self._samples

    @property
    def paths_record(self) -> bytes:
        """Record 32 as written."""
        return self._paths

    def add_sample(self, values: Sequence[SampleValue], local_time: Stamp | None = None) -> None:
        """Append one sample (one type-34 record): ``values[i]`` for ``counters[i]``, a
        ``RawValue`` for a single entry and a ``RawArray`` for a wildcard one.

        ``local_time`` is the event stamp and the default stamp of every sub-record; None = each
        sub-record needs its own stamp and the event gets the last one's.
        """
        if self._closed:
            raise ValueError("the writer is closed")
        if len(values) != len(self._counters):
            raise ValueError(f"a sample needs {len(self._counters)} values, not {len(values)}")
        default = None if local_time is None else _stamp(local_time)
        parts = [SAMPLE_TAG, b"\0\0\0\0"]
        last = default
        for counter, value in zip(self._counters, values, strict=True):
            stamp = default if value.stamp is None else _stamp(value.stamp)
            if stamp is None:
                raise ValueError(f"{counter.path}: no stamp (give local_time or the value's stamp)")
            last = stamp
            if isinstance(value, OpaqueSubRecord):
                parts.append(_opaque(value))
            elif counter.wildcard:
                if not isinstance(value, RawArray):
                    raise TypeError(f"{counter.path} is a wildcard entry: give a RawArray")
                parts.append(_array(value, stamp))
            else:
                if not isinstance(value, RawValue):
                    raise TypeError(f"{counter.path} is a single entry: give a RawValue")
                parts.append(_single(value, stamp))
        record = bytearray(b"".join(parts))
        struct.pack_into("<I", record, 4, len(record))
        event_stamp = default if default is not None else last
        assert event_stamp is not None
        if not self._started:
            self._start(event_stamp)
        if self._samples == 0:
            self._first_local = event_stamp
        self._last_local = event_stamp
        self._samples += 1
        self._container.emit_record(RECORD_SAMPLE, event_stamp, record)

    def close(self) -> None:
        """Flush the last buffer and patch EndTime and BuffersWritten in the header."""
        if self._closed:
            return
        if not self._started:
            h = self._header
            start = _utc_ticks(h.start_utc) if h.start_utc is not None else filetime(datetime(1970, 1, 1))
            self._start(start + self._offset_ticks + PATHS_STAMP_LEAD)
        h = self._header
        if h.end_utc is not None:
            end = _utc_ticks(h.end_utc)
            self._container.stamp = max(self._container.stamp, end)
        elif self._samples:
            end = self._last_local - self._offset_ticks
        else:
            end = self._start_ft
        self._container.finish(end)
        self._closed = True

    # -- internals ------------------------------------------------------------------------------
    def _time_base(self, counter: RawCounter) -> int:
        if counter.time_base is not None:
            return counter.time_base
        timer = counter.counter_type & bw.PERF_TIMER_MASK
        if timer == bw.PERF_TIMER_100NS:
            return _HUNDRED_NS_PER_SECOND
        if timer == bw.PERF_OBJECT_TIMER:
            return self._object_time_base
        return self._header.perf_freq

    def _paths_record(self) -> bytes:
        default_flags = FLAG_64BIT_WRITER if self._pointer_size == 8 else 0
        entries = []
        for index, (counter, time_base) in enumerate(zip(self._counters, self._time_bases, strict=True)):
            flags = counter.flags
            if flags is None:
                flags = default_flags | (FLAG_WILDCARD if counter.wildcard else 0)
            user_data = index if counter.user_data is None else counter.user_data
            entries.append(_entry(counter, time_base, flags, user_data, self._entry_slack))
        return struct.pack("<II", PATHS_MAGIC, PATHS_SECOND) + b"".join(entries)

    def _start(self, first_local: int) -> None:
        h = self._header
        start_ft = _utc_ticks(h.start_utc) if h.start_utc is not None else first_local - self._offset_ticks
        self._start_ft = start_ft
        boot_ft = _utc_ticks(h.boot_utc) if h.boot_utc is not None else start_ft - _BOOT_BEFORE_START
        machine = self._counters[0].machine.lstrip("\\")
        guid = h.log_guid or uuid.uuid5(uuid.NAMESPACE_OID, f"esrp-report raw blg {machine} {start_ft}")
        ps = self._pointer_size
        mode = h.log_file_mode
        if mode is None:
            mode = 0x30020801 if ps == 8 else 0x01000001
        self._container.log_guid = guid.bytes_le
        self._container.write_header(
            LogFileHeader(
                pointer_size=ps,
                perf_freq=h.perf_freq,
                start_ft=start_ft,
                boot_ft=boot_ft,
                time_zone=h.time_zone,
                logger_name=str(guid),
                log_file_name=h.log_file_name,
                os_version=h.os_version,
                os_build=h.os_build,
                processors=h.processors,
                cpu_mhz=h.cpu_mhz,
                timer_resolution=h.timer_resolution,
                log_file_mode=mode,
                name_pointers=(0, 0),
                header_version=0 if ps == 8 else 1,
                thread_id=h.thread_id,
                process_id=h.process_id,
                kernel_time=h.header_times[0],
                user_time=h.header_times[1],
            )
        )
        self._started = True
        stamp = self._paths_stamp if self._paths_stamp is not None else first_local - PATHS_STAMP_LEAD
        self._container.emit_record(RECORD_PATHS, stamp, self._paths)


def write_raw_blg(
    path: str | Path,
    counters: Sequence[RawCounter],
    samples: Iterable[RawSample],
    *,
    header: LogHeader | None = None,
    pointer_size: int = 8,
    buffer_size: int = 65536,
    fragment_data: int = 8000,
    buffer_style: BufferStyle | None = None,
    object_time_base: int = _HUNDRED_NS_PER_SECOND,
    paths_stamp: Stamp | None = None,
    entry_slack: int = 0,
) -> None:
    """Write a whole raw-counter log to ``path`` from an iterable of samples (streamed)."""
    with (
        Path(path).open("wb") as stream,
        RawBlgWriter(
            stream,
            counters,
            header=header,
            pointer_size=pointer_size,
            buffer_size=buffer_size,
            fragment_data=fragment_data,
            buffer_style=buffer_style,
            object_time_base=object_time_base,
            paths_stamp=paths_stamp,
            entry_slack=entry_slack,
        ) as writer,
    ):
        for sample in samples:
            writer.add_sample(sample.values, sample.local_time)
