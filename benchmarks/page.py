"""Write the measured figures into docs/benchmarks.md and README.md from benchmarks/results.json.

    python -m benchmarks.page        # after `python -m benchmarks.run` (which calls it)

Only the blocks between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` are rewritten; the
prose around them is the page's own. So every number inside a block is the one the last run
measured, and a test checks that the committed page matches the committed results.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("results.json")
PAGES = (ROOT / "docs" / "benchmarks.md", ROOT / "README.md")
BLOCK = re.compile(r"(<!-- bench:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)", re.S)

Results = Mapping[str, Any]


def _n(value: float, decimals: int = 1) -> str:
    return f"{value:,.{decimals}f}"


def _s(seconds: float) -> str:
    """Seconds as the page prints them: ms under one second, else two decimals (one from 100 s)."""
    if seconds < 1:
        return f"{seconds * 1000:,.0f} ms"
    return f"{seconds:,.2f} s" if seconds < 100 else f"{seconds:,.1f} s"


def _verdict(met: bool, value: float, limit: float, *, upper: bool = True) -> str:
    if met:
        return "met"
    over = (value / limit - 1) * 100 if upper else (1 - value / limit) * 100
    return f"**missed by {over:.0f} %**"


def _servers(count: int) -> str:
    return f"{count} server" if count == 1 else f"{count} servers"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def machine(r: Results) -> str:
    m = r["machine"]
    rows = [
        ["run", f"{m['date']}, {_n(m['total_s'] / 60, 0)} minutes"],
        ["processor", f"{m['cpu_model']}, {m['cores']} cores"],
        ["memory", f"{_n(m['memory_gb'])} GB"],
        ["system", m["platform"]],
        ["Python and libraries", ", ".join(f"{k} {v}" for k, v in m["versions"].items())],
        ["compiled parsers", m["compiled"]],
        ["1-minute load average", f"{m['load_before']} before, {m['load_after']} after the run"],
    ]
    rows += [
        [
            "measured again",
            f"{', '.join(again['only'])}: {again['date']}, load {again['load_before']} before, "
            f"{again['load_after']} after",
        ]
        for again in r.get("reruns", [])
    ]
    return _table(["", ""], rows)


def targets(r: Results) -> str:
    csv = r["benchmarks.csv_ingest"]
    blg = r["benchmarks.blg_decode"]
    build = r["benchmarks.build_document"]["html,pdf"]
    audit = r["benchmarks.audit_document"]["60-page PDF"]["median_s"]
    catalog = r["benchmarks.catalog_ingest"]["runs_1000"]
    startup = r["benchmarks.startup"]
    ab, ac, mbs = csv["a_over_b"], csv["a_over_c"], blg["mb_per_s"]
    help_s, version_s = startup["median_s"]["esrp-report --help"], startup["median_s"]["esrp-report version"]
    inspect = startup["inspect_over_polars"]
    rows = [
        ["CSV ingest ÷ Polars typed read (24 h × 450)", f"{ab:.2f}", "≤ 1.3", _verdict(ab <= 1.3, ab, 1.3)],
        ["CSV ingest ÷ pandas `read_csv`", f"{ac:.2f}", "≤ 0.5", _verdict(ac <= 0.5, ac, 0.5)],
        [
            "BLG decode, 1 GB, Vista layout",
            f"{_n(mbs, 0)} MB/s",
            "≥ 300 MB/s",
            _verdict(mbs >= 300, mbs, 300, upper=False),
        ],
        *(
            [
                [
                    "BLG decode, 1 GB, raw-counter layout",
                    f"{_n(raw, 0)} MB/s",
                    "≥ 300 MB/s",
                    _verdict(raw >= 300, raw, 300, upper=False),
                ]
                for raw in ([blg["raw_layout"]["mb_per_s"]] if "raw_layout" in blg else [])
            ]
        ),
        *(
            [
                [
                    "`make demo`: build of the 10-server sample, HTML + PDF, whole process",
                    _s(demo["median_s"]),
                    "< 10 s",
                    _verdict(demo["median_s"] < 10, demo["median_s"], 10),
                ]
                for demo in (
                    [r["benchmarks.build_document"]["demo"]]
                    if "demo" in r["benchmarks.build_document"]
                    else []
                )
            ]
        ),
        [
            "build, 10 servers, 24-hour stress logs, HTML + PDF",
            _s(build["median_s"]),
            "< 15 s",
            _verdict(build["median_s"] < 15, build["median_s"], 15),
        ],
        [
            "build, peak memory of the process tree",
            f"{build['peak_rss_mb']:,} MB",
            "< 2 GB",
            _verdict(build["peak_rss_mb"] < 2000, build["peak_rss_mb"], 2000),
        ],
        ["audit of a 60-page PDF", _s(audit), "< 5 s", _verdict(audit < 5, audit, 5)],
        [
            "catalog ingest, 1,000 runs, fresh",
            _s(catalog["fresh_median_s"]),
            "< 5 min",
            _verdict(catalog["fresh_median_s"] < 300, catalog["fresh_median_s"], 300),
        ],
        [
            "catalog ingest, 1,000 runs, unchanged",
            _s(catalog["unchanged_median_s"]),
            "< 10 s",
            _verdict(catalog["unchanged_median_s"] < 10, catalog["unchanged_median_s"], 10),
        ],
        [
            "catalog on Dask = local catalog",
            "identical" if catalog["dask_identical"] else "**differs**",
            "identical",
            "met" if catalog["dask_identical"] else "**missed**",
        ],
        [
            "`esrp-report --help`, whole process",
            _s(help_s),
            "≤ 150 ms",
            _verdict(help_s <= 0.15, help_s, 0.15),
        ],
        [
            "`esrp-report version`, whole process",
            _s(version_s),
            "≤ 150 ms",
            _verdict(version_s <= 0.15, version_s, 0.15),
        ],
        [
            "`esrp-report inspect` ÷ a bare Polars process (24 h × 450 CSV)",
            f"{inspect:.2f}",
            "≤ 1.0",
            _verdict(inspect <= 1.0, inspect, 1.0),
        ],
    ]
    return _table(["what", "measured", "target", ""], rows)


def startup(r: Results) -> str:
    s = r["benchmarks.startup"]
    out = (
        f"Whole processes, median of {s['runs']} interleaved runs; the CSV is the CSV ingest "
        f"benchmark's ({_n(s['file_mb'])} MB); 1-minute load {s['load_1min_before']} before, "
        f"{s['load_1min_after']} after.\n\n"
    )
    out += _table(
        ["process", "wall", "CPU"],
        [[f"`{name}`", _s(wall), _s(s["cpu_median_s"][name])] for name, wall in s["median_s"].items()],
    )
    out += f"\n`inspect` ÷ the bare Polars process: {s['inspect_over_polars']:.2f}.\n"
    if "help_over_pass" in s:  # issue 36's ratios (results from before it have none)
        out += (
            f"`--help` ÷ `python -c pass`: {s['help_over_pass']:.2f} wall, {s['help_over_pass_cpu']:.2f} CPU "
            f"(target ≤ 4). `check` of the folder ÷ `inspect` of its log: {s['check_over_inspect']:.2f} "
            f"wall, {s['check_over_inspect_cpu']:.2f} CPU (target ≤ 1.5).\n"
        )
    return out


def csv(r: Results) -> str:
    c = r["benchmarks.csv_ingest"]
    med = c["median_seconds"]
    out = (
        f"{c['file_mb']} MB, {c['samples']:,} samples × {c['counters']} counters, {c['missing_cells']:,} "
        f"missing cells; median of {c['runs']} interleaved runs.\n\n"
    )
    out += _table(
        ["reader", "median", "ratio"],
        [
            ["a: `read_counter_csv` (default engine)", _s(med["read_counter_csv (model)"]), "—"],
            [
                "b: Polars `read_csv`, explicit schema",
                _s(med["polars.read_csv (schema)"]),
                f"a ÷ b = {c['a_over_b']:.2f}",
            ],
            ["c: pandas `read_csv`", _s(med["pandas.read_csv"]), f"a ÷ c = {c['a_over_c']:.2f}"],
            *(
                [
                    [
                        'a′: `read_counter_csv(engine="pyarrow")`',
                        _s(med["read_counter_csv, pyarrow engine"]),
                        f"a′ ÷ b = {c['pyarrow_engine_over_b']:.2f}, "
                        f"a′ ÷ c = {c['pyarrow_engine_over_c']:.2f}",
                    ]
                ]
                if "pyarrow_engine_over_b" in c
                else []
            ),
        ],
    )
    s = r["benchmarks.scaling"]["csv"]
    out += f"\nScaling, median of {s['runs']} interleaved runs at each size:\n\n"
    out += _table(
        [
            "samples",
            "file",
            "ours",
            "Polars",
            "pandas",
            "ours ÷ Polars",
            "ours ÷ pandas",
            "ours, MB/s",
            "cost per sample vs 1×",
        ],
        [
            [
                f"{p['factor']}× ({p['samples']:,})",
                f"{_n(p['file_mb'])} MB",
                _s(p["median_s"]["ours"]),
                _s(p["median_s"]["polars"]),
                _s(p["median_s"]["pandas"]),
                f"{p['ours_over_polars']:.2f}",
                f"{p['ours_over_pandas']:.2f}",
                _n(p["ours_mb_per_s"], 0),
                f"{p['cost_per_unit_vs_smallest']:.2f}",
            ]
            for p in s["points"]
        ],
    )
    return out


_LAYOUT_NAMES = {"vista": "Vista (PERF_DATA_BLOCK)", "raw": "raw-counter (PDH raw values)"}
_ENGINE_NAMES = {"native": "compiled", "numpy": "NumPy"}


def _size(key: str) -> str:
    """A log's size as blg_decode keys it ("1038 MB") with a thousands separator."""
    number, _, unit = key.partition(" ")
    return f"{int(number):,} {unit}" if number.isdigit() else key


