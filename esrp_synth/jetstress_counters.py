"""Synthetic perfmon samples for a Jetstress run whose window means equal the run's tables.

Used for the bundled samples, tests and benchmarks: a report's per-instance figures become
counter series (total reads = transactional + maintenance, as Jetstress logs them), sampled at
the run's interval, with warm-up samples before the collection window that must be excluded.
Noise alternates +d/-d inside the window so the window mean is the figure itself. Every figure
worked out from the log (a window mean, transactional reads and their size sample by sample, a
server's sums) rounds to the figure the report prints, also where a published report rounded
its total and its parts each on its own (_reads_within_rounding).
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
    printed_decimals: int = 3,
) -> SyntheticLog:
    """Samples for ``run`` over its collection window plus warm-up and tail samples.

    ``plant`` maps (instance, counter name) to a factor applied to that series inside the
    window, to create a known disagreement with the report. ``printed_decimals``: the grid of the
    report's instance tables (Jetstress prints three decimals); every window mean of the log,
    and every transactional figure worked out from it, rounds to the report's printed figure.
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
    logged_reads = _reads_within_rounding(run, names, 0.5 * 10.0**-printed_decimals, noise * signs[window])
    for instance in names:
        reads = logged_reads.get(instance, {})
        for counter, kind, key in INSTANCE_SERIES:
            table = tables.get(kind)
            row = table.row(instance) if table else None
            if row is None or key not in row.values:
                continue
            value, swing = reads.get((kind, key), (row.values[key], 1.0))
            factor = plant.get((instance, counter), 1.0)
            series = np.full(count, value * 1.5 + 1.0)  # warm-up: visibly different
            series[window] = value * factor * (1.0 + swing * noise * signs[window])
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


# Offsets tried for the unrounded transactional and maintenance reads, in units of half the
# printed grid: a printed 44.658 may stand for anything in [44.6575, 44.6585).
_OFFSETS = np.linspace(-0.98, 0.98, 99)
_CENTRE = len(_OFFSETS) // 2
_OFFSETS[_CENTRE] = 0.0  # exactly: the printed parts themselves
# How much more the maintenance reads swing than the other series where the mean sizes need it
# (see _sizes_within_rounding).
_MAINTENANCE_SWING = 1.5
# How far inside a printed figure's rounding a logged one must stay: more than the error of
# averaging a day of samples in floating point, far less than the printed grid.
_SLACK = 1e-6

Logged = dict[tuple[TableKind, str], tuple[float, float]]  # (table, key) -> (window mean, swing)


@dataclass
class _Parts:
    """One instance's printed reads and their mean sizes: transactional, maintenance and total."""

    reads: float
    size: float
    maintenance: float
    maintenance_size: float
    total: float | None
    total_size: float | None


def _parts(run: Run, instance: str) -> _Parts | None:
    tables = [
        run.tables.get(k)
        for k in (TableKind.TRANSACTIONAL, TableKind.BACKGROUND_MAINTENANCE, TableKind.TOTAL)
    ]
    trans, bdm, total = (t.row(instance) if t else None for t in tables)
    needed = ((trans, m.DB_READS), (trans, m.DB_READ_BYTES), (bdm, m.BDM_READS), (bdm, m.BDM_READ_BYTES))
    if any(row is None or key not in row.values for row, key in needed):
        return None
    assert trans is not None and bdm is not None
    printed = total.values if total is not None else {}
    return _Parts(
        trans.values[m.DB_READS],
        trans.values[m.DB_READ_BYTES],
        bdm.values[m.BDM_READS],
        bdm.values[m.BDM_READ_BYTES],
        printed.get(m.DB_READS),
        printed.get(m.DB_READ_BYTES),
    )


