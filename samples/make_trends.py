"""Write the results folders behind the trend tables of the EqualLogic sizing study (seed 004, §5).

    PYTHONPATH=. .venv/bin/python samples/make_trends.py

Deterministic: re-running writes identical files. samples/data/trends-004.toml holds every table
cell as printed ("223% [5.2 msec]") and the configuration of each run behind a column. For each
table column this writes samples/trends/<table>/<folder>/ (one subfolder per server when the
column is several servers): a Jetstress 2010 Performance report (HTML) and a JetstressConfig.xml
(mailboxes x IOPS per mailbox = the planned IOPS).

The run values are solved, not typed. A printed figure stands for an interval: "5.2 msec" for
[5.15, 5.25), "223%" for a ratio to the baseline in [2.225, 2.235). Every such statement is a
bound on a value or on a ratio of two values, i.e. in logarithms a difference constraint
(lo <= x_j - x_b <= hi), and runs printed in several tables share their values, so all tables
are solved together:

1. each constraint is narrowed by 1 % of its width at both ends (no value sits on a rounding
   edge);
2. the system is solved with Bellman-Ford shortest paths (a negative cycle would mean the
   printed figures contradict each other; they do not);
3. values are fixed one at a time on the grid the reports can print -- a latency is a mean of
   three-decimal instance figures, so its grid is 0.001 / instances; IOPS are sums, grid 0.001 --
   coarsest grid first, each at the grid point nearest the middle of the range the constraints
   still leave it (any value inside that range extends to a full solution, so this never fails
   when every range holds a grid point), and the rest re-solved.

Planned IOPS are not solved: they are mailboxes x IOPS per mailbox, exact. Table 23 prints 39 %
for 360 / 900; the runs keep 360 and 900, and the comparison shows 40 % and flags the cell.

Finally the written folders are read back with `esrp_report.analysis.trends` and every printed cell is
checked: all reproduce except the flagged ones.
"""

from __future__ import annotations

import itertools
import math
import shutil
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from esrp_report import model as m
from esrp_report.analysis import trends
from esrp_report.app import api
from esrp_report.ingest.config.trend_spec import parse_cell
from esrp_report.model import (
    ConfigProfile,
    DatabaseConfig,
    InstanceRow,
    InstanceTable,
    Run,
    TableKind,
    TestKind,
    Thresholds,
)
from esrp_synth.jetstress_html import ReportStyle, write_report_html
from esrp_synth.jetstress_xml import write_config_xml

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "trends-004.toml"
OUT = HERE / "trends"
MILLI = 1000  # IOPS and latencies are written in thousandths, as Jetstress prints them
NARROW = 0.01  # share of each interval's width kept clear at both ends
LATENCY_KEYS = ("read_latency", "write_latency", "log_write_latency")
JETSTRESS, ESE = "14.01.0225.017", "14.01.0218.012"  # the builds the study lists (its Table 28)
# Differential share of the total by databases per server, through the study's three statements.
DIFFERENTIAL_POINTS = ((2, 0.06), (5, 0.11), (20, 0.27))
LOG_SHARE, TRANSACTIONAL_SHARE = 0.22, 0.67  # section 6.2, the reference at 0.18 IOPS per mailbox
REPLICATION_PER_COPY = 0.01  # section 6.2: +3 % of the total for four copies

Json = dict[str, Any]
Node = tuple[str, str]  # (run id, figure)
ZERO: Node = ("", "zero")


# --- the printed statements as difference constraints ------------------------------------------


@dataclass(frozen=True)
class Constraint:
    """lo <= x[v] - x[u] <= hi, in natural logarithms of the values."""

    u: Node
    v: Node
    lo: float
    hi: float
    why: str


def printed(text: str) -> tuple[float, float, float]:
    """A "NN% [value unit]" cell: (percent, value, half a unit of its last printed digit)."""
    cell = parse_cell(text)
    if cell is None or cell.percent is None or cell.absolute is None:
        raise ValueError(f"not a trend cell: {text!r}")
    return cell.percent.value, cell.absolute.value, cell.absolute.half_unit


def planned_iops(run: Json) -> float:
    return float(run["mailboxes"] * float(run["iops_per_mailbox"])) * run.get("servers", 1)


