"""Build a 10-server solution with 24-hour stress counter logs (~0.5 GB of CSV) to HTML and PDF.

    python -m benchmarks.build_document

The solution is the VMAX sample (samples/vmax.toml) with, for every server, a perfmon CSV for the
24-hour stress test (15-second samples, the report's collection window) written next to its
report. Each phase is timed in a child process (`esrp-report build`), and the child's peak
resident memory is read from the kernel (ru_maxrss). Targets: < 15 s wall, < 2 GB peak.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from esrp_report.ingest.report_html import read_report
from esrp_report.synth.jetstress_counters import synthesize
from esrp_report.synth.perfmon_csv import write_pdh_csv

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "solution24h"


def generate() -> int:
    """The sample solution plus 24-hour stress CSVs; returns the bytes of counter logs."""
    if (DATA / "vmax.toml").exists():
        return sum(p.stat().st_size for p in DATA.rglob("*.csv"))
    shutil.rmtree(DATA, ignore_errors=True)
    (DATA / "vmax").mkdir(parents=True)
    shutil.copy(ROOT / "samples" / "vmax.toml", DATA / "vmax.toml")
    shutil.copytree(ROOT / "samples" / "branding", DATA / "branding")
    shutil.copytree(ROOT / "samples" / "EMAIL5", DATA / "EMAIL5")
    for folder in sorted((ROOT / "samples" / "vmax").iterdir()):
        shutil.copytree(folder, DATA / "vmax" / folder.name)
    for stress in sorted(DATA.rglob("Stress_*.html")):
        run = read_report(stress)
        log = synthesize(run, interval_s=15.0)
        write_pdh_csv(
            stress.with_suffix(".csv"),
            log.paths,
            log.timestamps,
            log.values,
            time_zone_name="Eastern Standard Time",
            bias_minutes=300,
        )
    return sum(p.stat().st_size for p in DATA.rglob("*.csv"))


def _timed(args: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(args, check=True, capture_output=True)
    elapsed = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak_kb, before) / 1024


def main(repeats: int = 3) -> dict[str, object]:
    size = generate()
    print(f"counter logs: {size / 1e6:.0f} MB")
    exe = str(Path(sys.executable).with_name("esrp-report"))
    out = DATA.parent / "solution24h-out"
    figures: dict[str, object] = {"counter_log_mb": round(size / 1e6, 1)}
    for fmt in ("html", "html,pdf"):
        times, peaks = [], []
        for _ in range(repeats):
            elapsed, peak = _timed([exe, "build", str(DATA / "vmax.toml"), "-o", str(out), "--format", fmt])
            times.append(elapsed)
            peaks.append(peak)
        median = statistics.median(times)
        print(
            f"build --format {fmt}: median {median:.1f} s over {repeats} runs, peak RSS {max(peaks):.0f} MB"
        )
        figures[fmt] = {
            "median_s": round(median, 2),
            "runs_s": [round(t, 2) for t in times],
            "peak_rss_mb": round(max(peaks)),
        }
    pages = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from pypdf import PdfReader; print(len(PdfReader('{out / 'vmax.pdf'}').pages))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    figures["pdf_pages"] = int(pages)
    print(f"PDF pages: {pages}")
    return figures


if __name__ == "__main__":
    main()
