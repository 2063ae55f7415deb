r"""Windows perfmon binary counter logs (``.blg``, Windows Vista and later), read natively.

The file is an event-trace log: fixed-size buffers, each a 72-byte header and 8-byte aligned
events. Buffer 0 holds the log-file header (machine facts, clocks, time zone). Performance-data
events carry records that may be cut into fragments across buffers: name tables (kind 36), the
requested counter paths (32), one record per sample (34) and a closing catalog (35). A sample
record is one perflib ``PERF_DATA_BLOCK`` per object, self-describing: counter definitions,
instances and counter blocks. The layout is described in the project's format notes.

Speed comes from layouts: a sample whose structure (every byte except counter data and clocks)
equals the previous sample's is not parsed again. Consecutive samples of one layout are stacked
into a matrix and every raw value of every sample is gathered by one NumPy take per value width,
then cooked by the published formulas (``esrp_report.ingest.perfmon.counter_types``) a counter type at a time.
Reading is streaming, buffer by buffer: memory follows the number of counters, not the length.

Damage never stops the reader: a buffer whose header is wrong, an event that overruns its
buffer, a record with fragments missing, a sample whose perflib structures do not add up are
skipped and reported with the buffer index, byte offset and what was lost.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import numpy as np
import polars as pl

from esrp_report.ingest.perfmon import blg_signature
from esrp_report.ingest.perfmon.blg.columns import BlgColumn, Selector, _Columns
from esrp_report.ingest.perfmon.blg.container import (
    KIND_CATALOG,
    KIND_NAMES,
    KIND_PATHS,
    KIND_SAMPLE,
    _Container,
    _Record,
    _where,
)
from esrp_report.ingest.perfmon.blg.filetime import (
    _FILETIME_EPOCH,
    _FILETIME_UNIX,
    _LAST_FILETIME,
    _TICKS_100NS,
    _local_text,
    utc_stamps,
)
from esrp_report.ingest.perfmon.blg.header import (
    EXPECTED_FILE,
    BlgHeader,
    parse_log_header,
    zone_name,
)
from esrp_report.ingest.perfmon.blg.layouts import _Layout, _Malformed, _Slot, _stride, _Unsupported
from esrp_report.ingest.perfmon.blg.perflib import _read_name_table
from esrp_report.ingest.perfmon.blg.raw_counters import PDH_STATUS_NAMES, PathEntry, parse_path_entries
from esrp_report.ingest.perfmon.blg.samples import _declared_length, _Layouts
from esrp_report.ingest.perfmon.blg_signature import BUFFER_HEADER
from esrp_report.ingest.perfmon.counter_csv import describe_counter_log
from esrp_report.ingest.perfmon.counter_types import (
    KNOWN,
    KNOWN_TWO_SAMPLE,
    WHY_ABSENT_FIRST,
    WHY_ABSENT_LAST,
    WHY_BACKWARDS,
    WHY_NEVER,
    WHY_RESET,
    WINDOW_OK,
    WINDOW_WHY,
    Formula,
    RawEnds,
    cook_deltas,
    window_average,
)
from esrp_report.model import COUNTERS_SCHEMA, CounterLog, LogDamage, Problem
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError

__all__ = [
    "BUFFER_HEADER",
    "ENGINE",
    "ENGINES",
    "EXPECTED_FILE",
    "KIND_CATALOG",
    "KIND_NAMES",
    "KIND_PATHS",
    "KIND_SAMPLE",
    "PDH_STATUS_NAMES",
    "BlgBatch",
    "BlgColumn",
    "BlgFile",
    "BlgHeader",
    "Catalog",
    "PathEntry",
    "Selector",
    "WindowAverages",
    "describe_blg",
    "native_engine_built",
    "no_samples_error",
    "parse_log_header",
    "parse_path_entries",
    "read_blg",
    "sniff_blg",
    "utc_stamps",
    "window_averages",
    "window_report",
    "zone_name",
]

try:
    from esrp_report.ingest import _blgcook  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the NumPy engine serves
    _blgcook = None

ENGINES = ("auto", "native", "numpy")
ENGINE = "auto"  # what BlgFile uses when not told: the compiled engine when it was built


def native_engine_built() -> bool:
    """Was the compiled engine built (a C compiler at install)?"""
    return _blgcook is not None


_LISTED = 10  # sample times listed in a problem
_BATCH_BYTES = 64 << 20  # raw sample bytes stacked before a batch is decoded
_U32 = struct.Struct("<I")


# --- what the reader hands out ------------------------------------------------------------------


@dataclass
class BlgBatch:
    """Consecutive samples: local FILETIME stamps and one value column per known counter column.

    ``values[:, j]`` belongs to ``columns[j]``; NaN is "no value". Counters of a type that is
    not cooked keep their raw values in ``uncooked_values`` (columns ``uncooked_columns``).
    """

    stamps: np.ndarray[Any, np.dtype[np.int64]]  # FILETIME, local time of the collector
    values: np.ndarray[Any, np.dtype[np.float64]]
    uncooked_columns: np.ndarray[Any, np.dtype[np.int64]] = field(
        default_factory=lambda: np.zeros(0, np.int64)
    )
    uncooked_values: np.ndarray[Any, np.dtype[np.int64]] = field(
        default_factory=lambda: np.zeros((0, 0), np.int64)
    )


@dataclass
class Catalog:
    """The closing catalog record of a .blg: first and last sample times (local FILETIME), the sample count
    and the object count it states."""

    first_local: int
    last_local: int
    samples: int
    objects: int


# --- the container: buffers, events, records -----------------------------------------------------


# --- sample records: layouts ---------------------------------------------------------------------


@dataclass
class _NativePlan:
    """A layout as flat arrays for ``_blgcook.cook``: slots, then cooked columns grouped by formula
    (one branch pattern per group)."""

    position: np.ndarray[Any, np.dtype[np.int64]]
    width: np.ndarray[Any, np.dtype[np.int64]]
    kind: np.ndarray[Any, np.dtype[np.int64]]
    n: np.ndarray[Any, np.dtype[np.int64]]
    d: np.ndarray[Any, np.dtype[np.int64]]
    b: np.ndarray[Any, np.dtype[np.int64]]
    f: np.ndarray[Any, np.dtype[np.int64]]
    out: np.ndarray[Any, np.dtype[np.int64]]
    member: np.ndarray[Any, np.dtype[np.int64]]  # layout column of each planned column


# Formula codes of _blgcook.c (enum order there).
_NATIVE_KIND = {
    Formula.RAW: 0,
    Formula.FRACTION: 1,
    Formula.ELAPSED: 2,
    Formula.RATE: 3,
    Formula.TIMER: 4,
    Formula.TIMER_INV: 5,
    Formula.QUEUE: 6,
    Formula.AVERAGE_TIMER: 7,
    Formula.AVERAGE: 8,
    Formula.SAMPLE_FRACTION: 9,
    Formula.DELTA: 10,
    Formula.MULTI_TIMER: 11,
}


def _native_plan(layout: _Layout) -> _NativePlan:
    members = np.concatenate([g.members for g in layout.groups]) if layout.groups else np.zeros(0, np.int64)
    kind = np.concatenate(
        [np.full(len(g.members), _NATIVE_KIND[g.formula], np.int64) for g in layout.groups] or [members]
    )
    frequency = np.concatenate(
        [np.full(len(g.members), g.frequency, np.int64) for g in layout.groups] or [members]
    )
    multi = kind == _NATIVE_KIND[Formula.MULTI_TIMER]
    return _NativePlan(
        position=np.array([s.position for s in layout.slots], dtype=np.int64),
        width=np.array([s.width for s in layout.slots], dtype=np.int64),
        kind=kind,
        n=layout.first[members],
        d=layout.second[members],
        b=np.where(multi, layout.base[members], -1),
        f=frequency,
        out=layout.columns[members],
        member=members,
    )


# --- decoding batches ----------------------------------------------------------------------------


class _Decoder:
    """Cooks runs of sample records that share a layout; keeps the previous raw values between runs."""

    def __init__(self, layouts: _Layouts, *, values: bool = True, native: bool = False) -> None:
        self.layouts = layouts
        self.native = native
        self.stacker = _Stacker()
        self.values = values
        self.layout: _Layout | None = None
        self.prev_first = np.zeros(0, dtype=np.int64)
        self.prev_second = np.zeros(0, dtype=np.int64)
        self.prev_ok = np.zeros(0, dtype=bool)
        self.problems: list[Problem] = []
        self.samples = 0
        self.samples_lost = 0
        self.samples_unsupported = 0
        self.error_samples = 0  # samples with a counter whose collection failed
        self._failures: dict[int, int] = {}  # PDH status -> values missing because of it
        self._failed_at: list[int] = []  # local stamps of the first such samples
        self.window: _Window | None = None
        # How the engine reads the current layout's slots, made on the layout's first run.
        self._gather_planned: tuple[_Layout, _GatherPlan] | None = None
        self._native_planned: tuple[_Layout, _NativePlan] | None = None

    def _grow(self, width: int) -> None:
        if width > len(self.prev_ok):
            extra = width - len(self.prev_ok)
            self.prev_first = np.concatenate([self.prev_first, np.zeros(extra, np.int64)])
            self.prev_second = np.concatenate([self.prev_second, np.zeros(extra, np.int64)])
            self.prev_ok = np.concatenate([self.prev_ok, np.zeros(extra, bool)])

    def decode(self, records: list[_Record]) -> Iterator[BlgBatch]:
        """Batches for consecutive sample records (damaged ones reported and skipped).

        Records of one length are stacked once; each run of rows whose structure matches the
        current layout is cooked in one go. A row that does not match is parsed as a new layout.
        """
        whole = []
        lengths = []
        for record in records:
            declared = _declared_length(record.head(8))
            if declared and declared > record.size:
                self.damaged(record, f"it declares {declared} bytes but holds {record.size}")
            else:
                whole.append(record)
                lengths.append(declared)
        records = whole
        start = 0
        while start < len(records):
            length = lengths[start]
            stop = start + 1
            while stop < len(records) and lengths[stop] == length:
                stop += 1
            group = records[start:stop]
            matrix = self.stacker.stack(group, length, native=self.native) if length else None
            row = 0
            while row < len(group):
                layout = self.layout
                if (
                    matrix is None
                    or layout is None
                    or layout.length != length
                    or not _same(layout, matrix[row : row + 1], native=self.native)[0]
                ):
                    try:
                        layout = self.layout = self.layouts.parse(group[row].data, _where(group[row]))
                    except _Unsupported as exc:
                        self.unsupported(group[row], str(exc))
                        row += 1
                        continue
                    except (_Malformed, struct.error) as exc:
                        self.damaged(group[row], str(exc))
                        row += 1
                        continue
                assert matrix is not None
                same = _same(layout, matrix[row + 1 :], native=self.native)
                run = 1 + (int(np.argmin(same)) if not same.all() else len(same))
                yield self._cook(layout, group[row : row + run], matrix[row : row + run])
                row += run
            start = stop

    def _cook(
        self, layout: _Layout, records: list[_Record], matrix: np.ndarray[Any, np.dtype[np.uint8]]
    ) -> BlgBatch:
        n = len(records)
        stamps = np.array([r.stamp for r in records], dtype=np.int64)
        if layout.failed:
            self.error_samples += n
            for _column, status in layout.failed:
                self._failures[status] = self._failures.get(status, 0) + n
            self._failed_at.extend(int(s) for s in stamps[: max(0, _LISTED - len(self._failed_at))])
        if not self.values:
            self.samples += n
            return BlgBatch(stamps, np.zeros((n, 0)))
        width = len(self.layouts.columns.list)
        self._grow(width)
        cols = layout.columns
        first_ok = self.prev_ok[cols]
        # The previous sample's raw values, slot by slot. A clock slot is shared by many columns:
        # only those present in the previous sample know its previous value (a column that just
        # appeared holds a stale or zero one, which would wreck every rate of the first row).
        has_second = layout.second >= 0
        prev_row = np.zeros(len(layout.slots), dtype=np.int64)
        prev_row[layout.first] = self.prev_first[cols]
        known = has_second & first_ok
        prev_row[layout.second[known]] = self.prev_second[cols[known]]
        complete = len(cols) == width and not len(layout.uncooked)
        values_out = np.empty((n, width)) if complete else np.full((n, width), np.nan)
        if self.native:
            current, last = self._cook_native(layout, matrix, prev_row, first_ok, values_out)
        else:
            current = self._cook_numpy(layout, matrix, prev_row, first_ok, values_out)
            last = current[-1]
        if self.window is not None:
            self.window.update(layout, stamps, current, values_out)
        self.prev_ok[:] = False
        self.prev_ok[cols] = True
        self.prev_first[cols] = last[layout.first]
        self.prev_second[cols[has_second]] = last[layout.second[has_second]]
        self.samples += n
        batch = BlgBatch(stamps, values_out)
        batch.uncooked_columns = cols[layout.uncooked]
        batch.uncooked_values = (
            current[:, layout.first[layout.uncooked]]
            if self.window is not None or not self.native
            else current
        )
        return batch

    def _cook_native(
        self,
        layout: _Layout,
        matrix: np.ndarray[Any, np.dtype[np.uint8]],
        prev_row: np.ndarray[Any, np.dtype[np.int64]],
        first_ok: np.ndarray[Any, np.dtype[np.bool_]],
        out: np.ndarray[Any, np.dtype[np.float64]],
    ) -> tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, np.dtype[np.int64]]]:
        """Gather and cook in one compiled pass. Returns (raw values kept, last row of raw values):
        every slot when a window needs them, else the uncooked columns' values."""
        assert _blgcook is not None
        if self._native_planned is None or self._native_planned[0] is not layout:
            self._native_planned = (layout, _native_plan(layout))
        plan = self._native_planned[1]
        slots = len(layout.slots)
        keep = np.arange(slots) if self.window is not None else layout.first[layout.uncooked]
        kept = np.empty((len(matrix), len(keep)), dtype=np.int64)
        last = np.empty(slots, dtype=np.int64)
        _blgcook.cook(
            matrix,
            len(matrix),
            matrix.shape[1],
            plan.position,
            plan.width,
            prev_row,
            plan.kind,
            plan.n,
            plan.d,
            plan.b,
            plan.f,
            plan.out,
            first_ok[plan.member].astype(np.uint8),
            out,
            out.shape[1],
            keep,
            kept,
            last,
        )
        return kept, last

    def _cook_numpy(
        self,
        layout: _Layout,
        matrix: np.ndarray[Any, np.dtype[np.uint8]],
        prev_row: np.ndarray[Any, np.dtype[np.int64]],
        first_ok: np.ndarray[Any, np.dtype[np.bool_]],
        values_out: np.ndarray[Any, np.dtype[np.float64]],
    ) -> np.ndarray[Any, np.dtype[np.int64]]:
        """NumPy engine: one take per value width, one diff, one formula group at a time.
        Returns the raw values of every slot of every row."""
        n = len(matrix)
        cols = layout.columns
        # Raw values of every slot, with the previous sample's row on top: movements are one diff.
        rows = np.empty((n + 1, len(layout.slots)), dtype=np.int64)
        if self._gather_planned is None or self._gather_planned[0] is not layout:
            self._gather_planned = (layout, _gather_plan(layout.slots))
        _gather(matrix, self._gather_planned[1], out=rows[1:])
        rows[0] = prev_row
        movement = np.diff(rows, axis=0)
        current = rows[1:]
        for group in layout.groups:
            members = group.members
            firsts = layout.first[members]
            if group.frequency == -2:
                frequency: Any = float(_TICKS_100NS)
            elif group.frequency >= 0:
                frequency = current[:, group.frequency : group.frequency + 1]
            else:
                frequency = None
            d1: np.ndarray[Any, np.dtype[np.int64]] | None = None
            dd: np.ndarray[Any, np.dtype[np.int64]] | None = None
            if group.clock >= 0:
                d1 = current[:, group.clock : group.clock + 1]
                dd = movement[:, group.clock : group.clock + 1]
            elif (layout.second[members] >= 0).all():
                d1 = current[:, layout.second[members]]
                dd = movement[:, layout.second[members]]
            two = KNOWN_TWO_SAMPLE[group.formula]
            values = cook_deltas(
                group.formula,
                n1=None if two else current[:, firsts],
                dn=movement[:, firsts] if two else None,
                d1=d1,
                dd=dd,
                f=frequency,
                b1=current[:, layout.base[members]]
                if (layout.base[members] >= 0).all() and group.formula is Formula.MULTI_TIMER
                else None,
            )
            if two:
                values[0, ~first_ok[members]] = np.nan
            values_out[:, cols[members]] = values
        return current

    def failure_problems(self) -> list[Problem]:
        """The samples in which some counters have no value because their collection failed (a
        PDH status other than valid data): how many, when, which statuses, how many values."""
        if not self.error_samples:
            return []
        statuses = ", ".join(
            f"{count} x 0x{status:08X} {PDH_STATUS_NAMES.get(status, '(unknown status)')}"
            for status, count in sorted(self._failures.items())
        )
        when = ", ".join(_local_text(s) for s in self._failed_at)
        more = self.error_samples - len(self._failed_at)
        return [
            Problem(
                self.layouts.source,
                f"{self.error_samples} sample(s) with counters whose collection failed: "
                f"{sum(self._failures.values())} value(s) missing ({statuses}); those values are left "
                "empty (a two-sample counter's next value too), the samples' other values are read",
                location=f"samples at {when}" + (f" and {more} more" if more > 0 else ""),
            )
        ]

    def unsupported(self, record: _Record, why: str) -> None:
        self.samples_unsupported += 1
        self.samples_lost += 1
        if self.samples_unsupported == 1:
            self.problems.append(
                Problem(
                    self.layouts.source,
                    f"sample at {_local_text(record.stamp)} not understood: {why}; samples of a layout "
                    "this reader does not support are skipped and counted as lost",
                    location=_where(record),
                    lost=1,
                )
            )

    def damaged(self, record: _Record, why: str) -> None:
        self.samples_lost += 1
        self.problems.append(
            Problem(
                self.layouts.source,
                f"sample at {_local_text(record.stamp)} is damaged ({why}); skipped",
                location=_where(record),
                lost=1,
            )
        )