def constraints(data: Json) -> list[Constraint]:
    out: list[Constraint] = []

    def bound(node: Node, lo: float, hi: float, why: str) -> None:
        out.append(Constraint(ZERO, node, math.log(lo), math.log(hi), why))

    for key, table in data["tables"].items():
        rows, runs = table.get("rows"), table["runs"]
        if rows is None:
            continue
        base = next(j for j in range(len(runs)) if all(printed(rows[f][j])[0] == 100 for f in rows))
        for figure, cells in rows.items():
            if figure == "planned":
                continue  # exact products, not measured
            for j, cell in enumerate(cells):
                pct, value, half = printed(cell)
                bound((runs[j], figure), value - half, value + half, f"{key} {figure} {cell}")
                if j != base:
                    out.append(
                        Constraint(
                            (runs[base], figure),
                            (runs[j], figure),
                            math.log((pct - 0.5) / 100),
                            math.log((pct + 0.5) / 100),
                            f"{key} {figure} {cell} of {cells[base]}",
                        )
                    )
    # Table 3: achieved IOPS with its percentage of planned, and the equated latencies.
    table3 = data["tables"]["table-03"]
    for j, run_id in enumerate(table3["runs"]):
        eq = table3["equated"]
        planned = planned_iops(data["runs"][run_id])
        achieved = float(eq["achieved"][j].split()[0])
        ratio = float(eq["achieved"][j].split("[")[1].rstrip("%]"))
        node = (run_id, "achieved")
        bound(node, achieved - 0.5, achieved + 0.5, f"table-03 achieved {eq['achieved'][j]}")
        bound(node, planned * (ratio - 0.5) / 100, planned * (ratio + 0.5) / 100, "table-03 achieved %")
        for figure in LATENCY_KEYS:
            cell = eq[f"{figure}_equated"][j]
            if cell == "unchanged":  # achieved within 0.5 % of planned (docs/compare.md)
                limit = trends.UNCHANGED_WITHIN
                bound(node, planned * (1 - limit), planned * (1 + limit), "table-03 unchanged")
                continue
            value = float(cell.split()[0])
            # latency x planned / achieved rounds to the printed value
            out.append(
                Constraint(
                    node,
                    (run_id, figure),
                    math.log((value - 0.05) / planned),
                    math.log((value + 0.05) / planned),
                    f"table-03 {figure} equated {cell}",
                )
            )
    return out


def _distances(nodes: list[Node], edges: list[tuple[Node, Node, float]], source: Node) -> dict[Node, float]:
    """Bellman-Ford: shortest distances from ``source``; an error on a negative cycle."""
    dist = dict.fromkeys(nodes, math.inf)
    dist[source] = 0.0
    for _ in range(len(nodes) + 1):
        changed = False
        for u, v, w in edges:
            if dist[u] + w < dist[v] - 1e-13:
                dist[v] = dist[u] + w
                changed = True
        if not changed:
            return dist
    raise ValueError("the printed figures contradict each other (negative cycle)")


def solve(cons: list[Constraint], grids: dict[Node, float]) -> dict[Node, float]:
    """Values inside every constraint, each on its grid (see the module docstring)."""
    edges: list[tuple[Node, Node, float]] = []
    for c in cons:
        margin = (c.hi - c.lo) * NARROW
        edges.append((c.u, c.v, c.hi - margin))  # x_v <= x_u + hi
        edges.append((c.v, c.u, -(c.lo + margin)))  # x_u <= x_v - lo
    nodes = sorted({n for u, v, _ in edges for n in (u, v)})
    values: dict[Node, float] = {}
    for node in sorted(grids, key=lambda n: (-grids[n], n)):
        upper = _distances(nodes, edges, ZERO)[node]
        lower = -_distances(nodes, [(v, u, w) for u, v, w in edges], ZERO)[node]
        grid = grids[node]
        first, last = math.ceil(math.exp(lower) / grid - 1e-9), math.floor(math.exp(upper) / grid + 1e-9)
        if first > last:
            raise ValueError(f"{node}: no grid point of {grid:g} in [{math.exp(lower)}, {math.exp(upper)}]")
        units = (first + last) // 2
        values[node] = units * grid
        fixed = math.log(units * grid)
        edges += [(ZERO, node, fixed), (node, ZERO, -fixed)]
    return values


# --- the split of each run's IOPS ------------------------------------------------------------------


