"""Write the EMC Symmetrix VMAX 10-server sample solution (samples/vmax/) from a table of figures.

    PYTHONPATH=. .venv/bin/python samples/make_vmax.py

Deterministic. Server 4 is EMAIL5, whose reports are transcribed from the document's appendix
(samples/EMAIL5, written by make_samples.py). The other nine servers are built from EMAIL5's
reports as a template: every per-server figure of samples/data/vmax-servers.toml is spread over
the 20 database instances in EMAIL5's own proportions (turned by one place more for each server,
so that no two servers share a pattern), on the printed grid (0.001), so that the
instance sums and means reproduce the table exactly. Columns the document does not summarise
(average bytes, maintenance and replication reads) are EMAIL5's; the Total table's mean read size
is worked out from them and the server's own reads, as the counter log's is, so that every report
figure is its log's figure rounded to Jetstress's three decimals. The 24-hour stress test, which
the document publishes for EMAIL5 only, follows each server's 2-hour figures in EMAIL5's
stress-to-performance proportions (see _stress_latencies and samples/README.md).
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from make_samples import DATA, HERE, email5_config, file_stem, run_from_json, style_for

from esrp_synth.event_log import EventRecord, write_evt
from esrp_synth.jetstress_counters import synthesize, write_log
from esrp_synth.jetstress_html import write_report_html
from esrp_synth.jetstress_xml import write_config_xml, write_result_xml

OUT = HERE / "vmax"
KINDS = ("Performance", "Stress", "DatabaseBackup", "SoftRecovery")
# Column positions in the transcribed transactional/total rows (after the instance name).
READ_LAT, WRITE_LAT, READS, WRITES, READ_BYTES, LOG_WRITE_LAT, LOG_WRITES = 1, 2, 3, 4, 5, 8, 10
# In the Background Database Maintenance rows.
BDM_READS, BDM_READ_BYTES = 1, 2
_INSTANCE = re.compile(r"Instance\d+\.")
_LATENCY_LINE = re.compile(r"^(.* -- )(Instance\d+\.\d+) has [\d.]+ for (I/O [A-Za-z ]+ Average Latency)\.$")

Json = dict[str, Any]


def spread(total: float, weights: Sequence[float], grid: float) -> list[float]:
    """``total`` split in proportion to ``weights`` on a grid, summing to ``total`` exactly."""
    units = round(total / grid)
    scale = sum(weights)
    parts = [int(units * w // scale) for w in weights]
    for i in range(units - sum(parts)):
        parts[i % len(parts)] += 1
    return [p * grid for p in parts]


def _cells(rows: list[list[str]], col: int) -> list[float]:
    return [float(row[col]) for row in rows]


def _renamed(data: Json, machine: str, pid: int) -> Json:
    text = json.dumps(data)
    text = _INSTANCE.sub(f"Instance{pid}.", text).replace("EMAIL5", machine)
    return json.loads(text)


def _set_column(rows: list[list[str]], col: int, values: list[float], decimals: int = 3) -> None:
    for row, value in zip(rows, values, strict=True):
        row[col] = f"{value:.{decimals}f}"


def performance_like(data: Json, figures: dict[str, float], scale: float = 1.0, turn: int = 0) -> Json:
    """EMAIL5's Performance (or Stress) data carrying another server's figures, spread over the
    instances in EMAIL5's proportions turned by ``turn`` places (instance k takes EMAIL5's
    instance k + turn's share), so that no two servers' instances show the same pattern."""
    out = copy.deepcopy(data)
    trans = out["tables"]["transactional"]["rows"]
    total = out["tables"]["total"]["rows"]
    bdm = out["tables"]["background_maintenance"]["rows"]
    n = len(trans)

    def shares(col: int) -> list[float]:
        cells = _cells(trans, col)
        return cells[turn % n :] + cells[: turn % n]

    columns = {
        READS: spread(figures["reads"] * scale, shares(READS), 0.001),
        WRITES: spread(figures["writes"] * scale, shares(WRITES), 0.001),
        LOG_WRITES: spread(figures["log_writes"] * scale, shares(LOG_WRITES), 0.001),
        READ_LAT: spread(figures["read_latency"] * n, shares(READ_LAT), 0.001),
        WRITE_LAT: spread(figures["write_latency"] * n, shares(WRITE_LAT), 0.001),
        LOG_WRITE_LAT: spread(figures["log_write_latency"] * n, shares(LOG_WRITE_LAT), 0.001),
    }
    for col, values in columns.items():
        _set_column(trans, col, values)
        _set_column(total, col, values)
    # Total reads = transactional + maintenance reads (facts §9), kept on the printed grid.
    total_reads = [r + float(b[BDM_READS]) for r, b in zip(columns[READS], bdm, strict=True)]
    _set_column(total, READS, total_reads)
    # Their mean size is the two parts' sizes weighted by their rates, as the counter log's
    # total (make_vmax's CSV) is built; EMAIL5's printed sizes belong to EMAIL5's own rates, and
    # kept beside other rates they would disagree with the log by up to 0.6 %.
    _set_column(total, READ_BYTES, [_mean_read_bytes(t, b) for t, b in zip(trans, bdm, strict=True)])
    if "sizing" in out:
        achieved = figures["achieved"] * scale
        out["sizing"]["Achieved Transactional I/O per Second"] = f"{achieved:.3f}"
    latencies = {(row[0], "I/O Database Reads Average Latency"): float(row[READ_LAT]) for row in trans} | {
        (row[0], "I/O Log Writes Average Latency"): float(row[LOG_WRITE_LAT]) for row in trans
    }
    out["log"] = [_relatency(line, latencies) for line in out.get("log", [])]
    return out


def _mean_read_bytes(trans: list[str], bdm: list[str]) -> float:
    reads, maintenance = float(trans[READS]), float(bdm[BDM_READS])
    moved = reads * float(trans[READ_BYTES]) + maintenance * float(bdm[BDM_READ_BYTES])
    return moved / (reads + maintenance)


def _relatency(line: str, latencies: dict[tuple[str, str], float]) -> str:
    match = _LATENCY_LINE.match(line)
    if match is None:
        return line
    value = latencies.get((match.group(2), match.group(3)))
    if value is None:
        return line
    return f"{match.group(1)}{match.group(2)} has {value:.1f} for {match.group(3)}."


def backup_like(data: Json, per_database: float) -> Json:
    out = copy.deepcopy(data)
    rows = out["backup"]["rows"]
    rates = spread(per_database * len(rows), [float(r[3]) for r in rows], 0.01)
    for row, rate in zip(rows, rates, strict=True):
        seconds = round(float(row[1]) / rate)
        row[2] = f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
        row[3] = f"{rate:.2f}"
    return out


def recovery_like(data: Json, seconds_per_log: float) -> Json:
    out = copy.deepcopy(data)
    rows = out["soft_recovery"]["rows"]
    current = sum(float(r[2]) / float(r[1]) for r in rows) / len(rows)
    for row in rows:
        row[2] = f"{float(row[2]) * seconds_per_log / current:.7f}"
    return out


def event_logs(folder: Path, machine: str, data: Json) -> None:
    """Application and System logs as Jetstress saves them after the stress test: service
    notices only, no error events (the document: 'No errors were reported in the event log')."""
    run = run_from_json(data)
    assert run.test_start is not None and run.test_end is not None
    # .evt stores UTC; the sample's tests ran in Eastern Standard Time (UTC-5), as its counter logs say.
    start, end = run.test_start + timedelta(hours=5), run.test_end + timedelta(hours=5)
    for log, source in (("Application", "ESE"), ("System", "Service Control Manager")):
        records = [
            EventRecord(start, 102 if log == "Application" else 7036, "information", source, machine),
            EventRecord(end, 103 if log == "Application" else 7036, "information", source, machine),
        ]
        stamp = f"{end.year}_{end.month}_{end.day}_{end.hour}_{end.minute}_{end.second}"
        (folder / f"{log}_{stamp}.evt").write_bytes(write_evt(records))


def main() -> None:
    table = tomllib.loads((DATA / "vmax-servers.toml").read_text(encoding="utf-8"))
    template = {k: json.loads((DATA / f"EMAIL5-{k}.json").read_text(encoding="utf-8")) for k in KINDS}
    email5 = template["Performance"]
    email5_achieved = float(email5["sizing"]["Achieved Transactional I/O per Second"])
    for index, server in enumerate(table["server"]):
        if server.get("transcribed"):
            continue
        machine = server["machine"]
        folder = OUT / machine
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for offset, kind in enumerate(KINDS):
            data = _renamed(template[kind], machine, 3100 + 97 * index + offset)
            if kind == "Performance":
                data = performance_like(data, server, turn=index + 1)
            elif kind == "Stress":
                stress = template["Stress"]
                factor = float(stress["sizing"]["Achieved Transactional I/O per Second"]) / email5_achieved
                figures = server | _stress_latencies(server, email5, stress)
                data = performance_like(data, figures, factor, turn=index + 1)
            elif kind == "DatabaseBackup":
                data = backup_like(data, server["backup_per_database"])
            else:
                data = recovery_like(data, server["seconds_per_log"])
            run = run_from_json(data)
            stem = file_stem(run)
            html = write_report_html(run, style=style_for(data))
            (folder / f"{stem}.html").write_text(html, encoding="utf-8", newline="\n")
            if kind == "Performance":
                log = synthesize(run, interval_s=15.0)
                write_log(folder / f"{stem}.csv", log)
                (folder / f"{stem}.xml").write_bytes(write_result_xml(run))
                (folder / "JetstressConfig.xml").write_bytes(write_config_xml(email5_config(run)))
            if kind == "Stress":
                # Jetstress logs every test; the maxima rules need the samples. Every 5 minutes
                # over the 24 hours keeps the sample small (perfmon's own default is 15 s).
                log = synthesize(run, interval_s=300.0, warmup_samples=3)
                write_log(folder / f"{stem}.csv", log)
                event_logs(folder, machine, data)
        print(f"wrote vmax/{machine}")


LATENCIES = {"read_latency": READ_LAT, "write_latency": WRITE_LAT, "log_write_latency": LOG_WRITE_LAT}


def _stress_latencies(server: Json, performance: Json, stress: Json) -> dict[str, float]:
    """A server's 24-hour latencies: the document publishes stress figures for EMAIL5 alone, so
    each server keeps its own 2-hour latency in EMAIL5's stress-to-performance proportion (EMAIL5's
    stress reads take 18.671 / 18.369 of its 2-hour ones). The servers then differ in the stress
    test exactly as much as the document's per-server table shows them differing in the 2-hour
    test (reads 18.132-18.547 ms, writes 2.930-3.817 ms, log writes 0.662-1.127 ms)."""

    def mean(data: Json, col: int) -> float:
        rows = data["tables"]["transactional"]["rows"]
        return sum(_cells(rows, col)) / len(rows)

    return {
        name: server[name] * mean(stress, col) / mean(performance, col) for name, col in LATENCIES.items()
    }


if __name__ == "__main__":
    main()
