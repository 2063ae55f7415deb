"""Perfmon CSV ingest against Polars' and pandas' own typed reads of the same file.

    python -m benchmarks.csv_ingest

Targets (issue "Core"): reading a 24-hour, ~450-counter, 5,760-sample CSV into the model takes at
most 1.3x Polars' explicit-schema read and at most half of pandas.read_csv.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import polars as pl

from benchmarks.generate import generate_perfmon_csv
from esrp_report.ingest.counter_csv import read_counter_csv

DATA = Path(__file__).with_name("data")
RUNS = 5


def _polars_typed(path: Path) -> object:
    header = pl.read_csv(path, n_rows=0).columns
    schema = {name: (pl.String if i == 0 else pl.Float64) for i, name in enumerate(header)}
    return pl.read_csv(path, schema=schema, null_values=[" "])


def _pandas(path: Path) -> object:
    return pd.read_csv(path, na_values=[" "])


def _interleaved(cases: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # warm-up: file in page cache, libraries loaded
    for _ in range(runs):
        for name, fn in cases.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    return times


def main() -> dict[str, object]:
    path = generate_perfmon_csv(DATA / "perfmon_24h_450.csv")
    size_mb = path.stat().st_size / 1e6
    log = read_counter_csv(path)
    times = _interleaved(
        {
            "esrp-report read_counter_csv": lambda: read_counter_csv(path),
            "polars read_csv (Float64 schema)": lambda: _polars_typed(path),
            "pandas read_csv": lambda: _pandas(path),
        },
        RUNS,
    )
    medians = {name: statistics.median(t) for name, t in times.items()}
    ours = medians["esrp-report read_counter_csv"]
    result = {
        "file_mb": round(size_mb, 1),
        "samples": log.sample_count,
        "counters": log.counters.height,
        "median_seconds": {k: round(v, 3) for k, v in medians.items()},
        "ratio_vs_polars": round(ours / medians["polars read_csv (Float64 schema)"], 3),
        "ratio_vs_pandas": round(ours / medians["pandas read_csv"], 3),
    }
    print(
        f"file: {size_mb:.1f} MB, {log.sample_count} samples x {log.counters.height} counters, "
        f"{RUNS} runs each"
    )
    for name, value in medians.items():
        print(f"  {name:36s} median {value:.3f} s")
    print(f"  ratio vs polars: {result['ratio_vs_polars']:.2f} (target <= 1.30)")
    print(f"  ratio vs pandas: {result['ratio_vs_pandas']:.2f} (target <= 0.50)")
    return result


if __name__ == "__main__":
    main()
