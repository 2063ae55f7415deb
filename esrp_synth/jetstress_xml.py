"""Write Jetstress result XML (root ``output``) and configuration XML (root ``configuration``).

The layouts follow facts §2.2 and §4; what those do not fix is this project's choice:
transactional rows go to ``disk-subsystem-transactional`` (inferred name), issues are
``<element value=...>``, and an EseInstance whose name is not its positional default gets a
``Name`` attribute (Jetstress writes none). Numbers are written so that reading them back gives
the identical float: whole values as integers, everything else as ``repr``.
"""

from __future__ import annotations

import math
from datetime import datetime

from lxml import etree

from esrp_report import model as m
from esrp_report.ingest.jetstress.config_xml import THRESHOLD_FIELDS, default_instance_name
from esrp_report.model import ConfigProfile, Run, TableKind

# Counter names as the result XML spells them (facts §2.2: no "(Attached)").
COUNTER_NAMES: dict[str, str] = {
    m.DB_READ_LATENCY: "I/O Database Reads Average Latency",
    m.DB_WRITE_LATENCY: "I/O Database Writes Average Latency",
    m.DB_READS: "I/O Database Reads/sec",
    m.DB_WRITES: "I/O Database Writes/sec",
    m.DB_READ_BYTES: "I/O Database Reads Average Bytes",
    m.DB_WRITE_BYTES: "I/O Database Writes Average Bytes",
    m.LOG_READ_LATENCY: "I/O Log Reads Average Latency",
    m.LOG_WRITE_LATENCY: "I/O Log Writes Average Latency",
    m.LOG_READS: "I/O Log Reads/sec",
    m.LOG_WRITES: "I/O Log Writes/sec",
    m.LOG_READ_BYTES: "I/O Log Reads Average Bytes",
    m.LOG_WRITE_BYTES: "I/O Log Writes Average Bytes",
    m.BDM_READS: "Database Maintenance IO Reads/sec",
    m.BDM_READ_BYTES: "Database Maintenance IO Reads Average Bytes",
}
SECTIONS: dict[TableKind, str] = {
    TableKind.TRANSACTIONAL: "disk-subsystem-transactional",
    TableKind.TOTAL: "disk-subsystem-total",
    TableKind.BACKGROUND_MAINTENANCE: "disk-subsystem-of-dbmaintenance",
    TableKind.LOG_REPLICATION: "disk-subsystem-of-logreplication",
}
INSTANCE_OBJECT = "MSExchange Database ==> Instances"
_EXACT_INTEGER_LIMIT = 2**53


