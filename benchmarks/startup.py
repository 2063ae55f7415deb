"""Start-up: whole `esrp-report` processes, against bare interpreters doing the least they can.

    python -m benchmarks.startup

Targets: `esrp-report --help` and `esrp-report version` (and `--version`) take at most 0.15 s,
and `esrp-report inspect` of the 24-hour, 450-counter perfmon CSV (the CSV ingest benchmark's
file) at most as long as a bare Python process that imports Polars and reads the same file with an
explicit schema. Every case is a child process timed from start to exit; the cases are
interleaved, after a warm-up round, and each figure is the median of RUNS rounds. The CPU time
(user + system, of the child) is recorded beside the wall time: on a shared machine it moves
less with the load. The package's bytecode is compiled first, as an installed package has it.
"""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.csv_ingest import FILE
from benchmarks.generate import generate_perfmon_csv

ROOT = Path(__file__).resolve().parent.parent
RUNS = 15
PROGRAM = str(Path(sys.executable).with_name("esrp-report"))
# What a careful Polars user writes (benchmarks/csv_ingest.py's baseline), as a whole program.
POLARS_READ = """
import sys
import polars as pl
header = pl.read_csv(sys.argv[1], n_rows=0).columns
schema = {name: (pl.String if i == 0 else pl.Float64) for i, name in enumerate(header)}
pl.read_csv(sys.argv[1], schema=schema, null_values=[" "])
"""


def cases(csv: Path) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
        "esrp-report --help": [PROGRAM, "--help"],
        "esrp-report version": [PROGRAM, "version"],
        "esrp-report --version": [PROGRAM, "--version"],
        "esrp-report inspect (24 h CSV)": [PROGRAM, "inspect", str(csv)],
        "Polars read_csv, explicit schema (24 h CSV)": [sys.executable, "-c", POLARS_READ, str(csv)],
    }


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process, start to exit."""
    cpu = _children_cpu_s()
    started = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started, _children_cpu_s() - cpu


def main(runs: int = RUNS) -> dict[str, object]:
    csv = FILE if FILE.exists() else generate_perfmon_csv(FILE)
    compileall.compile_dir(ROOT / "esrp_report", quiet=1)
    commands = cases(csv)
    for args in commands.values():
        timed(args)  # warm-up: files in the page cache
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    load_before = round(os.getloadavg()[0], 2)
    for _ in range(runs):
        for name, args in commands.items():
            seconds, cpu_seconds = timed(args)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
    # Full precision in results.json: the page rounds when it renders (and compares unrounded).
    medians = {name: statistics.median(times) for name, times in wall.items()}
    inspect, polars = (
        medians["esrp-report inspect (24 h CSV)"],
        medians["Polars read_csv, explicit schema (24 h CSV)"],
    )
    result: dict[str, object] = {
        "runs": runs,
        "file_mb": round(csv.stat().st_size / 1e6, 1),
        "median_s": medians,
        "cpu_median_s": {name: statistics.median(times) for name, times in cpu.items()},
        "inspect_over_polars": inspect / polars,
        "load_1min_before": load_before,
        "load_1min_after": round(os.getloadavg()[0], 2),
    }
    print(f"whole processes, median of {runs} interleaved runs (load {load_before} before)")
    for name, seconds in medians.items():
        print(f"  {name:45s} {seconds * 1000:7.0f} ms  (CPU {statistics.median(cpu[name]) * 1000:5.0f} ms)")
    print(f"  inspect / Polars = {result['inspect_over_polars']:.2f}  (target <= 1.00)")
    return result


if __name__ == "__main__":
    main()
