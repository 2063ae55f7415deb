"""Run every benchmark: `python -m benchmarks.run` (or `make bench`), about 15 minutes on 2 cores.

    python -m benchmarks.run                          # all of them, then the page
    python -m benchmarks.run --only csv_ingest blg_decode   # some; the others' figures are kept
    python -m benchmarks.run --only scaling --series blg    # some series of the scaling benchmark
    python -m benchmarks.run --page                   # only rewrite the page from results.json

Each benchmark module exposes `main() -> dict` and prints its own figures; this runner writes
them, with a description of the machine, to benchmarks/results.json, and then rewrites the marked
blocks of docs/benchmarks.md and README.md from that file (benchmarks/page.py). The 10 GB memory
benchmark is separate (`python -m benchmarks.memory`: 45 GB of disk, about 1.5 hours).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks import page
from benchmarks.scaling import SERIES

BENCHMARKS = (
    "csv_ingest",
    "blg_decode",
    "build_document",
    "audit_document",
    "catalog_ingest",
    "scaling",
    "startup",
    "convert",
)
LIBRARIES = ("polars", "pyarrow", "pandas", "weasyprint", "duckdb", "distributed", "pypdfium2")


def describe_machine() -> dict[str, object]:
    from esrp_report.ingest.perfmon import blg, counter_csv

    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8") if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if "model name" in line), "")
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    compiled = [
        name
        for name, built in (
            ("PDH-CSV parser", counter_csv._pdhcsv is not None),
            ("BLG cooking", blg.native_engine_built()),
        )
        if built
    ]
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_model": model or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "memory_gb": round(pages / 1e9, 1),
        "platform": platform.platform(),
        "versions": {"Python": sys.version.split()[0]} | {name: version(name) for name in LIBRARIES},
        "compiled": ", ".join(compiled) or "none (pure NumPy/PyArrow engines)",
    }


def main(only: tuple[str, ...] = BENCHMARKS, series: tuple[str, ...] | None = None) -> None:
    """Run ``only`` these benchmarks; ``series`` limits the scaling benchmark to some of its series
    (the other series' figures are kept)."""
    out = page.RESULTS
    results: dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    started = time.perf_counter()
    run = describe_machine() | {"load_before": round(os.getloadavg()[0], 2)}
    for name in only:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== benchmarks.{name}", flush=True)
        if name == "scaling" and series:
            results[f"benchmarks.{name}"] = results.get(f"benchmarks.{name}", {}) | module.main(series)
        else:
            results[f"benchmarks.{name}"] = module.main()
    run |= {"load_after": round(os.getloadavg()[0], 2), "total_s": round(time.perf_counter() - started)}
    if set(only) == set(BENCHMARKS) and not series:
        results["machine"] = run
        results["reruns"] = []
    else:  # the full run's record stays; the page lists what was measured again, and when
        named = [
            f"{name} ({', '.join(series)} series)" if name == "scaling" and series else name for name in only
        ]
        results.setdefault("reruns", []).append(run | {"only": named})
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    page.main()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these benchmarks")
    parser.add_argument(
        "--series", nargs="+", choices=SERIES, help="with --only scaling: run only these of its series"
    )
    parser.add_argument("--page", action="store_true", help="only rewrite the page from results.json")
    args = parser.parse_args()
    if args.page:
        page.main()
    else:
        main(tuple(args.only or BENCHMARKS), tuple(args.series) if args.series else None)