def _reads_within_rounding(run: Run, names: list[str], half: float, swings: np.ndarray) -> dict[str, Logged]:
    """Per instance, the logged total reads, their mean size and the maintenance reads, so that
    the log gives back every printed figure: total, maintenance and transactional (total -
    maintenance) reads and their mean sizes (the transactional one is the total's size less the
    maintenance share, worked out sample by sample, facts §9). The printed parts, exact, give the
    total's figures when Jetstress rounded them alike; a published report rounds each on its own
    (74.248 printed beside 44.658 + 29.589), so the unrounded reads are moved, inside their
    rounding, as little as makes the total round to what is printed, and the other instances
    balance that move (inside their own rounding) so that the server's sums still round to the
    sums of the printed figures. ``swings``: the relative swing of each sample in the window."""
    parts = {name: p for name in names if (p := _parts(run, name)) is not None}
    moves = _OFFSETS[:, None] + _OFFSETS[None, :]
    change = np.abs(_OFFSETS[:, None]) + np.abs(_OFFSETS[None, :])

    def fits(p: _Parts) -> np.ndarray:
        if p.total is None:
            return np.ones_like(moves, dtype=bool)
        return np.abs(p.reads + p.maintenance + half * moves - p.total) < half - _SLACK

    chosen: dict[str, tuple[int, int]] = {}
    for name, p in parts.items():
        ok = fits(p)
        if ok.any() and not ok[_CENTRE, _CENTRE]:  # these move first, the rest balance them
            chosen[name] = _cell(np.where(ok, change, np.inf))
    drift_t = sum(_OFFSETS[i] for i, _ in chosen.values())
    drift_b = sum(_OFFSETS[j] for _, j in chosen.values())
    for name, p in parts.items():
        if name in chosen:
            continue
        ok = fits(p)
        balance = np.abs(drift_t + _OFFSETS[:, None]) + np.abs(drift_b + _OFFSETS[None, :])
        cell = _cell(np.where(ok, balance + 1e-3 * change, np.inf)) if ok.any() else (_CENTRE, _CENTRE)
        chosen[name] = cell
        drift_t += _OFFSETS[cell[0]]
        drift_b += _OFFSETS[cell[1]]
    logged: dict[str, Logged] = {}
    for name, (i, j) in chosen.items():
        p = parts[name]
        reads, maintenance = p.reads + half * _OFFSETS[i], p.maintenance + half * _OFFSETS[j]
        logged[name] = {
            (TableKind.TOTAL, m.DB_READS): (reads + maintenance, 1.0),
            (TableKind.BACKGROUND_MAINTENANCE, m.BDM_READS): (maintenance, 1.0),
            **_sizes_within_rounding(p, reads, maintenance, half, swings),
        }
    return logged


def _sizes_within_rounding(
    p: _Parts, reads: float, maintenance: float, half: float, swings: np.ndarray
) -> Logged:
    """The logged total size (and the swings of it and of the maintenance reads) that give back
    both the printed total size and the printed transactional size. The sizes of the parts
    weighted by their reads give both when the report is consistent (this project's own reports
    are). A published one may print a total size that is not that weighted mean to its last digit
    (Jetstress averages sample by sample): the total's size is then logged as printed, and the
    transactional size, worked out per sample, is brought to its printed figure by letting the
    maintenance reads swing more than the total reads and the total's size swing by the amount
    that solves it (the window mean of each series is unchanged; the transactional size's mean is
    linear in that swing)."""
    total = reads + maintenance
    weighted = (reads * p.size + maintenance * p.maintenance_size) / total
    printed = p.total_size
    if printed is None or abs(weighted - printed) < half - _SLACK or not swings.any():
        return {(TableKind.TOTAL, m.DB_READ_BYTES): (weighted, 1.0)}

    def transactional_size(size_swing: float) -> float:
        t_reads = total * (1.0 + swings)
        m_reads = maintenance * (1.0 + _MAINTENANCE_SWING * swings)
        moved = t_reads * printed * (1.0 + size_swing * swings) - m_reads * p.maintenance_size * (
            1.0 + swings
        )
        return float(np.mean(moved / (t_reads - m_reads)))

    at_one, slope = transactional_size(1.0), transactional_size(2.0) - transactional_size(1.0)
    if slope == 0:
        return {(TableKind.TOTAL, m.DB_READ_BYTES): (weighted, 1.0)}
    size_swing = 1.0 + (p.size - at_one) / slope
    if abs(transactional_size(size_swing) - p.size) >= half - _SLACK:
        return {(TableKind.TOTAL, m.DB_READ_BYTES): (weighted, 1.0)}
    return {
        (TableKind.TOTAL, m.DB_READ_BYTES): (printed, size_swing),
        (TableKind.BACKGROUND_MAINTENANCE, m.BDM_READS): (maintenance, _MAINTENANCE_SWING),
    }


def _cell(cost: np.ndarray) -> tuple[int, int]:
    i, j = np.unravel_index(np.argmin(cost), cost.shape)
    return int(i), int(j)
