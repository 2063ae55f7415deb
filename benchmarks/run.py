"""Run every benchmark: `python -m benchmarks.run` (or `make bench`).

Each benchmark module exposes `main() -> dict` and prints its own figures; this runner also
writes them to benchmarks/results.json so the README and docs can quote one source.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
from pathlib import Path

BENCHMARKS = [
    "benchmarks.csv_ingest",
    "benchmarks.build_document",
    "benchmarks.audit_document",
    "benchmarks.blg_decode",
    "benchmarks.catalog_ingest",
]


def main() -> None:
    results: dict[str, object] = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
    }
    for name in BENCHMARKS:
        module = importlib.import_module(name)
        print(f"== {name}")
        results[name] = module.main()
    out = Path(__file__).with_name("results.json")
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
