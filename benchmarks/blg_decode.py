"""Binary perfmon log (.blg) decoding speed and memory.

    python -m benchmarks.blg_decode

Target (issue "BLG"): a generated 1 GB Jetstress-shaped log (20 database instances, 600
instance counters, LogicalDisk/PhysicalDisk per database and log volume; 24 h at 15 s = 5,760
samples) decodes at >= 300 MB/s on one core, and peak memory for 100 MB and 1 GB inputs is
about the same. "Decode" = every sample cooked into float64 values, streamed batch by batch
(``BlgFile.batches``), nothing kept: what ``convert`` and the catalog do before writing.
Peak memory is measured in a fresh process per input (its VmHWM). Both engines are timed
(the compiled one when built, and NumPy); wall and CPU time are recorded, with the load average,
because the machine is shared.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.generate import generate_jetstress_blg
from esrp_report.ingest.perfmon.blg import BlgFile, native_engine_built

DATA = Path(__file__).with_name("data")
SAMPLES_1GB = 5_760
COUNTERS = 600
RUNS = 5

# Peak RSS is the process's own VmHWM: ru_maxrss survives execve on Linux, so a child started
# by vfork (as subprocess does) would report the parent's high-water mark when that is higher.
_MEASURE = """
import json, sys, time
from pathlib import Path
from esrp_report.ingest.perfmon.blg import BlgFile
started = time.perf_counter()
with BlgFile(sys.argv[1]) as blg:
    cells = sum(b.values.size for b in blg.batches())
status = Path("/proc/self/status").read_text().splitlines()
peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"seconds": time.perf_counter() - started, "cells": cells, "peak_rss_mb": peak_kb / 1024}))
"""


def log_file(samples: int) -> Path:
    path = (
        DATA / f"jetstress_{samples}s_{COUNTERS}c_seed0_v1.blg"
    )  # bump the suffix when the generator changes
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        generate_jetstress_blg(path.with_suffix(".tmp"), samples=samples, counters=COUNTERS)
        path.with_suffix(".tmp").rename(path)
    return path


def decode(path: Path, engine: str = "auto") -> int:
    with BlgFile(path, engine=engine) as blg:
        return sum(len(batch.stamps) for batch in blg.batches())


def timed(path: Path, engine: str, runs: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU seconds of each run (CPU time: the machine is shared, wall time waits for it)."""
    walls, cpus = [], []
    samples = 0
    for _ in range(runs):
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        samples = decode(path, engine)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return walls, cpus, samples


def fresh_process(path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main(runs: int = RUNS) -> dict[str, object]:
    big = log_file(SAMPLES_1GB)
    small = log_file(SAMPLES_1GB // 10)
    size_mb = big.stat().st_size / 1e6
    decode(big)  # warm-up: file in the page cache
    engines = ["native", "numpy"] if native_engine_built() else ["numpy"]
    figures: dict[str, dict[str, object]] = {}
    samples = 0
    for engine in engines:
        walls, cpus, samples = timed(big, engine, runs)
        median = statistics.median(walls)
        figures[engine] = {
            "runs_s": [round(t, 3) for t in walls],
            "median_s": round(median, 3),
            "mb_per_s": round(size_mb / median, 1),
            "cpu_runs_s": [round(t, 3) for t in cpus],
            "cpu_median_s": round(statistics.median(cpus), 3),
            "mb_per_cpu_s": round(size_mb / statistics.median(cpus), 1),
        }
    memory = {f"{p.stat().st_size / 1e6:.0f} MB": fresh_process(p)["peak_rss_mb"] for p in (small, big)}
    best = figures[engines[0]]
    result = {
        "file_mb": round(size_mb, 1),
        "samples": samples,
        "engine": engines[0],
        **best,
        "target_mb_per_s": 300,
        "engines": figures,
        "peak_rss_mb": {k: round(v, 1) for k, v in memory.items()},
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    for engine, f in figures.items():
        print(
            f"decode {size_mb:.0f} MB ({samples} samples), {engine} engine: median {f['median_s']:.2f} s = "
            f"{f['mb_per_s']:.0f} MB/s wall (target >= 300), {f['mb_per_cpu_s']:.0f} MB/s of CPU time; "
            f"runs {', '.join(f'{t:.2f}' for t in f['runs_s'])}"  # type: ignore[attr-defined]
        )
    for name, rss in memory.items():
        print(f"peak RSS decoding the {name} log in a fresh process: {rss:.0f} MB")
    print(f"load average after the runs: {result['load_average']}")
    return result


if __name__ == "__main__":
    main()