def _same(
    layout: _Layout, matrix: np.ndarray[Any, np.dtype[np.uint8]], *, native: bool = False
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which rows have exactly the layout's structure (all structure bytes compared at once)."""
    if native:
        assert _blgcook is not None
        equal = np.empty(len(matrix), dtype=np.bool_)
        _blgcook.same(
            matrix, len(matrix), matrix.shape[1], layout.words, layout.template, layout.masks, equal
        )
        return equal
    words = matrix.view(np.uint64)
    differs = ((words[:, layout.words] ^ layout.template) & layout.masks).any(axis=1)
    return np.asarray(~differs)


class _Stacker:
    """Stacks records of one declared length as rows (padded to 8 bytes) in a buffer that is reused,
    so each batch costs one copy of its bytes and no fresh pages."""

    def __init__(self) -> None:
        self.buffer = np.zeros(0, dtype=np.uint8)

    def stack(
        self, records: list[_Record], length: int, *, native: bool = False
    ) -> np.ndarray[Any, np.dtype[np.uint8]]:
        stride = _stride(length)
        size = stride * len(records)
        if len(self.buffer) < size:
            self.buffer = np.empty(size, dtype=np.uint8)
        out = self.buffer[:size]
        if native:
            assert _blgcook is not None
            _blgcook.stack([r.parts for r in records], length, stride, out)
            return out.reshape(len(records), stride)
        row = 0
        for record in records:
            position = row
            end = row + length
            for part in record.parts:
                take = min(len(part), end - position)
                out[position : position + take] = np.frombuffer(part, dtype=np.uint8, count=take)
                position += take
                if position == end:
                    break
            out[position : row + stride] = 0  # a short record is padded here, then rejected
            row += stride
        return out.reshape(len(records), stride)


# For each value width and byte alignment: (dtype, alignment, slots, word index in a row).
_GatherPlan = list[tuple[str, int, np.ndarray[Any, Any], np.ndarray[Any, Any]]]


def _gather_plan(slots: list[_Slot]) -> _GatherPlan:
    """How ``_gather`` reads a layout's slots: one take per value width and byte alignment."""
    positions = np.fromiter((s.position for s in slots), dtype=np.int64, count=len(slots))
    widths = np.fromiter((s.width for s in slots), dtype=np.int64, count=len(slots))
    plan: _GatherPlan = []
    for width, dtype in ((8, "<i8"), (4, "<u4")):
        chosen = np.flatnonzero(widths == width)
        residues = positions[chosen] % width
        for residue in np.unique(residues):
            members = chosen[residues == residue]
            plan.append((dtype, int(residue), members, (positions[members] - residue) // width))
    constants = np.flatnonzero(widths == 0)
    if len(constants):
        plan.append(("constant", 0, constants, positions[constants]))
    return plan


def _gather(
    matrix: np.ndarray[Any, np.dtype[np.uint8]],
    plan: _GatherPlan,
    *,
    out: np.ndarray[Any, np.dtype[np.int64]],
) -> None:
    """Every slot of every row as int64 (DWORDs unsigned): one take per value width and alignment."""
    stride = matrix.shape[1]
    for dtype, residue, members, words in plan:
        if dtype == "constant":  # the values themselves (a time base), in every row
            out[:, members] = words
            continue
        width = np.dtype(dtype).itemsize
        view = matrix[:, residue : residue + (stride - residue) // width * width].view(dtype)
        out[:, members] = np.take(view, words, axis=1, mode="clip")


# --- the file ------------------------------------------------------------------------------------


class BlgFile:
    """An open .blg: its header, and its samples as a stream of batches.

    ``engine``: "native" (the compiled gather-and-cook pass), "numpy", or "auto" (native when
    built); None = the module's ``ENGINE``. Both give the same values, NaN for the same cells.
    """

    def __init__(self, path: str | Path, *, engine: str | None = None) -> None:
        chosen = ENGINE if engine is None else engine
        if chosen not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {chosen!r}")
        if chosen == "native" and _blgcook is None:
            raise ValueError("the compiled .blg engine was not built (no C compiler at install)")
        self.native = chosen != "numpy" and _blgcook is not None
        self.path = Path(path)
        self.source = str(self.path)
        try:
            self._stream: IO[bytes] = self.path.open("rb")
        except OSError as exc:
            raise CounterLogError(self.source, f"cannot open: {exc.strerror}") from None
        size = self.path.stat().st_size
        try:
            self._container = _Container(self._stream, self.source, size)
        except BaseException:
            self._stream.close()
            raise
        self.header = self._container.header
        self.names: dict[str, dict[int, str]] = {}
        self.entries: list[PathEntry] = []  # record 32: the counter paths asked for
        self.machine_names: list[str] = []
        self.catalog: Catalog | None = None
        self.problems: list[Problem] = []
        self.columns: list[BlgColumn] = []
        self.samples_read = 0
        self.samples_lost = 0
        self.samples_unsupported = 0  # sample records of a layout this reader does not know
        self.unknown_headers: list[int] = []  # event header types not understood
        self.error_samples = 0  # samples with a counter whose collection failed (a PDH status)
        self.layouts_seen: list[str] = []  # the sample layouts read: "perflib", "raw"
        self.utc_offset_minutes: int | None = None

    def close(self) -> None:
        """Close the file."""
        self._stream.close()

    def __enter__(self) -> BlgFile:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def batches(
        self,
        *,
        counters: Sequence[str] | None = None,
        values: bool = True,
        batch_bytes: int = _BATCH_BYTES,
        window: _Window | None = None,
    ) -> Iterator[BlgBatch]:
        """Decode the whole log; ``columns``, ``problems`` and the counts are final when it ends.

        ``values=False`` walks the structure only (columns, sample count, damage) without cooking.
        ``window`` (see :func:`window_averages`) keeps the raw values at each column's window ends.
        """
        self.problems = []
        registry = _Columns(Selector(counters))
        self.columns = registry.list
        self.names = {}
        self.entries.clear()
        layouts = _Layouts(self.source, registry, self.names, self.entries)
        decoder = _Decoder(layouts, values=values, native=self.native)
        decoder.window = window
        container = self._container
        container.problems = []
        container.samples_lost = 0
        pending: list[_Record] = []
        pending_bytes = 0
        offsets_seen = False
        for record in container.records():
            if record.kind == -1:
                continue
            if record.kind == KIND_SAMPLE:
                if not 0 < record.stamp < _LAST_FILETIME:
                    decoder.damaged(
                        record, f"its time stamp (FILETIME {record.stamp}) is outside the calendar"
                    )
                    continue
                if not offsets_seen:
                    offsets_seen = True
                    self.utc_offset_minutes = self._utc_offset(record, layouts)
                    if window is not None:
                        window.resolve(self.utc_offset_minutes)
                pending.append(record)
                pending_bytes += record.size
                if pending_bytes >= batch_bytes:
                    yield from decoder.decode(pending)
                    pending, pending_bytes = [], 0
                continue
            if pending:
                yield from decoder.decode(pending)
                pending, pending_bytes = [], 0
            self._other_record(record)
        if pending:
            yield from decoder.decode(pending)
        self.samples_read = decoder.samples
        self.samples_lost = container.samples_lost + decoder.samples_lost
        self.samples_unsupported = decoder.samples_unsupported
        self.unknown_headers = sorted(container.unknown_headers)
        self.error_samples = decoder.error_samples
        offset_problems = [p for p in self.problems if "UTC offset" in p.message]
        self.problems = (
            offset_problems
            + container.problems
            + layouts.problems
            + decoder.problems
            + decoder.failure_problems()
            + self._catalog_check(layouts.layouts_seen)
        )
        self.layouts_seen = sorted(layouts.layouts_seen)

    def _other_record(self, record: _Record) -> None:
        if record.kind == KIND_NAMES:
            self._name_table(record)
        elif record.kind == KIND_CATALOG:
            if len(record.data) >= 24:
                first, last, samples, objects = struct.unpack_from("<QQII", record.data, 0)
                self.catalog = Catalog(first, last, samples, objects)
        elif record.kind == KIND_PATHS:
            try:
                self.entries[:] = parse_path_entries(record.data)
            except (_Malformed, struct.error) as exc:
                self._container.problems.append(
                    Problem(
                        self.source,
                        f"the counter list (record 32) is unreadable ({exc}); samples of the raw-counter "
                        "layout cannot be named",
                        location=_where(record),
                    )
                )
        else:
            self._container.problems.append(
                Problem(
                    self.source,
                    f"record of unknown kind {record.kind} ({len(record.data)} bytes) skipped",
                    location=_where(record),
                    severity="note",
                )
            )

    def _name_table(self, record: _Record) -> None:
        machine = _read_name_table(record.data, self.names)
        if machine is not None and machine not in self.machine_names:
            self.machine_names.append(machine)

    def _utc_offset(self, record: _Record, layouts: _Layouts) -> int | None:
        """Local minus UTC, in minutes: the first sample's local stamp against its own UTC clock
        (a PERF_DATA_BLOCK's PerfTime100nSec, or a 100 ns counter's D in the raw-counter layout),
        else the time-zone header (whose daylight rule this reader does not evaluate)."""
        utc_100ns = layouts.utc_clock(record.data)
        if utc_100ns is not None:
            derived = round((record.stamp - utc_100ns) / 600_000_000 / 15) * 15
            if abs(derived) <= 14 * 60:
                return int(derived)
        self.problems.append(
            Problem(
                self.source,
                "the first sample's clocks do not give its UTC offset; the time-zone header's bias "
                f"({self.header.bias_minutes} min, daylight saving not applied) is used",
                location=_where(record),
            )
        )
        return -self.header.bias_minutes

    def _catalog_check(self, layouts_seen: set[str]) -> list[Problem]:
        if self.catalog is None:
            if layouts_seen == {"raw"}:
                return []  # the writers of the raw-counter layout close no catalog (docs/blg.md)
            return [
                Problem(
                    self.source,
                    "no closing catalog record: the log was not closed (collector stopped or file copied "
                    "while open); the samples alone are read",
                    severity="note",
                )
            ]
        expected = self.catalog.samples
        if expected != self.samples_read:
            return [
                Problem(
                    self.source,
                    f"the closing catalog lists {expected} sample(s); {self.samples_read} were read",
                    location="closing catalog",
                    lost=max(0, expected - self.samples_read),
                )
            ]
        return []


# --- exact averages over a window ----------------------------------------------------------------


class _Window:
    """Streaming state of window averages, per column: the raw values (N, D, B, F) at its first
    and last sample inside the window, its cooked values' count and sum, and what breaks a
    first/last average (a reset: the instance vanished and returned; a raw value that went
    backwards). Memory follows the number of columns, not the number of samples."""

    def __init__(self, begin: datetime | None, end: datetime | None) -> None:
        self.bounds = (begin, end)
        self.low, self.high = -(2**63), 2**63 - 1  # local FILETIME, once the UTC offset is known
        self.samples = 0  # samples inside the window
        self.first_stamp = 0
        self.last_stamp = 0
        self.ends = np.zeros((2, 4, 0), dtype=np.int64)  # (first/last, N/D/B/F, column)
        self.at = np.zeros((2, 0), dtype=np.int64)  # window sample index of each end, -1 = none
        self.stamps = np.zeros((2, 0), dtype=np.int64)
        self.why = np.zeros(0, dtype=np.int64)
        self.uncooked = np.zeros(0, dtype=bool)
        self.count = np.zeros(0, dtype=np.int64)  # samples where the column is present
        self.cooked = np.zeros(0, dtype=np.int64)  # of which with a cooked value
        self.total = np.zeros(0, dtype=np.float64)  # sum of those cooked values
        self.lead = np.zeros(0, dtype=np.float64)  # cooked value at the column's first sample

    def resolve(self, offset_minutes: int | None) -> None:
        """Window bounds as the samples' local FILETIME: naive times are the log's local time."""
        shift = timedelta(minutes=offset_minutes or 0)

        def local(moment: datetime) -> int:
            if moment.tzinfo is not None:
                moment = moment.astimezone(UTC).replace(tzinfo=None) + shift
            return (moment - _FILETIME_EPOCH) // timedelta(microseconds=1) * 10

        begin, end = self.bounds
        if begin is not None:
            self.low = local(begin)
        if end is not None:
            self.high = local(end)

    def _grow(self, width: int) -> None:
        extra = width - len(self.why)
        if extra <= 0:
            return
        self.ends = np.concatenate([self.ends, np.zeros((2, 4, extra), np.int64)], axis=2)
        self.at = np.concatenate([self.at, np.full((2, extra), -1, np.int64)], axis=1)
        self.stamps = np.concatenate([self.stamps, np.zeros((2, extra), np.int64)], axis=1)
        self.why = np.concatenate([self.why, np.zeros(extra, np.int64)])
        self.uncooked = np.concatenate([self.uncooked, np.zeros(extra, bool)])
        self.count = np.concatenate([self.count, np.zeros(extra, np.int64)])
        self.cooked = np.concatenate([self.cooked, np.zeros(extra, np.int64)])
        self.total = np.concatenate([self.total, np.zeros(extra)])
        self.lead = np.concatenate([self.lead, np.full(extra, np.nan)])

    def update(
        self,
        layout: _Layout,
        stamps: np.ndarray[Any, np.dtype[np.int64]],
        current: np.ndarray[Any, np.dtype[np.int64]],
        values: np.ndarray[Any, np.dtype[np.float64]],
    ) -> None:
        """One run of samples of one layout (``current``: raw slots, ``values``: cooked columns)."""
        rows = np.flatnonzero((stamps >= self.low) & (stamps <= self.high))
        if not len(rows):
            return
        self._grow(values.shape[1])
        w0 = self.samples
        self.samples += len(rows)
        if w0 == 0:
            self.first_stamp = int(stamps[rows[0]])
        self.last_stamp = int(stamps[rows[-1]])
        cols = layout.columns
        raw = current[rows]
        # N, D, B, F of every column in every row inside the window; 0 where the type has none.
        ends = np.zeros((4, len(rows), len(cols)), dtype=np.int64)
        ends[0] = raw[:, layout.first]
        for k, slots in ((1, layout.second), (2, layout.base), (3, layout.frequency)):
            has = slots >= 0
            ends[k][:, has] = raw[:, slots[has]]
        ends[3][:, layout.frequency == -2] = _TICKS_100NS
        new = self.at[0, cols] < 0
        gap = ~new & (self.at[1, cols] != w0 - 1)
        back = ~new & ~gap & ((ends[0, 0] < self.ends[1, 0, cols]) | (ends[1, 0] < self.ends[1, 1, cols]))
        if len(rows) > 1:
            back |= (np.diff(ends[0], axis=0) < 0).any(axis=0) | (np.diff(ends[1], axis=0) < 0).any(axis=0)
        why = self.why[cols]
        why[(why == WINDOW_OK) & gap] = WHY_RESET
        why[(why == WINDOW_OK) & back] = WHY_BACKWARDS
        self.why[cols] = why
        self.uncooked[cols[layout.uncooked]] = True
        fresh = cols[new]
        self.ends[0][:, fresh] = ends[:, 0, new]
        self.at[0, fresh] = w0
        self.stamps[0, fresh] = stamps[rows[0]]
        self.ends[1][:, cols] = ends[:, -1, :]
        self.at[1, cols] = w0 + len(rows) - 1
        self.stamps[1, cols] = stamps[rows[-1]]
        cooked = values[rows][:, cols]
        valid = ~np.isnan(cooked)
        self.count[cols] += len(rows)
        self.cooked[cols] += valid.sum(axis=0)
        self.total[cols] += np.where(valid, cooked, 0.0).sum(axis=0)
        self.lead[fresh] = cooked[0, new]

    def frame(self, columns: list[BlgColumn], offset: int | None) -> pl.DataFrame:
        """One row per column: mean of its cooked samples beside the exact first/last average."""
        self._grow(len(columns))
        width = len(columns)
        why = self.why.copy()
        why[self.at[1] < self.samples - 1] = WHY_ABSENT_LAST
        why[self.at[0] > 0] = WHY_ABSENT_FIRST
        why[self.at[0] < 0] = WHY_NEVER
        formulas: list[Formula | None] = [
            None if self.uncooked[c.index] or c.type_code not in KNOWN else KNOWN[c.type_code].formula
            for c in columns
        ]
        exact = np.full(width, np.nan)
        reasons = np.zeros(width, dtype=np.int64)
        two = np.zeros(width, dtype=bool)
        groups: dict[Formula | None, list[int]] = {}
        for i, f in enumerate(formulas):
            groups.setdefault(f, []).append(i)
        for formula, members in groups.items():
            chosen = np.array(members, dtype=np.int64)
            two[chosen] = formula is not None and KNOWN_TWO_SAMPLE[formula]
            first = RawEnds(*self.ends[0][:, chosen])
            last = RawEnds(*self.ends[1][:, chosen])
            exact[chosen], reasons[chosen] = window_average(
                formula,
                first,
                last,
                intervals=self.at[1, chosen] - self.at[0, chosen],
                why=why[chosen],
            )
        # A two-sample value at the column's first sample covers the interval before the window.
        lead = two & ~np.isnan(self.lead)
        cooked = self.cooked - lead
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(cooked > 0, (self.total - np.where(lead, self.lead, 0.0)) / cooked, np.nan)
            relative = np.where(exact == 0, np.where(mean == 0, 0.0, np.nan), (mean - exact) / np.abs(exact))
        kinds = np.where(
            [f is None for f in formulas],
            "not cooked",
            np.where(two, "difference", "instantaneous"),
        )
        present = self.at[0] >= 0
        return pl.DataFrame(
            {
                "path": [c.path for c in columns],
                "type": [c.type_name for c in columns],
                "kind": kinds,
                "samples": self.count,
                "mean_of_samples": mean,
                "exact_average": exact,
                "relative_difference": relative,
                "why": [WINDOW_WHY.get(int(r)) for r in reasons],
                "first": utc_stamps(np.where(present, self.stamps[0], _FILETIME_UNIX), offset),
                "last": utc_stamps(np.where(present, self.stamps[1], _FILETIME_UNIX), offset),
            },
            nan_to_null=True,
        ).with_columns(
            pl.when(pl.lit(pl.Series(present))).then(pl.col("first", "last")).otherwise(None).name.keep(),
        )


@dataclass
class WindowAverages:
    """Window averages of a log: ``frame`` (one row per counter column) and the window itself."""

    frame: pl.DataFrame
    samples: int  # samples inside the window
    first: datetime | None  # UTC
    last: datetime | None
    samples_read: int
    samples_lost: int
    problems: list[Problem]


def window_report(
    path: str | Path,
    *,
    counters: Sequence[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
) -> WindowAverages:
    """Exact first/last window averages beside the mean of the cooked samples, in one streaming pass.

    ``begin``/``end``: naive times are the log's local time. Raises when no sample is readable or
    none falls inside the window.
    """
    window = _Window(begin, end)
    with BlgFile(path) as blg:
        for _ in blg.batches(counters=counters, window=window):
            pass
        if blg.samples_read == 0:
            raise no_samples_error(blg)
        offset = blg.utc_offset_minutes
        if window.samples == 0:
            raise CounterLogError(
                blg.source,
                f"no sample inside the window ({_bound_text(begin)} to {_bound_text(end)}); "
                f"{blg.samples_read} sample(s) read",
                expected="--begin/--end that include at least one sample",
            )
        first, last = utc_stamps(np.array([window.first_stamp, window.last_stamp], np.int64), offset)
        return WindowAverages(
            frame=window.frame(blg.columns, offset),
            samples=window.samples,
            first=first,
            last=last,
            samples_read=blg.samples_read,
            samples_lost=blg.samples_lost,
            problems=list(blg.problems),
        )


def window_averages(
    path: str | Path,
    *,
    counters: Sequence[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
) -> pl.DataFrame:
    """Per counter column: path, type, kind, samples, mean_of_samples, exact_average,
    relative_difference, why (no exact value), first/last (UTC). See :func:`window_report`."""
    return window_report(path, counters=counters, begin=begin, end=end).frame


def _bound_text(moment: datetime | None) -> str:
    return "open" if moment is None else moment.isoformat(sep=" ")


# --- whole-log reading ---------------------------------------------------------------------------


sniff_blg = blg_signature.sniff_blg


def read_blg(
    path: str | Path,
    *,
    counters: Sequence[str] | None = None,
    begin: datetime | None = None,
    end: datetime | None = None,
) -> CounterLog:
    """Read a whole .blg into a :class:`CounterLog` of cooked values (``counters``: path patterns)."""
    with BlgFile(path) as blg:
        return _collect(blg, counters, begin, end)


def _collect(
    blg: BlgFile, counters: Sequence[str] | None, begin: datetime | None, end: datetime | None
) -> CounterLog:
    blocks: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
    raw: list[pl.DataFrame] = []
    for batch in blg.batches(counters=counters):
        blocks.append((batch.stamps, batch.values))
        if len(batch.uncooked_columns):
            raw.append(_raw_frame(batch, blg))
    if blg.samples_read == 0:
        raise no_samples_error(blg)
    names = [_column_name(c) for c in blg.columns]
    offset = blg.utc_offset_minutes
    samples = _in_window(_frame(blocks, names, offset), begin, end, offset)
    problems = list(blg.problems)
    zone = zone_name(blg.header, offset)
    return CounterLog(
        source=blg.source,
        format="blg",
        counters=_counters_frame(blg.columns),
        samples=samples,
        utc_offset_minutes=offset,
        time_zone_name=zone,
        problems=problems,
        damage=LogDamage(rows_lost=blg.samples_lost),
        raw=_in_window(pl.concat(raw, how="diagonal_relaxed"), begin, end, offset) if raw else None,
    )


def no_samples_error(blg: BlgFile) -> CounterLogError | UnsupportedFormatError:
    """The error for a .blg with no readable sample: "unsupported" (naming the producer's Windows
    version and build and the part not understood) when what stopped the reader is a layout it
    does not know; otherwise how many damaged samples were skipped, the first problems, and the
    file's buffer layout."""
    header = blg.header
    producer = f"Windows {header.os_version} build {header.os_build}, {header.pointer_size * 8}-bit"
    if blg.samples_unsupported or blg.unknown_headers:
        parts = []
        if blg.unknown_headers:
            parts.append("event header type(s) " + ", ".join(f"0x{t:02X}" for t in blg.unknown_headers))
        if blg.samples_unsupported:
            parts.append(f"{blg.samples_unsupported} sample record(s) of an unknown layout")
        first = next(
            (p for p in blg.problems if "not understood" in p.message or "unknown event" in p.message), None
        )
        return UnsupportedFormatError(
            blg.source,
            f"unsupported: a binary perfmon log written by {producer}, in a layout this reader does not "
            "know: " + " and ".join(parts) + (f"; the first: {first.message}" if first is not None else ""),
            location=first.location if first is not None else "",
            expected="the Vista (PERF_DATA_BLOCK) or raw-counter (PDH_RAW_COUNTER) layout (docs/blg.md)",
        )
    return CounterLogError(
        blg.source,
        "no readable samples"
        + (f" ({blg.samples_lost} damaged sample(s) skipped)" if blg.samples_lost else "")
        + "".join(f"; {p.location}: {p.message}" for p in blg.problems[:3] if p.location),
        location=f"{blg.header.buffers_written} buffer(s) of {blg.header.buffer_size} bytes",
        expected="at least one complete sample record",
    )


def describe_blg(path: str | Path) -> dict[str, object]:
    """What ``inspect`` prints about a .blg: the file's own facts (header, counter list, sample
    layout, counts) plus the counter-log description; when no sample can be read, the facts
    still, with the reason under ``error``."""
    with BlgFile(path) as blg:
        try:
            log: CounterLog | None = _collect(blg, None, None, None)
            error = None
        except (CounterLogError, UnsupportedFormatError) as exc:
            log, error = None, exc
        header = blg.header
        facts: dict[str, object] = {
            "producer": f"Windows {header.os_version} build {header.os_build}, {header.pointer_size * 8}-bit",
            "sample_layout": {"perflib": "PERF_DATA_BLOCK (Vista)", "raw": "raw counters"}.get(
                "+".join(blg.layouts_seen), " and ".join(blg.layouts_seen) or None
            ),
            "time_zone_header": f"{header.standard_name} (bias {header.bias_minutes} min)",
            "processors": header.processors,
            "log_start_utc": header.start,
            "log_end_utc": header.end,
            "buffer_size": header.buffer_size,
            "buffers": (Path(path).stat().st_size + header.buffer_size - 1) // header.buffer_size,
            "closing_catalog_samples": blg.catalog.samples if blg.catalog else None,
            "samples_read": blg.samples_read,
            "samples_lost": blg.samples_lost,
            "samples_with_failed_counters": blg.error_samples,
            "original_file": header.log_file,
            "requested_counters": [e.path for e in blg.entries],
        }
        if log is None:
            assert error is not None
            return facts | {
                "machines": sorted({e.machine for e in blg.entries}),
                "error": str(error),
                "problems": [p.describe() for p in blg.problems],
            }
    return facts | describe_counter_log(log)


def _in_window(
    frame: pl.DataFrame, begin: datetime | None, end: datetime | None, offset: int | None
) -> pl.DataFrame:
    """Rows from ``begin`` to ``end``: naive times are the log's local time (as in window_report)."""
    if begin is not None:
        frame = frame.filter(pl.col("timestamp") >= _aware(begin, offset))
    if end is not None:
        frame = frame.filter(pl.col("timestamp") <= _aware(end, offset))
    return frame


def _aware(moment: datetime, offset: int | None) -> datetime:
    if moment.tzinfo is not None:
        return moment
    return (moment - timedelta(minutes=offset or 0)).replace(tzinfo=UTC)


def _column_name(column: BlgColumn) -> str:
    return f"c{column.index + 1:05d}"


def _frame(
    blocks: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]], names: list[str], offset: int | None
) -> pl.DataFrame:
    """One frame from decoded batches (columns that appeared later are NaN, then null, before)."""
    width = len(names)
    values = np.full((sum(len(stamps) for stamps, _ in blocks), width), np.nan)
    row = 0
    for stamps, block in blocks:
        values[row : row + len(stamps), : block.shape[1]] = block
        row += len(stamps)
    frame = pl.DataFrame(values, schema=names, orient="row", nan_to_null=True) if width else pl.DataFrame()
    stamps = np.concatenate([stamps for stamps, _ in blocks]) if blocks else np.zeros(0, np.int64)
    return frame.insert_column(0, utc_stamps(stamps, offset))


def _raw_frame(batch: BlgBatch, blg: BlgFile) -> pl.DataFrame:
    names = [_column_name(blg.columns[int(c)]) for c in batch.uncooked_columns]
    frame = pl.DataFrame(batch.uncooked_values, schema=names, orient="row")
    return frame.insert_column(0, utc_stamps(batch.stamps, blg.utc_offset_minutes))


def _counters_frame(columns: list[BlgColumn]) -> pl.DataFrame:
    rows = [
        (_column_name(c), c.path, c.machine, c.object, c.instance, c.counter, False, c.type_name)
        for c in columns
    ]
    return pl.DataFrame(rows, schema={**COUNTERS_SCHEMA, "type": pl.String()}, orient="row")


# --- small helpers -------------------------------------------------------------------------------