def differential_share(run: Json) -> float:
    stated = run.get("differential")
    if stated is not None:
        share = float(stated.rstrip("%")) / 100
    else:
        dbs = run["databases"]
        points = DIFFERENTIAL_POINTS
        if dbs <= points[0][0]:
            share = points[0][1]
        elif dbs >= points[-1][0]:
            share = points[-1][1]
        else:
            (x0, y0), (x1, y1) = next((a, b) for a, b in itertools.pairwise(points) if a[0] <= dbs <= b[0])
            share = y0 + (y1 - y0) * (dbs - x0) / (x1 - x0)
    return share + REPLICATION_PER_COPY * (run.get("copies", 1) - 1)


@dataclass
class Split:
    """One run's (all servers') IOPS in thousandths: transactional (achieved), log writes,
    maintenance reads, log replication reads; latencies in thousandths x instances."""

    achieved: int
    read_share: float
    log_writes: int
    maintenance: int
    replication: int
    latency_units: dict[str, int]


def split(run_id: str, run: Json, values: dict[Node, float]) -> Split:
    total = round(values[(run_id, "total")] * MILLI)
    diff_share = differential_share(run)
    replication = round(total * REPLICATION_PER_COPY * (run.get("copies", 1) - 1))
    differential = round(total * diff_share)
    if (run_id, "achieved") in values:
        achieved = round(values[(run_id, "achieved")] * MILLI)
    else:
        rest = total - differential
        achieved = max(
            round(rest * TRANSACTIONAL_SHARE / (TRANSACTIONAL_SHARE + LOG_SHARE)),
            round(planned_iops(run) * 1.01 * MILLI),
        )
    log_writes = total - differential - achieved
    if log_writes <= 0 or differential <= replication:
        raise ValueError(f"{run_id}: split leaves no log writes or maintenance ({achieved}, {differential})")
    instances = run["databases"] * run.get("servers", 1)
    return Split(
        achieved=achieved,
        read_share=float(run.get("read_share", "50%").rstrip("%")) / 100,
        log_writes=log_writes,
        maintenance=differential - replication,
        replication=replication,
        latency_units={k: round(values[(run_id, k)] * instances * MILLI) for k in LATENCY_KEYS},
    )


