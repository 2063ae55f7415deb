"""The container of a .blg: fixed-size event-trace buffers, each a 72-byte header and 8-byte
aligned events. Buffer 0 holds the log-file header (``header.py``). Performance-data events carry
records that may be cut into fragments across buffers: name tables (kind 36), the requested
counter paths (32), one record per sample (34) and a closing catalog (35). This module walks the
buffers, reassembles the records and reports what it skips (a damaged buffer, an event that
overruns its buffer, a record with fragments missing) with the buffer index and byte offset."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from esrp_report.ingest.perfmon.blg.filetime import _local_text
from esrp_report.ingest.perfmon.blg.header import BlgHeader, parse_log_header
from esrp_report.ingest.perfmon.blg_signature import BUFFER_HEADER, SYSTEM_HEADERS
from esrp_report.model import Problem

_PDH_EVENT_HEADER = 48
_FRAGMENT_PREFIX = 24
_FULL_HEADERS = (0x0A, 0x14)  # the PDH events of 32- and 64-bit producers (same 48 bytes)
KIND_NAMES, KIND_PATHS, KIND_SAMPLE, KIND_CATALOG = 36, 32, 34, 35
_READ_BUFFERS = 64  # buffers read per system call
_EVENT = struct.Struct("<HBBBBHIIQ16s8x16sII")  # full trace header + PDH prefix
# The class GUID of every PDH event ({933f3bb3-943e-490d-9ced-3cbb14c14479}, at event byte 24, in
# the Vista, Server 2003 and Windows 10 logs alike): found again after an event that cannot be
# stepped over, it tells where the next event starts.
_PDH_CLASS = bytes.fromhex("b33b3f933e940d499ced3cbb14c14479")
_CLASS_AT = 24
_U32 = struct.Struct("<I")


@dataclass
class _Record:
    kind: int
    stamp: int  # FILETIME of the first fragment (local time for PDH events)
    parts: list[memoryview | bytes]  # the fragments' data, not copied until needed
    buffer: int
    offset: int  # byte offset of the first fragment's event in the file

    @property
    def size(self) -> int:
        return sum(map(len, self.parts))

    @property
    def data(self) -> bytes:
        if len(self.parts) != 1 or not isinstance(self.parts[0], bytes):
            self.parts = [b"".join(self.parts)]
        return self.parts[0]  # type: ignore[return-value]

    def head(self, count: int) -> bytes:
        """The first ``count`` bytes (or fewer), joining only the fragments needed."""
        first = self.parts[0]
        if len(first) >= count or len(self.parts) == 1:
            return bytes(first[:count])
        return self.data[:count]


@dataclass
class _Partial:
    kind: int
    stamp: int
    count: int
    parts: list[memoryview | bytes]
    buffer: int
    offset: int


class _Container:
    """Walks buffers and events, reassembles fragmented records, accounts for what it skips."""

    def __init__(self, stream: IO[bytes], source: str, size: int) -> None:
        self.stream = stream
        self.source = source
        self.file_size = size
        self.problems: list[Problem] = []
        self.samples_lost = 0
        self._lost_stamps: set[int] = set()
        self._partial: _Partial | None = None
        self.unknown_headers: set[int] = set()  # event header types not understood
        # A run of events skipped in the current buffer: (where, why, to its end, bytes), counts.
        self._skipped_at: tuple[str, str, bool, int] | None = None
        self._skipped = [0, 0]  # events, samples among them
        self._skipped_kinds: set[int] = set()
        self.header = self._read_header()
        self.buffer_size = self.header.buffer_size

    def _problem(self, message: str, location: str, *, lost: int = 0, severity: str = "warning") -> None:
        self.problems.append(Problem(self.source, message, location=location, severity=severity, lost=lost))

    def _read_header(self) -> BlgHeader:
        head = self.stream.read(1 << 16)
        self.stream.seek(0)
        return parse_log_header(head, self.source)

    def records(self) -> Iterator[_Record]:
        size = self.buffer_size
        self._partial = None
        self._lost_stamps = set()
        blank: list[int] = []
        index = 0
        self.stream.seek(0)
        while True:
            chunk = self.stream.read(size * _READ_BUFFERS)
            if not chunk:
                break
            view = memoryview(chunk)
            for start in range(0, len(chunk), size):
                number = index
                index += 1
                if number == 0:
                    continue
                buffer = view[start : start + size]
                state = self._buffer_state(buffer, number, number * size, blank)
                if state is not None:
                    yield from self._events(buffer, state[0], number, number * size, state[1])
                    if self._skipped_at is not None:
                        self._report_skipped(number)
        self._report_blank(blank)
        present = index
        if self.header.buffers_written > present:
            self._problem(
                f"the log-file header counts {self.header.buffers_written} buffer(s); "
                f"the file holds {present}: the end of the log is missing",
                f"byte {self.file_size}",
            )
        if self._partial is not None:
            partial = self._partial
            self._drop(partial, f"the log ends after fragment {len(partial.parts)} of {partial.count}")

    def _buffer_state(
        self, buffer: memoryview, number: int, offset: int, blank: list[int]
    ) -> tuple[int, bool] | None:
        """(end of used data, buffer cut short) or None when the buffer carries nothing readable."""
        size = self.buffer_size
        location = f"buffer {number} (byte {offset})"
        if len(buffer) < BUFFER_HEADER:
            self._problem(
                f"file cut short: the last {len(buffer)} byte(s) are not a whole buffer header; skipped",
                location,
            )
            return None
        first = bytes(buffer[:16])
        if first in (b"\x00" * 16, b"\xff" * 16) and bytes(buffer).count(first[:1]) == len(buffer):
            blank.append(number)
            return None
        declared, saved = struct.unpack_from("<II", buffer, 0)
        used = _U32.unpack_from(buffer, 0x30)[0] or saved
        if declared != size or not BUFFER_HEADER <= used <= size:
            if self._partial is not None:
                self._drop(self._partial, f"the buffer holding its next fragment ({number}) is damaged")
                self._partial = None
            started = self._samples_started(buffer)
            self.samples_lost += started
            self._problem(
                f"damaged buffer header (size {declared}, used end {used}; expected size {size} and an end "
                f"between {BUFFER_HEADER} and {size}); the buffer's {size} bytes are skipped"
                + (f", with the {started} sample(s) that begin in it" if started else ""),
                location,
                lost=started,
            )
            return None
        short = len(buffer) < size
        if short:
            self._problem(
                f"file cut short inside this buffer: {len(buffer)} of {size} bytes present; "
                "events up to the cut are read",
                location,
            )
        return min(used, len(buffer)), short

    def _samples_started(self, buffer: memoryview) -> int:
        """Samples whose first fragment sits in a buffer that cannot be read: walk what still looks
        like events (full header, marker, sane size) and count, never read, them."""
        started = 0
        position = BUFFER_HEADER
        end = len(buffer)
        while position + _EVENT.size <= end:
            size, header_type, marker, kind, *_rest, stamp, _g, _log, fragment, _count = _EVENT.unpack_from(
                buffer, position
            )
            if (
                header_type not in _FULL_HEADERS
                or marker & 0xC0 != 0xC0
                or not _EVENT.size <= size <= end - position
            ):
                break
            if kind == KIND_SAMPLE:
                self._lost_stamps.add(stamp)
                started += fragment <= 1
            position = (position + size + 7) & ~7
        return started

    def _report_blank(self, blank: list[int]) -> None:
        if not blank:
            return
        runs: list[tuple[int, int]] = []
        for number in blank:
            if runs and runs[-1][1] == number - 1:
                runs[-1] = (runs[-1][0], number)
            else:
                runs.append((number, number))
        for first, last in runs:
            count = last - first + 1
            self._problem(
                f"{count} buffer(s) filled with a single byte value (zero or 0xFF), no events: "
                "a log stopped before they were written, or wiped",
                f"buffers {first}-{last} (bytes {first * self.buffer_size}-{(last + 1) * self.buffer_size})",
                severity="note" if last == self.file_size // self.buffer_size - 1 else "warning",
            )

    def _events(
        self, buffer: memoryview, used: int, number: int, offset: int, short: bool
    ) -> Iterator[_Record]:
        position = BUFFER_HEADER
        unpack = _EVENT.unpack_from
        prefix = _PDH_EVENT_HEADER + _FRAGMENT_PREFIX
        while position + prefix <= used:
            (size, header_type, _m, kind, _lvl, _ver, _t, _p, stamp, _g, _log, fragment, count) = unpack(
                buffer, position
            )
            end = position + size
            if header_type not in _FULL_HEADERS or size < prefix or end > used:
                step = self._odd_event(buffer, used, number, offset + position, short)
                if step is None:
                    return
                position += step
                continue
            if self._skipped_at is not None:
                self._report_skipped(number)
            data = buffer[position + prefix : end]
            event_offset = offset + position
            position = (end + 7) & ~7
            partial = self._partial
            if partial is None and fragment <= 1 and count <= 1:
                yield _Record(kind, stamp, [data], number, event_offset)
                continue
            if (
                partial is not None
                and fragment == len(partial.parts) + 1
                and partial.kind == kind
                and count == partial.count
            ):
                partial.parts.append(data)
                if len(partial.parts) == count:
                    self._partial = None
                    yield _Record(kind, partial.stamp, partial.parts, partial.buffer, partial.offset)
                continue
            record = self._assemble(kind, stamp, data, (fragment, count), (number, event_offset))
            if record is not None:
                yield record

    def _odd_event(self, buffer: memoryview, used: int, number: int, at: int, short: bool) -> int | None:
        """Bytes to step over an event that is not a sound PDH event: a system-header event, or
        one whose header type or size is not understood (skipped up to the next event, found by
        its size or its class GUID; a sample it begins counted lost); None (after reporting)
        when nothing more of the buffer can be read."""
        position = at - number * self.buffer_size
        size, header_type, marker, kind, *_rest, stamp, _g, _log, fragment, count = _EVENT.unpack_from(
            buffer, position
        )
        where = f"buffer {number}, byte {at}"
        if header_type in SYSTEM_HEADERS:
            system_size = struct.unpack_from("<H", buffer, position + 4)[0]
            return max(8, (int(system_size) + 7) & ~7)
        cut = short and header_type in _FULL_HEADERS and position + size > used
        if not cut:
            step = self._next_event(buffer, position, used, size if header_type not in _FULL_HEADERS else 0)
            if header_type not in _FULL_HEADERS:
                self.unknown_headers.add(header_type)
            starts_sample = kind == KIND_SAMPLE and fragment <= 1 and marker & 0xC0 == 0xC0
            if starts_sample and stamp not in self._lost_stamps:
                self._lost_stamps.add(stamp)
                self.samples_lost += 1
            else:
                starts_sample = False
            what = (
                f"unknown event header type 0x{header_type:02X}"
                if header_type not in _FULL_HEADERS
                else f"event size {size} does not fit the buffer (used end {used})"
            )
            if self._skipped_at is None:
                self._skipped_at = (where, what, step is None, used - position)
                self._skipped = [0, 0]
                self._skipped_kinds = set()
            self._skipped[0] += 1
            self._skipped_kinds.add(kind)
            self._skipped[1] += int(starts_sample)
            if step is None:
                self._report_skipped(number)
            return step
        if header_type not in _FULL_HEADERS:
            self.unknown_headers.add(header_type)
            self._problem(
                f"unknown event header type 0x{header_type:02X}; the rest of the buffer "
                f"({used - position} bytes) is skipped",
                where,
            )
        elif short and position + size > used:
            starts_sample = kind == KIND_SAMPLE and fragment <= 1
            self.samples_lost += starts_sample
            what = f"sample at {_local_text(stamp)}" if starts_sample else "event"
            self._problem(
                f"{what} cut by the end of the file (fragment {fragment} of {count}); skipped",
                where,
                lost=int(starts_sample),
            )
        else:
            self._problem(
                f"event size {size} does not fit the buffer (used end {used}); "
                f"the rest of the buffer ({used - position} bytes) is skipped",
                where,
            )
        return None

    def _next_event(self, buffer: memoryview, position: int, used: int, size: int) -> int | None:
        """Bytes from ``position`` to the next event: by ``size`` when it is plausible (an
        event whose header type alone is unknown), else where the next PDH class GUID is."""
        prefix = _PDH_EVENT_HEADER + _FRAGMENT_PREFIX
        if prefix <= size and position + size <= used:
            return (size + 7) & ~7
        rest = bytes(buffer[position + 8 : used])  # copied once, searched until an aligned match
        found = rest.find(_PDH_CLASS)
        while found >= 0:
            start = position + 8 + found - _CLASS_AT
            if start > position and start % 8 == 0:
                return start - position
            found = rest.find(_PDH_CLASS, found + 1)
        return None

    def _report_skipped(self, number: int) -> None:
        """One problem for a run of events skipped in a buffer (see _odd_event)."""
        assert self._skipped_at is not None
        where, what, rest, rest_bytes = self._skipped_at
        events, samples = self._skipped
        tail = f"; the rest of the buffer ({rest_bytes} bytes) is skipped" if rest and events == 1 else ""
        kinds = ", ".join(map(str, sorted(self._skipped_kinds)))
        self._problem(
            f"{what}: {events} event(s) skipped (record kind {kinds}, as the damaged header says)"
            + (f", {samples} of them the start of a sample (counted lost)" if samples else "")
            + tail,
            where,
            lost=samples,
        )
        self._skipped_at = None

    def _assemble(
        self, kind: int, stamp: int, data: memoryview, numbering: tuple[int, int], place: tuple[int, int]
    ) -> _Record | None:
        """Fragments out of the ordinary: a record's first, or one out of order (reported)."""
        fragment, count = numbering
        number, offset = place
        partial = self._partial
        if fragment <= 1:
            if partial is not None:
                self._drop(partial, "a new record starts before its last fragment")
                self._partial = None
            if count <= 1:
                return _Record(kind, stamp, [data], number, offset)
            self._partial = _Partial(kind, stamp, count, [data], number, offset)
            return None
        if partial is not None:
            self._drop(partial, f"fragment {fragment} of {count} follows fragment {len(partial.parts)}")
            self._partial = None
            if partial.kind == kind and partial.count == count:
                self._lost_stamps.add(stamp)  # most likely the rest of the record just dropped
        # Count a lost sample once: not again for its later fragments, nor when the damaged
        # buffer that held its first fragment already counted it.
        sample = kind == KIND_SAMPLE and stamp not in self._lost_stamps
        self._lost_stamps.add(stamp)
        self.samples_lost += sample
        self._problem(
            f"fragment {fragment} of {count} of a record whose earlier fragments are missing; skipped",
            f"buffer {number}, byte {offset}",
            lost=int(sample),
        )
        return None

    def _drop(self, partial: _Partial, why: str) -> None:
        sample = partial.kind == KIND_SAMPLE
        if sample:  # only a sample counted lost marks its stamp (its later fragments: not again)
            self._lost_stamps.add(partial.stamp)
            self.samples_lost += 1
        what = "sample" if sample else f"record of kind {partial.kind}"
        self._problem(
            f"{what} at {_local_text(partial.stamp)} incomplete ({why}); skipped",
            f"buffer {partial.buffer}, byte {partial.offset}",
            lost=1 if sample else 0,
        )


def _where(record: _Record) -> str:
    return f"buffer {record.buffer}, byte {record.offset}"
