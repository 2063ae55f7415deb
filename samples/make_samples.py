"""Write the bundled Jetstress-shaped sample folders from samples/data/*.json.

    python samples/make_samples.py

Deterministic: re-running produces identical files. The figures are those printed in the
appendices of two published ESRP-Storage documents (see samples/README.md and
samples/data/REPAIRS.md); the HTML markup and the counter logs are this project's own rendering.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from esrp_report.ingest import labels as L
from esrp_report.ingest.test_log import parse_test_log
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
from esrp_report.synth.jetstress_counters import synthesize
from esrp_report.synth.jetstress_html import write_report_html
from esrp_report.synth.jetstress_xml import write_config_xml, write_result_xml
from esrp_report.synth.perfmon_csv import write_pdh_csv

HERE = Path(__file__).parent
DATA = HERE / "data"
TIME = "%m/%d/%Y %I:%M:%S %p"


def _time(text: str | None) -> datetime | None:
    return datetime.strptime(text, TIME) if text else None


def run_from_json(data: dict) -> Run:  # type: ignore[type-arg]
    summary = data["summary"]
    get = {L.normalize_label(k): v for k, v in summary.items()}.get
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
        parameters=dict(data["parameters"]),
    )
    for label, value in data["sizing"].items():
        attr = L.SIZING_LABELS[L.normalize_label(label)]
        number = float(value.replace(",", ""))
        setattr(run.sizing, attr, int(number) if attr == "database_files" else number)
    run.databases = [DatabaseConfig(i, log, [db] if db else []) for i, log, db in data["databases"]]
    for name, table in data["tables"].items():
        kind = TableKind(name)
        keys = [L.INSTANCE_COLUMNS[L.normalize_header(h)] for h in table["header"][1:]]
        if kind is TableKind.LOG_REPLICATION:
            keys = [L.REPLICATION_ALIASES.get(k, k) for k in keys]
        rows = [InstanceRow(r[0], dict(zip(keys, r[1:], strict=True))) for r in table["rows"]]
        run.tables[kind] = InstanceTable(kind, rows)
    run.host = [HostCounter(*row) for row in data["host"]]
    run.backup = [BackupRow(*row) for row in data["backup"]]
    run.soft_recovery = [SoftRecoveryRow(*row) for row in data["soft_recovery"]]
    run.checksum = [
        ChecksumRow(r[0], *r[1:5], file_length_mb=r[5], seconds_taken=r[6], is_sum=r[0] == "(Sum)")
        for r in data["checksum"]
    ]
    if data["log"]:
        run.test_log = parse_test_log("\n".join(data["log"]), "sample")
    return run


def file_stem(run: Run) -> str:
    """Jetstress names its files <Kind>_<Y>_<M>_<D>_<h>_<m>_<s> (facts §2.3)."""
    candidates = [run.performance_log or ""]
    if run.test_log is not None:
        candidates += [name for name, _ in run.test_log.sample_counts]
    for name in candidates:
        stem = re.sub(r"[\s_]+", "_", Path(name.replace("\\", "/")).stem)
        if stem.casefold().startswith(run.kind.value.casefold()):
            return stem
    start = run.test_start or (run.test_log.entries[0].timestamp if run.test_log else datetime(2000, 1, 1))
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
        run = run_from_json(json.loads(path.read_text(encoding="utf-8")))
        folder = HERE / run.machine
        folder.mkdir(exist_ok=True)
        stem = file_stem(run)
        (folder / f"{stem}.html").write_text(write_report_html(run), encoding="utf-8", newline="\n")
        if run.machine == "EMAIL5" and run.kind is TestKind.PERFORMANCE:
            log = synthesize(run, interval_s=15.0)
            write_pdh_csv(
                folder / f"{stem}.csv",
                log.paths,
                log.timestamps,
                log.values,
                time_zone_name="Eastern Standard Time",
                bias_minutes=300,
            )
            (folder / f"{stem}.xml").write_bytes(write_result_xml(run))
            (folder / "JetstressConfig.xml").write_bytes(write_config_xml(email5_config(run)))
        print(f"wrote {folder.name}/{stem}")


if __name__ == "__main__":
    main()