def _blg_scaling(points: list[dict[str, Any]]) -> str:
    return _table(
        ["samples", "file", "decode", "read bytes", "decode ÷ read", "decode MB/s", "cost per sample vs 1×"],
        [
            [
                f"{p['factor']}× ({p['samples']:,})",
                f"{_n(p['file_mb'], 0)} MB",
                _s(p["median_s"]["decode"]),
                _s(p["median_s"]["read"]),
                f"{p['decode_over_read']:.1f}",
                _n(p["decode_mb_per_s"], 0),
                f"{p['cost_per_unit_vs_smallest']:.2f}",
            ]
            for p in points
        ],
    )


def _blg_row(layout: str, file_mb: float, samples: int, engine: str, f: Mapping[str, Any]) -> list[str]:
    cells = f["mcells_per_s"] if "mcells_per_s" in f else samples * 13_441 / f["median_s"] / 1e6
    return [
        _LAYOUT_NAMES[layout],
        f"{_n(file_mb, 0)} MB, {samples:,} samples",
        _ENGINE_NAMES.get(engine, engine),
        _s(f["median_s"]),
        f"{_n(f['mb_per_s'], 0)} MB/s",
        _n(cells, 1),
        f"{_n(f['mb_per_cpu_s'], 0)} MB/s",
        ", ".join(f"{t:.2f}" for t in f["runs_s"]),
    ]


