"""Decoding runs of sample records that share a layout (``layouts.py``): the records of one
length are stacked as rows of a matrix, each run of rows whose structure equals the layout's is
cooked in one go, and a row that differs is parsed again as a new layout (``samples.py``). Every
raw value of every row is gathered by one NumPy take per value width and alignment, then cooked
by the published formulas (``counter_types.py``) a formula group at a time; or both in one pass
of the compiled engine (``_blgcook.c``), which gives the same values."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from esrp_report.ingest.perfmon.blg.container import _Record, _where
from esrp_report.ingest.perfmon.blg.filetime import _TICKS_100NS, _local_text
from esrp_report.ingest.perfmon.blg.layouts import _Layout, _Malformed, _Slot, _stride, _Unsupported
from esrp_report.ingest.perfmon.blg.raw_counters import PDH_STATUS_NAMES
from esrp_report.ingest.perfmon.blg.samples import _declared_length, _Layouts
from esrp_report.ingest.perfmon.blg.window import _Window
from esrp_report.ingest.perfmon.counter_types import KNOWN_TWO_SAMPLE, Formula, cook_deltas
from esrp_report.model import Problem

try:  # re-exported: the package's _blgcook
    from esrp_report.ingest import _blgcook as _blgcook  # type: ignore[attr-defined]  # noqa: PLC0414
except ImportError:  # built without a C compiler: the NumPy engine serves
    _blgcook = None

_LISTED = 10  # sample times listed in a problem
# Samples of an unknown layout held, each with its own problem, while no sample has been read
# (they are named one by one if one is read later; a log of an unknown layout keeps only this many).
_HELD = 1000

ENGINES = ("auto", "native", "numpy")  # "auto": the compiled engine when it was built
# What BlgFile uses when not told (one of ENGINES). Read when each file is opened, so setting it
# here (tests and the fuzzer do) chooses the engine of every file opened after; it lives beside
# ENGINES so that file.py reads it through an ordinary import of the module that owns it.
ENGINE = "auto"


def native_engine_built() -> bool:
    """Was the compiled engine built (a C compiler at install)?"""
    return _blgcook is not None


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


# Formulas whose displayed value may be below 0: a raw count is the counter's own number, a
# delta a signed movement. Every other formula measures something that cannot be negative.
_SIGNED = (Formula.RAW, Formula.DELTA)


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
        self.negative_values = 0  # cooked values below 0 left empty (PDH_CALC_NEGATIVE_VALUE)
        self._negative_first: tuple[int, int] | None = None  # (local stamp, column) of the first
        # Sub-records of a kind not read: kind -> [sub-records, bytes, local stamp of the first].
        self.skipped_kinds: dict[int, list[int]] = {}
        self._failures: dict[int, int] = {}  # PDH status -> failed counters (or wildcards) with it
        self._values_missing = 0  # cells left empty by those failures (a wildcard lists none)
        self._failed_at: list[int] = []  # local stamps of the first such samples
        self._first_unsupported: tuple[_Record, str] | None = None
        self._unsupported_before_read = 0  # of samples_unsupported, those met before any sample was read
        self._unsupported_held: list[Problem] = []  # the first _HELD of them, each named
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
        for kind, size in layout.skipped:
            counted = self.skipped_kinds.setdefault(kind, [0, 0, int(stamps[0])])
            counted[0] += n
            counted[1] += n * size
        if layout.failed:
            self.error_samples += n
            for column, status in layout.failed:
                self._failures[status] = self._failures.get(status, 0) + n
                self._values_missing += n if column >= 0 else 0
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
        if (values_out < 0).any():  # one vectorised test; rows with an impossible value are rare
            self._drop_negative(layout, stamps, values_out)
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

    def _drop_negative(
        self,
        layout: _Layout,
        stamps: np.ndarray[Any, np.dtype[np.int64]],
        values: np.ndarray[Any, np.dtype[np.float64]],
    ) -> None:
        """A cooked value below 0 of a type that cannot be negative (every formula but raw counts
        and deltas: rates, timers, fractions, averages) is what PDH reports with the status
        PDH_CALC_NEGATIVE_VALUE, and Windows' tools show no value there (docs/blg.md): left empty
        and counted, never exported."""
        members = [int(i) for g in layout.groups if g.formula not in _SIGNED for i in g.members]
        if not members:
            return
        cols = layout.columns[members]
        block = values[:, cols]
        negative = block < 0
        found = int(negative.sum())
        if not found:
            return
        block[negative] = np.nan
        values[:, cols] = block
        self.negative_values += found
        if self._negative_first is None:
            row, col = np.argwhere(negative)[0]
            self._negative_first = (int(stamps[row]), int(cols[col]))

    def failure_problems(self) -> list[Problem]:
        """The samples of a layout not understood (see ``unsupported``), and those in which some
        counters have no value because their collection failed (a PDH status other than valid
        data): how many, when, which statuses, how many values."""
        problems = []
        if self._first_unsupported is not None and self.samples:
            problems.extend(self._unsupported_held)
            more = self._unsupported_before_read - len(self._unsupported_held)
            if more > 0:
                record, why = self._first_unsupported
                problems.append(
                    Problem(
                        self.layouts.source,
                        f"{more} more sample(s) not understood, as the first ({why}), before the "
                        "first sample read; skipped and counted as lost",
                        location=_where(record),
                        lost=more,
                    )
                )
        elif self._first_unsupported is not None:
            record, why = self._first_unsupported
            problems.append(
                Problem(
                    self.layouts.source,
                    f"sample at {_local_text(record.stamp)} not understood: {why}; "
                    f"{self.samples_unsupported} sample(s) of a layout this reader does not support "
                    "are skipped and counted as lost",
                    location=_where(record),
                    lost=self.samples_unsupported,
                )
            )
        if self._negative_first is not None:
            stamp, column = self._negative_first
            path = self.layouts.columns.list[column].path
            problems.append(
                Problem(
                    self.layouts.source,
                    f"{self.negative_values} cooked value(s) below 0 of counters that cannot be negative "
                    f"(the first: {path} at {_local_text(stamp)}) left empty, as Windows shows no value "
                    "for them (PDH_CALC_NEGATIVE_VALUE, 0x800007D8): a counter reset or a clock that "
                    "went back between two samples",
                    location=f"sample at {_local_text(stamp)}",
                )
            )
        for kind, (count, size, first) in sorted(self.skipped_kinds.items()):
            problems.append(
                Problem(
                    self.layouts.source,
                    f"{count} sample sub-record(s) of kind 42 4C 03 {kind:02X}, not read (a kind this reader "
                    f"does not know, or a counter set no record 38 describes), skipped ({size:,} bytes; "
                    f"the first in the sample at {_local_text(first)}); the other counters of those "
                    "samples are read",
                    location=f"sub-record kind 42 4C 03 {kind:02X}",
                )
            )
        if not self.error_samples:
            return problems
        statuses = ", ".join(
            f"{count} x 0x{status:08X} {PDH_STATUS_NAMES.get(status, '(unknown status)')}"
            for status, count in sorted(self._failures.items())
        )
        when = ", ".join(_local_text(s) for s in self._failed_at)
        more = self.error_samples - len(self._failed_at)
        return [
            *problems,
            Problem(
                self.layouts.source,
                f"{self.error_samples} sample(s) with counters whose collection failed: "
                f"{self._values_missing} value(s) missing ({statuses}); those values are left "
                "empty (a two-sample counter's next value too), the samples' other values are read",
                location=f"samples at {when}" + (f" and {more} more" if more > 0 else ""),
            ),
        ]

    def unsupported(self, record: _Record, why: str) -> None:
        """A sample of a layout this reader does not know: counted lost. A log's layout is its
        writer's, the same in every sample, so an unknown kind in a log whose other samples are
        read is most likely damage: such a sample is named by its own problem, as a damaged one
        is. When no sample is read at all, ``failure_problems`` names the first and counts them
        (the log is refused as unsupported)."""
        self.samples_unsupported += 1
        self.samples_lost += 1
        if self._first_unsupported is None:
            self._first_unsupported = (record, why)
        problem = Problem(
            self.layouts.source,
            f"sample at {_local_text(record.stamp)} not understood: {why}; skipped, "
            "the log's other samples being of a layout this reader reads",
            location=_where(record),
            lost=1,
        )
        if self.samples:
            self.problems.append(problem)
            return
        self._unsupported_before_read += 1
        if len(self._unsupported_held) < _HELD:
            self._unsupported_held.append(problem)

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
