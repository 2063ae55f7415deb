"""Perfmon CSV ingest against Polars' and pandas' own typed reads of the same file.

    python -m benchmarks.csv_ingest

Targets: reading a 24-hour, 450-counter, 5,760-sample CSV into the model takes at most 1.3x
Polars' explicit-schema read (a/b) and at most half of ``pandas.read_csv`` (a/c). The runs are
interleaved (a, b, c, a, b, c, ...) so a busy moment of a shared machine hits every reader alike.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import polars as pl

from benchmarks.generate import generate_perfmon_csv
from esrp_report.ingest.perfmon import counter_csv
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv

DATA = Path(__file__).with_name("data")
FILE = DATA / "perfmon_24h_450c_15s_seed0_v2.csv"  # bump the suffix when the generator changes
RUNS = 5
OURS = "a  read_counter_csv (model)"
POLARS = "b  polars.read_csv (schema)"
PANDAS = "c  pandas.read_csv"
OURS_PYARROW = "a' read_counter_csv, pyarrow engine"


def polars_typed(path: Path) -> pl.DataFrame:
    """Polars with the schema a careful user would give: String timestamp, Float64 counters."""
    header = pl.read_csv(path, n_rows=0).columns
    schema = {name: (pl.String if i == 0 else pl.Float64) for i, name in enumerate(header)}
    return pl.read_csv(path, schema=schema, null_values=[" "])


def pandas_plain(path: Path) -> pd.DataFrame:
    """pandas' default C parser; ``na_values`` so that missing samples come back as NaN floats."""
    return pd.read_csv(path, na_values=[" "])


def interleaved(cases: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for read in cases.values():
        read()  # warm-up: file in the page cache, libraries loaded
    for _ in range(runs):
        for name, read in cases.items():
            gc.collect()
            started = time.perf_counter()
            result = read()
            times[name].append(time.perf_counter() - started)
            del result
    return times


def main(runs: int = RUNS) -> dict[str, object]:
    path = FILE if FILE.exists() else generate_perfmon_csv(FILE)
    log = read_counter_csv(path)
    cases: dict[str, Callable[[], object]] = {
        OURS: lambda: read_counter_csv(path),
        POLARS: lambda: polars_typed(path),
        PANDAS: lambda: pandas_plain(path),
    }
    if counter_csv._pdhcsv is not None:  # the default engine is the compiled one: show PyArrow's too
        cases[OURS_PYARROW] = lambda: read_counter_csv(path, engine="pyarrow")
    medians = {name: statistics.median(t) for name, t in interleaved(cases, runs).items()}
    ours = medians[OURS]
    result: dict[str, object] = {
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "samples": log.sample_count,
        "counters": log.counters.height,
        "missing_cells": int(sum(log.samples.drop("timestamp").null_count().row(0))),
        "default_engine": "native" if counter_csv._pdhcsv is not None else "pyarrow",
        "runs": runs,
        "median_seconds": {name.split(" ", 1)[1].strip(): round(v, 4) for name, v in medians.items()},
        "a_over_b": round(ours / medians[POLARS], 3),
        "a_over_c": round(ours / medians[PANDAS], 3),
    }
    if OURS_PYARROW in medians:
        result["pyarrow_engine_over_b"] = round(medians[OURS_PYARROW] / medians[POLARS], 3)
        result["pyarrow_engine_over_c"] = round(medians[OURS_PYARROW] / medians[PANDAS], 3)
    print(
        f"{path.name}: {result['file_mb']} MB, {log.sample_count} samples x {log.counters.height} counters, "
        f"{result['missing_cells']} missing cells; median of {runs} interleaved runs each"
    )
    for name, value in medians.items():
        print(f"  {name:38s} {value * 1000:8.1f} ms")
    for label, ratio, target in (("a/b", result["a_over_b"], 1.3), ("a/c", result["a_over_c"], 0.5)):
        verdict = "met" if isinstance(ratio, float) and ratio <= target else "MISSED"
        print(f"  {label} = {ratio:.2f}  (target <= {target:.2f}: {verdict})")
    if OURS_PYARROW in medians:
        print(
            f"  pyarrow engine: a'/b = {result['pyarrow_engine_over_b']:.2f}, "
            f"a'/c = {result['pyarrow_engine_over_c']:.2f}"
        )
    return result


if __name__ == "__main__":
    main()
