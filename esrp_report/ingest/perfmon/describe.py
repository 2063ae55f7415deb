"""What ``inspect`` says about a counter log, worked out a batch of samples at a time.

A log larger than memory must still be described, so nothing here holds more than one batch of
samples: each batch is reduced (Polars, column by column) to a few figures that merge exactly, and
the batches are let go. What is kept grows with the counters and with the number of distinct steps
between time stamps, never with the cells. Cutting a log into batches changes no figure: the steps
across a cut are counted from the previous batch's last stamp, and the median step is taken from
exact counts of each step, so a whole log read as one batch and a streamed one print the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import polars as pl

from esrp_report.model import CounterLog, Problem


class SampleSummary:
    """The figures of a log's samples that ``inspect`` prints, merged batch by batch (:meth:`add`)."""

    def __init__(self) -> None:
        self.samples = 0
        self.missing_cells = 0
        self.first: datetime | None = None
        self.last: datetime | None = None
        # Steps between consecutive stamps (µs) and how often each occurs: a log's steps are a
        # handful of values (its interval, a few milliseconds of jitter, gaps), so this stays small.
        self.steps: dict[int, int] = {}
        self._previous: pl.Series | None = None  # the last stamp seen, for the step across a cut

    def add(self, stamps: pl.Series, missing_cells: int) -> None:
        """One batch: its time stamps, in file order, and how many of its counter cells are null."""
        self.samples += stamps.len()
        self.missing_cells += missing_cells
        if stamps.is_empty():
            return
        low, high = stamps.min(), stamps.max()
        if isinstance(low, datetime):
            self.first = low if self.first is None else min(self.first, low)
        if isinstance(high, datetime):
            self.last = high if self.last is None else max(self.last, high)
        joined = stamps if self._previous is None else pl.concat([self._previous, stamps])
        steps = joined.diff().dt.total_microseconds().drop_nulls().value_counts()
        for step, count in steps.iter_rows():
            self.steps[step] = self.steps.get(step, 0) + count
        self._previous = stamps.tail(1)

    def add_frame(self, frame: pl.DataFrame) -> None:
        """One batch of :attr:`CounterLog.samples` (``timestamp`` and the counter columns)."""
        values = frame.drop("timestamp")
        missing = int(sum(values.null_count().row(0))) if values.width else 0
        self.add(frame.get_column("timestamp"), missing)

    def interval_seconds(self) -> float | None:
        """The median step between samples, as Polars' ``median`` of every step would give it."""
        total = sum(self.steps.values())
        if not total:
            return None
        middle = [(total - 1) // 2, total // 2]  # the one or two middle ranks (0-based)
        found: list[int] = []
        seen = 0
        for step in sorted(self.steps):
            seen += self.steps[step]
            while len(found) < len(middle) and middle[len(found)] < seen:
                found.append(step)
        return (found[0] + found[1]) / 2 / 1e6

    def fields(self, *, local: bool = False) -> dict[str, object]:
        """The figures as ``inspect`` prints them (stamps in ISO 8601; ``local``: wall-clock times of
        an unknown offset, printed without one)."""

        def stamp(moment: datetime | None) -> str | None:
            if moment is None:
                return None
            return (moment.replace(tzinfo=None) if local else moment).isoformat()

        return {
            "first_sample": stamp(self.first),
            "last_sample": stamp(self.last),
            "samples": self.samples,
            "interval_seconds": self.interval_seconds() if self.samples > 1 else None,
            "missing_cells": self.missing_cells,
        }


def summarise(batches: Iterable[pl.DataFrame]) -> SampleSummary:
    """The summary of samples handed over a batch at a time."""
    summary = SampleSummary()
    for frame in batches:
        summary.add_frame(frame)
    return summary


def describe_log(
    *,
    dialect: str,
    time_zone: str | None,
    utc_offset_minutes: int | None,
    counters: pl.DataFrame,
    summary: SampleSummary,
    problems: list[Problem],
    encoding: str | None = None,
    encoding_basis: str | None = None,
) -> dict[str, object]:
    """What ``inspect`` prints about a counter log, from its counters and its samples' summary. A log
    that states no offset is in local wall-clock time: its stamps carry none (``time_basis``)."""
    per_object = (
        counters.group_by("object")
        .agg(
            pl.col("counter").n_unique().alias("counters"),
            pl.col("instance").drop_nulls().n_unique().alias("instances"),
        )
        .sort("object")
    )
    local = utc_offset_minutes is None
    sampled = summary.fields(local=local)
    encoded = {"encoding": encoding, "encoding_basis": encoding_basis} if encoding is not None else {}
    return {
        "dialect": dialect,
        **encoded,
        "time_zone": time_zone,
        "utc_offset_minutes": utc_offset_minutes,
        "time_basis": "local" if local else "utc",
        "machines": sorted(m for m in counters.get_column("machine").unique().to_list() if m is not None),
        "objects": {
            row["object"]: {"counters": row["counters"], "instances": row["instances"]}
            for row in per_object.iter_rows(named=True)
        },
        "counter_columns": counters.height,
        "duplicate_columns": int(counters.get_column("duplicate").sum()),
        "first_sample": sampled["first_sample"],
        "last_sample": sampled["last_sample"],
        "samples": sampled["samples"],
        "interval_seconds": sampled["interval_seconds"],
        "missing_cells": sampled["missing_cells"],
        "problems": [p.describe() for p in problems],
    }


def describe_counter_log(log: CounterLog) -> dict[str, object]:
    """What ``inspect`` prints about a counter log (``dialect`` is the log's format); a streamed
    log's samples are read from its file a batch at a time, never held together."""
    return describe_log(
        dialect=log.format,
        time_zone=log.time_zone_name,
        utc_offset_minutes=log.utc_offset_minutes,
        counters=log.counters,
        summary=summarise(log.sample_batches()),
        problems=log.problems,
        encoding=log.encoding,
        encoding_basis=log.encoding_basis,
    )
