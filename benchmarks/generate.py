"""Deterministic benchmark inputs (written to benchmarks/data/, which is not committed)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from esrp_synth.perfmon_csv import write_pdh_csv

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


# --- binary perfmon logs (.blg) -------------------------------------------------------------------

_BLG_INSTANCE_COUNTERS = [
    ("I/O Database Reads/sec", "rate"),
    ("I/O Database Reads Average Latency", "average"),
    ("I/O Database Reads Average Bytes", "average"),
    ("I/O Database Writes/sec", "rate"),
    ("I/O Database Writes Average Latency", "average"),
    ("I/O Database Writes Average Bytes", "average"),
    ("I/O Log Reads/sec", "rate"),
    ("I/O Log Reads Average Latency", "average"),
    ("I/O Log Writes/sec", "rate"),
    ("I/O Log Writes Average Latency", "average"),
    ("I/O Log Writes Average Bytes", "average"),
    ("Database Maintenance IO Reads/sec", "rate"),
    ("Database Maintenance IO Reads Average Bytes", "average"),
    ("Log Bytes Write/sec", "bulk"),
    ("Database Cache Size (MB)", "raw"),
    ("% Cache Hit", "fraction"),
]


def jetstress_blg_objects(instances: int = 20, counters: int = 450) -> list[object]:
    """A Jetstress-shaped set: ``counters`` database-instance counters (16 named ones, the rest
    fillers of the same types), LogicalDisk/PhysicalDisk per database and log volume, processors,
    memory, processes, system."""
    from esrp_synth import blg_writer as bw

    kinds = {  # type and size of each kind of counter
        "rate": (bw.PERF_COUNTER_COUNTER, 4),
        "average": (bw.PERF_AVERAGE_BULK, 8),
        "bulk": (bw.PERF_COUNTER_BULK_COUNT, 8),
        "raw": (bw.PERF_COUNTER_LARGE_RAWCOUNT, 8),
        "fraction": (bw.PERF_RAW_FRACTION, 4),
    }
    named = [(name, kinds[kind]) for name, kind in _BLG_INSTANCE_COUNTERS]
    order = list(kinds.values())
    fillers = [(f"Instance Counter {i:03d}", order[i % len(order)]) for i in range(counters - len(named))]
    instance_counters = tuple(bw.Counter(name, t, size=s) for name, (t, s) in named + fillers)
    disk = tuple(
        bw.Counter(name, t, size=s)
        for name, t, s in [
            ("Avg. Disk sec/Read", bw.PERF_AVERAGE_TIMER, 4),
            ("Avg. Disk sec/Write", bw.PERF_AVERAGE_TIMER, 4),
            ("Avg. Disk sec/Transfer", bw.PERF_AVERAGE_TIMER, 4),
            ("Disk Reads/sec", bw.PERF_COUNTER_COUNTER, 4),
            ("Disk Writes/sec", bw.PERF_COUNTER_COUNTER, 4),
            ("Disk Transfers/sec", bw.PERF_COUNTER_COUNTER, 4),
            ("Disk Bytes/sec", bw.PERF_COUNTER_BULK_COUNT, 8),
            ("Avg. Disk Queue Length", bw.PERF_COUNTER_100NS_QUEUELEN_TYPE, 8),
            ("% Disk Time", bw.PERF_PRECISION_100NS_TIMER, 8),
            ("Current Disk Queue Length", bw.PERF_COUNTER_RAWCOUNT, 4),
        ]
    )
    databases = tuple(f"Information Store/DB{k:02d}" for k in range(1, instances + 1))
    volumes = tuple(f"C:\\DB\\DB{k:02d}" for k in range(1, instances + 1)) + tuple(
        f"C:\\LOG\\LOG{k:02d}" for k in range(1, instances + 1)
    )
    return [
        bw.PerfObject("MSExchange Database ==> Instances", instance_counters, (*databases, "_Total")),
        bw.PerfObject("LogicalDisk", disk, (*volumes, "C:", "_Total")),
        bw.PerfObject("PhysicalDisk", disk, (*tuple(f"{k} Disk{k}" for k in range(len(volumes))), "_Total")),
        bw.PerfObject(
            "Processor",
            (
                bw.Counter("% Processor Time", bw.PERF_100NSEC_TIMER_INV),
                bw.Counter("% User Time", bw.PERF_100NSEC_TIMER),
            ),
            ("0", "1", "_Total"),
        ),
        bw.PerfObject(
            "Memory",
            (
                bw.Counter("Available MBytes", bw.PERF_COUNTER_RAWCOUNT, size=4),
                bw.Counter("Pool Paged Bytes", bw.PERF_COUNTER_RAWCOUNT, size=4),
                bw.Counter("Pool Nonpaged Bytes", bw.PERF_COUNTER_RAWCOUNT, size=4),
                bw.Counter("Free System Page Table Entries", bw.PERF_COUNTER_RAWCOUNT, size=4),
                bw.Counter("Transition Pages RePurposed/sec", bw.PERF_COUNTER_COUNTER, size=4),
            ),
            None,
        ),
    ]


def generate_jetstress_blg(
    path: Path,
    *,
    samples: int = 5_760,
    interval: float = 15,
    instances: int = 20,
    counters: int = 450,
    seed: int = 0,
    start: datetime = datetime(2026, 5, 4, 8, 0, 0),
    utc_offset_minutes: int = -240,
) -> Path:
    """A Jetstress-shaped binary log: every raw value a growing random walk (deterministic).

    ``start`` is the collector's local time of the first sample; ``interval`` is in seconds (a
    fraction is allowed: whole milliseconds are written)."""
    from esrp_synth import blg_writer as bw

    objects = jetstress_blg_objects(instances, counters)
    rng = np.random.default_rng(seed)
    shapes = {o.name: (len(o.instances) if o.instances else 1, len(o.counters)) for o in objects}  # type: ignore[attr-defined]
    first = {name: rng.integers(0, 1_000, size=shape) for name, shape in shapes.items()}
    base = {name: rng.integers(1, 1_000, size=shape) for name, shape in shapes.items()}
    ticks = round(interval * 10_000_000)
    utc0 = (int((start - datetime(1601, 1, 1)).total_seconds()) - utc_offset_minutes * 60) * 10_000_000
    step_first = {name: rng.integers(0, 5_000, size=shape) for name, shape in shapes.items()}
    step_base = {name: rng.integers(1, 50, size=shape) for name, shape in shapes.items()}
    with (
        path.open("wb") as stream,
        bw.BlgWriter(
            stream,
            machine="MBX01",
            objects=objects,
            utc_offset_minutes=utc_offset_minutes,
            pointer_size=8,  # type: ignore[arg-type]
        ) as writer,
    ):
        for k in range(samples):
            for name in shapes:
                first[name] = (first[name] + step_first[name]) % (1 << 31)
                base[name] = base[name] + step_base[name]
            writer.add_sample(
                start + timedelta(microseconds=k * ticks // 10),
                10**10 + k * ticks,
                utc0 + k * ticks,
                first,
                base,
            )
    return path


# --- the same counters in the raw-counter layout ("BL 03 01" / "BL 03 02" samples) ------------------

# How each counter type's raw values move in one interval: (kind, low, high); ``ticks`` and
# ``freq`` are the interval in 100 ns ticks and the performance-counter frequency.
#   count: FirstValue grows by a uniform draw in [low, high) (rates, byte counts, busy times)
#   average: the base grows by 1-1,499 operations, FirstValue by operations x [low, high)
#   fraction: a fixed base of 1,000,000, FirstValue a share [low, high) of it
#   level: FirstValue redrawn in [low, high) (raw counts)
_COUNT, _AVERAGE, _FRACTION, _LEVEL = 0, 1, 2, 3


def _raw_model(code: int, ticks: int, freq: int) -> tuple[int, float, float]:
    from esrp_synth import blg_writer as bw

    models = {
        bw.PERF_COUNTER_COUNTER: (_COUNT, 0, 5_000),  # up to ~330 IO/s
        bw.PERF_COUNTER_BULK_COUNT: (_COUNT, 0, 5e7),  # up to ~3 MB/s
        bw.PERF_AVERAGE_BULK: (_AVERAGE, 8_192, 262_144),  # 8-256 KB per IO
        bw.PERF_AVERAGE_TIMER: (_AVERAGE, 0.001 * freq, 0.02 * freq),  # 1-20 ms per transfer
        bw.PERF_RAW_FRACTION: (_FRACTION, 0.5, 1.0),
        bw.PERF_100NSEC_TIMER: (_COUNT, 0, ticks),  # busy within the interval
        bw.PERF_100NSEC_TIMER_INV: (_COUNT, 0, ticks),
        bw.PERF_PRECISION_100NS_TIMER: (_COUNT, 0, ticks),
        bw.PERF_COUNTER_100NS_QUEUELEN_TYPE: (_COUNT, 0, 4 * ticks),  # queue length up to 4
        bw.PERF_COUNTER_RAWCOUNT: (_LEVEL, 0, 100_000),
        bw.PERF_COUNTER_LARGE_RAWCOUNT: (_LEVEL, 0, 100_000),
    }
    if code not in models:
        raise ValueError(f"no raw-value model for counter type {code:#010x}")
    kind, low, high = models[code]
    return kind, float(low), float(high)


def jetstress_raw_counters(instances: int = 20, counters: int = 450, machine: str = "MBX01") -> list[Any]:
    """The counters of :func:`jetstress_blg_objects` as a data collector asks for them in the
    raw-counter layout: one wildcard entry per counter of an object with instances
    (``MSExchange Database ==> Instances(*)\\...``, ``LogicalDisk(*)\\...``, ``PhysicalDisk(*)\\...``,
    ``Processor(*)\\...``), one single entry per counter of an object without (``Memory\\...``).
    Same types; record 32 gives each its time base (the writer's defaults: PerfFreq, 10 MHz for
    100 ns types)."""
    from esrp_synth.blg_raw_writer import RawCounter

    objects: list[Any] = jetstress_blg_objects(instances, counters)
    return [
        RawCounter(machine, obj.name, counter.name, counter.counter_type, "*" if obj.instances else None)
        for obj in objects
        for counter in obj.counters
    ]


def generate_jetstress_raw_blg(
    path: Path,
    *,
    samples: int = 5_760,
    interval: float = 15,
    instances: int = 20,
    counters: int = 450,
    seed: int = 0,
    start: datetime = datetime(2026, 5, 4, 8, 0, 0),
    utc_offset_minutes: int = -240,
    pointer_size: int = 8,
) -> Path:
    """The log of :func:`generate_jetstress_blg` in the raw-counter layout: the same counters and
    instances (:func:`jetstress_raw_counters`), start, interval and time zone, written by
    ``esrp_synth.blg_raw_writer`` (64-bit writer: Windows 10 buffers of 64 KB, records cut into
    8,000-byte fragments).

    Values are deterministic (``seed``): counts, byte and time sums and their bases grow by
    plausible steps, levels are redrawn (``_raw_model``). SecondValue and MultiCount are filled
    per counter type by the writer's ``sample_values``: performance-counter ticks for rates, the
    UTC FILETIME for 100 ns types, the base for averages and fractions, 0 for raw counts. The
    clocks carry sub-millisecond jitter; a sample's stamp is its UTC clock truncated to the
    millisecond, in local time (as PowerShell's writer stamps them).

    A value costs 24 bytes plus its instance name in a ``BL 03 02`` array (about 13 in a
    PERF_DATA_BLOCK), so one sample of these 13,441 values is about 970 KB: 24 hours at 15 s
    make 5.6 GB, and 1 GB holds about 1,030 samples (4.3 hours)."""
    from esrp_synth import blg_raw_writer as rw

    entries = jetstress_raw_counters(instances, counters)
    objects: list[Any] = jetstress_blg_objects(instances, counters)
    instance_names = {o.name: o.instances for o in objects}
    shapes: list[tuple[str, ...] | None] = [instance_names[e.object] if e.wildcard else None for e in entries]
    widths = [len(s) if s else 1 for s in shapes]
    bounds = np.concatenate([[0], np.cumsum(widths)]).tolist()
    ticks = round(interval * 10_000_000)
    perf_freq = 10_000_000
    models = np.array(
        [
            _raw_model(e.counter_type, ticks, perf_freq)
            for e, w in zip(entries, widths, strict=True)
            for _ in range(w)
        ]
    )
    kind, low, high = models[:, 0].astype(np.int64), models[:, 1], models[:, 2]
    cells = len(kind)
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 1_000_000, size=cells)
    base = np.where(kind == _FRACTION, 1_000_000, rng.integers(1, 1_000, size=cells))
    with_base = [kind[a] in (_AVERAGE, _FRACTION) for a in bounds[:-1]]
    header = rw.LogHeader(
        perf_freq=perf_freq,
        time_zone=rw.fixed_time_zone(utc_offset_minutes, "Eastern Daylight Time"),
        processors=2,
        log_file_name="C:\\PerfLogs\\Admin\\Jetstress\\DataCollector01.blg",
    )
    local0 = rw.filetime(start)
    utc0 = local0 - utc_offset_minutes * 600_000_000
    with (
        path.open("wb") as stream,
        rw.RawBlgWriter(stream, entries, header=header, pointer_size=pointer_size) as writer,
    ):
        for k in range(samples):
            draw = low + (high - low) * rng.random(cells)
            operations = rng.integers(1, 1_500, size=cells)
            average = kind == _AVERAGE
            base = np.where(average, base + operations, base)
            first = np.select(
                [kind == _COUNT, average, kind == _FRACTION],
                [first + draw.astype(np.int64), first + (draw * operations).astype(np.int64), (draw * base)],
                draw,
            ).astype(np.int64)
            jitter = rng.integers(0, 10_000, size=2)
            utc = utc0 + k * ticks + int(jitter[0])
            clock = rw.Clock(
                perf_time=10**10 + k * round(interval * perf_freq) + int(jitter[1]), time_100ns=utc
            )
            first_values, base_values = first.tolist(), base.tolist()
            firsts: list[int | list[tuple[str, int]]] = []
            bases: list[int | list[tuple[str, int]] | None] = []
            for i, shape in enumerate(shapes):
                a, b = bounds[i], bounds[i + 1]
                if shape is None:
                    firsts.append(first_values[a])
                    bases.append(base_values[a] if with_base[i] else None)
                else:
                    firsts.append(list(zip(shape, first_values[a:b], strict=True)))
                    bases.append(list(zip(shape, base_values[a:b], strict=True)) if with_base[i] else None)
            local = utc // 10_000 * 10_000 + utc_offset_minutes * 600_000_000
            writer.add_sample(rw.sample_values(entries, clock, firsts, bases), local)
    return path