def blg(r: Results) -> str:
    b = r["benchmarks.blg_decode"]
    layouts = {"vista": b} | ({"raw": b["raw_layout"]} if "raw_layout" in b else {})
    rows = []
    for layout, figures in layouts.items():
        sizes = [(figures["file_mb"], figures["samples"], figures["engines"])]
        if "small_engines" in figures:
            sizes.append((figures["small_file_mb"], figures["small_samples"], figures["small_engines"]))
        for file_mb, samples, engines in sizes:
            rows += [_blg_row(layout, file_mb, samples, engine, f) for engine, f in engines.items()]
    out = (
        f"{b.get('columns', 13_441):,} counters a sample in both layouts; median of "
        f"{len(b['engines'][b['engine']]['runs_s'])} runs on one core"
        + (
            f"; 1-minute load average {b['load_average_before'][0]} before, {b['load_average'][0]} after"
            if "load_average_before" in b
            else ""
        )
        + ".\n\n"
    )
    out += _table(["layout", "log", "engine", "median", "wall", "Mcells/s", "CPU time", "runs (s)"], rows)
    out += "\n"
    for layout, figures in layouts.items():
        engines = figures["engines"]
        if "native" in engines and "numpy" in engines:
            ratio = engines["numpy"]["median_s"] / engines["native"]["median_s"]
            out += f"Compiled ÷ NumPy speed, {_LAYOUT_NAMES[layout]}: {ratio:.1f}×. "
    if "raw_over_vista_mcells" in b:
        out += (
            "Values cooked per second, raw-counter ÷ Vista layout: "
            + ", ".join(f"{v:.2f} ({_ENGINE_NAMES.get(e, e)})" for e, v in b["raw_over_vista_mcells"].items())
            + "."
        )
    out += (
        "\n\nPeak RSS decoding in a fresh process (VmHWM), the ~100 MB and the ~1 GB log of each layout:\n\n"
    )
    memory_rows = []
    for layout, figures in layouts.items():
        by_engine = figures.get("peak_rss_mb_by_engine", {figures["engine"]: figures["peak_rss_mb"]})
        for engine, sizes in by_engine.items():
            (small, small_rss), (big, big_rss) = sizes.items()
            memory_rows.append(
                [
                    _LAYOUT_NAMES[layout],
                    _ENGINE_NAMES.get(engine, engine),
                    f"{_size(small)} log: {small_rss:,.0f} MB",
                    f"{_size(big)} log: {big_rss:,.0f} MB",
                    f"{big_rss / small_rss:.2f}",
                ]
            )
    out += _table(["layout", "engine", "~100 MB log", "~1 GB log", "1 GB ÷ 100 MB"], memory_rows)
    s = r["benchmarks.scaling"]["blg"]
    out += (
        f"\nScaling ({_ENGINE_NAMES.get(s['engine'], s['engine'])} engine), against reading the same file's "
        f"bytes, median of {s['runs']} interleaved runs; Vista layout:\n\n"
    )
    out += _blg_scaling(s["points"])
    if "raw_points" in s:
        out += "\nRaw-counter layout:\n\n" + _blg_scaling(s["raw_points"])
    return out


