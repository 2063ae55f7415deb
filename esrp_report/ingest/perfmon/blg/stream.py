"""Large .blg logs as streamed counter logs: the samples stay in the file and are decoded again,
batch by batch (:meth:`BlgFile.batches`), whenever they are needed.

The frames are the rows :func:`read_blg` would hold (same column names, UTC time stamps,
null for "no value"), cut into batches; the counters, problems and sample count come from one
decoding pass when the log is opened. Raw values of counter types that are not cooked
(``CounterLog.raw``) are not kept for a streamed log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from esrp_report.ingest.perfmon.blg.decoding import BlgBatch
from esrp_report.ingest.perfmon.blg.file import BlgFile
from esrp_report.ingest.perfmon.blg.reading import (
    _column_name,
    _counters_frame,
    _frame,
    no_columns_error,
    no_samples_error,
    read_blg,
)
from esrp_report.ingest.perfmon.blg.timezone import zone_name
from esrp_report.model import CounterLog, LogDamage, StreamedCounterLog

STREAM_BYTES = 256 << 20  # .blg files larger than this are streamed (see read_blg_log)
BATCH_BYTES = 64 << 20  # raw sample records decoded at a time


class BlgSamples:
    """The cooked samples of a .blg, a decoded batch at a time (``batch_bytes`` of raw records)."""

    def __init__(self, path: str | Path, *, batch_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes
        self.names: list[str] = []

    def batches(self) -> Iterator[pl.DataFrame]:
        """The cooked samples in order, the file decoded again one batch at a time: a frame per batch, UTC
        time stamps, null for no value."""
        with BlgFile(self.path) as log:
            for batch in log.batches(batch_bytes=self.batch_bytes):
                yield self._frame(batch, log)

    def _frame(self, batch: BlgBatch, log: BlgFile) -> pl.DataFrame:
        names = self.names or [_column_name(c) for c in log.columns]
        # Columns first seen later have no value before (_frame pads them with null).
        return _frame([(batch.stamps, batch.values)], names, log.utc_offset_minutes, log.zone)


def open_blg(path: str | Path, *, batch_bytes: int | None = None) -> StreamedCounterLog:
    """A .blg as a streamed counter log; one decoding pass here finds the columns, the damage
    and the sample count (the same ones :func:`read_blg` reports)."""
    reader = BlgSamples(path, batch_bytes=batch_bytes)
    with BlgFile(path) as log:
        for _ in log.batches(batch_bytes=reader.batch_bytes):
            pass
        if log.samples_read == 0:
            raise no_samples_error(log)
        if not log.columns:
            raise no_columns_error(log, None)
        reader.names = [_column_name(c) for c in log.columns]
        return StreamedCounterLog(
            source=log.source,
            format="blg",
            counters=_counters_frame(log.columns),
            reader=reader,
            sample_count=log.samples_read,
            utc_offset_minutes=log.utc_offset_minutes,
            time_zone_name=zone_name(log.header, log.utc_offset_minutes, log.time_zone),
            problems=list(log.problems),
            damage=LogDamage(rows_lost=log.samples_lost),
        )


def read_blg_log(path: str | Path, *, stream_bytes: int | None = None) -> CounterLog:
    """The log whole (:func:`read_blg`) or, above ``stream_bytes``, streamed (:func:`open_blg`)."""
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = 0  # read_blg says why it cannot be read
    return (
        open_blg(path) if size > (STREAM_BYTES if stream_bytes is None else stream_bytes) else read_blg(path)
    )
