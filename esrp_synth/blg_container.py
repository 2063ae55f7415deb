"""The event-trace container of binary perfmon logs (.blg), shared by the synthetic writers.

``blg_writer`` (per-object PERF_DATA_BLOCK samples, the Windows Vista layout) and
``blg_raw_writer`` (raw PDH counter samples, the layout of Server 2003 and Windows 8 and later
writers) put their records in the same container, written here (all little-endian):

* fixed-size buffers of ``buffer_size`` bytes, each a 72-byte buffer header, then events packed to
  8-byte alignment (pad bytes between events are non-zero garbage), then 0xFF up to the end;
* buffer 0: the log-file header event (system trace header of type ``HEADER_SYSTEM32`` or
  ``HEADER_SYSTEM64`` after the pointer size, then TRACE_LOGFILE_HEADER with the time-zone block,
  BootTime, PerfFreq, StartTime, the logger name and the log-file name);
* buffers 1..N: PDH events: a 48-byte full trace header (``HEADER_FULL32`` or ``HEADER_FULL64``,
  record kind in the class-type byte, local-time stamp, PDH class GUID), then the log GUID, the
  fragment number and the fragment count, then up to ``fragment_data`` bytes of the record.
  Records longer than that are cut into fragments; an event never straddles a buffer, a record's
  fragments may.

Two buffer-header styles: ``"vista"`` (as SampleLog.blg, a Vista log: ClientContext 0x00110800,
State 3, the flush time in every buffer, BufferFlag 1 in buffer 0 and in the last buffer) and
``"win10"`` (as CounterSamples.blg, a Windows 10 log: buffer 0 without time stamp, CurrentOffset,
State or ClientContext; BufferFlag 0x21 in the last buffer, 0x20 in the others - the latter a
guess, the real file has a single data buffer). Readers need only BufferSize (+0x00) and the
used end (+0x30); the rest is imitation.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import BinaryIO, Final, Literal

__all__ = [
    "BUFFER_HEADER_SIZE",
    "EVENT_HEADER_SIZE",
    "EVENT_VERSION",
    "HEADER_FULL32",
    "HEADER_FULL64",
    "HEADER_SYSTEM32",
    "HEADER_SYSTEM64",
    "PAYLOAD_PREFIX_SIZE",
    "PDH_EVENT_GUID",
    "PDH_OVERHEAD",
    "BufferStyle",
    "EtwContainer",
    "LogFileHeader",
    "TimeZone",
    "align8",
    "check_geometry",
    "utf16z",
]

PDH_EVENT_GUID: Final = uuid.UUID("933f3bb3-943e-490d-9ced-3cbb14c14479")
EVENT_VERSION: Final = 60
BUFFER_HEADER_SIZE: Final = 72
EVENT_HEADER_SIZE: Final = 48
PAYLOAD_PREFIX_SIZE: Final = 24
PDH_OVERHEAD: Final = EVENT_HEADER_SIZE + PAYLOAD_PREFIX_SIZE
MAX_EVENT_SIZE: Final = 0xFFFF

# Public ETW header types: the log-file header event and the PDH events, by writer pointer size.
HEADER_SYSTEM32: Final = 0x01
HEADER_SYSTEM64: Final = 0x02
HEADER_FULL32: Final = 0x0A
HEADER_FULL64: Final = 0x14
_MARKER_FLAGS: Final = 0xC0

BufferStyle = Literal["vista", "win10"]

_LOGGER_ID: Final = 0x11
_PAD_GARBAGE: Final = bytes((0x5A, 0xC3, 0x9E, 0x17, 0x88, 0x41, 0xD2, 0x6B))

_BUFFER_HEADER = struct.Struct("<IIIIqqq4BIIHH16s")
_SYSTEM_HEADER = struct.Struct("<HBBHHIIqII")
_EVENT_HEADER = struct.Struct("<HBBBBHIIq16sII16sII")
_LOGFILE_FIXED = struct.Struct("<I4BIIq8I")
_TIME_ZONE = struct.Struct("<i64s16si64s16si")
_HEADER_PATCH_END_TIME: Final = 16  # payload offsets of the fields patched at close
_HEADER_PATCH_BUFFERS: Final = 36

_NO_DATE: Final = (0, 0, 0, 0, 0, 0, 0, 0)


def align8(n: int) -> int:
    """``n`` rounded up to a multiple of 8."""
    return (n + 7) & ~7


def utf16z(text: str) -> bytes:
    """UTF-16LE with the terminating NUL."""
    return (text + "\0").encode("utf-16-le")


def check_geometry(pointer_size: int, buffer_size: int, fragment_data: int) -> None:
    """Refuse a pointer size, buffer size or fragment size the container cannot hold."""
    if pointer_size not in (4, 8):
        raise ValueError(f"pointer_size must be 4 or 8, not {pointer_size}")
    if buffer_size % 8 or buffer_size < 1024:
        raise ValueError(f"buffer_size must be a multiple of 8 and at least 1024, not {buffer_size}")
    if fragment_data < 8:
        raise ValueError(f"fragment_data must be at least 8, not {fragment_data}")
    if PDH_OVERHEAD + fragment_data > MAX_EVENT_SIZE or align8(PDH_OVERHEAD + fragment_data) > (
        buffer_size - BUFFER_HEADER_SIZE
    ):
        raise ValueError(
            f"fragment_data {fragment_data} does not fit an event (at most 65,535 bytes) in a "
            f"{buffer_size}-byte buffer"
        )


@dataclass(frozen=True)
class TimeZone:
    """The TIME_ZONE_INFORMATION block of the log-file header.

    ``bias`` in minutes, UTC = local + bias (so UTC-8 h is 480). Names are at most 31 characters:
    plain text ("Pacific Standard Time") or resource references ("@tzres.dll,-212").
    ``standard_date`` / ``daylight_date`` are SYSTEMTIME fields (year, month, day of week, day,
    hour, minute, second, ms); all zero = no daylight rule.
    """

    bias: int
    standard_name: str
    daylight_name: str
    standard_date: tuple[int, ...] = _NO_DATE
    standard_bias: int = 0
    daylight_date: tuple[int, ...] = _NO_DATE
    daylight_bias: int = 0

    def __post_init__(self) -> None:
        for name in (self.standard_name, self.daylight_name):
            if len(name) > 31:
                raise ValueError(f"time-zone name {name!r} is longer than 31 characters")
        for date in (self.standard_date, self.daylight_date):
            if len(date) != 8 or not all(0 <= v <= 0xFFFF for v in date):
                raise ValueError(f"a SYSTEMTIME is 8 values of 0..65535, not {date!r}")

    def pack(self) -> bytes:
        """The 172-byte block."""
        return _TIME_ZONE.pack(
            self.bias,
            self.standard_name.encode("utf-16-le"),
            struct.pack("<8H", *self.standard_date),
            self.standard_bias,
            self.daylight_name.encode("utf-16-le"),
            struct.pack("<8H", *self.daylight_date),
            self.daylight_bias,
        )


@dataclass(frozen=True)
class LogFileHeader:
    """What the log-file header event (buffer 0) says. Times are UTC FILETIME ticks.

    ``logger_name`` is the log GUID as text (the events carry the same GUID as bytes);
    ``name_pointers`` the two pointer-sized LoggerName/LogFileName slots (meaningless on disk);
    ``header_version``, ``thread_id``, ``process_id``, ``kernel_time``, ``user_time`` fill the
    system trace header. EndTime and BuffersWritten are patched by ``EtwContainer.finish``.
    """

    pointer_size: int
    perf_freq: int
    start_ft: int
    boot_ft: int
    time_zone: TimeZone
    logger_name: str
    log_file_name: str
    os_version: tuple[int, int, int, int] = (6, 0, 1, 4)
    os_build: int = 6001
    processors: int = 1
    cpu_mhz: int = 2400
    timer_resolution: int = 156_250
    log_file_mode: int = 0x01000001
    name_pointers: tuple[int, int] = (0x9E174178, 0x9E1741C2)
    header_version: int = 2
    thread_id: int = 0x0A3C
    process_id: int = 0
    kernel_time: int = 1
    user_time: int = 3

    def payload(self) -> bytes:
        """TRACE_LOGFILE_HEADER and the two strings after it."""
        ps = self.pointer_size
        payload = bytearray()
        payload += _LOGFILE_FIXED.pack(
            0,  # BufferSize, filled by the container
            *self.os_version,
            self.os_build,
            self.processors,
            0,  # EndTime, patched at close
            self.timer_resolution,
            0,
            self.log_file_mode,
            0,  # BuffersWritten, patched at close
            1,
            ps,
            0,
            self.cpu_mhz,
        )
        payload += struct.pack("<QQ" if ps == 8 else "<II", *self.name_pointers)
        payload += self.time_zone.pack()
        payload += b"\0" * (align8(len(payload)) - len(payload))
        payload += struct.pack("<qqqII", self.boot_ft, self.perf_freq, self.start_ft, 2, 0)
        payload += utf16z(self.logger_name) + utf16z(self.log_file_name)
        return bytes(payload)


class EtwContainer:
    """Buffers and events of one log on a seekable binary stream.

    ``write_header`` writes buffer 0 and must come first; ``emit_record`` appends a record as
    PDH events (fragmented); ``finish`` flushes the last buffer and patches the header.
    ``utc_offset_ticks`` (local = UTC + offset) turns event stamps into the buffers' UTC flush
    time. ``event_times`` fills the 8-byte processor-time slot of every PDH event header.
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        buffer_size: int,
        fragment_data: int,
        utc_offset_ticks: int,
        event_header_type: int = HEADER_FULL32,
        thread_id: int = 0x0A3C,
        process_id: int = 0x0F18,
        event_times: tuple[int, int] = (0, 0),
        style: BufferStyle = "vista",
    ) -> None:
        if style not in ("vista", "win10"):
            raise ValueError(f"buffer style must be 'vista' or 'win10', not {style!r}")
        self.stream = stream
        self.origin = stream.tell()
        self.buffer_size = buffer_size
        self.fragment_data = fragment_data
        self.utc_offset_ticks = utc_offset_ticks
        self.event_header_type = event_header_type
        self.thread_id = thread_id
        self.process_id = process_id
        self.event_times = event_times
        self.style: BufferStyle = style
        self.log_guid = b"\0" * 16  # bytes_le of the log GUID, set before the first event
        self.sequence = 0  # buffers written so far
        self.stamp = 0  # latest UTC FILETIME seen: the flush time stamp of the current buffer
        self._ff = b"\xff" * buffer_size
        self._buf = bytearray(self._ff)
        self._off = BUFFER_HEADER_SIZE

    # -- buffer 0 -------------------------------------------------------------------------------
    def write_header(self, header: LogFileHeader) -> None:
        """Write buffer 0: the log-file header event."""
        payload = bytearray(header.payload())
        struct.pack_into("<I", payload, 0, self.buffer_size)
        size = _SYSTEM_HEADER.size + len(payload)
        aligned = align8(size)
        if BUFFER_HEADER_SIZE + aligned > self.buffer_size:
            raise ValueError("the log-file header does not fit in one buffer; use a larger buffer_size")
        buf = bytearray(self._ff)
        header_type = HEADER_SYSTEM32 if header.pointer_size == 4 else HEADER_SYSTEM64
        _SYSTEM_HEADER.pack_into(
            buf,
            BUFFER_HEADER_SIZE,
            header.header_version,
            header_type,
            _MARKER_FLAGS,
            size,
            0,
            header.thread_id,
            header.process_id,
            header.start_ft,
            header.kernel_time,
            header.user_time,
        )
        at = BUFFER_HEADER_SIZE + _SYSTEM_HEADER.size
        buf[at : at + len(payload)] = payload
        end = BUFFER_HEADER_SIZE + size
        buf[end : BUFFER_HEADER_SIZE + aligned] = _PAD_GARBAGE[: aligned - size]
        used = BUFFER_HEADER_SIZE + aligned
        if self.style == "vista":
            fields = (0, used, header.start_ft, (0, 8, _LOGGER_ID, 0), 3)
        else:
            fields = (used, 0, 0, (0, 0, 0, 0), 0)
        saved, current, stamp, context, state = fields
        _BUFFER_HEADER.pack_into(
            buf, 0, self.buffer_size, saved, current, 0, stamp, 0, 0, *context, state, used, 1, 4, b""
        )
        self.stream.write(buf)
        self.sequence = 1
        self.stamp = header.start_ft

    # -- events ---------------------------------------------------------------------------------
    def emit_record(self, kind: int, local_ft: int, data: memoryview | bytes | bytearray) -> None:
        """Append one record as events of at most ``fragment_data`` bytes (at least one event)."""
        view = memoryview(data)
        step = self.fragment_data
        count = max(1, -(-len(view) // step))
        for k in range(count):
            self.emit_event(kind, local_ft, view[k * step : (k + 1) * step], k + 1, count)

    def emit_event(
        self, kind: int, local_ft: int, chunk: memoryview | bytes, number: int, count: int
    ) -> None:
        """Append one event (fragment ``number`` of ``count``), opening a new buffer if needed."""
        size = PDH_OVERHEAD + len(chunk)
        if size > MAX_EVENT_SIZE:
            raise ValueError(f"an event of {size} bytes is longer than 65,535")
        aligned = align8(size)
        if BUFFER_HEADER_SIZE + aligned > self.buffer_size:
            raise ValueError(f"an event of {size} bytes does not fit a {self.buffer_size}-byte buffer")
        if self._off + aligned > self.buffer_size:
            self._write_buffer(self._off + aligned, last=False)
        at = self._off
        buf = self._buf
        _EVENT_HEADER.pack_into(
            buf,
            at,
            size,
            self.event_header_type,
            _MARKER_FLAGS,
            kind,
            0,
            EVENT_VERSION,
            self.thread_id,
            self.process_id,
            local_ft,
            PDH_EVENT_GUID.bytes_le,
            *self.event_times,
            self.log_guid,
            number,
            count,
        )
        buf[at + PDH_OVERHEAD : at + size] = chunk
        if aligned != size:
            buf[at + size : at + aligned] = _PAD_GARBAGE[: aligned - size]
        self._off = at + aligned
        self.stamp = max(self.stamp, local_ft - self.utc_offset_ticks)

    # -- close ----------------------------------------------------------------------------------
    def finish(self, end_ft: int | None) -> None:
        """Flush the last buffer; patch EndTime (unless None) and BuffersWritten in the header."""
        self._write_buffer(self._off + self.buffer_size, last=True)
        end = self.stream.tell()
        payload = self.origin + BUFFER_HEADER_SIZE + _SYSTEM_HEADER.size
        if end_ft is not None:
            self.stream.seek(payload + _HEADER_PATCH_END_TIME)
            self.stream.write(struct.pack("<q", end_ft))
        self.stream.seek(payload + _HEADER_PATCH_BUFFERS)
        self.stream.write(struct.pack("<I", self.sequence))
        self.stream.seek(end)
        self.stream.flush()

    def _write_buffer(self, current_offset: int, *, last: bool) -> None:
        buf = self._buf
        used = self._off
        if self.style == "vista":
            context, flag = (0, 8, _LOGGER_ID, 0), (1 if last else 0)
        else:
            context, flag = (0, 0, 0, 0), (0x21 if last else 0x20)
        _BUFFER_HEADER.pack_into(
            buf,
            0,
            self.buffer_size,
            used,
            current_offset,
            0,
            self.stamp,
            self.sequence,
            0,
            *context,
            3,
            used,
            flag,
            0,
            b"",
        )
        self.stream.write(buf)
        self.sequence += 1
        buf[:] = self._ff
        self._off = BUFFER_HEADER_SIZE
