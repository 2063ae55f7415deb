"""The raw-counter layout of a sample: ``BL 03 01`` sub-records, each one counter's
``PDH_RAW_COUNTER`` (status, time stamp, N, D, multi count), and ``BL 03 02`` sub-records, a
wildcard path's instances with one raw value pair each. A sub-record names nothing itself: it is
the counter path of the same ordinal in the log's counter list (record 32), which also gives the
counter's type, time base and scale. A counter whose PDH status is not valid data has no value
in that sample (``PDH_STATUS_NAMES`` name the statuses)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from esrp_report.ingest.perfmon.blg.columns import _Columns
from esrp_report.ingest.perfmon.blg.header import _utf16z
from esrp_report.ingest.perfmon.blg.layouts import _Builder, _Malformed, _Notes, _SubRecord, numbered_instance
from esrp_report.ingest.perfmon.counter_types import KNOWN, CounterType, Formula, Second

_RAW_TAG = b"BL\x03\x01"  # one counter's PDH_RAW_COUNTER
_RAW_ARRAY_TAG = b"BL\x03\x02"  # a wildcard's instances, one raw value pair each
_RAW_COUNTER = struct.Struct("<I8sxxxxqqI")  # CStatus, FILETIME (4-aligned), pad, N, D, MultiCount
_RAW_ARRAY = struct.Struct("<IIIxxxx8s")  # body size, items, CStatus, pad, FILETIME
_RAW_ITEM = struct.Struct("<IIqq")  # name offset (from the body), MultiCount, N, D
_PATH_ENTRY = struct.Struct("<IIIIqiiiiiii")  # record 32: size, flags, ?, type, time base, scale, offsets
# PDH counter statuses (pdhmsg.h): the two that mean "a value", and the names of the others.
_STATUS_VALID = (0x00000000, 0x00000001)
PDH_STATUS_NAMES = {
    0x800007D0: "PDH_CSTATUS_NO_MACHINE",
    0x800007D1: "PDH_CSTATUS_NO_INSTANCE",
    0x800007D2: "PDH_MORE_DATA",
    0x800007D3: "PDH_CSTATUS_ITEM_NOT_VALIDATED",
    0x800007D4: "PDH_RETRY",
    0x800007D5: "PDH_NO_DATA",
    0x800007D6: "PDH_CALC_NEGATIVE_DENOMINATOR",
    0x800007D7: "PDH_CALC_NEGATIVE_TIMEBASE",
    0x800007D8: "PDH_CALC_NEGATIVE_VALUE",
    0xC0000BB8: "PDH_CSTATUS_NO_OBJECT",
    0xC0000BB9: "PDH_CSTATUS_NO_COUNTER",
    0xC0000BBA: "PDH_CSTATUS_INVALID_DATA",
}
_U32 = struct.Struct("<I")


@dataclass(frozen=True)
class PathEntry:
    """One counter path of record 32 (the paths the collector was asked for), with the counter
    type, time base and scale the raw-counter layout needs; ``instance`` is "*" for a wildcard."""

    machine: str
    object: str
    instance: str | None
    parent: str | None
    counter: str
    type_code: int
    time_base: int
    scale: int
    index: int = 0  # the instance index: 1 for "name#1", the second instance of that name

    @property
    def full_instance(self) -> str | None:
        """The instance as a path writes it: ``parent/name#index`` (the parts it has)."""
        if self.instance is None:
            return None
        name = self.instance if self.index <= 0 or self.instance == "*" else f"{self.instance}#{self.index}"
        return name if self.parent is None else f"{self.parent}/{name}"

    @property
    def path(self) -> str:
        """The path as written (machine part included)."""
        instance = self.full_instance
        name = f"{self.object}({instance})" if instance is not None else self.object
        return f"\\\\{self.machine}\\{name}\\{self.counter}"


