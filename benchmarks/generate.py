"""Deterministic benchmark inputs (written to benchmarks/data/, which is not committed)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from esrp_report.synth.perfmon_csv import write_pdh_csv

MACHINE = "EMAIL5"
INSTANCES = 20
# (counter, typical value, relative spread); the spread keeps values varied but plausible.
INSTANCE_COUNTERS = (
    ("I/O Database Reads Average Latency", 12.0, 0.4),
    ("I/O Database Writes Average Latency", 3.0, 0.5),
    ("I/O Database Reads/sec", 50.0, 0.3),
    ("I/O Database Writes/sec", 30.0, 0.3),
    ("I/O Database Reads Average Bytes", 33000.0, 0.05),
    ("I/O Database Writes Average Bytes", 34000.0, 0.05),
    ("I/O Log Reads Average Latency", 2.0, 0.5),
    ("I/O Log Writes Average Latency", 1.5, 0.5),
    ("I/O Log Reads/sec", 0.5, 0.9),
    ("I/O Log Writes/sec", 25.0, 0.3),
    ("I/O Log Reads Average Bytes", 230000.0, 0.1),
    ("I/O Log Writes Average Bytes", 7000.0, 0.3),
    ("Database Maintenance IO Reads/sec", 9.5, 0.2),
    ("Database Maintenance IO Reads Average Bytes", 261000.0, 0.02),
    ("I/O Database Reads (Attached) Average Latency", 12.0, 0.4),
    ("I/O Database Reads (Recovery) Average Latency", 0.0, 0.0),
)
DISK_COUNTERS = (
    ("Avg. Disk sec/Read", 0.012, 0.4),
    ("Avg. Disk sec/Write", 0.003, 0.5),
    ("Disk Transfers/sec", 95.0, 0.3),
)
HOST_COUNTERS = (
    ("Processor(_Total)", "% Processor Time", 4.0, 0.5),
    ("Processor(_Total)", "% Privileged Time", 2.5, 0.5),
    ("Processor(_Total)", "% User Time", 1.5, 0.5),
    ("Memory", "Available MBytes", 21000.0, 0.01),
    ("Memory", "Pages/sec", 3.0, 0.9),
    ("Memory", "Free System Page Table Entries", 33500000.0, 0.001),
    ("MSExchange Database(JetstressWin)", "Database Page Fault Stalls/sec", 0.0, 0.0),
    ("MSExchange Database(JetstressWin)", "Log Record Stalls/sec", 0.0, 0.0),
    ("MSExchange Database(JetstressWin)", "Log Threads Waiting", 0.5, 0.9),
    ("MSExchange Database(JetstressWin)", "Database Cache Size (MB)", 1800.0, 0.02),
)


def jetstress_counter_paths(counters: int, machine: str = MACHINE) -> tuple[list[str], np.ndarray]:
    """Jetstress-like counter paths and each one's typical value and spread (rows of the array)."""
    rows: list[tuple[str, float, float]] = []
    for obj, counter, typical, spread in HOST_COUNTERS:
        rows.append((f"\\\\{machine}\\{obj}\\{counter}", typical, spread))
    for number in range(1, INSTANCES + 1):
        instance = f"JetstressWin/Instance2756.{number}"
        for counter, typical, spread in INSTANCE_COUNTERS:
            path = f"\\\\{machine}\\MSExchange Database ==> Instances({instance})\\{counter}"
            rows.append((path, typical, spread))
    volumes = [f"C:\\MP\\DB{n}" for n in range(1, INSTANCES + 1)] + [
        f"C:\\MP\\LOG{n}" for n in range(1, INSTANCES + 1)
    ]
    for volume in volumes:
        for counter, typical, spread in DISK_COUNTERS:
            rows.append((f"\\\\{machine}\\LogicalDisk({volume})\\{counter}", typical, spread))
    core = 0
    while len(rows) < counters:  # more counters than the set holds (450): per-core processor time
        rows.append((f"\\\\{machine}\\Processor({core})\\% Processor Time", 4.0, 0.5))
        core += 1
    rows = rows[:counters]
    return [path for path, _, _ in rows], np.array([(t, s) for _, t, s in rows], dtype=np.float64)


def _significant(values: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """Round each value to its column's number of significant digits, as perfmon's numbers look."""
    magnitude = np.floor(np.log10(np.where(values > 0, values, 1.0)))
    scale = 10.0 ** (digits - 1 - magnitude)
    # mantissa < 2^53 and an exact power of ten: the division rounds to the nearest double of the
    # decimal, so the written shortest form is that decimal.
    return np.where(values > 0, np.round(values * scale) / scale, 0.0)


def generate_perfmon_csv(
    path: Path, *, hours: float = 24, counters: int = 450, interval_s: int = 15, seed: int = 0
) -> Path:
    """Write a perfmon CSV of ``hours`` at ``interval_s`` with ``counters`` columns.

    Values carry 6-10 significant digits; rate counters are missing (" ") in the first sample, as
    perfmon writes them, and about one cell in 2,000 is missing elsewhere.
    """
    rng = np.random.default_rng(seed)
    samples = int(hours * 3600 / interval_s)
    paths, typical = jetstress_counter_paths(counters)
    noise = rng.lognormal(mean=0.0, sigma=1.0, size=(samples, counters)) * typical[:, 1]
    values = typical[:, 0] * np.clip(1.0 + noise - typical[:, 1], 0.0, None)
    digits = rng.integers(6, 11, size=counters)
    values = _significant(values, digits)
    values[rng.random(size=values.shape) < 0.0005] = np.nan
    rates = np.array(["/sec" in p for p in paths])
    values[0, rates] = np.nan
    start = datetime(2011, 3, 14, 9, 2, 22)
    jitter_ms = rng.integers(0, 40, size=samples)
    stamps = pl.Series(
        [start + timedelta(seconds=interval_s * i, milliseconds=int(j)) for i, j in enumerate(jitter_ms)],
        dtype=pl.Datetime("us"),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_pdh_csv(path, paths, stamps, values, time_zone_name="Eastern Standard Time", bias_minutes=300)
    return path
