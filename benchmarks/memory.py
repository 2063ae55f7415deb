"""Peak memory of ``check`` and ``convert`` on huge counter logs (a CSV and a .blg of ~10 GB).

    python -m benchmarks.memory                 # 10 GB inputs (needs ~45 GB free disk)
    python -m benchmarks.memory --sizes 1 2 10  # memory growth: 1, 2 and 10 GB
    python -m benchmarks.memory --sizes 1 2 10 --inputs blg --commands convert-parquet  # one case

Each input sits in a results folder beside the EMAIL5 Performance report, named as the counter
log the report names, its samples spread over the report's collection window (so ``check``
aggregates every sample). The CSV is the Jetstress-shaped 450-counter log of
``generate.jetstress_counter_paths`` written chunk by chunk (deterministic: chunk k draws from
seed (0, k)); the .blg is ``generate.generate_jetstress_blg`` with 600 counters per instance.
Inputs are written under benchmarks/data/memory/ (not committed) and deleted afterwards unless
``--keep``.

Every command runs as a child process under ``nice -n 19``. Peak RSS is the high-water mark of
the command's own memory (VmHWM from /proc, mapped file pages included), read every 100 ms until
it exits, and as a cross-check the peak of the summed VmRSS of its process tree at those
samples. (wait4's ``ru_maxrss`` is not used: a child started by vfork inherits the parent's
high-water mark at exec, so it would report this script's own peak.) Target (issue 8): < 1 GB on
the 10 GB inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.generate import _significant, generate_jetstress_blg, jetstress_counter_paths

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "memory"
REPORT = ROOT / "samples" / "EMAIL5" / "Performance_2011_3_11_13_27_46.html"
STEM = "Performance_2011_3_11_13_27_46"
# The report's collection window (local time, EST, bias 300); the logs' samples fill it.
WINDOW_START = datetime(2011, 3, 11, 13, 32, 30)
WINDOW_SECONDS = 7_180
CSV_CHUNK_ROWS = 20_000
BLG_SAMPLE_BYTES = 180_200  # one 600-counter sample record, as written
GB = 1_000_000_000
INPUTS = ("csv", "blg")
COMMANDS = ("check", "convert-csv", "convert-parquet")


def generate_csv(path: Path, size: int, *, counters: int = 450, seed: int = 0) -> Path:
    """A perfmon CSV of about ``size`` bytes, written chunk by chunk (bounded memory)."""
    paths, typical = jetstress_counter_paths(counters)
    digits = np.random.default_rng(seed).integers(6, 11, size=counters)
    rates = np.array(["/sec" in p for p in paths])

    def chunk(k: int, rows: int, first_row: int, interval_us: int) -> bytes:
        rng = np.random.default_rng([seed, k])
        noise = rng.lognormal(mean=0.0, sigma=1.0, size=(rows, counters)) * typical[:, 1]
        values = _significant(typical[:, 0] * np.clip(1.0 + noise - typical[:, 1], 0.0, None), digits)
        values[rng.random(size=values.shape) < 0.0005] = np.nan
        if first_row == 0:
            values[0, rates] = np.nan
        micros = (np.arange(first_row, first_row + rows, dtype=np.int64) * interval_us) // 1000 * 1000
        start = int((WINDOW_START - datetime(1970, 1, 1)).total_seconds() * 1_000_000)
        stamps = pl.Series("t", micros + start).cast(pl.Datetime("us")).dt.strftime("%m/%d/%Y %H:%M:%S%.3f")
        frame = pl.DataFrame({f"v{i}": values[:, i] for i in range(counters)}).fill_nan(None)
        return (
            frame.insert_column(0, stamps)
            .write_csv(
                None, include_header=False, quote_style="always", null_value=" ", line_terminator="\r\n"
            )
            .encode()
        )

    per_row = len(chunk(0, 1_000, 0, 1_000)) / 1_000
    total_rows = int(size / per_row)
    interval_us = WINDOW_SECONDS * 1_000_000 // total_rows
    header = ",".join(f'"{c}"' for c in ["(PDH-CSV 4.0) (Eastern Standard Time)(300)", *paths]) + "\r\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(header.encode())
        for k, first in enumerate(range(0, total_rows, CSV_CHUNK_ROWS)):
            out.write(chunk(k, min(CSV_CHUNK_ROWS, total_rows - first), first, interval_us))
    return path


def generate_blg(path: Path, size: int) -> Path:
    """A Jetstress-shaped .blg of about ``size`` bytes, its samples over the report's window."""
    samples = max(2, size // BLG_SAMPLE_BYTES)
    interval = round(WINDOW_SECONDS / samples, 3)
    path.parent.mkdir(parents=True, exist_ok=True)
    return generate_jetstress_blg(
        path,
        samples=samples,
        interval=interval,
        counters=600,
        start=WINDOW_START,
        utc_offset_minutes=-300,
    )


def _tree_rss_kb(root: int) -> tuple[int, int]:
    """Summed VmRSS (kB) of a process and its descendants, and the largest VmHWM among them."""
    total, high, stack = 0, 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    high = max(high, int(line.split()[1]))
            for task in Path(f"/proc/{pid}/task").iterdir():
                stack.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total, high


def measure(args: list[str]) -> dict[str, object]:
    """Wall seconds, exit status and peak RSS (MB) of one command run under ``nice -n 19``."""
    start = time.perf_counter()
    process = subprocess.Popen(["nice", "-n", "19", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampled = high = 0
    status = None
    while status is None:
        total, mark = _tree_rss_kb(process.pid)
        sampled, high = max(sampled, total), max(high, mark)
        pid, code, _usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            status = os.waitstatus_to_exitcode(code)
            break
        time.sleep(0.1)
    process.returncode = status
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    return {
        "wall_s": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round(high / 1024),
        "sampled_tree_rss_mb": round(sampled / 1024),
        "exit": status,
        **({"stderr": error[-400:]} if status not in (0, 1) else {}),
    }


def run(
    size_gb: float,
    *,
    keep: bool = False,
    inputs: tuple[str, ...] = INPUTS,
    commands: tuple[str, ...] = COMMANDS,
) -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("esrp-report"))
    figures: dict[str, object] = {}
    for kind in inputs:
        folder = DATA / f"{kind}-{size_gb:g}GB"
        log = folder / f"{STEM}.{kind}"
        if not log.exists():
            shutil.rmtree(folder, ignore_errors=True)
            began = time.perf_counter()
            (generate_csv if kind == "csv" else generate_blg)(log, int(size_gb * GB))
            took = time.perf_counter() - began
            print(f"generated {log.name} ({log.stat().st_size / GB:.2f} GB) in {took:.0f} s")
        shutil.copy(REPORT, folder / REPORT.name)
        rows: dict[str, object] = {"input_gb": round(log.stat().st_size / GB, 2)}
        out = DATA / "out"
        out.mkdir(parents=True, exist_ok=True)
        if "check" in commands:
            rows["check"] = measure([exe, "check", str(folder), "--json"])
        for fmt in ("csv", "parquet"):
            if f"convert-{fmt}" not in commands:
                continue
            target = out / f"converted.{fmt}"
            rows[f"convert-{fmt}"] = figure = measure([exe, "convert", str(log), "-o", str(target)])
            if target.is_dir():  # a Parquet dataset (past convert.PARQUET_CHUNK_BUDGET column chunks)
                figure["parquet_parts"] = len(list(target.glob("*.parquet")))
                shutil.rmtree(target)
            target.unlink(missing_ok=True)
        for name, value in rows.items():
            print(f"{kind} {size_gb:g} GB {name}: {value}")
        figures[kind] = rows
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return figures


def main(
    sizes: tuple[float, ...] = (10,),
    *,
    keep: bool = False,
    inputs: tuple[str, ...] = INPUTS,
    commands: tuple[str, ...] = COMMANDS,
) -> dict[str, object]:
    return {f"{size:g}GB": run(size, keep=keep, inputs=inputs, commands=commands) for size in sizes}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[10.0], help="input sizes in GB")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    parser.add_argument("--inputs", nargs="+", choices=INPUTS, default=list(INPUTS), help="logs to generate")
    parser.add_argument(
        "--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS), help="commands to measure"
    )
    options = parser.parse_args()
    result = main(
        tuple(options.sizes),
        keep=options.keep,
        inputs=tuple(options.inputs),
        commands=tuple(options.commands),
    )
    print(json.dumps(result, indent=2))
