"""Whole-log reading: a .blg as a :class:`CounterLog` of cooked values (:func:`read_blg`), what
``inspect`` says about it (:func:`describe_blg`), its exact window averages (:func:`window_report`,
computed in ``window.py``), and the error for a log without a readable sample
(:func:`no_samples_error`). The frames' columns are named ``c00001``... in order of first
appearance; time stamps are UTC, null is "no value"."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from esrp_report.ingest.perfmon.blg.columns import BlgColumn
from esrp_report.ingest.perfmon.blg.decoding import BlgBatch
from esrp_report.ingest.perfmon.blg.file import BlgFile
from esrp_report.ingest.perfmon.blg.filetime import utc_stamps
from esrp_report.ingest.perfmon.blg.timezone import zone_name
from esrp_report.ingest.perfmon.blg.window import WindowAverages, _Window
from esrp_report.ingest.perfmon.describe import SampleSummary, describe_log
from esrp_report.model import COUNTERS_SCHEMA, CounterLog, LogDamage
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError


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
    if not blg.columns:
        raise no_columns_error(blg, counters)
    names = [_column_name(c) for c in blg.columns]
    offset = blg.utc_offset_minutes
    samples = _in_window(_frame(blocks, names, offset, blg.zone), begin, end, offset, blg.zone)
    problems = list(blg.problems)
    zone = zone_name(blg.header, offset, blg.time_zone)
    return CounterLog(
        source=blg.source,
        format="blg",
        counters=_counters_frame(blg.columns),
        samples=samples,
        utc_offset_minutes=offset,
        time_zone_name=zone,
        problems=problems,
        damage=LogDamage(rows_lost=blg.samples_lost),
        raw=_in_window(pl.concat(raw, how="diagonal_relaxed"), begin, end, offset, blg.zone) if raw else None,
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


def no_columns_error(blg: BlgFile, counters: Sequence[str] | None) -> CounterLogError:
    """The error for a .blg whose samples were read but hold no counter column: the selection
    matches none of the log's counters, or no sample lists a value (wildcards without instances)."""
    return CounterLogError(
        blg.source,
        f"{blg.samples_read} sample(s) read, but no counter column: "
        + (
            "the counter selection matches none of the log's counters"
            if counters
            else "no sample holds a counter value (wildcards that list no instance)"
        ),
        expected="at least one counter with a value",
    )


