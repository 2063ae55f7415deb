"""Ingest an archive of Jetstress runs into a catalog: fresh, unchanged, and on a Dask cluster.

    python -m benchmarks.catalog_ingest            # 100 and 1,000 runs
    python -m benchmarks.catalog_ingest --runs 100 # one size only

The archive is generated: designs of 10 servers each, every server a Performance test as
Jetstress leaves it (HTML report, result XML, perfmon CSV of the 2-hour test at 15 s: 498
samples × 760 counters, 2.1 MB; JetstressConfig.xml) taken from the VMAX sample's ten servers;
one design in ten is a .zip archive. Each ingest runs `esrp-report catalog ingest` as a child
process on a fresh catalog (wall time measured here); the re-ingest runs it again unchanged; the
Dask run starts a LocalCluster with 2 worker processes over TCP loopback and compares the
resulting catalog with the local one, table by table and series by series.
Targets (1,000 runs, 2 cores): < 5 min fresh, < 10 s unchanged, Dask catalog identical.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from esrp_report.catalog.query import contents

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "catalog"
VERSION = ".generated-v1"  # bump when the generator changes
SERVERS = [
    "EMAIL2",
    "EMAIL3",
    "EMAIL4",
    "EMAIL5",
    "EMAIL6",
    "EMAIL7",
    "EMAIL8",
    "EMAIL9",
    "EMAIL10",
    "EMAIL11",
]
PERFORMANCE = "Performance_2011_3_11_13_27_46"


def _server_folder(server: str) -> Path:
    return ROOT / "samples" / ("EMAIL5" if server == "EMAIL5" else f"vmax/{server}")


def generate(runs: int) -> tuple[Path, int]:
    """``runs // 10`` designs of 10 servers; returns the archive folder and its size in bytes."""
    archive = DATA / f"runs-{runs}"
    marker = DATA / f"runs-{runs}{VERSION}"
    if not marker.exists():
        shutil.rmtree(archive, ignore_errors=True)
        archive.mkdir(parents=True)
        names = [f"{PERFORMANCE}.html", f"{PERFORMANCE}.xml", f"{PERFORMANCE}.csv", "JetstressConfig.xml"]
        for design in range(runs // 10):
            label = f"design-{design:03d}"
            if design % 10 == 9:
                with zipfile.ZipFile(archive / f"{label}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
                    for server in SERVERS:
                        for name in names:
                            zf.write(_server_folder(server) / name, f"{server}/{name}")
                continue
            for server in SERVERS:
                target = archive / label / server
                target.mkdir(parents=True)
                for name in names:
                    shutil.copyfile(_server_folder(server) / name, target / name)
        marker.touch()
    size = sum(p.stat().st_size for p in archive.rglob("*") if p.is_file())
    return archive, size


def _ingest(archive: Path, catalog: Path, *extra: str) -> float:
    command = [sys.executable, "-c", "from esrp_report.cli.main import main; main()", "catalog", "ingest"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, str(archive), "--catalog", str(catalog), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed


def measure(runs: int, *, dask: bool = True, repeats: int = 3) -> dict[str, object]:
    archive, size = generate(runs)
    work = DATA / f"catalog-{runs}"
    fresh: list[float] = []
    for _ in range(1 if runs >= 1000 else repeats):
        shutil.rmtree(work, ignore_errors=True)
        fresh.append(_ingest(archive, work))
    unchanged = [_ingest(archive, work) for _ in range(repeats)]
    result: dict[str, object] = {
        "runs": runs,
        "archive_mb": round(size / 1e6, 1),
        "fresh_s": [round(t, 2) for t in fresh],
        "fresh_median_s": round(statistics.median(fresh), 2),
        "runs_per_s": round(runs / statistics.median(fresh), 1),
        "unchanged_s": [round(t, 2) for t in unchanged],
        "unchanged_median_s": round(statistics.median(unchanged), 2),
    }
    print(
        f"{runs:,} runs ({size / 1e6:,.0f} MB): fresh {statistics.median(fresh):.1f} s "
        f"({runs / statistics.median(fresh):.1f} runs/s), unchanged {statistics.median(unchanged):.2f} s"
    )
    if dask:
        from distributed import LocalCluster

        other = DATA / f"catalog-{runs}-dask"
        shutil.rmtree(other, ignore_errors=True)
        with LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            protocol="tcp",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            dask_s = _ingest(archive, other, "--dask", cluster.scheduler_address)
        same = contents(other) == contents(work)
        result.update(dask_s=round(dask_s, 2), dask_identical=same)
        print(f"  Dask LocalCluster, 2 workers: {dask_s:.1f} s; catalog identical to local: {same}")
        if not same:
            raise SystemExit("the Dask catalog differs from the local one")
    return result


def main(sizes: tuple[int, ...] = (100, 1000)) -> dict[str, object]:
    return {f"runs_{n}": measure(n) for n in sizes}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, action="append", help="archive size in runs (multiple of 10)")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    for n in args.runs or [100, 1000]:
        measure(n, dask=not args.no_dask)
