"""The bundled samples are clean, plausible evidence (issue 32 item 5).

A newcomer's first document is built from them, so every report must agree with the counter log
it came from to the last digit Jetstress prints, each sample's build must say only what it is
meant to say, and the VMAX servers must differ in the 24-hour test as the published document
shows them differing in the 2-hour one (samples/README.md says where each figure comes from).
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

from esrp_report import model as m
from esrp_report.app import api
from esrp_report.ingest.jetstress.report_html import read_report
from esrp_report.model import InstanceTable, Run, TableKind, TestKind
from esrp_synth.jetstress_counters import synthesize

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
VMAX_SERVERS = tomllib.loads((SAMPLES / "data" / "vmax-servers.toml").read_text(encoding="utf-8"))["server"]
VMAX_FOLDERS = ["EMAIL5" if s.get("transcribed") else f"vmax/{s['machine']}" for s in VMAX_SERVERS]
LOGGED_FOLDERS = [*VMAX_FOLDERS, *(f"dellemc/{name}" for name in ("JS16", "JS17", "JS8", "JS9"))]
# Jetstress prints the instance and host tables with three decimals.
HALF_UNIT = 0.0005

MISSING_REPORTS = "no Stress, DatabaseBackup, SoftRecovery report in the results"
# What each sample's build is meant to say besides its figures: nothing for the demo (VMAX);
# the Dell EMC document publishes only the 2-hour reports, and NetApp published no counter
# logs, so the maxima cannot be judged (samples/README.md).
INTENDED = {
    "vmax": ([], []),
    "dellemc": ([("warning", f"Server {n}", MISSING_REPORTS) for n in range(1, 5)], []),
    "netapp": (
        [],
        [
            f"not evaluated: {rule} on 3650-4 Performance, 3650-4 Stress: a maximum needs the counter log's samples"
            for rule in ("db-read-latency-max", "log-write-latency-max")
        ],
    ),
}


@pytest.mark.parametrize("stem", sorted(INTENDED))
def test_each_sample_builds_with_no_disagreement_and_only_its_intended_notes(
    stem: str, tmp_path: Path
) -> None:
    result = api.build(SAMPLES / f"{stem}.toml", tmp_path, formats=("html",))
    problems, blocking = INTENDED[stem]
    assert result.document.disagreements == []
    assert [(p.severity, p.source, p.message) for p in result.document.problems] == problems
    assert result.blocking == blocking
    assert (tmp_path / f"{stem}-diagnostics.txt").exists() is bool(problems)


def _off_grid(report: InstanceTable, logged: InstanceTable) -> list[str]:
    rows = {row.instance.rsplit("/", 1)[-1].casefold(): row for row in logged.rows}
    found: list[str] = []
    for row in report.rows:
        theirs = rows[row.instance.casefold()].values
        for key, value in row.values.items():
            if key in theirs and abs(theirs[key] - value) >= HALF_UNIT:
                found.append(f"{report.kind.value} {row.instance} {key}: report {value}, log {theirs[key]}")
    return found


@pytest.mark.parametrize("folder", LOGGED_FOLDERS)
def test_every_report_figure_is_its_counter_logs_figure_as_jetstress_rounds_it(folder: str) -> None:
    assessment = api.check([SAMPLES / folder])
    runs = [r for s in assessment.servers for r in s.runs if r.counter is not None]
    assert {r.run.kind for r in runs} >= {TestKind.PERFORMANCE}
    for ra in runs:
        assert ra.counter is not None
        assert ra.disagreements == [] and ra.problems == []
        off = [f for kind, table in ra.run.tables.items() for f in _off_grid(table, ra.counter.tables[kind])]
        assert off == [], f"{ra.run.kind.value}: {len(off)} figure(s), first {off[0]}"
        logged = {h.name: h for h in ra.counter.host}
        for host in ra.run.host:
            for stat in ("average", "minimum", "maximum"):
                printed, theirs = getattr(host, stat), getattr(logged[host.name], stat)
                assert abs(theirs - printed) < HALF_UNIT, (ra.run.kind.value, host.name, stat)
        # The server's sums too: a log whose instances each round right may not add up right.
        for key in (m.DB_READS, m.DB_WRITES, m.LOG_WRITES):
            mine = [row.values[key] for row in ra.run.tables[TableKind.TRANSACTIONAL].rows]
            theirs = [row.values[key] for row in ra.counter.tables[TableKind.TRANSACTIONAL].rows]
            assert f"{math.fsum(theirs):.3f}" == f"{math.fsum(mine):.3f}", key


def _stress(folder: str) -> Run:
    (path,) = (SAMPLES / folder).glob("Stress_*.html")
    return read_report(path)


def _server_figures(run: Run) -> dict[str, float]:
    rows = run.tables[TableKind.TRANSACTIONAL].rows

    def mean(key: str) -> float:
        return math.fsum(row.values[key] for row in rows) / len(rows)

    return {
        "iops": math.fsum(row.values[key] for row in rows for key in (m.DB_READS, m.DB_WRITES)),
        "read_latency": mean(m.DB_READ_LATENCY),
        "write_latency": mean(m.DB_WRITE_LATENCY),
        "log_write_latency": mean(m.LOG_WRITE_LATENCY),
    }


def test_vmax_servers_differ_in_the_stress_test_as_the_document_shows_them_in_the_2_hour_test() -> None:
    stress = [_server_figures(_stress(folder)) for folder in VMAX_FOLDERS]
    for name in ("iops", "read_latency", "write_latency", "log_write_latency"):
        printed = [f"{server[name]:.3f}" for server in stress]
        assert len(set(printed)) == len(VMAX_FOLDERS), f"{name}: {printed}"
    published = {
        "iops": [s["achieved"] for s in VMAX_SERVERS],
        **{
            name: [s[name] for s in VMAX_SERVERS]
            for name in ("read_latency", "write_latency", "log_write_latency")
        },
    }
    for name, two_hour in published.items():
        # Each server keeps its own 2-hour figure in EMAIL5's stress-to-2-hour proportion, so the
        # spread of the ten servers (largest over smallest) is the document's, to the grid.
        in_stress = [server[name] for server in stress]
        assert max(in_stress) / min(in_stress) == pytest.approx(max(two_hour) / min(two_hour), rel=2e-3), name
        ranked = sorted(range(len(two_hour)), key=two_hour.__getitem__)
        assert sorted(range(len(in_stress)), key=in_stress.__getitem__) == ranked, name


def _window_means(run: Run, instance: str) -> dict[str, float]:
    log = synthesize(run)
    assert run.collection_start is not None and run.collection_end is not None
    inside = [run.collection_start <= t <= run.collection_end for t in log.timestamps]
    means = {}
    for column, path in enumerate(log.paths):
        if f"(JetstressWin/{instance})" in path:
            means[path.rsplit("\\", 1)[-1]] = float(log.values[inside, column].mean())
    return means


@pytest.mark.parametrize(("shift", "reached"), [(0.001, True), (0.003, False)])
def test_a_total_printed_off_its_parts_is_logged_inside_every_rounding_it_can_reach(
    shift: float, reached: bool
) -> None:
    """A total one digit off the sum of its printed parts is a rounding Jetstress makes: the log
    gives back the total, both parts and the server's sums. Three digits off is not rounding: the
    log keeps the parts' sum, and the report then disagrees with it."""
    run = read_report(SAMPLES / "EMAIL5" / "Performance_2011_3_11_13_27_46.html")
    name = "Instance2756.4"
    trans = run.tables[TableKind.TRANSACTIONAL].row(name)
    bdm = run.tables[TableKind.BACKGROUND_MAINTENANCE].row(name)
    total = run.tables[TableKind.TOTAL].row(name)
    assert trans is not None and bdm is not None and total is not None
    parts = trans.values[m.DB_READS] + bdm.values[m.BDM_READS]
    total.values[m.DB_READS] = round(parts + shift, 3)
    means = _window_means(run, name)
    logged_total = means["I/O Database Reads/sec"]
    logged_bdm = means["Database Maintenance IO Reads/sec"]
    assert (abs(logged_total - total.values[m.DB_READS]) < HALF_UNIT) is reached
    assert abs(logged_bdm - bdm.values[m.BDM_READS]) < HALF_UNIT
    assert abs(logged_total - logged_bdm - trans.values[m.DB_READS]) < HALF_UNIT
    if not reached:
        assert logged_total == pytest.approx(parts, abs=1e-9)


def test_no_two_vmax_servers_spread_their_figures_over_their_instances_alike() -> None:
    """Each server's figures are spread in EMAIL5's proportions turned by its own number of places:
    the order of its instances by read latency (and by reads) is its own."""
    for kind in ("Performance", "Stress"):
        orders = set()
        for folder in VMAX_FOLDERS:
            (path,) = (SAMPLES / folder).glob(f"{kind}_*.html")
            rows = read_report(path).tables[TableKind.TRANSACTIONAL].rows
            for key in (m.DB_READ_LATENCY, m.DB_READS):
                orders.add((key, tuple(sorted(range(len(rows)), key=lambda i: rows[i].values[key]))))
        assert len(orders) == 2 * len(VMAX_FOLDERS), kind
