"""Write the bundled Jetstress-shaped sample folders from samples/data/*.json.

    PYTHONPATH=. .venv/bin/python samples/make_samples.py

Deterministic: re-running produces identical files. The figures are those printed in the
appendices of two published ESRP-Storage documents, kept in the JSON as printed (see
samples/README.md and samples/data/REPAIRS.md); the HTML markup, the result and configuration
XML and the counter log are this project's own rendering.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress.test_log import parse_test_log
from esrp_report.model import (
    BackupRow,
    ChecksumRow,
    ConfigProfile,
    DatabaseConfig,
    HostCounter,
    InstanceRow,
    InstanceTable,
    Run,
    SoftRecoveryRow,
    TableKind,
    TestKind,
    Thresholds,
)
from esrp_report.render.jetstress_text import TABLE_COLUMNS
from esrp_synth.jetstress_counters import synthesize, write_log
from esrp_synth.jetstress_html import ReportStyle, write_report_html
from esrp_synth.jetstress_xml import write_config_xml, write_result_xml

HERE = Path(__file__).parent
DATA = HERE / "data"
TIME = "%m/%d/%Y %I:%M:%S %p"
_DURATION = re.compile(r"^(\d+):(\d{2}):(\d{2})$")

Json = dict[str, Any]


def _time(text: str | None) -> datetime | None:
    return datetime.strptime(text, TIME) if text else None


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _seconds(text: str) -> float:
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not HH:MM:SS: {text!r}")
    hours, minutes, seconds = (int(part) for part in match.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def _by_field(table: Json, mapping: dict[str, str]) -> list[dict[str, str]]:
    fields = [mapping[L.normalize_header(text)] for text in table["header"]]
    return [dict(zip(fields, row, strict=True)) for row in table["rows"]]


def _instance_table(kind: TableKind, table: Json) -> InstanceTable:
    keys = [L.INSTANCE_COLUMNS[L.normalize_header(text)] for text in table["header"][1:]]
    if kind is TableKind.LOG_REPLICATION:
        keys = [L.REPLICATION_ALIASES.get(key, key) for key in keys]
    # The printed header is reused as the rendered header, so its columns must be in report order.
    if keys != [key for _, key in TABLE_COLUMNS[kind]]:
        raise ValueError(f"{kind.value}: columns not in report order: {table['header']}")
    rows = [
        InstanceRow(row[0], {key: _number(cell) for key, cell in zip(keys, row[1:], strict=True)})
        for row in table["rows"]
    ]
    return InstanceTable(kind, rows)


def run_from_json(data: Json) -> Run:
    summary: dict[str, str] = data.get("summary", {})
    get = {L.normalize_label(label): value for label, value in summary.items()}.get
    run = Run(
        kind=TestKind(data["kind"]),
        machine=get("machine name") or data["server"],
        overall_result=get("overall test result"),
        test_description=get("test description") or None,
        jetstress_version=get("jetstress version"),
        ese_version=get("ese version"),
        operating_system=get("operating system"),
        performance_log=get("performance log"),
        test_start=_time(get("test start time")),
        test_end=_time(get("test end time")),
        collection_start=_time(get("collection start time")),
        collection_end=_time(get("collection end time")),
        summary=dict(summary),
        parameters=dict(data.get("parameters", {})),
    )
    for label, value in data.get("sizing", {}).items():
        attr = L.SIZING_LABELS[L.normalize_label(label)]
        figure = _number(value)
        setattr(run.sizing, attr, int(figure) if attr == "database_files" else figure)
    run.databases = [
        DatabaseConfig(db["instance"], db["log_path"] or None, [db["database"]])
        for db in data.get("databases", [])
    ]
    for name, table in data.get("tables", {}).items():
        kind = TableKind(name)
        run.tables[kind] = _instance_table(kind, table)
    if "host" in data:
        run.host = [
            HostCounter(row[0], *(_number(cell) for cell in row[1:4])) for row in data["host"]["rows"]
        ]
    if "backup" in data:
        run.backup = [
            BackupRow(
                r["instance"],
                _number(r["database_size_mb"]),
                _seconds(r["elapsed"]),
                _number(r["mb_per_sec"]),
            )
            for r in _by_field(data["backup"], L.BACKUP_COLUMNS)
        ]
    if "soft_recovery" in data:
        run.soft_recovery = [
            SoftRecoveryRow(r["instance"], _number(r["logs_replayed"]), _number(r["elapsed_seconds"]))
            for r in _by_field(data["soft_recovery"], L.RECOVERY_COLUMNS)
        ]
    if "checksum" in data:
        for r in _by_field(data["checksum"], L.CHECKSUM_COLUMNS):
            length = L.CHECKSUM_LENGTH.match(r["length"])
            if length is None:
                raise ValueError(f"not '<n> MB/<n> sec': {r['length']!r}")
            run.checksum.append(
                ChecksumRow(
                    r["database"],
                    seen_pages=_number(r["seen_pages"]),
                    bad_pages=_number(r["bad_pages"]),
                    correctable_pages=_number(r["correctable_pages"]),
                    wrong_page_number_pages=_number(r["wrong_page_number_pages"]),
                    file_length_mb=_number(length.group("mb")),
                    seconds_taken=_number(length.group("sec")),
                    is_sum=r["database"].casefold() in L.SUM_ROW_LABELS,
                )
            )
    # (The DBChecksum appendix's "Disk Subsystem Performance" table is transcribed but has no
    # place in the model, so it is not rendered.)
    if data.get("log"):
        run.test_log = parse_test_log("\n".join(data["log"]), "sample")
    return run


def style_for(data: Json) -> ReportStyle:
    """The house style, keeping the printed header spellings and layout variants of the source."""
    headers = tuple(
        (TableKind(name), tuple(table["header"])) for name, table in data.get("tables", {}).items()
    )
    unlabelled = tuple(db["instance"] for db in data.get("databases", []) if not db["log_path_labelled"])
    return ReportStyle(
        decimals=3,
        column_headers=headers,
        unlabelled_log_paths=unlabelled,
        total_heading=data.get("layout", {}).get("total_heading", True),
    )


def file_stem(run: Run) -> str:
    """Jetstress names its files <Kind>_<Y>_<M>_<D>_<h>_<m>_<s> (facts §2.3): the report's own
    performance log name when it has one, else a log file the test log names, else its start."""
    candidates = [run.performance_log or ""]
    if run.test_log is not None:
        candidates += [name for name, _ in run.test_log.sample_counts]
    for name in candidates:
        stem = re.sub(r"[\s_]+", "_", Path(name.replace("\\", "/")).stem)
        if stem.casefold().startswith(run.kind.value.casefold() + "_"):
            return stem
    start = run.test_start or (run.test_log.entries[0].timestamp if run.test_log else None)
    if start is None:
        raise ValueError(f"{run.kind.value} run of {run.machine}: no name and no start time")
    return (
        f"{run.kind.value}_{start.year}_{start.month}_{start.day}_{start.hour}_{start.minute}_{start.second}"
    )


def email5_config(run: Run) -> ConfigProfile:
    """The configuration behind the EMAIL5 runs: 10,000 mailboxes at 0.14 IOPS (target 1,400)."""
    return ConfigProfile(
        source="JetstressConfig.xml",
        test_type="Performance",
        duration="P0Y0M0DT2H0M0S",
        mailbox_count=10000,
        mailbox_iops=0.14,
        mailbox_quota_mb=2048.0,
        thread_count=5,
        database_copy_count=2,
        log_interval_ms=15000,
        jetstress_version="14.01.0225.017",
        threshold_sets={
            "Strict": (Thresholds(20.0, 100.0, 10.0, 100.0), []),
            "Lenient": (Thresholds(20.0, 200.0, 10.0, 200.0), ["Stress"]),
        },
        instances=run.databases,
    )


def main() -> None:
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        run = run_from_json(data)
        folder = HERE / run.machine
        folder.mkdir(exist_ok=True)
        stem = file_stem(run)
        html = write_report_html(run, style=style_for(data))
        (folder / f"{stem}.html").write_text(html, encoding="utf-8", newline="\n")
        if run.machine == "EMAIL5" and run.kind is TestKind.PERFORMANCE:
            log = synthesize(run, interval_s=15.0)
            write_log(folder / f"{stem}.csv", log)
            (folder / f"{stem}.xml").write_bytes(write_result_xml(run))
            (folder / "JetstressConfig.xml").write_bytes(write_config_xml(email5_config(run)))
        if run.machine == "EMAIL5" and run.kind is TestKind.STRESS:
            # The maxima rules need the samples; every 5 minutes over the 24 hours keeps the
            # sample small (perfmon's own default is 15 s).
            log = synthesize(run, interval_s=300.0, warmup_samples=3)
            write_log(folder / f"{stem}.csv", log)
        print(f"wrote {folder.name}/{stem}")


if __name__ == "__main__":
    main()
