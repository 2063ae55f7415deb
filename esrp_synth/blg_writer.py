"""Write Windows performance-monitor binary logs (.blg, the Vista-and-later ETW container).

Used by the tests (logs with known raw values for every counter type), for the bundled sample
logs and by the benchmark (a ~1 GB Jetstress-shaped log). Built only from the project's format
notes (``blg-format.md``) and the public winperf.h structure layouts and counter-type constants.

What a file holds, in order (all little-endian, fixed-size buffers of ``buffer_size`` bytes):

* Buffer 0: the log-file header event (system trace header, then TRACE_LOGFILE_HEADER with the
  time-zone block, PerfFreq, start/boot times, the log GUID as logger name and a file name).
* Buffers 1..N: PDH events (48-byte full trace header, class GUID of the PDH provider, local-time
  stamp, then a 24-byte prefix: log GUID, fragment number, fragment count). A record longer than
  ``fragment_data`` bytes is cut into fragments; events never straddle a buffer, fragments may.
  Record kinds: 36 name table (self-contained events), 32 requested paths, 34 one sample per
  ``add_sample`` (one PERF_DATA_BLOCK per object), 35 the closing catalog.

The container (buffers, the log-file header event, PDH events and their fragmentation) is
``blg_container``'s, shared with ``blg_raw_writer``; this writer uses its ``"vista"`` buffer style.

Choices where the notes leave freedom (see also the class docstrings):

* Title indices are assigned here: 2, 4, 6, ... to each distinct object and counter name in
  the order they are declared; help indices are name index + 1. The name table also carries the
  pair "1" -> highest index, as perflib's table does.
* Counter blocks: DWORD ByteLength, then the definitions' values in definition order, DWORDs
  4-aligned and 8-byte values 8-aligned; holes are filled with garbage (0xCD) and the block length
  is rounded up to 8. Base definitions follow their counter and carry its name index.
* Objects with ``has_object_time`` carry PerfFreq = ``object_perf_freq`` (default 10,000,000, as
  real Process/System objects) and PerfTime = the sample's ``object_times`` entry, by default the
  sample's ``perf_time_100ns``.
* Time-zone block: Bias = -utc_offset_minutes, no daylight rule (DaylightDate zero,
  DaylightBias 0), both names ``time_zone_name`` (default "UTC+hh:mm").
* Pad bytes between events are non-zero garbage; the unused end of each buffer is 0xFF.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Final

import numpy as np
import numpy.typing as npt

from esrp_synth import blg_container as _etw
from esrp_synth.blg_container import EtwContainer, LogFileHeader, TimeZone, check_geometry
from esrp_synth.blg_container import align8 as _align8
from esrp_synth.blg_container import utf16z as _utf16z

__all__ = [
    "BASE_TYPE_FOR",
    "PDH_EVENT_GUID",
    "BlgWriter",
    "Counter",
    "PerfObject",
    "SampleSpec",
    "write_blg",
]

# --- winperf.h counter-type constants ---------------------------------------------------------
PERF_SIZE_LARGE: Final = 0x00000100
PERF_TIMER_100NS: Final = 0x00100000
PERF_OBJECT_TIMER: Final = 0x00200000
PERF_TIMER_MASK: Final = 0x00300000

PERF_COUNTER_RAWCOUNT_HEX: Final = 0x00000000
PERF_COUNTER_LARGE_RAWCOUNT_HEX: Final = 0x00000100
PERF_COUNTER_RAWCOUNT: Final = 0x00010000
PERF_COUNTER_LARGE_RAWCOUNT: Final = 0x00010100
PERF_COUNTER_DELTA: Final = 0x00400400
PERF_COUNTER_LARGE_DELTA: Final = 0x00400500
PERF_SAMPLE_COUNTER: Final = 0x00410400
PERF_COUNTER_QUEUELEN_TYPE: Final = 0x00450400
PERF_COUNTER_LARGE_QUEUELEN_TYPE: Final = 0x00450500
PERF_COUNTER_100NS_QUEUELEN_TYPE: Final = 0x00550500
PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE: Final = 0x00650500
PERF_COUNTER_COUNTER: Final = 0x10410400
PERF_COUNTER_BULK_COUNT: Final = 0x10410500
PERF_RAW_FRACTION: Final = 0x20020400
PERF_LARGE_RAW_FRACTION: Final = 0x20020500
PERF_COUNTER_TIMER: Final = 0x20410500
PERF_PRECISION_SYSTEM_TIMER: Final = 0x20470500
PERF_100NSEC_TIMER: Final = 0x20510500
PERF_PRECISION_100NS_TIMER: Final = 0x20570500
PERF_OBJ_TIME_TIMER: Final = 0x20610500
PERF_PRECISION_OBJECT_TIMER: Final = 0x20670500
PERF_SAMPLE_FRACTION: Final = 0x20C20400
PERF_COUNTER_TIMER_INV: Final = 0x21410500
PERF_100NSEC_TIMER_INV: Final = 0x21510500
PERF_COUNTER_MULTI_TIMER: Final = 0x22410500
PERF_100NSEC_MULTI_TIMER: Final = 0x22510500
PERF_COUNTER_MULTI_TIMER_INV: Final = 0x23410500
PERF_100NSEC_MULTI_TIMER_INV: Final = 0x23510500
PERF_AVERAGE_TIMER: Final = 0x30020400
PERF_ELAPSED_TIME: Final = 0x30240500
PERF_AVERAGE_BULK: Final = 0x40020500
# Base types (not displayed; they follow the counter that needs them).
PERF_SAMPLE_BASE: Final = 0x40030401
PERF_AVERAGE_BASE: Final = 0x40030402
PERF_RAW_BASE: Final = 0x40030403
PERF_LARGE_RAW_BASE: Final = 0x40030500
PERF_PRECISION_TIMESTAMP: Final = PERF_LARGE_RAW_BASE
PERF_COUNTER_MULTI_BASE: Final = 0x42030500

BASE_TYPE_FOR: dict[int, int] = {
    PERF_RAW_FRACTION: PERF_RAW_BASE,
    PERF_LARGE_RAW_FRACTION: PERF_LARGE_RAW_BASE,
    PERF_SAMPLE_FRACTION: PERF_SAMPLE_BASE,
    PERF_AVERAGE_TIMER: PERF_AVERAGE_BASE,
    PERF_AVERAGE_BULK: PERF_AVERAGE_BASE,
    PERF_PRECISION_SYSTEM_TIMER: PERF_PRECISION_TIMESTAMP,
    PERF_PRECISION_100NS_TIMER: PERF_PRECISION_TIMESTAMP,
    PERF_PRECISION_OBJECT_TIMER: PERF_PRECISION_TIMESTAMP,
    PERF_COUNTER_MULTI_TIMER: PERF_COUNTER_MULTI_BASE,
    PERF_COUNTER_MULTI_TIMER_INV: PERF_COUNTER_MULTI_BASE,
    PERF_100NSEC_MULTI_TIMER: PERF_COUNTER_MULTI_BASE,
    PERF_100NSEC_MULTI_TIMER_INV: PERF_COUNTER_MULTI_BASE,
}
"""Counter type -> the base definition type written after it by default."""

# --- record kinds and fixed values of the container -------------------------------------------
RECORD_PATHS: Final = 32
RECORD_SAMPLE: Final = 34
RECORD_CATALOG: Final = 35
RECORD_NAMES: Final = 36

# The container's (blg_container), kept here under their old names.
PDH_EVENT_GUID: Final = _etw.PDH_EVENT_GUID
EVENT_VERSION: Final = _etw.EVENT_VERSION
BUFFER_HEADER_SIZE: Final = _etw.BUFFER_HEADER_SIZE
EVENT_HEADER_SIZE: Final = _etw.EVENT_HEADER_SIZE
PAYLOAD_PREFIX_SIZE: Final = _etw.PAYLOAD_PREFIX_SIZE
PDH_OVERHEAD: Final = _etw.PDH_OVERHEAD
OBJECT_TYPE_SIZE: Final = 64
COUNTER_DEFINITION_SIZE: Final = 40
INSTANCE_DEFINITION_SIZE: Final = 24
DATA_BLOCK_NAME_OFFSET: Final = 88
DETAIL_NOVICE: Final = 100

SAMPLE_TAG: Final = b"BL\x03\x00"
OBJECT_TAG: Final = b"BL\x03\x05"
PATHS_MAGIC: Final = 0x000006FF
CATALOG_MAGIC: Final = 0x000005FF

_BOOT_BEFORE_START: Final = 3_600 * 10_000_000  # BootTime = StartTime - 1 h
_HOLE_FILL: Final = 0xCD
_FILETIME_EPOCH: Final = datetime(1601, 1, 1)
_TICKS_PER_MINUTE: Final = 600_000_000


IntArray = npt.NDArray[np.integer[Any]]
_Index = npt.NDArray[np.intp]


# --- public description of what is logged ----------------------------------------------------
@dataclass(frozen=True)
class Counter:
    """One displayable counter of an object.

    ``size`` is the CounterSize written (4 = DWORD, unsigned; 8 = 64-bit). A counter whose type
    is in ``BASE_TYPE_FOR``, or that is given a ``base_type``, is followed by a base definition
    with the same name index; the base's size follows its type's size bits (DWORD or LARGE).
    """

    name: str
    counter_type: int
    size: int = 8
    scale: int = 0
    base_type: int | None = None

    def __post_init__(self) -> None:
        if self.size not in (4, 8):
            raise ValueError(f"counter {self.name!r}: size must be 4 or 8, not {self.size}")
        if not self.name:
            raise ValueError("a counter needs a name")

    @property
    def base(self) -> int | None:
        """The base definition type written after this counter, or None."""
        if self.base_type is not None:
            return self.base_type
        return BASE_TYPE_FOR.get(self.counter_type)


@dataclass(frozen=True)
class PerfObject:
    """One performance object. ``instances`` None = no instances (NumInstances -1, values shaped
    (1, counters)); names may repeat (a reader numbers them name, name#1, ...)."""

    name: str
    counters: tuple[Counter, ...]
    instances: tuple[str, ...] | None
    has_object_time: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("an object needs a name")
        for counter in self.counters:
            if counter.counter_type & PERF_TIMER_MASK == PERF_OBJECT_TIMER and not self.has_object_time:
                raise ValueError(
                    f"object {self.name!r}: counter {counter.name!r} is an object-timer type; "
                    "give the object has_object_time=True"
                )


@dataclass(frozen=True)
class SampleSpec:
    """The arguments of one ``BlgWriter.add_sample`` call, for ``write_blg``."""

    local_time: datetime
    perf_time: int
    perf_time_100ns: int
    values: Mapping[str, IntArray]
    bases: Mapping[str, IntArray] | None = None
    object_times: Mapping[str, int] | None = None
    instances: Mapping[str, tuple[str, ...]] | None = None


# --- small helpers ----------------------------------------------------------------------------
def _ticks(dt: datetime) -> int:
    """100 ns ticks since 1601-01-01 of a naive wall-clock datetime."""
    delta = dt - _FILETIME_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def _utc_naive(dt: datetime) -> datetime:
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo is not None else dt


def _systemtime(dt: datetime) -> npt.NDArray[np.uint16]:
    weekday = (dt.weekday() + 1) % 7  # SYSTEMTIME counts from Sunday = 0
    fields = (dt.year, dt.month, weekday, dt.day, dt.hour, dt.minute, dt.second, dt.microsecond // 1000)
    return np.array(fields, dtype="<u2")


def _size_of_type(counter_type: int) -> int:
    return 8 if counter_type & PERF_SIZE_LARGE else 4


def _time_zone_name(offset_minutes: int) -> str:
    sign = "+" if offset_minutes >= 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


# --- per-object schema: definitions and counter-block layout ----------------------------------
@dataclass(frozen=True)
class _Definition:
    name_index: int
    counter_type: int
    size: int
    scale: int
    offset: int  # from the start of the PERF_COUNTER_BLOCK
    column: int  # column of the values/bases array
    is_base: bool


class _ObjectSchema:
    """Everything about an object that does not depend on its instance list."""

    def __init__(self, obj: PerfObject, title: Mapping[str, int], object_perf_freq: int) -> None:
        self.obj = obj
        self.index = title[obj.name]
        self.perf_freq = object_perf_freq if obj.has_object_time else 0
        defs: list[_Definition] = []
        pos = 4  # after the block's DWORD ByteLength
        for col, counter in enumerate(obj.counters):
            entries = [(counter.counter_type, counter.size, counter.scale, False)]
            base = counter.base
            if base is not None:
                entries.append((base, _size_of_type(base), 0, True))
            for ctype, size, scale, is_base in entries:
                pos = _align8(pos) if size == 8 else (pos + 3) & ~3
                defs.append(_Definition(title[counter.name], ctype, size, scale, pos, col, is_base))
                pos += size
        self.defs = tuple(defs)
        self.block_length = _align8(pos)
        self.definitions = b"".join(
            struct.pack(
                "<IIIIIiIIII",
                COUNTER_DEFINITION_SIZE,
                d.name_index,
                0,
                d.name_index + 1,
                0,
                d.scale,
                DETAIL_NOVICE,
                d.counter_type,
                d.size,
                d.offset,
            )
            for d in defs
        )
        block = np.full(self.block_length, _HOLE_FILL, dtype=np.uint8)
        block[:4] = np.frombuffer(struct.pack("<I", self.block_length), dtype=np.uint8)
        self.block_template = block

        def pick(size: int, is_base: bool) -> tuple[_Index, _Index]:
            chosen = [d for d in defs if d.size == size and d.is_base == is_base]
            offsets = np.array([d.offset for d in chosen], dtype=np.intp)
            columns = np.array([d.column for d in chosen], dtype=np.intp)
            return offsets, columns

        self.off8, self.cols8 = pick(8, False)
        self.off4, self.cols4 = pick(4, False)
        self.boff8, self.bcols8 = pick(8, True)
        self.boff4, self.bcols4 = pick(4, True)
        self.has_bases = any(d.is_base for d in defs)

    def time_base(self, counter_type: int, block_freq: int) -> int:
        timer = counter_type & PERF_TIMER_MASK
        if timer == PERF_TIMER_100NS:
            return 10_000_000
        if timer == PERF_OBJECT_TIMER and self.perf_freq:
            return self.perf_freq
        return block_freq


@dataclass
class _Part:
    """One object's place inside a sample record (indices in units of the view's item size)."""

    schema: _ObjectSchema
    count: int  # instances, or 1 for an object without instances
    idx8: _Index
    idx4: _Index
    bidx8: _Index
    bidx4: _Index
    object_time: int | None  # int64 index of the object's PerfTime, if it has one


class _RecordLayout:
    """The byte template of a whole type-34 record for one combination of instance lists, with
    the positions of every value slot, so a sample is filled by numpy assignments alone."""

    def __init__(
        self,
        schemas: Sequence[_ObjectSchema],
        instances: Sequence[tuple[str, ...] | None],
        system_name: bytes,
        block_freq: int,
    ) -> None:
        pieces: list[npt.NDArray[np.uint8]] = []
        parts: list[_Part] = []
        systimes: list[int] = []
        perftimes: list[int] = []
        pos = 8  # the record's container header
        header_length = _align8(DATA_BLOCK_NAME_OFFSET + len(system_name))
        for schema, names in zip(schemas, instances, strict=True):
            object_start = pos + 8 + header_length
            definition_length = OBJECT_TYPE_SIZE + len(schema.definitions)
            chunks: list[npt.NDArray[np.uint8]] = []
            block_starts: list[int] = []
            at = definition_length
            if names is None:
                block_starts.append(at)
                chunks.append(schema.block_template)
                at += schema.block_length
            else:
                for name in names:
                    encoded = _utf16z(name)
                    length = _align8(INSTANCE_DEFINITION_SIZE + len(encoded))
                    head = struct.pack(
                        "<IIIiII", length, 0, 0, -1, INSTANCE_DEFINITION_SIZE, len(encoded)
                    ) + encoded.ljust(length - INSTANCE_DEFINITION_SIZE, b"\0")
                    chunks.append(np.frombuffer(head, dtype=np.uint8))
                    block_starts.append(at + length)
                    chunks.append(schema.block_template)
                    at += length + schema.block_length
            object_length = at
            block_length = header_length + object_length
            count = -1 if names is None else len(names)
            sub_header = OBJECT_TAG + struct.pack("<I", block_length + 8)
            data_block = struct.pack(
                "<8sIIIIIII16s4xqqqII",
                "PERF".encode("utf-16-le"),
                1,
                1,
                1,
                block_length,
                header_length,
                1,
                schema.index,
                b"",
                0,
                block_freq,
                0,
                len(system_name),
                DATA_BLOCK_NAME_OFFSET,
            ) + system_name.ljust(header_length - DATA_BLOCK_NAME_OFFSET, b"\0")
            object_type = struct.pack(
                "<IIIIIIIIIiiiqq",
                object_length,
                definition_length,
                OBJECT_TYPE_SIZE,
                schema.index,
                0,
                schema.index + 1,
                0,
                DETAIL_NOVICE,
                len(schema.defs),
                0,
                count,
                0,
                0,
                schema.perf_freq,
            )
            pieces.append(
                np.frombuffer(sub_header + data_block + object_type + schema.definitions, dtype=np.uint8)
            )
            pieces.extend(chunks)
            systimes.append(pos + 8 + 36)
            perftimes.append(pos + 8 + 56)
            starts = object_start + np.array(block_starts, dtype=np.intp)[:, None]
            parts.append(
                _Part(
                    schema,
                    len(block_starts),
                    ((starts + schema.off8) // 8).ravel(),
                    ((starts + schema.off4) // 4).ravel(),
                    ((starts + schema.boff8) // 8).ravel(),
                    ((starts + schema.boff4) // 4).ravel(),
                    (object_start + 48) // 8 if schema.obj.has_object_time else None,
                )
            )
            pos += 8 + block_length
        container = np.frombuffer(SAMPLE_TAG + struct.pack("<I", pos), dtype=np.uint8)
        self.buffer: npt.NDArray[np.uint8] = np.concatenate([container, *pieces])
        assert len(self.buffer) == pos and pos % 8 == 0
        self.v64 = self.buffer.view("<i8")
        self.v32 = self.buffer.view("<u4")
        self.v16 = self.buffer.view("<u2")
        self.parts = parts
        self.systime_idx = (np.array(systimes, dtype=np.intp)[:, None] // 2 + np.arange(8)).reshape(-1, 8)
        perf = np.array(perftimes, dtype=np.intp) // 8
        self.perftime_idx = perf  # PerfTime; PerfFreq is +1 (constant), PerfTime100nSec +2


# --- the writer -------------------------------------------------------------------------------
class BlgWriter:
    """Stream a .blg to ``stream`` (binary, seekable: the header is patched at ``close``).

    ``utc_offset_minutes``: local = UTC + offset (header Bias = -offset). ``start_utc`` (aware, or
    naive UTC) is the log start; None = the UTC time of the first sample (the header is then
    written with the first sample). ``object_perf_freq`` is the PerfFreq of objects with
    ``has_object_time``. ``log_guid`` defaults to a GUID derived from machine and start time, so
    output is reproducible.
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        machine: str,
        objects: Sequence[PerfObject],
        utc_offset_minutes: int = 0,
        pointer_size: int = 4,
        buffer_size: int = 65536,
        fragment_data: int = 8000,
        perf_freq: int = 10_000_000,
        start_utc: datetime | None = None,
        object_perf_freq: int = 10_000_000,
        time_zone_name: str | None = None,
        log_guid: uuid.UUID | None = None,
        log_file_name: str = "C:\\PerfLogs\\Admin\\DataCollector01.blg",
    ) -> None:
        check_geometry(pointer_size, buffer_size, fragment_data)
        names = [obj.name for obj in objects]
        if len(set(names)) != len(names):
            raise ValueError("object names must be unique within a log")
        if not stream.seekable():
            raise ValueError("the stream must be seekable (the log-file header is patched at close)")
        self._machine = machine.lstrip("\\")
        self._objects = tuple(objects)
        self._offset_ticks = utc_offset_minutes * _TICKS_PER_MINUTE
        self._utc_offset_minutes = utc_offset_minutes
        self._pointer_size = pointer_size
        self._fragment_data = fragment_data
        self._perf_freq = perf_freq
        self._start_utc = _utc_naive(start_utc) if start_utc is not None else None
        self._tz_name = time_zone_name if time_zone_name is not None else _time_zone_name(utc_offset_minutes)
        if len(self._tz_name) > 31:
            raise ValueError("time_zone_name must be at most 31 characters")
        self._log_guid = log_guid
        self._log_file_name = log_file_name

        # Title indices: even numbers in declaration order, one per distinct name.
        self._titles: dict[str, int] = {}
        for obj in self._objects:
            for name in (obj.name, *(c.name for c in obj.counters)):
                self._titles.setdefault(name, 2 * (len(self._titles) + 1))
        self._schemas = [_ObjectSchema(obj, self._titles, object_perf_freq) for obj in self._objects]
        self._system_name = _utf16z(self._machine)
        self._default_instances = tuple(obj.instances for obj in self._objects)
        self._layouts: dict[tuple[tuple[str, ...] | None, ...], _RecordLayout] = {}

        # Catalog state: per object, instance name -> most occurrences in one sample (ordered).
        self._seen: list[dict[str, int]] = [{} for _ in self._objects]
        self._last_lists: list[tuple[str, ...] | None] = [None for _ in self._objects]
        self._samples = 0
        self._first_local = 0
        self._last_local = 0

        self._container = EtwContainer(
            stream, buffer_size=buffer_size, fragment_data=fragment_data, utc_offset_ticks=self._offset_ticks
        )
        self._start_ft = 0
        self._start_local = 0
        self._started = False
        self._closed = False
        if self._start_utc is not None:
            self._start(self._start_utc)

    # -- context manager ------------------------------------------------------------------------
    def __enter__(self) -> BlgWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._closed:
            self.close(write_catalog=exc_type is None)

    # -- public API -----------------------------------------------------------------------------
    @property
    def title_indices(self) -> dict[str, int]:
        """Name -> title index as written (objects and counters)."""
        return dict(self._titles)

    def add_sample(  # noqa: PLR0917 - the positional order is the documented API
        self,
        local_time: datetime,
        perf_time: int,
        perf_time_100ns: int,
        values: Mapping[str, IntArray],
        bases: Mapping[str, IntArray] | None = None,
        object_times: Mapping[str, int] | None = None,
        instances: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        """Append one sample (one type-34 record).

        ``local_time`` is the collector's wall clock (naive; written as event TimeStamp and
        SYSTEMTIME, pass whole milliseconds as perfmon does). ``values[object]`` is an integer
        array shaped (instances or 1, counters): the FirstValue of each counter (DWORD counters
        must fit 0..2**32-1; 8-byte ones are written as int64). ``bases[object]`` has the same
        shape and gives the value of the base definition after each counter that has one
        (other columns ignored); required for objects with such counters. ``object_times`` gives
        the PerfTime of objects with ``has_object_time`` (default ``perf_time_100ns``; their
        PerfFreq is ``object_perf_freq``). ``instances`` replaces an object's instance list for
        this sample only.
        """
        if self._closed:
            raise ValueError("the writer is closed")
        local_time = local_time.replace(tzinfo=None)
        local_ft = _ticks(local_time)
        if not self._started:
            self._start(None, local_ft)
        key = self._default_instances
        if instances:
            lists = list(key)
            for name, names in instances.items():
                position = self._position(name)
                if self._objects[position].instances is None:
                    raise ValueError(f"object {name!r} has no instances; it cannot be given an instance list")
                lists[position] = tuple(names)
            key = tuple(lists)
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= 64:
                self._layouts.clear()
            layout = _RecordLayout(self._schemas, key, self._system_name, self._perf_freq)
            self._layouts[key] = layout

        v64 = layout.v64
        layout.v16[layout.systime_idx] = _systemtime(local_time)
        v64[layout.perftime_idx] = perf_time
        v64[layout.perftime_idx + 2] = perf_time_100ns
        for part in layout.parts:
            name = part.schema.obj.name
            array = self._array(values, name, part, "values")
            s = part.schema
            _fill(layout, array, name, idx=(part.idx8, part.idx4), cols=(s.cols8, s.cols4))
            if part.schema.has_bases:
                if bases is None or name not in bases:
                    raise ValueError(f"object {name!r} has counters with a base: give bases[{name!r}]")
                base_array = self._array(bases, name, part, "bases")
                _fill(layout, base_array, name, idx=(part.bidx8, part.bidx4), cols=(s.bcols8, s.bcols4))
            if part.object_time is not None:
                given = object_times.get(name) if object_times else None
                v64[part.object_time] = perf_time_100ns if given is None else given

        for position, listed in enumerate(key):
            if listed is not None and listed is not self._last_lists[position]:
                self._note_instances(position, listed)
        self._samples += 1
        if self._samples == 1:
            self._first_local = local_ft
        self._last_local = local_ft
        self._emit_record(RECORD_SAMPLE, local_ft, layout.buffer.data)

    def close(self, *, write_catalog: bool = True) -> None:
        """Flush the last buffer and patch the log-file header.

        With ``write_catalog`` the closing type-35 catalog is written and the header gets
        EndTime (UTC of the last sample) and BuffersWritten. ``write_catalog=False`` imitates a
        log that was never closed: no catalog and EndTime left 0 (BuffersWritten is still set).
        """
        if self._closed:
            return
        if not self._started:
            self._start(None, _ticks(datetime(1970, 1, 1)) + self._offset_ticks)
        end_utc: int | None = None
        if write_catalog:
            stamp = self._last_local if self._samples else self._start_local
            self._emit_record(RECORD_CATALOG, stamp, memoryview(self._catalog()))
            end_utc = (self._last_local - self._offset_ticks) if self._samples else self._start_ft
        self._container.finish(end_utc)
        self._closed = True

    # -- start: log-file header, name table, requested paths -----------------------------------
    def _start(self, start_utc: datetime | None, first_local_ft: int | None = None) -> None:
        if start_utc is not None:
            start_ft = _ticks(start_utc)
        else:
            assert first_local_ft is not None
            start_ft = first_local_ft - self._offset_ticks
        self._start_ft = start_ft
        self._start_local = start_ft + self._offset_ticks
        guid = self._log_guid or uuid.uuid5(uuid.NAMESPACE_OID, f"esrp-report blg {self._machine} {start_ft}")
        self._container.log_guid = guid.bytes_le
        self._write_header_buffer(start_ft, str(guid))
        self._started = True
        for chunk in self._name_table_events():
            self._emit_event(RECORD_NAMES, self._start_local, memoryview(chunk), 1, 1)
        self._emit_record(RECORD_PATHS, self._start_local, memoryview(self._paths_record()))

    def _write_header_buffer(self, start_ft: int, guid_text: str) -> None:
        tz_name = self._tz_name
        self._container.write_header(
            LogFileHeader(
                pointer_size=self._pointer_size,
                perf_freq=self._perf_freq,
                start_ft=start_ft,
                boot_ft=start_ft - _BOOT_BEFORE_START,
                time_zone=TimeZone(-self._utc_offset_minutes, tz_name, tz_name),
                logger_name=guid_text,
                log_file_name=self._log_file_name,
            )
        )

    def _name_table_events(self) -> list[bytes]:
        machine = _utf16z("\\\\" + self._machine)
        highest = max(self._titles.values(), default=0)
        pairs = [("1", str(highest)), *((str(index), name) for name, index in self._titles.items())]
        events: list[bytes] = []
        current = bytearray(machine)
        count = 0
        limit = self._fragment_data
        for index, name in pairs:
            encoded = _utf16z(index) + _utf16z(name)
            if count and len(current) + len(encoded) > limit:
                events.append(bytes(current))
                current = bytearray(machine)
                count = 0
            current += encoded
            count += 1
            if len(current) > limit:
                raise ValueError(f"name {name!r} does not fit in a name-table event of {limit} bytes")
        events.append(bytes(current))
        return events

    def _paths_record(self) -> bytes:
        machine = _utf16z("\\\\" + self._machine)
        entries = bytearray()
        for obj in self._objects:
            has_instances = obj.instances is not None
            area = bytearray(b"\0\0\0\0" if has_instances else b"")
            machine_at = len(area)
            area += machine
            object_at = len(area)
            area += _utf16z(obj.name)
            instance_at = -1
            if has_instances:
                instance_at = len(area)
                area += _utf16z("*")
            counter_at = len(area)
            area += _utf16z("*")
            size = _align8(52 + len(area))
            entries += struct.pack(
                "<IIII12xiiiiii", size, 0x10, 0, 0x10, machine_at, object_at, instance_at, -1, 0, counter_at
            )
            entries += area.ljust(size - 52, b"\0")
        if len(self._objects) > 0xFFFF:
            raise ValueError("too many objects for one log")
        return struct.pack("<II", PATHS_MAGIC, 0x00020000 | len(self._objects)) + bytes(entries)

    # -- catalog ----------------------------------------------------------------------------------
    def _note_instances(self, position: int, names: tuple[str, ...]) -> None:
        self._last_lists[position] = names
        seen = self._seen[position]
        counts: dict[str, int] = {}
        for name in names:
            counts[name] = counts.get(name, 0) + 1
        for name, count in counts.items():
            if count > seen.get(name, 0):
                seen[name] = count

    def _catalog(self) -> bytes:
        entries = bytearray()
        for schema, seen in zip(self._schemas, self._seen, strict=True):
            defs = schema.defs
            n = len(defs)
            body = bytearray()
            listed: list[tuple[str, int]] = []
            if schema.obj.instances is not None:
                # Duplicates: highest ordinal first, at the name's first appearance.
                listed = [(name, k) for name, count in seen.items() for k in range(count - 1, -1, -1)]
            number = -1 if schema.obj.instances is None else len(listed)
            body += struct.pack(
                f"<iI{n}I{n}I", number, n, *(d.name_index for d in defs), *(d.counter_type for d in defs)
            )
            body += b"\0" * (_align8(len(body)) - len(body))
            body += struct.pack(f"<{n}q", *(schema.time_base(d.counter_type, self._perf_freq) for d in defs))
            body += struct.pack(f"<{n}i", *(d.scale for d in defs))
            body += b"\0" * (_align8(len(body)) - len(body))
            strings = bytearray()
            for name, ordinal in listed:
                body += struct.pack("<IIii", len(strings), ordinal, -1, -1)
                strings += _utf16z(name)
            body += strings
            body += b"\0" * (_align8(len(body)) - len(body))
            entries += OBJECT_TAG + struct.pack("<I", len(body) + 8) + body
        length = 32 + len(entries)
        first = self._first_local if self._samples else self._start_local
        last = self._last_local if self._samples else self._start_local
        head = struct.pack("<qqIIII", first, last, self._samples, len(self._objects), length, CATALOG_MAGIC)
        return head + bytes(entries)

    # -- events ---------------------------------------------------------------------------------------
    def _emit_record(self, kind: int, local_ft: int, data: memoryview) -> None:
        self._container.emit_record(kind, local_ft, data)

    def _emit_event(self, kind: int, local_ft: int, chunk: memoryview, number: int, count: int) -> None:
        self._container.emit_event(kind, local_ft, chunk, number, count)

    # -- helpers ------------------------------------------------------------------------------------
    def _position(self, name: str) -> int:
        for position, obj in enumerate(self._objects):
            if obj.name == name:
                return position
        raise ValueError(f"unknown object {name!r}")

    @staticmethod
    def _array(arrays: Mapping[str, IntArray], name: str, part: _Part, what: str) -> IntArray:
        try:
            array = arrays[name]
        except KeyError:
            raise ValueError(f"{what} has no array for object {name!r}") from None
        shape = (part.count, len(part.schema.obj.counters))
        if array.shape != shape:
            raise ValueError(f"{what}[{name!r}] has shape {array.shape}, expected {shape}")
        if array.dtype.kind not in "iu":
            raise TypeError(f"{what}[{name!r}] must be an integer array, not {array.dtype}")
        return array


def _fill(
    layout: _RecordLayout,
    array: IntArray,
    name: str,
    *,
    idx: tuple[_Index, _Index],
    cols: tuple[_Index, _Index],
) -> None:
    """Put the columns ``cols`` (8-byte, 4-byte) of ``array`` into the slots ``idx`` of the record."""
    idx8, idx4 = idx
    cols8, cols4 = cols
    if len(idx8):
        layout.v64[idx8] = array[:, cols8].ravel()
    if len(idx4):
        dwords = array[:, cols4]
        if dwords.min() < 0 or dwords.max() > 0xFFFFFFFF:
            raise ValueError(f"object {name!r}: a DWORD counter value is outside 0..2**32-1")
        layout.v32[idx4] = dwords.ravel()


def write_blg(
    path: str | Path,
    *,
    machine: str,
    objects: Sequence[PerfObject],
    samples: Iterable[SampleSpec],
    write_catalog: bool = True,
    utc_offset_minutes: int = 0,
    pointer_size: int = 4,
    buffer_size: int = 65536,
    fragment_data: int = 8000,
    perf_freq: int = 10_000_000,
    start_utc: datetime | None = None,
    object_perf_freq: int = 10_000_000,
    time_zone_name: str | None = None,
    log_guid: uuid.UUID | None = None,
) -> None:
    """Write a whole log to ``path`` from an iterable of samples (streamed)."""
    with Path(path).open("wb") as stream:
        writer = BlgWriter(
            stream,
            machine=machine,
            objects=objects,
            utc_offset_minutes=utc_offset_minutes,
            pointer_size=pointer_size,
            buffer_size=buffer_size,
            fragment_data=fragment_data,
            perf_freq=perf_freq,
            start_utc=start_utc,
            object_perf_freq=object_perf_freq,
            time_zone_name=time_zone_name,
            log_guid=log_guid,
        )
        for sample in samples:
            writer.add_sample(
                sample.local_time,
                sample.perf_time,
                sample.perf_time_100ns,
                sample.values,
                sample.bases,
                sample.object_times,
                sample.instances,
            )
        writer.close(write_catalog=write_catalog)
