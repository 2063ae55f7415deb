"""Synthetic perfmon samples for a Jetstress run whose window means equal the run's tables.

Used for the bundled samples, tests and benchmarks: a report's per-instance figures become
counter series (total reads = transactional + maintenance, as Jetstress logs them), sampled at
the run's interval, with warm-up samples before the collection window that must be excluded.
Noise alternates +d/-d inside the window so the window mean is the figure itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from esrp_report import model as m
from esrp_report.model import Run, TableKind

OBJECT = "MSExchange Database ==> Instances"

# (counter name, table, metric key); the Total table carries the logged values.
INSTANCE_SERIES: tuple[tuple[str, TableKind, str], ...] = (
    ("I/O Database Reads Average Latency", TableKind.TOTAL, m.DB_READ_LATENCY),
    ("I/O Database Writes Average Latency", TableKind.TOTAL, m.DB_WRITE_LATENCY),
    ("I/O Database Reads/sec", TableKind.TOTAL, m.DB_READS),
    ("I/O Database Writes/sec", TableKind.TOTAL, m.DB_WRITES),
    ("I/O Database Reads Average Bytes", TableKind.TOTAL, m.DB_READ_BYTES),
    ("I/O Database Writes Average Bytes", TableKind.TOTAL, m.DB_WRITE_BYTES),
    ("I/O Log Reads Average Latency", TableKind.TOTAL, m.LOG_READ_LATENCY),
    ("I/O Log Writes Average Latency", TableKind.TOTAL, m.LOG_WRITE_LATENCY),
    ("I/O Log Reads/sec", TableKind.TOTAL, m.LOG_READS),
    ("I/O Log Writes/sec", TableKind.TOTAL, m.LOG_WRITES),
    ("I/O Log Reads Average Bytes", TableKind.TOTAL, m.LOG_READ_BYTES),
    ("I/O Log Writes Average Bytes", TableKind.TOTAL, m.LOG_WRITE_BYTES),
    ("Database Maintenance IO Reads/sec", TableKind.BACKGROUND_MAINTENANCE, m.BDM_READS),
    ("Database Maintenance IO Reads Average Bytes", TableKind.BACKGROUND_MAINTENANCE, m.BDM_READ_BYTES),
)

HOST_SERIES: dict[str, tuple[str, str | None, str]] = {
    "% Processor Time": ("Processor", "_Total", "% Processor Time"),
    "Available MBytes": ("Memory", None, "Available MBytes"),
    "Free System Page Table Entries": ("Memory", None, "Free System Page Table Entries"),
    "Transition Pages RePurposed/sec": ("Memory", None, "Transition Pages RePurposed/sec"),
    "Pool Nonpaged Bytes": ("Memory", None, "Pool Nonpaged Bytes"),
    "Pool Paged Bytes": ("Memory", None, "Pool Paged Bytes"),
    "Database Page Fault Stalls/sec": (
        "MSExchange Database",
        "JetstressWin",
        "Database Page Fault Stalls/sec",
    ),
}


@dataclass
class SyntheticLog:
    paths: list[str]
    timestamps: list[datetime]  # local wall-clock
    values: np.ndarray  # shape (samples, counters); NaN = missing


def write_log(path: Path, log: SyntheticLog) -> None:
    """``log`` as the perfmon CSV of the bundled samples (local time of the US East Coast: the
    documents do not say, and the samples assume it)."""
    from esrp_synth.perfmon_csv import write_pdh_csv  # noqa: PLC0415 - the CSV writer only here

    write_pdh_csv(
        path, log.paths, log.timestamps, log.values, time_zone_name="Eastern Standard Time", bias_minutes=300
    )


def synthesize(
    run: Run,
    *,
    interval_s: float = 15.0,
    warmup_samples: int = 18,
    tail_samples: int = 1,
    noise: float = 0.02,
    plant: dict[tuple[str, str], float] | None = None,
) -> SyntheticLog:
    """Samples for ``run`` over its collection window plus warm-up and tail samples.

    ``plant`` maps (instance, counter name) to a factor applied to that series inside the
    window, to create a known disagreement with the report.
    """
    if run.collection_start is None or run.collection_end is None:
        raise ValueError("the run needs a collection window")
    machine = run.machine
    total = run.tables.get(TableKind.TOTAL)
    bdm = run.tables.get(TableKind.BACKGROUND_MAINTENANCE)
    tables = {TableKind.TOTAL: total, TableKind.BACKGROUND_MAINTENANCE: bdm}

    # First in-window sample lands a few seconds after the collection start, as perfmon's would.
    first = run.collection_start + timedelta(seconds=7)
    inside = int((run.collection_end - first).total_seconds() // interval_s) + 1
    count = warmup_samples + inside + tail_samples
    timestamps = [first + timedelta(seconds=interval_s * (k - warmup_samples)) for k in range(count)]
    window = np.zeros(count, dtype=bool)
    window[warmup_samples : warmup_samples + inside] = True

    signs = np.zeros(count)
    pattern = np.where(np.arange(inside) % 2 == 0, 1.0, -1.0)
    if inside % 2:
        pattern[-1] = 0.0  # keeps the window mean exact with an odd count
    signs[window] = pattern

    paths: list[str] = []
    columns: list[np.ndarray] = []
    plant = plant or {}
    names = run.instance_names()
    for instance in names:
        for counter, kind, key in INSTANCE_SERIES:
            table = tables.get(kind)
            row = table.row(instance) if table else None
            if row is None or key not in row.values:
                continue
            value = row.values[key]
            if kind is TableKind.TOTAL and key in (m.DB_READS, m.DB_READ_BYTES):
                value = _total_from_parts(run, instance, key, value)
            factor = plant.get((instance, counter), 1.0)
            series = np.full(count, value * 1.5 + 1.0)  # warm-up: visibly different
            series[window] = value * factor * (1.0 + noise * signs[window])
            # After the window: the figure itself, so a window that ends a sample later still agrees.
            series[~window & (np.arange(count) >= warmup_samples)] = value * factor
            paths.append(f"\\\\{machine}\\{OBJECT}(JetstressWin/{instance})\\{counter}")
            columns.append(series)
    for host in run.host:
        spec = HOST_SERIES.get(host.name)
        if spec is None or host.average is None:
            continue
        obj, inst, counter = spec
        series = np.full(count, host.average)
        lo = host.minimum if host.minimum is not None else host.average
        hi = host.maximum if host.maximum is not None else host.average
        # Put the minimum and maximum inside the window and balance them so the mean holds.
        idx = np.flatnonzero(window)
        if len(idx) >= 3 and lo <= host.average <= hi:
            series[idx[0]] = lo
            series[idx[1]] = hi
            series[idx[2]] = 3 * host.average - lo - hi if len(idx) == 3 else host.average
            if len(idx) > 3:
                rest = idx[2:]
                series[rest] = host.average - (lo + hi - 2 * host.average) / len(rest)
        path = f"\\\\{machine}\\{obj}({inst})\\{counter}" if inst else f"\\\\{machine}\\{obj}\\{counter}"
        paths.append(path)
        columns.append(series)
    values = np.column_stack(columns) if columns else np.zeros((count, 0))
    return SyntheticLog(paths, timestamps, values)


def _total_from_parts(run: Run, instance: str, key: str, printed: float) -> float:
    """Total reads (and their mean size) rebuilt from the transactional and maintenance rows, so
    that transactional = total - maintenance holds exactly for the printed transactional row."""
    trans_table = run.tables.get(TableKind.TRANSACTIONAL)
    bdm_table = run.tables.get(TableKind.BACKGROUND_MAINTENANCE)
    trans = trans_table.row(instance) if trans_table else None
    bdm = bdm_table.row(instance) if bdm_table else None
    if trans is None or bdm is None or m.DB_READS not in trans.values or m.BDM_READS not in bdm.values:
        return printed
    reads = trans.values[m.DB_READS] + bdm.values[m.BDM_READS]
    if key == m.DB_READS:
        return reads
    if m.DB_READ_BYTES not in trans.values or m.BDM_READ_BYTES not in bdm.values or reads == 0:
        return printed
    return (
        trans.values[m.DB_READS] * trans.values[m.DB_READ_BYTES]
        + bdm.values[m.BDM_READS] * bdm.values[m.BDM_READ_BYTES]
    ) / reads
