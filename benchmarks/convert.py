"""`esrp-report convert` of the ~1 GB .blg of each layout, to CSV and to Parquet, against decoding it.

    python -m benchmarks.convert
    python -m benchmarks.convert --program OTHER/esrp-report   # another build's, for before/after

Target (issue 36, item 1): converting a 1 GB log of either layout to CSV or Parquet takes at most
1.5 times as long as decoding it (whole processes both), at least 300 MB/s of input.

The logs are ``benchmarks.blg_decode``'s (``log_file``: 5,760 Vista-layout samples, 1,024
raw-counter samples, 13,441 counters each). The yardstick is a whole process that decodes the
log with ``BlgFile.batches`` and keeps nothing (what ``blg_decode`` times in-process); the
commands are whole ``esrp-report convert`` processes writing into ``benchmarks/data``. Each
round runs the yardstick and every command once, alternating, after a warm-up round (the log in
the page cache); the figures are medians with min-max, wall and CPU time (user + system of the
child), and the load average, since the machine is shared. The output's bytes are written to
the disk: a CSV of 1.27 GB is more bytes than the log, and writing them is part of what a user
waits for, so ``write_floor_s`` times writing as many bytes of zeros (no formatting) beside it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.blg_decode import DATA, LAYOUTS, SAMPLES_1GB, log_file

RUNS = 3
TARGET_RATIO = 1.5
TARGET_MB_PER_S = 300
PROGRAM = str(Path(sys.executable).with_name("esrp-report"))
DECODE = """
import sys
from esrp_report.ingest.perfmon.blg import BlgFile
with BlgFile(sys.argv[1]) as blg:
    for _batch in blg.batches():
        pass
"""
WRITE_ZEROS = """
import sys
block = bytes(8 << 20)
left = int(sys.argv[2])
with open(sys.argv[1], "wb") as out:
    while left > 0:
        out.write(block[: min(left, len(block))])
        left -= len(block)
"""


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process, start to exit."""
    cpu = _children_cpu_s()
    started = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu_s() - cpu


def _summary(walls: list[float], cpus: list[float]) -> dict[str, object]:
    return {
        "median_s": round(statistics.median(walls), 2),
        "min_s": round(min(walls), 2),
        "max_s": round(max(walls), 2),
        "cpu_median_s": round(statistics.median(cpus), 2),
        "runs_s": [round(w, 2) for w in walls],
    }


def measure_layout(layout: str, program: str, runs: int, out: Path) -> dict[str, object]:
    log = log_file(SAMPLES_1GB[layout], layout)
    size_mb = log.stat().st_size / 1e6
    csv, parquet = out / f"{layout}.csv", out / f"{layout}.parquet"
    commands = {
        "decode": [sys.executable, "-c", DECODE, str(log)],
        "csv": [program, "convert", str(log), "-o", str(csv)],
        "parquet": [program, "convert", str(log), "-o", str(parquet)],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    floor: list[float] = []
    csv_bytes = 0
    for round_ in range(runs + 1):  # round 0 warms the page cache and is not counted
        for name, args in commands.items():
            for old in (csv, parquet):  # each command writes a new file, as a user's would
                shutil.rmtree(old) if old.is_dir() else old.unlink(missing_ok=True)
            wall, cpu = timed(args)
            if name == "csv":
                csv_bytes = csv.stat().st_size
            if round_:
                walls[name].append(wall)
                cpus[name].append(cpu)
        zeros = out / "zeros.bin"
        wall, _cpu = timed([sys.executable, "-c", WRITE_ZEROS, str(zeros), str(csv_bytes)])
        zeros.unlink()
        if round_:
            floor.append(wall)
    figures = {name: _summary(walls[name], cpus[name]) for name in commands}
    decode = statistics.median(walls["decode"])
    decode_cpu = statistics.median(cpus["decode"])
    for name in ("csv", "parquet"):
        median = statistics.median(walls[name])
        figures[name] |= {
            "ratio_to_decode": round(median / decode, 2),
            "cpu_ratio_to_decode": round(statistics.median(cpus[name]) / decode_cpu, 2),
            "mb_per_s": round(size_mb / median, 1),
        }
    return {
        "file_mb": round(size_mb, 1),
        "csv_mb": round(csv_bytes / 1e6, 1),
        "write_floor_s": round(statistics.median(floor), 2),
        **figures,
    }


def main(runs: int = RUNS, program: str = PROGRAM) -> dict[str, object]:
    load_before = [round(x, 2) for x in os.getloadavg()]
    DATA.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DATA, prefix="convert-") as folder:
        layouts = {layout: measure_layout(layout, program, runs, Path(folder)) for layout in LAYOUTS}
    result: dict[str, object] = {
        **layouts,
        "program": program,
        "target_ratio": TARGET_RATIO,
        "target_mb_per_s": TARGET_MB_PER_S,
        "load_average_before": load_before,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    for layout, figures in layouts.items():
        decode: dict[str, object] = figures["decode"]  # type: ignore[assignment]
        print(
            f"{layout}: {figures['file_mb']:.0f} MB log; decode-only (whole process) median "
            f"{decode['median_s']} s ({decode['min_s']}-{decode['max_s']}), CPU {decode['cpu_median_s']} s"
        )
        for name in ("csv", "parquet"):
            f: dict[str, object] = figures[name]  # type: ignore[assignment]
            print(
                f"{layout}: convert to {name}: median {f['median_s']} s ({f['min_s']}-{f['max_s']}) = "
                f"{f['mb_per_s']} MB/s, {f['ratio_to_decode']}x decode (target <= {TARGET_RATIO}); "
                f"CPU {f['cpu_median_s']} s = {f['cpu_ratio_to_decode']}x decode's"
            )
        floor = figures["write_floor_s"]
        print(f"{layout}: writing the CSV's {figures['csv_mb']:.0f} MB as zeros alone: {floor} s")
    print(f"load average before {load_before}, after {result['load_average']}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="timed rounds after the warm-up")
    parser.add_argument("--program", default=PROGRAM, help="the esrp-report to time (another build's)")
    args = parser.parse_args()
    main(args.runs, args.program)