def describe_blg(path: str | Path, *, batch_bytes: int | None = None) -> dict[str, object]:
    """What ``inspect`` prints about a .blg: the file's own facts (header, counter list, sample
    layout, counts) plus the counter-log description; when no sample can be read, the facts
    still, with the reason under ``error``. The samples are decoded and summed ``batch_bytes`` of
    records at a time (the reader's batch when None), never held together."""
    with BlgFile(path) as blg:
        summary = _summarise(blg, batch_bytes)
        error: CounterLogError | UnsupportedFormatError | None = None
        if blg.samples_read == 0:
            error = no_samples_error(blg)
        elif not blg.columns:
            error = no_columns_error(blg, None)
        header = blg.header
        facts: dict[str, object] = {
            "producer": f"Windows {header.os_version} build {header.os_build}, {header.pointer_size * 8}-bit",
            "sample_layout": {"perflib": "PERF_DATA_BLOCK (Vista)", "raw": "raw counters"}.get(
                "+".join(blg.layouts_seen), " and ".join(blg.layouts_seen) or None
            ),
            "time_zone_header": f"{header.standard_name} (bias {header.bias_minutes} min)",
            **_zone_facts(blg),
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
        if error is not None:
            return facts | {
                "machines": sorted({e.machine for e in blg.entries}),
                "error": str(error),
                "problems": [p.describe() for p in blg.problems],
            }
        return facts | describe_log(
            dialect="blg",
            time_zone=zone_name(header, blg.utc_offset_minutes, blg.time_zone),
            utc_offset_minutes=blg.utc_offset_minutes,
            counters=_counters_frame(blg.columns),
            summary=summary,
            problems=list(blg.problems),
        )


def _zone_facts(blg: BlgFile) -> dict[str, object]:
    """The header's zone as Windows wrote it, the IANA zone it resolved to (or null and why), and
    whether each sample took its own offset in it."""
    found = blg.time_zone
    return {
        "time_zone_written": {"standard": blg.header.standard_name, "daylight": blg.header.daylight_name},
        "time_zone_windows": found.windows if found else None,
        "time_zone_iana": found.iana if found else None,
        "time_zone_unresolved": (found.why if found else "no sample was read")
        if not (found and found.iana)
        else None,
        "daylight_saving_applied": blg.zone is not None,
    }


def _summarise(blg: BlgFile, batch_bytes: int | None) -> SampleSummary:
    """The samples' summary in one decoding pass, a batch at a time (a log larger than memory
    is described as well as a small one)."""
    summary = SampleSummary()
    batches = blg.batches() if batch_bytes is None else blg.batches(batch_bytes=batch_bytes)
    for batch in batches:
        # A column first seen in a later batch is null in every earlier sample (as read_blg pads
        # it): counted as missing once the final width is known.
        summary.add(
            utc_stamps(batch.stamps, blg.utc_offset_minutes, blg.zone), int(np.isnan(batch.values).sum())
        )
        summary.missing_cells -= len(batch.stamps) * batch.values.shape[1]
    summary.missing_cells += summary.samples * len(blg.columns)
    return summary


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
        first, last = utc_stamps(
            np.array([window.first_stamp, window.last_stamp], np.int64), offset, blg.zone
        )
        return WindowAverages(
            frame=window.frame(blg.columns, offset, blg.zone),
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


def _in_window(
    frame: pl.DataFrame,
    begin: datetime | None,
    end: datetime | None,
    offset: int | None,
    zone: ZoneInfo | None = None,
) -> pl.DataFrame:
    """Rows from ``begin`` to ``end``: naive times are the log's local time (as in window_report)."""
    if begin is not None:
        frame = frame.filter(pl.col("timestamp") >= aware(begin, offset, zone))
    if end is not None:
        frame = frame.filter(pl.col("timestamp") <= aware(end, offset, zone))
    return frame


def aware(moment: datetime, offset: int | None, zone: ZoneInfo | None = None) -> datetime:
    """A bound as UTC: a naive one is the log's local time, in its zone when resolved."""
    if moment.tzinfo is not None:
        return moment
    if zone is not None:
        return moment.replace(tzinfo=zone).astimezone(UTC)
    return (moment - timedelta(minutes=offset or 0)).replace(tzinfo=UTC)


def _column_name(column: BlgColumn) -> str:
    return f"c{column.index + 1:05d}"


def _frame(
    blocks: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]],
    names: list[str],
    offset: int | None,
    zone: ZoneInfo | None = None,
) -> pl.DataFrame:
    """One frame from decoded batches (columns that appeared later are NaN, then null, before)."""
    width = len(names)
    values = np.full((sum(len(stamps) for stamps, _ in blocks), width), np.nan)
    row = 0
    for stamps, block in blocks:
        values[row : row + len(stamps), : block.shape[1]] = block
        row += len(stamps)
    stamps = np.concatenate([stamps for stamps, _ in blocks]) if blocks else np.zeros(0, np.int64)
    if not width:  # no counter column: the time stamps alone (a frame of no columns has no height)
        return utc_stamps(stamps, offset, zone).to_frame()
    frame = pl.DataFrame(values, schema=names, orient="row", nan_to_null=True)
    return frame.insert_column(0, utc_stamps(stamps, offset, zone))


def _raw_frame(batch: BlgBatch, blg: BlgFile) -> pl.DataFrame:
    names = [_column_name(blg.columns[int(c)]) for c in batch.uncooked_columns]
    frame = pl.DataFrame(batch.uncooked_values, schema=names, orient="row")
    return frame.insert_column(0, utc_stamps(batch.stamps, blg.utc_offset_minutes, blg.zone))


def _counters_frame(columns: list[BlgColumn]) -> pl.DataFrame:
    """One row per column; ``duplicate`` marks the second and later columns of one path (a
    counter asked for twice), as the CSV reader does."""
    seen: set[str] = set()
    rows = []
    for c in columns:
        rows.append(
            (_column_name(c), c.path, c.machine, c.object, c.instance, c.counter, c.path in seen, c.type_name)
        )
        seen.add(c.path)
    return pl.DataFrame(rows, schema={**COUNTERS_SCHEMA, "type": pl.String()}, orient="row")