def spread(units: int, weights: Sequence[float]) -> list[int]:
    """``units`` in proportion to ``weights``, in whole units summing exactly to ``units``."""
    scale = sum(weights)
    parts = [int(units * w // scale) for w in weights]
    for i in range(units - sum(parts)):
        parts[i % len(parts)] += 1
    return parts


def weights(n: int, seed: int, spread: float = 0.04) -> list[float]:
    """A fixed, gentle unevenness between instances (or servers): within ``spread`` (±)."""
    return [1 + spread * math.sin(2.4 * i + seed) for i in range(n)]


def per_server(parts: Split, run: Json, seed: int) -> list[dict[str, int]]:
    """Each server's share: every server achieves at least its own planned IOPS (the excess is
    spread unevenly), the other rates vary by about ±2 %, latencies by ±1 %."""
    servers = run.get("servers", 1)
    planned = round(planned_iops(run) / servers * MILLI)
    iops_w, latency_w = weights(servers, seed, 0.02), weights(servers, seed + 3, 0.01)
    achieved = [planned + extra for extra in spread(parts.achieved - planned * servers, iops_w)]
    columns = {
        "log_writes": spread(parts.log_writes, iops_w[::-1]),
        "maintenance": spread(parts.maintenance, iops_w),
        "replication": spread(parts.replication, iops_w),
    } | {key: spread(units, latency_w) for key, units in parts.latency_units.items()}
    out = []
    for s in range(servers):
        reads = round(achieved[s] * parts.read_share)
        out.append({"reads": reads, "writes": achieved[s] - reads} | {k: v[s] for k, v in columns.items()})
    return out


# --- the Jetstress-shaped evidence -----------------------------------------------------------------


def _milli(units: int) -> float:
    return units / MILLI


def server_runs(run_id: str, run: Json, parts: Split, start: datetime, seed: int) -> list[Run]:
    servers, dbs = run.get("servers", 1), run["databases"]
    shares = per_server(parts, run, seed)
    rates = ("reads", "writes", "log_writes", "maintenance", "replication")
    out = []
    for s in range(servers):
        machine = f"MBX{s + 1}"
        pid = 2100 + 37 * seed + 11 * s
        names = [f"Instance{pid}.{i + 1}" for i in range(dbs)]
        inst_w = weights(dbs, seed + s + 1)
        column = {name: spread(shares[s][name], inst_w) for name in rates}
        # Latencies vary less between instances (±1.5 %): the study's runs all passed (< 20 ms).
        latency = {k: spread(shares[s][k], weights(dbs, seed + s + 2, 0.015)) for k in LATENCY_KEYS}
        trans, total, bdm, repl = [], [], [], []
        for i, name in enumerate(names):
            common = {
                m.DB_READ_LATENCY: _milli(latency["read_latency"][i]),
                m.DB_WRITE_LATENCY: _milli(latency["write_latency"][i]),
                m.DB_WRITES: _milli(column["writes"][i]),
                m.DB_READ_BYTES: round(33000 + 900 * math.sin(i + seed), 3),
                m.DB_WRITE_BYTES: round(34500 + 700 * math.cos(i + seed), 3),
                m.LOG_WRITE_LATENCY: _milli(latency["log_write_latency"][i]),
                m.LOG_WRITES: _milli(column["log_writes"][i]),
                m.LOG_WRITE_BYTES: round(4700 + 150 * math.sin(2 * i + seed), 3),
            }
            replicated = column["replication"][i]
            trans.append(
                InstanceRow(
                    name,
                    common
                    | {
                        m.DB_READS: _milli(column["reads"][i]),
                        m.LOG_READ_LATENCY: 0.0,
                        m.LOG_READS: 0.0,
                        m.LOG_READ_BYTES: 0.0,
                    },
                )
            )
            total.append(
                InstanceRow(
                    name,
                    common
                    | {
                        m.DB_READS: _milli(column["reads"][i] + column["maintenance"][i]),
                        m.DB_READ_BYTES: round(120000 + 4000 * math.sin(i + seed), 3),
                        m.LOG_READ_LATENCY: round(2.0 + 0.1 * math.cos(i), 3) if replicated else 0.0,
                        m.LOG_READS: _milli(replicated),
                        m.LOG_READ_BYTES: round(180000 + 2500 * math.sin(i), 3) if replicated else 0.0,
                    },
                )
            )
            bdm.append(
                InstanceRow(
                    name,
                    {
                        m.BDM_READS: _milli(column["maintenance"][i]),
                        m.BDM_READ_BYTES: round(261900 + 300 * math.sin(i), 3),
                    },
                )
            )
            repl.append(
                InstanceRow(
                    name,
                    {
                        m.LOG_READS: _milli(replicated),
                        m.LOG_READ_BYTES: round(180000 + 2500 * math.sin(i), 3) if replicated else 0.0,
                    },
                )
            )
        begin = start + timedelta(minutes=7 * s)
        stem = (
            f"Performance_{begin.year}_{begin.month}_{begin.day}_{begin.hour}_{begin.minute}_{begin.second}"
        )
        quota = run.get("quota_mb", 512)
        per_db = run["mailboxes"] // dbs
        db_bytes = per_db * quota * 1024 * 1024
        achieved = sum(column["reads"]) + sum(column["writes"])
        perf = Run(
            kind=TestKind.PERFORMANCE,
            machine=machine,
            overall_result="Pass",
            test_description=run["about"],
            jetstress_version=JETSTRESS,
            ese_version=ESE,
            operating_system="Windows Server 2008 R2 Enterprise Service Pack 1 (6.1.7601.65536)",
            performance_log=f"C:\\Program Files\\Exchange Jetstress\\{stem}.blg",
            test_start=begin,
            test_end=begin + timedelta(hours=2, minutes=6, seconds=41),
            collection_start=begin + timedelta(minutes=4, seconds=12),
            collection_end=begin + timedelta(hours=2, minutes=4, seconds=12),
            parameters={
                "Thread Count": "2 (per database)",
                "Minimum Database Cache": f"{32.0 * dbs:.1f} MB",
                "Maximum Database Cache": f"{256.0 * dbs:.1f} MB",
                "Insert Operations": "40%",
                "Delete Operations": "20%",
                "Replace Operations": "5%",
                "Read Operations": "35%",
                "Lazy Commits": "70%",
                "Run Background Database Maintenance": "True",
                "Number of Copies per Database": str(run.get("copies", 1)),
            },
            databases=[
                DatabaseConfig(name, f"L:\\LOG{i + 1}", [f"L:\\DB{i + 1}\\Jetstress{i + 1:03d}001.edb"])
                for i, name in enumerate(names)
            ],
            tables={
                TableKind.TRANSACTIONAL: InstanceTable(TableKind.TRANSACTIONAL, trans),
                TableKind.BACKGROUND_MAINTENANCE: InstanceTable(TableKind.BACKGROUND_MAINTENANCE, bdm),
                TableKind.LOG_REPLICATION: InstanceTable(TableKind.LOG_REPLICATION, repl),
                TableKind.TOTAL: InstanceTable(TableKind.TOTAL, total),
            },
        )
        perf.sizing = m.Sizing(
            achieved_iops=_milli(achieved),
            target_iops=run["mailboxes"] * float(run["iops_per_mailbox"]),
            initial_database_bytes=float(db_bytes * dbs),
            final_database_bytes=float(db_bytes * dbs + 1_073_741_824 * dbs),
            database_files=dbs,
        )
        out.append(perf)
    return out


def config(run: Json, perf: Run) -> ConfigProfile:
    return ConfigProfile(
        source="JetstressConfig.xml",
        test_type="Performance",
        duration="P0Y0M0DT2H0M0S",
        mailbox_count=run["mailboxes"],
        mailbox_iops=float(run["iops_per_mailbox"]),
        mailbox_quota_mb=float(run.get("quota_mb", 512)),
        thread_count=2,
        database_copy_count=run.get("copies", 1),
        log_interval_ms=15000,
        jetstress_version=JETSTRESS,
        threshold_sets={
            "Strict": (Thresholds(20.0, 100.0, 10.0, 100.0), []),
            "Lenient": (Thresholds(20.0, 200.0, 10.0, 200.0), ["Stress"]),
        },
        instances=perf.databases,
    )


def write_run(folder: Path, run: Json, runs: list[Run]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    style = ReportStyle(decimals=3)
    for perf in runs:
        where = folder / perf.machine if len(runs) > 1 else folder
        where.mkdir(parents=True, exist_ok=True)
        stem = Path(str(perf.performance_log).replace("\\", "/")).stem
        (where / f"{stem}.html").write_text(
            write_report_html(perf, style=style), encoding="utf-8", newline="\n"
        )
        (where / "JetstressConfig.xml").write_bytes(write_config_xml(config(run, perf)))


# --- main --------------------------------------------------------------------------------------


def grids(data: Json) -> dict[Node, float]:
    out: dict[Node, float] = {}
    for run_id, run in data["runs"].items():
        instances = run["databases"] * run.get("servers", 1)
        out[(run_id, "total")] = 1 / MILLI
        for figure in LATENCY_KEYS:
            out[(run_id, figure)] = 1 / (MILLI * instances)
    for run_id in data["tables"]["table-03"]["runs"]:
        out[(run_id, "achieved")] = 1 / MILLI
    return out


def verify(data: Json) -> list[str]:
    """Read the folders back and check every printed cell; the cells that do not reproduce."""
    failures: list[str] = []
    for key, table in data["tables"].items():
        owner = key if "folders" in table else "table-04"  # Table 3 prints Table 4's runs
        folders = data["tables"][owner]["folders"]
        paths = [OUT / owner / name for name in folders]
        comparison = api.compare_paths(paths, published=DATA, table=key)
        assert comparison.check is not None
        failures += [
            f"{key} {c.figure} column {c.column + 1}: {c.printed} -> {c.shown} ({c.status})"
            for c in comparison.check.cells
            if c.status != "ok"
        ]
    return failures


def main() -> None:
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    values = solve(constraints(data), grids(data))
    order = list(data["runs"])
    parts = {run_id: split(run_id, data["runs"][run_id], values) for run_id in order}
    shutil.rmtree(OUT, ignore_errors=True)
    for key, table in data["tables"].items():
        for run_id, folder in zip(table["runs"], table.get("folders", []), strict=False):
            run = data["runs"][run_id]
            seed = order.index(run_id)
            start = datetime(2012, 1, 9, 8, 30) + timedelta(days=seed)  # one run, one time, in every table
            runs = server_runs(run_id, run, parts[run_id], start, seed)
            write_run(OUT / key / folder, run, runs)
        print(f"wrote trends/{key}")
    failures = verify(data)
    for line in failures:
        print(f"  not reproduced: {line}")


if __name__ == "__main__":
    main()
