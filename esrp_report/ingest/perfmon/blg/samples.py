"""A sample record (kind 34): the container sub-record ``BL 03 00`` holding the sample's
sub-records, each handed to its layout by its tag: ``BL 03 05`` to the Vista layout
(``perflib.py``), ``BL 03 01`` and ``BL 03 02`` to the raw-counter layout (``raw_counters.py``).
A new layout is a module beside those two and a line in ``_Layouts.readers``."""

from __future__ import annotations

import struct
from collections.abc import Callable

from esrp_report.ingest.perfmon.blg import countersets, perflib, raw_counters
from esrp_report.ingest.perfmon.blg.columns import _Columns
from esrp_report.ingest.perfmon.blg.layouts import (
    _Builder,
    _Layout,
    _Malformed,
    _Notes,
    _SubRecord,
    _Unsupported,
)
from esrp_report.ingest.perfmon.blg.raw_counters import PathEntry
from esrp_report.model import Problem

_CONTAINER_TAG = b"BL\x03\x00"
_U32 = struct.Struct("<I")


class _Layouts:
    """Turns a sample record into its layout: parsed once, reused while the structure holds."""

    def __init__(
        self,
        source: str,
        columns: _Columns,
        names: dict[str, dict[int, str]],
        entries: list[PathEntry] | None = None,
    ) -> None:
        self.source = source
        self.columns = columns
        self.entries = entries if entries is not None else []  # record 32, for raw-counter samples
        self.countersets: dict[str, countersets.Counterset] = {}  # records 38, by name
        self.layouts_seen: set[str] = set()  # "perflib" (PERF_DATA_BLOCKs), "raw" (PDH raw counters)
        self.notes = _Notes(source)
        vista = perflib._Perflib(columns, names, self.notes)
        raw = raw_counters._RawCounters(columns, self.entries, self.notes)
        sets = countersets._Countersets(columns, self.entries, self.countersets, self.notes)
        # The sub-record tags: the layout each belongs to and the reader of its kind.
        self.readers: dict[bytes, tuple[str, Callable[[bytes, _SubRecord, _Builder], None]]] = {
            perflib._OBJECT_TAG: ("perflib", vista.read),
            raw_counters._RAW_TAG: ("raw", raw.read_counter),
            raw_counters._RAW_ARRAY_TAG: ("raw", raw.read_array),
            countersets._COUNTERSET_TAG: ("raw", sets.read),
        }

    @property
    def problems(self) -> list[Problem]:
        return self.notes.problems

    def parse(self, record: bytes, where: str) -> _Layout:
        if len(record) < 8 or record[:4] != _CONTAINER_TAG:
            raise _Malformed(
                "sample record does not start with the container tag 42 4C 03 00 "
                f"(found {record[:4].hex(' ')})"
            )
        total = _U32.unpack_from(record, 4)[0]
        if not 8 <= total <= len(record):
            raise _Malformed(f"sample record length {total} outside 8..{len(record)}")
        built = _Builder()
        position = 8
        ordinal = 0
        while position < total:
            if position + 8 > total:
                raise _Malformed(f"sub-record header at record byte {position} runs past the record")
            tag = record[position : position + 4]
            length = _U32.unpack_from(record, position + 4)[0]
            if length < 8 or position + length > total:
                raise _Malformed(f"sub-record at record byte {position} has length {length}")
            known = self.readers.get(tag)
            if known is not None:
                layout, read = known
                self.layouts_seen.add(layout)
                read(record, _SubRecord(position, length, ordinal, where), built)
            elif tag[:3] == _CONTAINER_TAG[:3]:
                # A kind this reader does not know says nothing against the sub-records beside it
                # (Windows 11 writes one kind per counter path, known and unknown side by side):
                # stepped over by its length, its bytes free to change, counted per sample.
                built.variable.append((position + 8, position + length))
                built.skipped.append((tag[3], length))
            else:
                raise _Malformed(
                    f"sub-record tag 42 4C 03 .. expected at record byte {position}, found {tag.hex(' ')}"
                )
            ordinal += 1
            position += length
        if built.skipped and not built.columns and not built.failed:
            # Nothing in the sample is of a kind this reader knows: not damage, a layout not read.
            kinds = ", ".join(f"42 4C 03 {kind:02X}" for kind in sorted({k for k, _ in built.skipped}))
            raise _Unsupported(
                f"sample sub-record kind(s) {kinds} only (this reader knows 42 4C 03 05, 01, 02 and 15)"
            )
        return built.layout(record[:total])

    def utc_clock(self, data: bytes) -> int | None:
        """A sample's own UTC clock (FILETIME), where its layout keeps one; None when it has none."""
        clock = perflib._utc_clock(data)
        return clock if clock is not None else raw_counters._utc_clock(data, self.entries)


def _declared_length(head: bytes) -> int:
    """The container's own length, when the record starts like a sample; 0 otherwise."""
    if len(head) < 8 or head[:4] != _CONTAINER_TAG:
        return 0
    return int(_U32.unpack_from(head, 4)[0])
