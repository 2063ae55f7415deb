"""Start-up: whole `esrp-report` processes, against bare interpreters doing the least they can.

    python -m benchmarks.startup

Targets: `esrp-report --help` and `esrp-report version` (and `--version`) take at most 0.15 s,
and `--help` at most 4 times a bare `python -c pass` (issue 36); `esrp-report inspect` of the
24-hour, 450-counter perfmon CSV (the CSV ingest benchmark's file) at most as long as a bare
Python process that imports Polars and reads the same file with an explicit schema; and
`esrp-report check` of a server folder holding that CSV as its 24-hour Stress log at most 1.5
times that `inspect` (issue 36: the folder is samples/EMAIL5 with its Stress log replaced).
Every case is a child process timed from start to exit; the cases are interleaved, after a
warm-up round, and each figure is the median of RUNS rounds (minimum and maximum kept). The CPU time
(user + system, of the child) is recorded beside the wall time: on a shared machine it moves
less with the load. The package's bytecode is compiled first, as an installed package has it.
"""

from __future__ import annotations

import compileall
import os
import resource
import shutil
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


CHECK_FOLDER = ROOT / "benchmarks" / "data" / "check-24h" / "EMAIL5"
STRESS_LOG = "Stress_2011_3_14_9_2_3.csv"  # the sample's 24-hour test, whose log the CSV stands in for


def check_folder(csv: Path) -> Path:
    """samples/EMAIL5 with the 24-hour CSV as its Stress test's counter log (same machine, same start)."""
    if (
        not (CHECK_FOLDER / STRESS_LOG).exists()
        or (CHECK_FOLDER / STRESS_LOG).stat().st_size != csv.stat().st_size
    ):
        shutil.rmtree(CHECK_FOLDER, ignore_errors=True)
        shutil.copytree(ROOT / "samples" / "EMAIL5", CHECK_FOLDER)
        shutil.copyfile(csv, CHECK_FOLDER / STRESS_LOG)
    return CHECK_FOLDER


def cases(csv: Path, folder: Path) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
        "esrp-report --help": [PROGRAM, "--help"],
        "esrp-report version": [PROGRAM, "version"],
        "esrp-report --version": [PROGRAM, "--version"],
        "esrp-report inspect (24 h CSV)": [PROGRAM, "inspect", str(csv)],
        "Polars read_csv, explicit schema (24 h CSV)": [sys.executable, "-c", POLARS_READ, str(csv)],
        "esrp-report check (folder with the 24 h CSV)": [PROGRAM, "check", str(folder)],
    }


# Exit statuses that are answers, not failures: check says 1 for a failing design (the 24-hour
# log's generated latencies fail the sample's thresholds) and 3 for an incomplete one.
VERDICTS = (0, 1, 3)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process, start to exit."""
    cpu = _children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if done.returncode not in (VERDICTS if "check" in args else (0,)):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}")
    return time.perf_counter() - started, _children_cpu_s() - cpu


def main(runs: int = RUNS) -> dict[str, object]:
    csv = FILE if FILE.exists() else generate_perfmon_csv(FILE)
    compileall.compile_dir(ROOT / "esrp_report", quiet=1)
    commands = cases(csv, check_folder(csv))
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
    cpu_medians = {name: statistics.median(times) for name, times in cpu.items()}
    ratios = {
        "help_over_pass": ("esrp-report --help", "python -c pass", 4.0),
        "check_over_inspect": (
            "esrp-report check (folder with the 24 h CSV)",
            "esrp-report inspect (24 h CSV)",
            1.5,
        ),
    }
    result: dict[str, object] = {
        "runs": runs,
        "file_mb": round(csv.stat().st_size / 1e6, 1),
        "median_s": medians,
        "cpu_median_s": cpu_medians,
        "min_s": {name: min(times) for name, times in wall.items()},
        "max_s": {name: max(times) for name, times in wall.items()},
        "inspect_over_polars": inspect / polars,
        **{key: medians[b] / medians[a] for key, (b, a, _) in ratios.items()},
        **{f"{key}_cpu": cpu_medians[b] / cpu_medians[a] for key, (b, a, _) in ratios.items()},
        "load_1min_before": load_before,
        "load_1min_after": round(os.getloadavg()[0], 2),
    }
    print(f"whole processes, median of {runs} interleaved runs (load {load_before} before)")
    for name, seconds in medians.items():
        span = f"{min(wall[name]) * 1000:.0f}-{max(wall[name]) * 1000:.0f}"
        print(f"  {name:45s} {seconds * 1000:7.0f} ms ({span:>9s})  (CPU {cpu_medians[name] * 1000:5.0f} ms)")
    print(f"  inspect / Polars = {result['inspect_over_polars']:.2f}  (target <= 1.00)")
    for key, (b, a, target) in ratios.items():
        print(
            f"  {b} / {a} = {result[key]:.2f} wall, {result[key + '_cpu']:.2f} CPU  (target <= {target:.2f})"
        )
    return result


if __name__ == "__main__":
    main()