def number_text(value: float | int) -> str:
    """Text that reads back as exactly ``value``; refuses NaN and infinity."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    as_float = float(value)
    if not math.isfinite(as_float):
        raise ValueError(f"cannot write {value!r} as a Jetstress number")
    if as_float.is_integer() and abs(as_float) < _EXACT_INTEGER_LIMIT:
        return str(int(as_float))
    return repr(as_float)


def timestamp_text(value: datetime) -> str:
    """'3/11/2011 1:27:46 PM', as Jetstress prints local times (seconds resolution)."""
    hour = value.hour % 12 or 12
    return f"{value.month}/{value.day}/{value.year} {hour}:{value:%M:%S} {'AM' if value.hour < 12 else 'PM'}"


def _section(parent: etree._Element, name: str, items: list[tuple[str, str]]) -> None:
    holder = etree.SubElement(parent, name)
    for key, value in items:
        etree.SubElement(holder, "element", name=key, value=value)


def _summary_rows(run: Run) -> list[tuple[str, str]]:
    texts: tuple[tuple[str, str | None], ...] = (
        ("Overall Test Result", run.overall_result),
        ("Machine Name", run.machine or None),
        ("Test Description", run.test_description),
    )
    times = (
        ("Test Start Time", run.test_start),
        ("Test End Time", run.test_end),
        ("Collection Start Time", run.collection_start),
        ("Collection End Time", run.collection_end),
    )
    more: tuple[tuple[str, str | None], ...] = (
        ("Jetstress Version", run.jetstress_version),
        ("Ese Version", run.ese_version),
        ("Operating System", run.operating_system),
        ("Performance Log", run.performance_log),
    )
    rows = [(label, value) for label, value in texts if value is not None]
    rows += [(label, timestamp_text(value)) for label, value in times if value is not None]
    rows += [(label, value) for label, value in more if value is not None]
    # Any other summary rows the run carries (raw), after the ones the fields decide.
    written = {label.casefold() for label, _ in rows}
    rows += [(label, value) for label, value in run.summary.items() if label.casefold() not in written]
    return rows


def write_result_xml(run: Run) -> bytes:
    root = etree.Element("output")
    _section(root, "test-summary", _summary_rows(run))
    issues = etree.SubElement(root, "test-issues")
    for issue in run.issues:
        etree.SubElement(issues, "element", value=issue)
    sizing = run.sizing
    sizing_rows: tuple[tuple[str, float | int | None], ...] = (
        ("Achieved Transactional I/O per Second", sizing.achieved_iops),
        ("Target Transactional I/O per Second", sizing.target_iops),
        ("Initial Database Size (bytes)", sizing.initial_database_bytes),
        ("Final Database Size (bytes)", sizing.final_database_bytes),
        ("Database Files (Count)", sizing.database_files),
    )
    _section(
        root,
        "database-sizing",
        [(label, number_text(value)) for label, value in sizing_rows if value is not None],
    )
    _section(root, "jetstress-system", list(run.parameters.items()))
    for kind, table in run.tables.items():
        section = etree.SubElement(root, SECTIONS[kind])
        holder = etree.SubElement(section, "object", name=INSTANCE_OBJECT)
        for row in table.rows:
            instance = etree.SubElement(holder, "instance", name=row.instance)
            for key, value in row.values.items():
                if key not in COUNTER_NAMES:
                    raise ValueError(
                        f"unknown metric key {key!r} in the {kind.value} row of {row.instance!r}"
                    )
                # Averages must read back as the identical float: always repr, never an integer form.
                etree.SubElement(instance, "counter", name=COUNTER_NAMES[key], average=repr(float(value)))
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True))


def write_config_xml(profile: ConfigProfile) -> bytes:
    root = etree.Element("configuration")
    if profile.jetstress_version is not None:
        etree.SubElement(root, "JetstressVersionGenerated").text = profile.jetstress_version
    design = etree.SubElement(root, "TestDesignInfo")
    if profile.test_type is not None:
        etree.SubElement(design, "Type").text = profile.test_type
    if profile.duration is not None:
        etree.SubElement(design, "Duration").text = profile.duration
    if profile.log_interval_ms is not None:
        etree.SubElement(design, "LogInterval").text = number_text(profile.log_interval_ms)
    for name, (thresholds, run_types) in profile.threshold_sets.items():
        block = etree.SubElement(design, "Thresholds", Name=name)
        if run_types:
            block.set("TestRunTypes", " ".join(run_types))
        for tag, attr in THRESHOLD_FIELDS.items():
            limit = getattr(thresholds, attr)
            if limit is not None:
                etree.SubElement(block, tag).text = number_text(limit)
    exchange = etree.SubElement(root, "ExchangeProfile")
    settings: tuple[tuple[str, float | int | None], ...] = (
        ("ThreadCount", profile.thread_count),
        ("MailboxCount", profile.mailbox_count),
        ("MailboxIops", profile.mailbox_iops),
        ("MailboxQuota", profile.mailbox_quota_mb),
        ("DatabaseCopyCount", profile.database_copy_count),
    )
    for tag, setting in settings:
        if setting is not None:
            etree.SubElement(exchange, tag).text = number_text(setting)
    instances = etree.SubElement(exchange, "EseInstances")
    for position, db in enumerate(profile.instances, start=1):
        instance = etree.SubElement(instances, "EseInstance")
        if db.instance != default_instance_name(position):
            instance.set("Name", db.instance)
        paths = etree.SubElement(instance, "DatabasePaths")
        for path in db.database_paths:
            etree.SubElement(paths, "Path").text = path
        if db.log_path is not None:
            etree.SubElement(instance, "LogPath").text = db.log_path
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True))
