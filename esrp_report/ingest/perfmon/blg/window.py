"""Exact averages over a window, in one streaming pass: per counter column, the average Windows
would compute from the raw values at the column's first and last sample inside the window,
beside the mean of its cooked samples. :class:`_Window` follows the decoder's cooked runs and
keeps, per column, only the raw values at the ends: memory follows the number of columns.
:func:`reading.window_report` drives it over a whole log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from esrp_report.ingest.perfmon.blg.columns import BlgColumn
from esrp_report.ingest.perfmon.blg.filetime import _FILETIME_EPOCH, _FILETIME_UNIX, _TICKS_100NS, utc_stamps
from esrp_report.ingest.perfmon.blg.layouts import _Layout
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
    window_average,
)
from esrp_report.model import Problem


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

    def resolve(self, offset_minutes: int | None, zone: ZoneInfo | None = None) -> None:
        """Window bounds as the samples' local FILETIME: naive times are the log's local time."""
        shift = timedelta(minutes=offset_minutes or 0)

        def local(moment: datetime) -> int:
            if moment.tzinfo is not None and zone is not None:
                moment = moment.astimezone(zone).replace(tzinfo=None)
            elif moment.tzinfo is not None:
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

    def frame(
        self, columns: list[BlgColumn], offset: int | None, zone: ZoneInfo | None = None
    ) -> pl.DataFrame:
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
                "first": utc_stamps(np.where(present, self.stamps[0], _FILETIME_UNIX), offset, zone),
                "last": utc_stamps(np.where(present, self.stamps[1], _FILETIME_UNIX), offset, zone),
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
