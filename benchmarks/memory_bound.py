"""Peak memory of every command that reads evidence, at 1x, 4x and 16x the input (issue 37, item 4).

    python -m benchmarks.memory_bound                      # 64 MB, 256 MB and 1 GB logs (~3 GB of disk)
    python -m benchmarks.memory_bound --base-mb 8          # a quick look: 8, 32 and 128 MB
    python -m benchmarks.memory_bound --sizes-mb 3000 --inputs csv --data /tmp/big   # a 3 GB CSV

Every command that reads a counter log runs on a perfmon CSV and a .blg of each size: `inspect`,
`inspect --json`, `inspect --averages` (.blg only: the option is for binary logs), `convert` (to
CSV), `check` of the results folder, and `catalog ingest` of it into a fresh catalog. `audit` reads
published documents, not counter logs: it runs on a published text repeated with junk lines between
the copies, at 4, 16 and 64 MB (a larger document is refused from its size: 64 MiB, `MAX_DOCUMENT_BYTES`).

The logs are `benchmarks.memory`'s (deterministic; beside the EMAIL5 Performance report, spread over
its window, so `check` aggregates every sample), written under benchmarks/data/memory-bound/ and
deleted afterwards unless ``--keep``. Each command is a child process under ``nice -n 19``; its peak
is the larger of the highest VmHWM of any process of its tree (catalog ingest parses in worker
processes) and the summed VmRSS of the tree, sampled every 100 ms (``benchmarks.memory.measure``).
A figure above its bound (BOUND_MB, or BOUNDS_MB for the command) fails the run (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from benchmarks.audit_document import junk_lines
from benchmarks.memory import REPORT, STEM, generate_blg, generate_csv, measure

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "memory-bound"
MB = 1_000_000
# The stated bounds (docs/security.md, "Memory bounded in every command"), whatever the input's size:
# one process for inspect, convert and check; catalog ingest is its writer plus the parsing workers
# (one per core), each holding a batch; audit follows the document up to the 64 MiB it accepts.
BOUND_MB = 1024
BOUNDS_MB = {"catalog-ingest": 1536, "audit": 1536}
FACTORS = (1, 4, 16)
INPUTS = ("csv", "blg", "audit")
COMMANDS = ("inspect", "inspect-json", "inspect-averages", "convert", "check", "catalog-ingest", "audit")
AUDIT_BASE_MB = 4  # 16x is 64 MB, just under the 64 MiB a document may have
VERDICTS = (0, 1, 3)  # pass, fail, incomplete: a run that ended; 2 is "could not be used"


def _commands(exe: str, kind: str, log: Path, work: Path) -> dict[str, list[str]]:
    folder = log.parent
    out = {
        "inspect": [exe, "inspect", str(log)],
        "inspect-json": [exe, "inspect", str(log), "--json"],
        "convert": [exe, "convert", str(log), "-o", str(work / "converted.csv")],
        "check": [exe, "check", str(folder), "--json"],
        "catalog-ingest": [exe, "catalog", "ingest", str(folder), "--catalog", str(work / "catalog")],
    }
    if kind == "blg":
        out["inspect-averages"] = [exe, "inspect", str(log), "--averages", "--json"]
    return out


def _audit_text(path: Path, size: int) -> Path:
    published = (ROOT / "tests" / "data" / "published" / "vmax-000.txt").read_text(encoding="utf-8")
    piece = published + "\n".join(junk_lines(2000, seed=1)) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for _ in range(size // len(piece)):
            out.write(piece)
    return path


def run_log(
    kind: str, size_mb: float, commands: tuple[str, ...], *, keep: bool, data: Path = DATA
) -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("esrp-report"))
    folder = data / f"{kind}-{size_mb:g}MB"
    log = folder / f"{STEM}.{kind}"
    if not log.exists():
        shutil.rmtree(folder, ignore_errors=True)
        (generate_csv if kind == "csv" else generate_blg)(log, int(size_mb * MB))
    shutil.copy(REPORT, folder / REPORT.name)
    work = data / "work"
    rows: dict[str, object] = {"input_mb": round(log.stat().st_size / MB)}
    for name, args in _commands(exe, kind, log, work).items():
        if name not in commands:
            continue
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        rows[name] = figure = measure(args)
        figure["peak_mb"] = max(int(figure["peak_rss_mb"]), int(figure["sampled_tree_rss_mb"]))  # type: ignore[call-overload]
        print(f"{kind} {rows['input_mb']} MB {name}: {figure}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def run_audit(size_mb: float, data: Path = DATA) -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("esrp-report"))
    text = _audit_text(data / f"audit-{size_mb:g}MB.txt", int(size_mb * MB))
    figure = measure([exe, "audit", str(text), "--json"])
    figure["peak_mb"] = max(int(figure["peak_rss_mb"]), int(figure["sampled_tree_rss_mb"]))  # type: ignore[call-overload]
    size = round(text.stat().st_size / MB)
    print(f"audit {size} MB: {figure}", flush=True)
    text.unlink()
    return {"input_mb": size, "audit": figure}


def main(
    base_mb: float = 64,
    *,
    sizes_mb: tuple[float, ...] | None = None,
    inputs: tuple[str, ...] = INPUTS,
    commands: tuple[str, ...] = COMMANDS,
    keep: bool = False,
    data: Path = DATA,
) -> dict[str, object]:
    sizes = sizes_mb or tuple(base_mb * f for f in FACTORS)
    figures: dict[str, object] = {"bound_mb": BOUND_MB, "bounds_mb": BOUNDS_MB}
    for kind in inputs:
        if kind == "audit":
            if "audit" in commands:
                scale = AUDIT_BASE_MB / base_mb
                figures["audit"] = {f"{s * scale:g}MB": run_audit(s * scale, data) for s in sizes}
            continue
        figures[kind] = {f"{s:g}MB": run_log(kind, s, commands, keep=keep, data=data) for s in sizes}
    return figures


def over_bound(figures: dict[str, object]) -> list[str]:
    """The command runs whose peak passed the bound, or that ended without a verdict or a description."""
    out = []
    for kind, by_size in figures.items():
        if kind not in INPUTS or not isinstance(by_size, dict):
            continue
        for size, rows in by_size.items():
            for name, figure in rows.items():
                if not isinstance(figure, dict):
                    continue
                bound = BOUNDS_MB.get(name, BOUND_MB)
                if figure["peak_mb"] > bound or figure["exit"] not in VERDICTS:
                    peak, status = figure["peak_mb"], figure["exit"]
                    out.append(f"{kind} {size} {name}: {peak} MB (bound {bound}), exit {status}")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-mb", type=float, default=64, help="the 1x log size in MB")
    parser.add_argument("--sizes-mb", type=float, nargs="+", help="these log sizes instead of 1x, 4x, 16x")
    parser.add_argument("--inputs", nargs="+", choices=INPUTS, default=list(INPUTS))
    parser.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS))
    parser.add_argument("--keep", action="store_true", help="keep the generated logs")
    parser.add_argument("--data", type=Path, default=DATA, help="where the inputs are written")
    options = parser.parse_args()
    result = main(
        options.base_mb,
        sizes_mb=tuple(options.sizes_mb) if options.sizes_mb else None,
        inputs=tuple(options.inputs),
        commands=tuple(options.commands),
        keep=options.keep,
        data=options.data,
    )
    print(json.dumps(result, indent=2))
    failed = over_bound(result)
    for line in failed:
        print(f"over its bound: {line}", file=sys.stderr)
    sys.exit(1 if failed else 0)