def build(r: Results) -> str:
    b = r["benchmarks.build_document"]
    rows = [
        [
            f"`--format {fmt}`",
            _s(f["median_s"]),
            ", ".join(f"{t:.1f}" for t in f["runs_s"]),
            f"{statistics.median(f['cpu_s']):.1f} s",
            f"{f['peak_rss_mb']:,} MB",
            ", ".join(f"{x:.1f}" for x in f["load_1min_before"]),
        ]
        for fmt, f in ((k, b[k]) for k in ("html", "html,pdf"))
    ]
    out = ""
    if "demo" in b:
        d = b["demo"]
        out += (
            f"`make demo`: `esrp-report build samples/vmax.toml -o out` as a user runs it (the bundled "
            f"sample as it is, HTML + PDF, {d['pdf_pages']} pages, into a new folder each run):\n\n"
        )
        out += _table(
            ["build", "median", "runs (s)", "CPU, process tree", "peak memory", "load before"],
            [
                [
                    "`make demo`",
                    _s(d["median_s"]),
                    ", ".join(f"{t:.1f}" for t in d["runs_s"]),
                    f"{statistics.median(d['cpu_s']):.1f} s",
                    f"{d['peak_rss_mb']:,} MB",
                    ", ".join(f"{x:.1f}" for x in d["load_1min_before"]),
                ]
            ],
        )
        out += "\n"
    out += (
        f"VMAX sample, 10 servers, with a 24-hour stress counter log per server "
        f"({_n(b['counter_log_mb'], 0)} MB of CSV); the PDF has {b['pdf_pages']} pages.\n\n"
    )
    out += _table(["build", "median", "runs (s)", "CPU, process tree", "peak memory", "load before"], rows)
    s = r["benchmarks.scaling"]["build"]
    for kind, title in (
        ("performance", "performance counter logs only (2 h, 2.1 MB per server)"),
        ("stress24h", "with a 24-hour stress counter log per server as well"),
    ):
        out += f"\nBuilds of 1 to {s[kind][-1]['servers']} servers, {title}; median of {s['runs']} runs:\n\n"
        out += _table(
            [
                "servers",
                "logs",
                "`check`",
                "`build` html,pdf",
                "build ÷ check",
                "CPU",
                "peak memory",
                "pages",
                "per server",
                "cost per server vs 1",
            ],
            [
                [
                    str(p["servers"]),
                    f"{_n(p['counter_logs_mb'], 0)} MB",
                    _s(p["check"]["median_s"]),
                    _s(p["build"]["median_s"]),
                    f"{p['build_over_check']:.1f}",
                    f"{p['build']['cpu_median_s']:.1f} s",
                    f"{p['build']['peak_rss_mb']:,} MB",
                    f"{p['pages']:,}",
                    _s(p["build_s_per_server"]),
                    f"{p['cost_per_unit_vs_smallest']:.2f}",
                ]
                for p in s[kind]
            ],
        )
    return out


