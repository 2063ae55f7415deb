"""Binary perfmon log (.blg) decoding speed and memory.

    python -m benchmarks.blg_decode

Target (issue "BLG"): a generated 1 GB Jetstress-shaped log (20 database instances, 600
instance counters, LogicalDisk/PhysicalDisk per database and log volume; 24 h at 15 s = 5,760
samples) decodes at >= 300 MB/s on one core, and peak memory for 100 MB and 1 GB inputs is
about the same. "Decode" = every sample cooked into float64 values, streamed batch by batch
(``BlgFile.batches``), nothing kept: what ``convert`` and the catalog do before writing.
Peak memory is measured in a fresh process per input (``ru_maxrss``).
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.generate import generate_jetstress_blg
from esrp_report.ingest.blg import BlgFile

DATA = Path(__file__).with_name("data")
SAMPLES_1GB = 5_760
COUNTERS = 600
RUNS = 3

_MEASURE = """
import json, resource, sys, time
from esrp_report.ingest.blg import BlgFile
started = time.perf_counter()
with BlgFile(sys.argv[1]) as blg:
    cells = sum(b.values.size for b in blg.batches())
print(json.dumps({"seconds": time.perf_counter() - started, "cells": cells,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
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


def decode(path: Path) -> int:
    with BlgFile(path) as blg:
        return sum(len(batch.stamps) for batch in blg.batches())


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
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        samples = decode(big)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    memory = {f"{p.stat().st_size / 1e6:.0f} MB": fresh_process(p)["peak_rss_mb"] for p in (small, big)}
    result = {
        "file_mb": round(size_mb, 1),
        "samples": samples,
        "runs_s": [round(t, 3) for t in times],
        "median_s": round(median, 3),
        "mb_per_s": round(size_mb / median, 1),
        "target_mb_per_s": 300,
        "peak_rss_mb": {k: round(v, 1) for k, v in memory.items()},
    }
    print(
        f"decode {size_mb:.0f} MB ({samples} samples): median {median:.2f} s = {size_mb / median:.0f} MB/s "
        f"(target >= 300); runs {', '.join(f'{t:.2f}' for t in times)}"
    )
    for name, rss in memory.items():
        print(f"peak RSS decoding the {name} log in a fresh process: {rss:.0f} MB")
    return result


if __name__ == "__main__":
    main()
