"""A counter log (any reader's) rewritten as a binary perfmon log carrying the same values.

Each counter becomes a PERF_AVERAGE_BULK counter whose raw value grows by ``value x 10^6`` per
sample over a base that grows by 10^6, so a reader's cooked value is the original to 1e-6. A
first sample one interval earlier seeds the two-sample formula. Used to give the samples and the
tests .blg evidence with known values.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from esrp_report.model import CounterLog
from esrp_synth import blg_writer as bw

SCALE = 1_000_000


def counter_log_to_blg(log: CounterLog, path: Path, *, pointer_size: int = 8) -> Path:
    counters = log.counters.filter(~pl.col("duplicate"))
    objects: list[bw.PerfObject] = []
    cells: dict[str, list[tuple[int, int, str]]] = {}
    machine = next((m for m in counters.get_column("machine").to_list() if m), "SERVER")
    for (name,), rows in counters.group_by("object", maintain_order=True):
        instances = list(dict.fromkeys(rows.get_column("instance").to_list()))
        names = list(dict.fromkeys(rows.get_column("counter").to_list()))
        single = instances == [None]
        objects.append(
            bw.PerfObject(
                str(name),
                tuple(bw.Counter(c, bw.PERF_AVERAGE_BULK) for c in names),
                None if single else tuple(str(i) for i in instances),
            )
        )
        cells[str(name)] = [
            (instances.index(r["instance"]), names.index(r["counter"]), r["column"])
            for r in rows.iter_rows(named=True)
        ]
    samples = log.samples
    offset = log.utc_offset_minutes or 0
    stamps = samples.get_column("timestamp").dt.replace_time_zone(None).to_list()
    step = (stamps[1] - stamps[0]) if len(stamps) > 1 else timedelta(seconds=15)
    local = [stamps[0] - step + timedelta(minutes=offset), *(s + timedelta(minutes=offset) for s in stamps)]
    # Raw values of every sample at once: a running sum of value x SCALE, with the seed row of zeros.
    running: dict[str, np.ndarray[Any, np.dtype[np.int64]]] = {}
    for obj in objects:
        shape = (len(local), len(obj.instances or [None]), len(obj.counters))
        raw = np.zeros(shape, dtype=np.int64)
        positions = cells[obj.name]
        if positions:
            instance_rows = [i for i, _, _ in positions]
            cols = [j for _, j, _ in positions]
            values = samples.select([c for _, _, c in positions]).fill_null(0.0).to_numpy()
            raw[1:, instance_rows, cols] = np.cumsum(np.rint(values * SCALE).astype(np.int64), axis=0)
        running[obj.name] = raw
    with (
        path.open("wb") as stream,
        bw.BlgWriter(
            stream, machine=machine, objects=objects, utc_offset_minutes=offset, pointer_size=pointer_size
        ) as writer,
    ):
        for k, moment in enumerate(local):
            values_k = {name: raw[k] for name, raw in running.items()}
            bases = {
                name: np.full(raw.shape[1:], (k + 1) * SCALE, dtype=np.int64) for name, raw in running.items()
            }
            ticks = int(
                (moment - timedelta(minutes=offset) - bw._FILETIME_EPOCH).total_seconds() * 10_000_000
            )
            writer.add_sample(moment, 10**9 + k * 10**8, ticks, values_k, bases)
    return path
