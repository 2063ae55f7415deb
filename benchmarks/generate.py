"""Deterministic input generators for the benchmarks (written to benchmarks/data/, not committed)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from esrp_report.synth.perfmon_csv import write_pdh_csv

INSTANCE_COUNTERS = (
    "I/O Database Reads Average Latency",
    "I/O Database Writes Average Latency",
    "I/O Database Reads/sec",
    "I/O Database Writes/sec",
    "I/O Database Reads Average Bytes",
    "I/O Database Writes Average Bytes",
    "I/O Log Reads Average Latency",
    "I/O Log Writes Average Latency",
    "I/O Log Reads/sec",
    "I/O Log Writes/sec",
    "I/O Log Reads Average Bytes",
    "I/O Log Writes Average Bytes",
    "Database Maintenance IO Reads/sec",
    "Database Maintenance IO Reads Average Bytes",
    "Database Page Faults/sec",
    "Log Bytes Write/sec",
)
DISK_COUNTERS = (
    "Avg. Disk sec/Read",
    "Avg. Disk sec/Write",
    "Disk Reads/sec",
    "Disk Writes/sec",
    "Avg. Disk Bytes/Read",
    "Avg. Disk Bytes/Write",
    "Avg. Disk Queue Length",
    "% Idle Time",
)


def jetstress_counter_paths(machine: str, counters: int) -> list[str]:
    """A Jetstress-like counter set: database instances, their volumes, processor and memory."""
    paths = [
        f"\\\\{machine}\\Processor(_Total)\\% Processor Time",
        f"\\\\{machine}\\Memory\\Available MBytes",
        f"\\\\{machine}\\MSExchange Database(JetstressWin)\\Database Page Fault Stalls/sec",
    ]
    instance = 1
    while len(paths) < counters:
        name = f"JetstressWin/Instance2756.{instance}"
        paths += [f"\\\\{machine}\\MSExchange Database ==> Instances({name})\\{c}" for c in INSTANCE_COUNTERS]
        paths += [f"\\\\{machine}\\LogicalDisk(C:\\MP\\DB\\DB{instance})\\{c}" for c in DISK_COUNTERS]
        instance += 1
    return paths[:counters]


def generate_perfmon_csv(
    path: Path, *, hours: float = 24, counters: int = 450, interval_s: int = 15, seed: int = 0
) -> Path:
    """A perfmon CSV of ``hours`` at ``interval_s`` with ``counters`` columns; values with the 6-10
    significant digits perfmon writes, and a few missing cells."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    samples = int(hours * 3600 / interval_s)
    scale = rng.uniform(0.01, 5e5, size=counters)
    values = np.round(scale * rng.uniform(0.8, 1.2, size=(samples, counters)), 6)
    values[rng.random(size=values.shape) < 0.0005] = np.nan
    start = datetime(2011, 3, 14, 9, 2, 22)
    stamps = [start + timedelta(seconds=interval_s * i) for i in range(samples)]
    write_pdh_csv(path, jetstress_counter_paths("EMAIL5", counters), stamps, values)
    return path
