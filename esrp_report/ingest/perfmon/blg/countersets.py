"""Counter sets: what Windows 11 writes for a path whose counter part is a wildcard on a counter
set of the newer provider kind (``GPU Adapter Memory(*)\\*``). Record 38 describes the set once
(its name, its counters' ids, types and names); each sample then holds one ``BL 03 15``
sub-record per such path, every instance with one value per counter id. Studied from one log
(docs/blg.md, "Counter sets"): only what that log shows is read; everything else in these
structures is bounded, not trusted."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from esrp_report.ingest.perfmon.blg.columns import _Columns
from esrp_report.ingest.perfmon.blg.header import _utf16z
from esrp_report.ingest.perfmon.blg.layouts import _Builder, _Malformed, _Notes, _SubRecord, numbered_instance
from esrp_report.ingest.perfmon.blg.raw_counters import PathEntry
from esrp_report.ingest.perfmon.counter_types import KNOWN, CounterType, Second

KIND_COUNTERSET = 38
_COUNTERSET_TAG = b"BL\x03\x15"
_SET_HEAD = struct.Struct("<IIII16sIIII")  # size, names at (from +16), name at (from names), name bytes,
# GUID, ?, detail level, counters, instance kind
_SET_COUNTER = 48  # id, type, then fields not needed here
_PAIR = struct.Struct("<II")
_U32 = struct.Struct("<I")
_SUB_HEAD = 64  # body: size, ?, PerfTime, FILETIME, frequency, SYSTEMTIME, ?, values, rest, ?
_VALUE = struct.Struct("<II")  # value width, entry size; the value follows


@dataclass(frozen=True)
class Counterset:
    """One counter set as record 38 gives it: its name and, per counter id, type and name."""

    name: str
    types: dict[int, int]
    names: dict[int, str]


def parse_counterset(data: bytes) -> Counterset:
    """Record 38. Raises _Malformed where its offsets point outside it."""
    if len(data) < _SET_HEAD.size:
        raise _Malformed(f"counter set record of {len(data)} bytes; at least {_SET_HEAD.size} expected")
    size, names_at, name_at, name_bytes, _guid, _x, _detail, count, _kind = _SET_HEAD.unpack_from(data)
    names_at += 16
    name_at += names_at
    if not size <= len(data) or count * _SET_COUNTER + _SET_HEAD.size > names_at or names_at + 8 > size:
        raise _Malformed(
            f"counter set record: {count} counter(s) of {_SET_COUNTER} bytes and names at byte {names_at} "
            f"do not fit its {size} bytes"
        )
    if name_at + name_bytes > size:
        raise _Malformed(
            f"counter set record: its name (byte {name_at}, {name_bytes} bytes) runs past its end"
        )
    types = {}
    for k in range(count):
        ident, code = _PAIR.unpack_from(data, _SET_HEAD.size + k * _SET_COUNTER)
        types[ident] = code
    block, listed = _PAIR.unpack_from(data, names_at)
    if names_at + block > size or names_at + 8 + listed * 8 > names_at + block:
        raise _Malformed(f"counter set record: the name block at byte {names_at} runs past its end")
    names = {}
    for k in range(listed):
        ident, offset = _PAIR.unpack_from(data, names_at + 8 + k * 8)
        if not 8 + listed * 8 <= offset < block:
            raise _Malformed(f"counter set record: counter {ident}'s name offset {offset} outside its block")
        names[ident] = _utf16z(data[names_at + offset : names_at + block])
    return Counterset(_utf16z(data[name_at : name_at + name_bytes]), types, names)


class _Countersets:
    """Reads the ``BL 03 15`` sub-records of a sample into its layout."""

    def __init__(
        self, columns: _Columns, entries: list[PathEntry], sets: dict[str, Counterset], notes: _Notes
    ) -> None:
        self.columns = columns
        self.entries = entries
        self.sets = sets  # by counter set name, from the records 38 read so far
        self.notes = notes

    def read(self, record: bytes, sub: _SubRecord, built: _Builder) -> None:
        position, length = sub.position, sub.length
        where = f"{sub.where}, record byte {position}"
        if sub.ordinal >= len(self.entries):
            raise _Malformed(
                f"counter set sub-record at record byte {position} has no counter path in record 32"
            )
        entry = self.entries[sub.ordinal]
        found = self.sets.get(entry.object)
        if found is None:
            # Without record 38 its values have no names: nothing contradicts, so stepped over
            # and counted as a kind not read, the sample's other counters kept.
            built.variable.append((position + 8, position + length))
            built.skipped.append((record[position + 3], length))
            return
        body, end = position + 8, position + length
        if length < 8 + _SUB_HEAD + 16:
            raise _Malformed(f"counter set sub-record at record byte {position} has length {length}")
        size = _U32.unpack_from(record, body)[0]
        if size > length - 8:
            raise _Malformed(
                f"counter set sub-record at record byte {position}: body size {size} past its length {length}"
            )
        built.variable.append((body + 8, body + 48))  # clocks: PerfTime, FILETIME, SYSTEMTIME
        ids_at = body + _SUB_HEAD
        id_block, id_count = _PAIR.unpack_from(record, ids_at)
        if ids_at + id_block + 8 > end or 8 + 4 * id_count > id_block:
            raise _Malformed(
                f"counter set sub-record at record byte {position}: counter id list runs past it"
            )
        ids = [_U32.unpack_from(record, ids_at + 8 + 4 * k)[0] for k in range(id_count)]
        instances_at = ids_at + id_block
        _block, count = _PAIR.unpack_from(record, instances_at)
        at = instances_at + 8
        items: list[tuple[str, list[tuple[int, int]]]] = []
        for k in range(count):
            if at + 8 > end:
                raise _Malformed(f"counter set instance {k + 1} at record byte {at} runs past the sub-record")
            head = _U32.unpack_from(record, at)[0]
            if head < 8 or at + head > end:
                raise _Malformed(f"counter set instance {k + 1} at record byte {at} has size {head}")
            name = _utf16z(record[at + 8 : at + head])
            value_at = at + head
            values = []
            for ident in ids:
                if value_at + _VALUE.size > end:
                    raise _Malformed(
                        f"counter set value of counter {ident} at record byte {value_at} runs past it"
                    )
                width, step = _VALUE.unpack_from(record, value_at)
                if width not in (4, 8) or step < _VALUE.size + width or value_at + step > end:
                    raise _Malformed(
                        f"counter set value at record byte {value_at}: width {width}, size {step} "
                        "(a 4- or 8-byte value within the sub-record expected)"
                    )
                built.variable.append((value_at + 8, value_at + 8 + width))
                values.append((value_at + 8, width))
                value_at += step
            items.append((name, values))
            at = value_at
        seen: dict[int, dict[str, int]] = {}
        for name, values in items:
            for ident, value in zip(ids, values, strict=True):
                counter = found.names.get(ident, f"counter {ident}")
                shown = numbered_instance(name, seen.setdefault(ident, {}))
                code = found.types.get(ident, 0)
                self._value(
                    built, entry=entry, instance=shown, counter=counter, code=code, value=value, where=where
                )

    def _value(
        self,
        built: _Builder,
        *,
        entry: PathEntry,
        instance: str,
        counter: str,
        code: int,
        value: tuple[int, int],
        where: str,
    ) -> None:
        key = (entry.machine, entry.object, instance, counter)
        occurrence = built.occurrences.get(key, 0)
        built.occurrences[key] = occurrence + 1
        kind: CounterType | None = KNOWN.get(code)
        if kind is None or kind.base or kind.second is not Second.NONE or kind.multi:
            # Only values that need no second value were seen in this structure: a type that
            # needs a clock or a base would need a guess at where it sits.
            kind = None
            self.notes.not_cooked(entry.object, counter, code, where)
        column = self.columns.column((*key, occurrence), code, 0)
        if column is None:
            return
        built.add(column, kind.formula if kind is not None else None, first=built.slot(*value))