def audit(r: Results) -> str:
    a = r["benchmarks.audit_document"]
    x = a["text extraction, 60 pages"]
    rows = [
        [name, _s(a[name]["median_s"]), f"{a[name]['runs']}"] for name in ("60-page PDF", "whole PDF", "HTML")
    ]
    out = f"The VMAX sample as built ({a['pages']} pages) and its first 60 pages.\n\n"
    out += _table(["document", "median", "runs"], rows)
    out += (
        f"\nText extraction alone, 60 pages: PDFium {_s(x['pdfium_s'])}, pypdf {_s(x['pypdf_s'])} "
        f"({x['pypdf_over_pdfium']:.0f}× PDFium); the audit of those pages takes "
        f"{a['60-page PDF']['median_s'] / x['pdfium_s']:.1f}× PDFium's extraction.\n"
    )
    s = r["benchmarks.scaling"]["build"]
    out += "\nAudits of the scaling series' documents, against PDFium's extraction of the same file:\n\n"
    out += _table(
        ["document", "pages", "audit", "extraction", "audit ÷ extraction", "audit per page"],
        [
            [
                f"{_servers(p['servers'])}, {kind}",
                f"{p['pages']:,}",
                _s(p["audit"]["median_s"]),
                _s(p["extraction_s"]),
                f"{p['audit_over_extraction']:.1f}",
                f"{p['audit']['median_s'] / p['pages'] * 1000:.0f} ms",
            ]
            for kind in ("performance", "stress24h")
            for p in s[kind]
        ],
    )
    return out


def catalog(r: Results) -> str:
    c = r["benchmarks.catalog_ingest"]
    rows = []
    for key in ("runs_100", "runs_1000"):
        f = c[key]
        rows.append(
            [
                f"{f['runs']:,} runs, {_n(f['archive_mb'], 0)} MB",
                f"{_s(f['fresh_median_s'])} ({f['runs_per_s']} runs/s)",
                _s(f["unchanged_median_s"]),
                f"{f['unchanged_median_s'] / f['fresh_median_s']:.2f}",
                _s(f["dask_s"]),
                f"{f['dask_s'] / f['fresh_median_s']:.2f}",
                "identical" if f["dask_identical"] else "**differs**",
            ]
        )
    small, large = c["runs_100"], c["runs_1000"]
    growth = (large["fresh_median_s"] / large["runs"]) / (small["fresh_median_s"] / small["runs"])
    out = _table(
        [
            "archive",
            "fresh (local, 2 processes)",
            "unchanged",
            "unchanged ÷ fresh",
            "Dask, 2 workers",
            "Dask ÷ local",
            "catalog",
        ],
        rows,
    )
    out += f"\nCost per run at 1,000 runs against 100 runs: {growth:.2f}.\n"
    return out


RENDERERS: dict[str, Callable[[Results], str]] = {
    "machine": machine,
    "targets": targets,
    "csv": csv,
    "blg": blg,
    "build": build,
    "audit": audit,
    "catalog": catalog,
    "startup": startup,
}


def render_blocks(results: Results) -> dict[str, str]:
    return {name: render(results) for name, render in RENDERERS.items()}


def update(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with each marked block's body replaced; a marked block nobody renders is an error."""

    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in blocks:
            raise KeyError(f"<!-- bench:{name} --> has no renderer in benchmarks/page.py")
        return match.group(1) + blocks[name] + match.group(4)

    return BLOCK.sub(body, text)


def main(results_path: Path = RESULTS, pages: tuple[Path, ...] = PAGES) -> None:
    blocks = render_blocks(json.loads(results_path.read_text(encoding="utf-8")))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = update(text, blocks)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"updated {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
