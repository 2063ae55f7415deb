"""The Vista layout of a sample: ``BL 03 05`` sub-records, each one perflib ``PERF_DATA_BLOCK``,
self-describing: objects, their counter definitions, instances and counter blocks. Objects and
counters are named by title index through the log's name tables (records of kind 36)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from esrp_report.ingest.guards import ascii_int
from esrp_report.ingest.perfmon.blg.columns import _Columns
from esrp_report.ingest.perfmon.blg.layouts import _Builder, _Malformed, _Notes, _SubRecord, numbered_instance
from esrp_report.ingest.perfmon.counter_types import KNOWN, CounterType, Formula, Second, is_base, type_name

_OBJECT_TAG = b"BL\x03\x05"  # a PERF_DATA_BLOCK
_PERF_SIGNATURE = "PERF".encode("utf-16-le")
_BLOCK = struct.Struct("<8sIIIIIII16s4xqqqII")
_OBJECT = struct.Struct("<IIIIIIIIIiiIqq")
_DEFINITION = struct.Struct("<IIIIIiIIII")
_INSTANCE = struct.Struct("<IIIiII")
_U32 = struct.Struct("<I")


@dataclass
class _Object:
    name: str
    instances: list[tuple[str | None, int, int]]  # (display name, counter block offset, length)
    definitions: list[tuple[int, int, int, int, int]]  # (name index, type, size, offset, scale)
    object_time: int  # record offset of the object's PerfTime
    object_frequency: int


class _Perflib:
    """Reads the ``BL 03 05`` sub-records of a sample into its layout."""

    def __init__(self, columns: _Columns, names: dict[str, dict[int, str]], notes: _Notes) -> None:
        self.columns = columns
        self.names = names  # title index -> name, by machine (case-folded): the name tables read so far
        self.notes = notes

    def read(self, record: bytes, sub: _SubRecord, built: _Builder) -> None:
        position, length = sub.position, sub.length
        if length < 8 + _BLOCK.size:
            raise _Malformed(f"object sub-record at record byte {position} has length {length}")
        for obj, block in self._objects(record, position + 8, position + length, built.variable):
            self._columns_of(obj, block, sub.where, built)

    def _objects(
        self, record: bytes, start: int, end: int, variable: list[tuple[int, int]]
    ) -> Iterator[tuple[_Object, tuple[str, int]]]:
        (
            signature,
            _le,
            _version,
            _rev,
            total,
            header,
            count,
            _default,
            _systime,
            _pt,
            _pf,
            _p100,
            name_len,
            name_off,
        ) = _BLOCK.unpack_from(record, start)
        if signature != _PERF_SIGNATURE or total != end - start or header > total:
            raise _Malformed(
                f"PERF_DATA_BLOCK at record byte {start}: signature {signature!r}, length {total} "
                f"(sub-record holds {end - start})"
            )
        machine = (
            record[start + name_off : start + name_off + name_len]
            .decode("utf-16-le", "replace")
            .rstrip("\x00")
        )
        variable.append((start + 36, start + 64))  # SystemTime, padding, PerfTime
        variable.append((start + 72, start + 80))  # PerfTime100nSec
        block = (machine, start)
        position = start + header
        for _ in range(count):
            if position + _OBJECT.size > end:
                raise _Malformed(f"object header at record byte {position} runs past its block")
            (
                o_total,
                definition_len,
                header_len,
                name_index,
                _n,
                _h,
                _hh,
                _detail,
                n_counters,
                _dc,
                n_instances,
                _cp,
                _opt,
                _opf,
            ) = _OBJECT.unpack_from(record, position)
            if position + o_total > end or header_len > definition_len or definition_len > o_total:
                raise _Malformed(
                    f"object at record byte {position}: lengths {o_total}/{definition_len}/{header_len}"
                )
            variable.append((position + 48, position + 56))
            definitions = []
            d = position + header_len
            for _ in range(n_counters):
                byte_length, c_index, _s, _help, _hs, scale, _det, c_type, c_size, c_offset = (
                    _DEFINITION.unpack_from(record, d)
                )
                if byte_length < _DEFINITION.size or d + byte_length > position + definition_len:
                    raise _Malformed(f"counter definition at record byte {d} has length {byte_length}")
                definitions.append((c_index, c_type, c_size, c_offset, scale))
                d += byte_length
            name = self._name(machine, name_index)
            instances: list[tuple[str | None, int, int]] = []
            p = position + definition_len
            object_end = position + o_total
            if n_instances < 0:
                block_len = self._counter_block(record, p, object_end, variable)
                instances.append((None, p, block_len))
                p += block_len
            else:
                seen: dict[str, int] = {}
                for _ in range(n_instances):
                    if p + _INSTANCE.size > object_end:
                        raise _Malformed(f"instance definition at record byte {p} runs past its object")
                    i_len, parent_index, parent_instance, _uid, name_offset, name_length = (
                        _INSTANCE.unpack_from(record, p)
                    )
                    if i_len < _INSTANCE.size or p + i_len > object_end or name_offset + name_length > i_len:
                        raise _Malformed(f"instance definition at record byte {p} has length {i_len}")
                    text = record[p + name_offset : p + name_offset + name_length].decode(
                        "utf-16-le", "replace"
                    )
                    text = text.split("\x00", 1)[0]
                    if parent_index:
                        text = f"{self._name(machine, parent_index)}#{parent_instance}/{text}"
                    display = numbered_instance(text, seen)
                    block_at = p + i_len
                    block_len = self._counter_block(record, block_at, object_end, variable)
                    instances.append((display, block_at, block_len))
                    p = block_at + block_len
            yield (
                _Object(name, instances, definitions, position + 48, position + 56),
                block,
            )
            position = object_end

    @staticmethod
    def _counter_block(record: bytes, at: int, end: int, variable: list[tuple[int, int]]) -> int:
        if at + 4 > end:
            raise _Malformed(f"counter block at record byte {at} runs past its object")
        length = _U32.unpack_from(record, at)[0]
        if length < 4 or at + length > end:
            raise _Malformed(f"counter block at record byte {at} has length {length}")
        variable.append((at + 4, at + length))
        return int(length)

    def _name(self, machine: str, index: int) -> str:
        table = self.names.get(machine.casefold())
        if table is None and self.names:
            table = next(iter(self.names.values()))
        name = table.get(index) if table else None
        if name is None:
            self.notes.once(
                ("name", machine, str(index)),
                f"title index {index} is not in the log's name table; shown as '#{index}'",
                f"machine {machine}",
            )
            return f"#{index}"
        return name

    def _columns_of(self, obj: _Object, block: tuple[str, int], where: str, built: _Builder) -> None:
        machine, block_start = block
        definitions = obj.definitions
        occurrences: dict[str, int] = {}
        for k, (name_index, code, size, offset, scale) in enumerate(definitions):
            if is_base(code):
                continue
            counter = self._name(machine, name_index)
            occurrence = occurrences.get(counter, 0)
            occurrences[counter] = occurrence + 1
            if size not in (4, 8):
                self.notes.once(
                    ("size", obj.name, counter),
                    f"{obj.name}\\{counter}: counter size {size} (type {type_name(code)}) "
                    "has no numeric value; not read",
                    where,
                )
                continue
            kind: CounterType | None = KNOWN.get(code)
            next_def = definitions[k + 1] if k + 1 < len(definitions) else None
            needs_base = kind is not None and (kind.second is Second.BASE or kind.multi)
            if needs_base and (next_def is None or not is_base(next_def[1]) or next_def[2] not in (4, 8)):
                self.notes.once(
                    ("base", obj.name, counter),
                    f"{obj.name}\\{counter} ({kind.name if kind else code}): the base definition that must "
                    "follow it is missing; raw values kept, not cooked",
                    where,
                )
                kind = None
            if code not in KNOWN:
                self.notes.not_cooked(obj.name, counter, code, where)
            last = max(offset + size, next_def[3] + next_def[2] if needs_base and next_def is not None else 0)
            for instance, at, length in obj.instances:
                if last > length:
                    raise _Malformed(
                        f"{obj.name}\\{counter}: value at offset {offset} (size {size}) lies outside the "
                        f"{length}-byte counter block at record byte {at}"
                    )
                column = self.columns.column((machine, obj.name, instance, counter, occurrence), code, scale)
                if column is not None:
                    base = (at + next_def[3], next_def[2]) if needs_base and next_def is not None else None
                    _add(
                        built,
                        column,
                        kind=kind,
                        value=(at + offset, size),
                        base=base,
                        obj=obj,
                        block_start=block_start,
                    )


def _add(
    built: _Builder,
    column: int,
    *,
    kind: CounterType | None,
    value: tuple[int, int],
    base: tuple[int, int] | None,
    obj: _Object,
    block_start: int,
) -> None:
    """One column: where its N, D, B and F sit in the record (``value``/``base``: position, width).
    A clock or frequency is the block's or the object's, shared by the columns timed by it."""
    first = built.slot(*value)
    second = multi = frequency = -1
    if kind is not None:
        if base is not None:
            if kind.multi:
                multi = built.slot(*base)
            else:
                second = built.slot(*base)
        if kind.second is Second.PERF_TIME:
            second = built.slot(block_start + 56, 8)
        elif kind.second is Second.TIME_100NS:
            second = built.slot(block_start + 72, 8)
        elif kind.second is Second.OBJECT_TIME:
            second = built.slot(obj.object_time, 8)
        if kind.formula in (Formula.RATE, Formula.AVERAGE_TIMER):
            frequency = built.slot(block_start + 64, 8)
        elif kind.formula is Formula.ELAPSED:
            frequency = built.slot(obj.object_frequency, 8)
        elif kind.second is Second.TIME_100NS:
            frequency = -2
    built.add(
        column,
        kind.formula if kind is not None else None,
        first=first,
        second=second,
        multi=multi,
        frequency=frequency,
        shared_clock=kind is not None and kind.second not in (Second.BASE, Second.NONE),
    )


def _read_name_table(data: bytes, names: dict[str, dict[int, str]]) -> str | None:
    """A name table (record 36): a machine's name, then title indexes and the names they stand
    for, added to ``names`` (by machine, case-folded). Returns the machine, None when there is none."""
    text = data.decode("utf-16-le", errors="replace")
    strings = text.split("\x00")
    if not strings or not strings[0]:
        return None
    machine = strings[0].lstrip("\\")
    table = names.setdefault(machine.casefold(), {})
    pairs = strings[1:]
    for number, name in zip(pairs[0::2], pairs[1::2], strict=False):
        # ASCII digits only: one flipped bit turns '2' (0x32) into '²' (0xB2), which
        # str.isdigit() accepts and int() refuses; such an entry is damage, skipped.
        index = ascii_int(number)
        if index is not None:
            table[index] = name
    return machine


def _utc_clock(data: bytes) -> int | None:
    """A sample's UTC FILETIME: its first PERF_DATA_BLOCK's PerfTime100nSec; None when the sample
    does not start with one."""
    if len(data) >= 16 + 80 and data[16:24] == _PERF_SIGNATURE:
        return int(struct.unpack_from("<q", data, 16 + 72)[0])
    return None