def parse_path_entries(data: bytes) -> list[PathEntry]:
    """The entries of a record 32: 8 bytes of header, then entries back to back, each a fixed
    52-byte part (size, flags, type, time base, scale, string offsets) and its UTF-16 strings,
    offsets counted from the end of the fixed part (docs/blg.md). Raises _Malformed."""
    entries: list[PathEntry] = []
    position = 8
    while position + _PATH_ENTRY.size <= len(data):
        size, _flags, _x, code, base, scale, o_machine, o_object, o_instance, o_parent, index, o_counter = (
            _PATH_ENTRY.unpack_from(data, position)
        )
        if size < _PATH_ENTRY.size or position + size > len(data):
            raise _Malformed(f"counter path entry at record byte {position} has size {size}")
        strings = data[position + _PATH_ENTRY.size : position + size]

        def text(offset: int, *, strings: bytes = strings, at: int = position) -> str | None:
            if offset < 0:
                return None
            if offset >= len(strings) or offset % 2:
                raise _Malformed(f"counter path entry at record byte {at}: string offset {offset} outside it")
            return _utf16z(strings[offset:])

        machine = (text(o_machine) or "").lstrip("\\")
        obj, counter = text(o_object), text(o_counter)
        if obj is None or counter is None:
            raise _Malformed(f"counter path entry at record byte {position} has no object or counter name")
        entries.append(
            PathEntry(
                machine, obj, text(o_instance), text(o_parent), counter, code, base, scale, max(index, 0)
            )
        )
        position += size
    return entries


class _RawCounters:
    """Reads the ``BL 03 01`` and ``BL 03 02`` sub-records of a sample into its layout."""

    def __init__(self, columns: _Columns, entries: list[PathEntry], notes: _Notes) -> None:
        self.columns = columns
        self.entries = entries  # record 32, read into this list when it comes
        self.notes = notes

    def read_counter(self, record: bytes, sub: _SubRecord, built: _Builder) -> None:
        """``BL 03 01``: one PDH_RAW_COUNTER (status, time stamp, N, D, multi count)."""
        entry = self._entry(sub)
        position, length = sub.position, sub.length
        body = position + 8
        if length < 8 + _RAW_COUNTER.size:
            raise _Malformed(f"raw counter sub-record at record byte {position} has length {length}")
        status = _U32.unpack_from(record, body)[0]
        built.variable.append((body + 4, body + 12))  # time stamp
        built.variable.append((body + 16, body + 36))  # N, D, multi count
        instance = entry.full_instance
        where = f"record byte {position}"
        self._value(
            built, entry, instance, status=status, values=(body + 16, body + 24, body + 32), where=where
        )

    def read_array(self, record: bytes, sub: _SubRecord, built: _Builder) -> None:
        """``BL 03 02``: the instances of a wildcard path, each a name and a raw value pair."""
        entry = self._entry(sub)
        position, length = sub.position, sub.length
        body = position + 8
        end = position + length
        if length < 8 + _RAW_ARRAY.size:
            raise _Malformed(f"wildcard sub-record at record byte {position} has length {length}")
        size, count, status, _stamp = _RAW_ARRAY.unpack_from(record, body)
        items_end = body + _RAW_ARRAY.size + count * _RAW_ITEM.size
        where = f"{sub.where}, record byte {position}"
        # The body size is a bound, not the body: Windows 10 writes it equal to length - 8, Windows
        # 11 up to 7 bytes short (the length is it rounded up to 8) with the last name ending
        # past it. Only a size or items beyond the sub-record contradict it.
        if size > length - 8 or items_end > end or items_end > body + max(size, _RAW_ARRAY.size):
            raise _Malformed(
                f"wildcard sub-record at record byte {position}: body size {size}, {count} item(s) "
                f"of {_RAW_ITEM.size} bytes do not fit its {length - 8} bytes"
            )
        if size < length - 8:
            self.notes.once(
                ("short wildcard size",),
                f"wildcard sub-record body size {size} is {length - 8 - size} byte(s) short of its length "
                f"- 8 ({length - 8}) (padding to 8 bytes, as Windows 11 writes it; the first such, later "
                "ones not listed): its instance names are read to the sub-record's end",
                where,
                severity="note",
            )
        built.variable.append((body + 16, body + 24))  # time stamp
        seen: dict[str, int] = {}
        for k in range(count):
            item = body + _RAW_ARRAY.size + k * _RAW_ITEM.size
            name_offset = _U32.unpack_from(record, item)[0]
            start = body + name_offset
            if name_offset % 2 or not body + _RAW_ARRAY.size + count * _RAW_ITEM.size <= start < end:
                raise _Malformed(
                    f"wildcard item {k + 1} at record byte {item}: name offset {name_offset} outside it"
                )
            built.variable.append((item + 4, item + _RAW_ITEM.size))  # multi count, N, D
            name = _utf16z(record[start:end])
            shown = numbered_instance(name, seen)
            instance = shown if entry.parent is None else f"{entry.parent}/{shown}"
            self._value(
                built, entry, instance, status=status, values=(item + 8, item + 16, item + 4), where=where
            )
        if not count and status not in _STATUS_VALID:
            # A wildcard whose collection failed lists no instance (an offline machine): no column
            # to leave empty, but the sample is one with a failed counter all the same.
            built.failed.append((-1, status))

    def _entry(self, sub: _SubRecord) -> PathEntry:
        if sub.ordinal >= len(self.entries):
            raise _Malformed(
                f"raw counter sub-record {sub.ordinal + 1} at record byte {sub.position} has no counter "
                f"path: the log's counter list (record 32) holds {len(self.entries)}"
            )
        return self.entries[sub.ordinal]

    def _value(
        self,
        built: _Builder,
        entry: PathEntry,
        instance: str | None,
        *,
        status: int,
        values: tuple[int, int, int],
        where: str,
    ) -> None:
        """One raw value of ``entry`` (``values``: the record bytes of its N, D and B) as a column
        of the layout, or as a column without a value in this sample when ``status`` says so."""
        key = (entry.machine, entry.object, instance, entry.counter)
        occurrence = built.occurrences.get(key, 0)
        built.occurrences[key] = occurrence + 1
        code = entry.type_code
        kind: CounterType | None = KNOWN.get(code)
        if kind is None or kind.base:
            kind = None
            self.notes.not_cooked(entry.object, entry.counter, code, where)
        column = self.columns.column((*key, occurrence), code, entry.scale)
        if column is None:
            return
        if status not in _STATUS_VALID:
            built.failed.append((column, status))  # no value in this sample (the status is structure)
            return
        _add(built, column, kind, values, entry.time_base)


