"""An open .blg (:class:`BlgFile`): its header, and its samples decoded as a stream of batches,
with the other records read on the way: name tables (36), the counter list (32) and the closing
catalog (35). Each sample record's own clock gives the log's UTC offset."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from zoneinfo import ZoneInfo

import numpy as np

from esrp_report.ingest.perfmon.blg import decoding
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
from esrp_report.ingest.perfmon.blg.countersets import KIND_COUNTERSET, parse_counterset
from esrp_report.ingest.perfmon.blg.decoding import ENGINES, BlgBatch, _Decoder, native_engine_built
from esrp_report.ingest.perfmon.blg.filetime import _LAST_FILETIME, local_offsets
from esrp_report.ingest.perfmon.blg.layouts import _Malformed
from esrp_report.ingest.perfmon.blg.perflib import _read_name_table
from esrp_report.ingest.perfmon.blg.raw_counters import PathEntry, parse_path_entries
from esrp_report.ingest.perfmon.blg.samples import _Layouts
from esrp_report.ingest.perfmon.blg.timezone import BlgZone, resolve_zone
from esrp_report.ingest.perfmon.blg.window import _Window
from esrp_report.model import Problem
from esrp_report.model.errors import CounterLogError

_BATCH_BYTES = 64 << 20  # raw sample bytes stacked before a batch is decoded


@dataclass
class Catalog:
    """The closing catalog record of a .blg: first and last sample times (local FILETIME), the sample count
    and the object count it states."""

    first_local: int
    last_local: int
    samples: int
    objects: int


class BlgFile:
    """An open .blg: its header, and its samples as a stream of batches.

    ``engine``: "native" (the compiled gather-and-cook pass), "numpy", or "auto" (native when
    built); None = ``decoding.ENGINE``, read when the file is opened. Both give the same values,
    NaN for the same cells.
    """

    def __init__(self, path: str | Path, *, engine: str | None = None) -> None:
        chosen = decoding.ENGINE if engine is None else engine
        if chosen not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {chosen!r}")
        if chosen == "native" and not native_engine_built():
            raise ValueError("the compiled .blg engine was not built (no C compiler at install)")
        self.native = chosen != "numpy" and native_engine_built()
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
        # What _utc_offset found about the log's clock, kept apart so that it leads the problems
        # a walk ends with (the container's and decoder's lists are rebuilt on every walk).
        self._offset_problems: list[Problem] = []
        self.columns: list[BlgColumn] = []
        self.samples_read = 0
        self.samples_lost = 0
        self.samples_unsupported = 0  # sample records of a layout this reader does not know
        self.unknown_headers: list[int] = []  # event header types not understood
        self.error_samples = 0  # samples with a counter whose collection failed (a PDH status)
        self.layouts_seen: list[str] = []  # the sample layouts read: "perflib", "raw"
        self.utc_offset_minutes: int | None = None  # at the first sample
        self.time_zone: BlgZone | None = None  # the header's zone, resolved or why not
        self.zone: ZoneInfo | None = None  # set when each sample takes its own offset in it

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
        self._offset_problems = []
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
                        window.resolve(self.utc_offset_minutes, self.zone)
                pending.append(record)
                pending_bytes += record.size
                if pending_bytes >= batch_bytes:
                    yield from decoder.decode(pending)
                    pending, pending_bytes = [], 0
                continue
            if pending:
                yield from decoder.decode(pending)
                pending, pending_bytes = [], 0
            self._other_record(record, layouts)
        if pending:
            yield from decoder.decode(pending)
        self.samples_read = decoder.samples
        self.samples_lost = container.samples_lost + decoder.samples_lost
        self.samples_unsupported = decoder.samples_unsupported
        self.unknown_headers = sorted(container.unknown_headers)
        self.error_samples = decoder.error_samples
        self.problems = (
            self._offset_problems
            + container.problems
            + layouts.problems
            + decoder.problems
            + decoder.failure_problems()
            + self._catalog_check(layouts.layouts_seen)
        )
        self.layouts_seen = sorted(layouts.layouts_seen)

    def _other_record(self, record: _Record, layouts: _Layouts) -> None:
        if record.kind == KIND_NAMES:
            self._name_table(record)
        elif record.kind == KIND_CATALOG:
            if len(record.data) >= 24:
                first, last, samples, objects = struct.unpack_from("<QQII", record.data, 0)
                self.catalog = Catalog(first, last, samples, objects)
        elif record.kind == KIND_COUNTERSET:
            try:
                found = parse_counterset(record.data)
                layouts.countersets[found.name] = found
            except (_Malformed, struct.error) as exc:
                self._record_problem(
                    record,
                    f"a counter set record (38) is unreadable ({exc}); the samples' values of that "
                    "set cannot be named and are skipped as damage",
                )
        elif record.kind == KIND_PATHS:
            try:
                self.entries[:] = parse_path_entries(record.data)
            except (_Malformed, struct.error) as exc:
                self._record_problem(
                    record,
                    f"the counter list (record 32) is unreadable ({exc}); samples of the raw-counter "
                    "layout cannot be named",
                )
        else:
            self._record_problem(
                record, f"record of unknown kind {record.kind} ({len(record.data)} bytes) skipped", "note"
            )

    def _record_problem(self, record: _Record, message: str, severity: str = "warning") -> None:
        """A record that could not be used, named with its place in the file."""
        self._container.problems.append(
            Problem(self.source, message, location=_where(record), severity=severity)
        )

    def _name_table(self, record: _Record) -> None:
        machine = _read_name_table(record.data, self.names)
        if machine is not None and machine not in self.machine_names:
            self.machine_names.append(machine)

    def _utc_offset(self, record: _Record, layouts: _Layouts) -> int | None:
        """Local minus UTC, in minutes, at the first sample. The sample's own UTC clock (a
        PERF_DATA_BLOCK's PerfTime100nSec, or a 100 ns counter's D in the raw-counter layout)
        wins; the header's zone, when it resolves and agrees, then gives each sample its own
        offset (daylight saving). Without a clock the resolved zone does; without either, the
        header's bias stays a fixed offset, as the source stated it (docs/blg.md "Time zone")."""
        found = resolve_zone(self.header, record.stamp)
        self.time_zone = found
        zone = found.zone
        at_first = None if zone is None else int(local_offsets(np.array([record.stamp], np.int64), zone)[0])
        derived: int | None = None
        utc_100ns = layouts.utc_clock(record.data)
        if utc_100ns is not None:
            rounded = round((record.stamp - utc_100ns) / 600_000_000 / 15) * 15
            if abs(rounded) <= 14 * 60:
                derived = int(rounded)
        where = _where(record)
        if derived is not None:
            if zone is not None and at_first == derived:
                self.zone = zone
            elif zone is not None:
                self._offset_note(
                    f"the UTC offset of the samples' own clock ({derived:+d} min) disagrees with the "
                    f"header's zone {found.windows} ({found.iana}: {at_first:+d} min at the first sample); "
                    "the clock's offset is used for every sample",
                    where,
                    "warning",
                )
            elif self.header.daylight_bias:
                # Only a zone with a daylight rule loses anything by staying unresolved.
                self._offset_note(
                    f"the header's time zone is unresolved ({found.why}); the UTC offset comes from the "
                    f"samples' own clock ({derived:+d} min, fixed: daylight saving not applied)",
                    where,
                    "note",
                )
            return derived
        if zone is not None:
            self.zone = zone
            return at_first
        if not self.header.standard_name and not self.header.bias_minutes and not self.header.daylight_bias:
            self._offset_note(
                "neither the samples' clocks nor the time-zone header state a UTC offset: time stamps "
                "are the collector's local times (time_basis local)",
                where,
                "note",
            )
            return None
        self._offset_note(
            f"the first sample's clocks do not give its UTC offset and the header's time zone is "
            f"unresolved ({found.why}); the time-zone header's bias ({self.header.bias_minutes} min) "
            "is used as a fixed offset, daylight saving not applied",
            where,
            "warning",
        )
        return -self.header.bias_minutes

    def _offset_note(self, message: str, where: str, severity: str) -> None:
        self._offset_problems.append(Problem(self.source, message, location=where, severity=severity))

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
