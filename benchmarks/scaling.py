"""How cost grows with the work: 1x, 2x, 4x, 8x the samples; 1, 10, 40, 100 servers.

    python -m benchmarks.scaling                      # every series
    python -m benchmarks.scaling --series csv blg     # some of them
    python -m benchmarks.scaling --servers 1 10       # smaller build series

Each series measures its baseline in the same run, interleaved with the measured command, so a
busy moment of a shared machine falls on both:

- csv: reading a perfmon CSV of 24 h x 1, 2, 4, 8 (5,760 to 46,080 samples x 450 counters) into
  the model, against Polars' explicit-schema read and pandas' ``read_csv`` of the same file;
- blg: decoding a Jetstress-shaped ``.blg`` (13,441 counters), every value cooked, against
  reading the same file's bytes (the floor any decoder pays), in both sample layouts: Vista
  (PERF_DATA_BLOCKs) of 720 x 1, 2, 4, 8 samples (130 MB to 1 GB) and raw-counter (PDH raw
  values, wildcard arrays) of 128 x 1, 2, 4, 8 samples (122 MB to 973 MB);
- build: ``esrp-report build --format html,pdf`` of solutions of 1, 10, 40 and 100 servers with
  the performance test's counter log only (the VMAX sample's evidence), and of 1, 10 and 40
  servers with a 24-hour stress counter log per server as well (60 MB each), against ``esrp-report
  check`` of the same folders (reading and judging the evidence, no document); each built PDF is
  then audited (``esrp-report audit``) against PDFium's text extraction of the same file.

Solutions of more than ten servers repeat the ten VMAX servers under new machine names (the
machine name is rewritten in every report, result XML and counter log), so every server is read,
judged and laid out on its own.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import statistics
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import blg_decode, build_document, csv_ingest
from benchmarks.generate import generate_perfmon_csv
from esrp_report.ingest.perfmon.blg import native_engine_built
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "scaling"
VERSION = ".generated-v2"  # bump when the generators or the manifest change
SERIES = ("csv", "blg", "build")
FACTORS = (1, 2, 4, 8)
BLG_BASE_SAMPLES = {"vista": 720, "raw": 128}  # x FACTORS; the 8x logs are blg_decode's 1 GB ones
SERVERS = {"performance": (1, 10, 40, 100), "stress24h": (1, 10, 40)}
ONE_SERVER = "EMAIL5"  # the server whose reports are transcribed from the published appendix
_TEXT_SUFFIXES = {".html", ".xml", ".csv"}


def _exe() -> str:
    return str(Path(sys.executable).with_name("esrp-report"))


def _load() -> float:
    return round(os.getloadavg()[0], 2)


# --- CSV ingest -----------------------------------------------------------------------------------


def csv_file(factor: int) -> Path:
    if factor == 1:
        return csv_ingest.FILE if csv_ingest.FILE.exists() else generate_perfmon_csv(csv_ingest.FILE)
    path = csv_ingest.DATA / f"perfmon_{24 * factor}h_450c_15s_seed0_v2.csv"
    return path if path.exists() else generate_perfmon_csv(path, hours=24 * factor)


def _interleaved_point(
    factor: int, samples: int, path: Path, cases: dict[str, Callable[[], object]], runs: int
) -> tuple[dict[str, Any], dict[str, float], float]:
    """One size of a series: the cases' interleaved runs and their medians, with the file's MB."""
    load = _load()
    times = csv_ingest.interleaved(cases, runs)
    medians = {name: statistics.median(t) for name, t in times.items()}
    mb = path.stat().st_size / 1e6
    point = {
        "factor": factor,
        "samples": samples,
        "file_mb": mb,
        "median_s": medians,
        "runs_s": times,
        "load_before": load,
    }
    return point, medians, mb


def csv_series(factors: tuple[int, ...] = FACTORS, runs: int = 5) -> dict[str, object]:
    points = []
    for factor in factors:
        path = csv_file(factor)
        samples = read_counter_csv(path).sample_count
        cases: dict[str, Callable[[], object]] = {
            "ours": lambda p=path: read_counter_csv(p),
            "polars": lambda p=path: csv_ingest.polars_typed(p),
            "pandas": lambda p=path: csv_ingest.pandas_plain(p),
        }
        point, medians, mb = _interleaved_point(factor, samples, path, cases, runs)
        point["ours_over_polars"] = medians["ours"] / medians["polars"]
        point["ours_over_pandas"] = medians["ours"] / medians["pandas"]
        point["ours_mb_per_s"] = mb / medians["ours"]
        points.append(point)
        print(
            f"csv {factor}x ({samples} samples, {mb:.0f} MB): ours {medians['ours'] * 1000:.0f} ms, "
            f"Polars {medians['polars'] * 1000:.0f} ms, pandas {medians['pandas'] * 1000:.0f} ms"
        )
    _growth(points, "factor", lambda p: p["median_s"]["ours"])
    return {"runs": runs, "points": points}


# --- BLG decode -----------------------------------------------------------------------------------


def read_bytes(path: Path) -> int:
    """Every byte of the file read into one reused 64 MB buffer: the floor of any decoder."""
    buffer = bytearray(64 << 20)
    total = 0
    with path.open("rb", buffering=0) as stream:
        while count := stream.readinto(buffer):
            total += count
    return total


def blg_points(layout: str, factors: tuple[int, ...], runs: int) -> list[dict[str, Any]]:
    points = []
    for factor in factors:
        path = blg_decode.log_file(BLG_BASE_SAMPLES[layout] * factor, layout)
        samples = blg_decode.decode(path)  # warm-up: the file in the page cache
        cases: dict[str, Callable[[], object]] = {
            "decode": lambda p=path: blg_decode.decode(p),
            "read": lambda p=path: read_bytes(p),
        }
        point, medians, mb = _interleaved_point(factor, samples, path, cases, runs)
        point["decode_mb_per_s"] = mb / medians["decode"]
        point["read_mb_per_s"] = mb / medians["read"]
        point["decode_over_read"] = medians["decode"] / medians["read"]
        points.append(point)
        print(
            f"blg {layout} {factor}x ({samples} samples, {mb:.0f} MB): "
            f"decode {mb / medians['decode']:.0f} MB/s, read {mb / medians['read']:.0f} MB/s"
        )
    _growth(points, "factor", lambda p: p["median_s"]["decode"])
    return points


def blg_series(factors: tuple[int, ...] = FACTORS, runs: int = 5) -> dict[str, object]:
    """``points``: the Vista layout's sizes; ``raw_points``: the raw-counter layout's."""
    return {
        "runs": runs,
        "engine": "native" if native_engine_built() else "numpy",
        "points": blg_points("vista", factors, runs),
        "raw_points": blg_points("raw", factors, runs),
    }


# --- builds of 1 to 100 servers -------------------------------------------------------------------


def _template_servers(stress: bool) -> tuple[Path, list[Path]]:
    """The manifest folder and the ten server folders of the VMAX sample (with 24-hour stress
    counter logs when ``stress``)."""
    if stress:
        build_document.generate()
        base = build_document.DATA
    else:
        base = ROOT / "samples"
    manifest = tomllib.loads((ROOT / "samples" / "vmax.toml").read_text(encoding="utf-8"))
    return base, [base / server["results"] for server in manifest["servers"]]


def _copy_server(source: Path, target: Path, machine: str) -> None:
    """One server's results folder under another machine name: the name is rewritten in every
    text file (reports, XML, counter logs); other files are linked."""
    target.mkdir(parents=True)
    old = re.compile(rb"\b" + re.escape(source.name.encode()) + rb"\b")
    for item in sorted(source.iterdir()):
        if machine != source.name and item.suffix.lower() in _TEXT_SUFFIXES:
            (target / item.name).write_bytes(old.sub(machine.encode(), item.read_bytes()))
        else:
            os.link(item, target / item.name)


def _manifest_text(servers: list[str]) -> str:
    """samples/vmax.toml with these servers and a profile of 10,000 mailboxes a server."""
    text = (ROOT / "samples" / "vmax.toml").read_text(encoding="utf-8")
    head, rest = text.split("[[servers]]", 1)
    tail = rest[rest.index("\n[tables.") :]
    n = len(servers)
    for key, value in (
        ("mailboxes", 10_000 * n),
        ("dags", 1),
        ("servers_per_dag", n),
        ("database_formatted_gb", 38_400 * n),
    ):
        head, count = re.subn(rf"(?m)^{key} = \d+", f"{key} = {value}", head)
        if count != 1:
            raise RuntimeError(f"samples/vmax.toml: no single '{key} = ' line to rewrite")
    head = head.replace("(100,000 users)", f"({10_000 * n:,} users, {n} servers)")
    # One representative server's reports in the appendix, as the sample (and the published
    # document) has it; Server 1, which every solution of the series has.
    tail, count = re.subn(r'(?m)^servers = \["Server 4"\]$', 'servers = ["Server 1"]', tail)
    if count != 1:
        raise RuntimeError("samples/vmax.toml: no single '[appendix] servers' line to rewrite")
    listed = "".join(
        f'[[servers]]\nlabel = "Server {i}"\nresults = "servers/{name}"\n'
        for i, name in enumerate(servers, 1)
    )
    return head + listed + "\n" + tail.lstrip("\n")


def solution(servers: int, *, stress: bool) -> Path:
    """A solution folder of ``servers`` servers; returns its manifest."""
    kind = "stress24h" if stress else "performance"
    folder = DATA / f"{kind}-{servers}"
    manifest = folder / "solution.toml"
    if (folder / VERSION).exists():
        return manifest
    shutil.rmtree(folder, ignore_errors=True)
    base, templates = _template_servers(stress)
    if servers == 1:
        templates = [t for t in templates if t.name == ONE_SERVER]
    names = []
    for i in range(servers):
        template = templates[i % len(templates)]
        name = template.name if i < len(templates) else f"{template.name}-{i // len(templates)}"
        _copy_server(template, folder / "servers" / name, name)
        names.append(name)
    shutil.copytree(base / "branding", folder / "branding")
    manifest.write_text(_manifest_text(names), encoding="utf-8")
    (folder / VERSION).touch()
    return manifest


def _pages_and_extraction(pdf: Path) -> tuple[int, float]:
    import pypdfium2 as pdfium

    started = time.perf_counter()
    document = pdfium.PdfDocument(str(pdf))
    for index in range(len(document)):
        document[index].get_textpage().get_text_bounded()
    return len(document), time.perf_counter() - started


def _median_run(args: list[str], runs: int, ok: tuple[int, ...] = (0,)) -> dict[str, object]:
    walls, peaks, cpus, loads = [], [], [], []
    for _ in range(runs):
        loads.append(_load())
        wall, peak, cpu = build_document.timed(args, ok)
        walls.append(wall)
        peaks.append(peak)
        cpus.append(cpu)
    return {
        "median_s": statistics.median(walls),
        "runs_s": walls,
        "cpu_median_s": statistics.median(cpus),
        "peak_rss_mb": round(max(peaks)),
        "load_before": loads,
    }


def build_point(servers: int, *, stress: bool, runs: int) -> dict[str, object]:
    manifest = solution(servers, stress=stress)
    folder = manifest.parent
    out = folder / "out"
    logs_mb = sum(p.stat().st_size for p in (folder / "servers").rglob("*.csv")) / 1e6
    check = _median_run([_exe(), "check", str(folder / "servers"), "--json"], runs, ok=(0, 1))
    build = _median_run([_exe(), "build", str(manifest), "-o", str(out), "--format", "html,pdf"], runs)
    pdf = out / "solution.pdf"
    pages, extraction_s = _pages_and_extraction(pdf)
    audit = _median_run([_exe(), "audit", str(pdf), "--json"], runs, ok=(0, 1))
    point = {
        "servers": servers,
        "counter_logs_mb": logs_mb,
        "check": check,
        "build": build,
        "build_over_check": build["median_s"] / check["median_s"],  # type: ignore[operator]
        "build_s_per_server": build["median_s"] / servers,  # type: ignore[operator]
        "pages": pages,
        "audit": audit,
        "extraction_s": extraction_s,
        "audit_over_extraction": audit["median_s"] / extraction_s,  # type: ignore[operator]
    }
    print(
        f"build {'stress24h' if stress else 'performance'} {servers} servers ({logs_mb:.0f} MB of logs): "
        f"check {check['median_s']} s, build {build['median_s']} s ({pages} pages, "
        f"{build['cpu_median_s']} s CPU, {build['peak_rss_mb']} MB), audit {audit['median_s']} s"
    )
    return point


def build_series(servers: dict[str, tuple[int, ...]] | None = None, runs: int = 3) -> dict[str, object]:
    result: dict[str, object] = {"runs": runs, "jobs": os.cpu_count()}
    for kind, counts in (servers or SERVERS).items():
        points = [build_point(n, stress=kind == "stress24h", runs=runs) for n in counts]
        _growth(points, "servers", lambda p: p["build"]["median_s"])  # type: ignore[index]
        result[kind] = points
    return result


# --- shared -----------------------------------------------------------------------------------------


def _growth(points: list[dict[str, object]], size_key: str, seconds: object) -> None:
    """Each point's cost against the smallest point's, per unit of work: 1.00 is linear growth,
    above 1 grows faster than the work, below 1 slower (fixed costs spread over more work)."""
    first = points[0]
    base = seconds(first) / first[size_key]  # type: ignore[operator]
    for point in points:
        point["cost_per_unit_vs_smallest"] = seconds(point) / point[size_key] / base  # type: ignore[operator]


def main(
    series: tuple[str, ...] = SERIES, servers: dict[str, tuple[int, ...]] | None = None
) -> dict[str, object]:
    gc.collect()
    result: dict[str, object] = {}
    if "csv" in series:
        result["csv"] = csv_series()
    if "blg" in series:
        result["blg"] = blg_series()
    if "build" in series:
        result["build"] = build_series(servers)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", nargs="+", choices=SERIES, default=list(SERIES))
    parser.add_argument("--servers", nargs="+", type=int, help="server counts of both build series")
    args = parser.parse_args()
    counts = {kind: tuple(args.servers) for kind in SERVERS} if args.servers else None
    main(tuple(args.series), counts)