def _add(
    built: _Builder, column: int, kind: CounterType | None, positions: tuple[int, int, int], time_base: int
) -> None:
    """One column: N and D are its own 8-byte values, B its multi count (``positions``: record
    bytes of N, D, B), F the time base record 32 gives its counter (a constant of the layout)."""
    first, second, multi = positions
    n = built.slot(first, 8)
    d = b = f = -1
    if kind is not None:
        if kind.second is not Second.NONE:
            d = built.slot(second, 8)
        if kind.multi:
            b = built.slot(multi, 4)
        if kind.formula in (Formula.RATE, Formula.AVERAGE_TIMER, Formula.ELAPSED):
            f = built.slot(time_base, 0)
    built.add(column, kind.formula if kind is not None else None, first=n, second=d, multi=b, frequency=f)


def _utc_clock(data: bytes, entries: list[PathEntry]) -> int | None:
    """A sample's UTC FILETIME: the D of its first sound counter on the 100 ns clock (D is that
    clock for these types: docs/blg.md); None when it has none or does not start with a raw counter."""
    if len(data) < 16 or data[8:11] != _RAW_TAG[:3] or data[8:12] == b"BL\x03\x05":
        return None
    position, ordinal = 8, 0
    while position + 8 <= len(data) and ordinal < len(entries):
        tag = data[position : position + 4]
        length = _U32.unpack_from(data, position + 4)[0]
        if length < 8 or position + length > len(data):
            return None
        kind = KNOWN.get(entries[ordinal].type_code)
        on_100ns = kind is not None and (kind.second is Second.TIME_100NS or kind.code == 0x20570500)
        body = position + 8
        if on_100ns and tag == _RAW_TAG and length >= 8 + _RAW_COUNTER.size:
            status, _stamp, _n, d, _multi = _RAW_COUNTER.unpack_from(data, body)
            if status in _STATUS_VALID and d > 0:
                return int(d)
        elif on_100ns and tag == _RAW_ARRAY_TAG and length >= 8 + _RAW_ARRAY.size + _RAW_ITEM.size:
            _size, count, status, _stamp = _RAW_ARRAY.unpack_from(data, body)
            d = _RAW_ITEM.unpack_from(data, body + _RAW_ARRAY.size)[3]
            if count and status in _STATUS_VALID and d > 0:
                return int(d)
        position += length
        ordinal += 1
    return None
