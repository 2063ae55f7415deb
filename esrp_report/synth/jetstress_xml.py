"""Write Jetstress result XML (root ``output``) and configuration XML (root ``configuration``)."""

from __future__ import annotations

from lxml import etree

from esrp_report import model as m
from esrp_report.model import ConfigProfile, Run, TableKind
from esrp_report.synth.jetstress_html import number, timestamp

# Counter names as the result XML spells them (facts §2.2: no "(Attached)").
COUNTER_NAMES = {
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
SECTIONS = {
    TableKind.TRANSACTIONAL: "disk-subsystem-transactional",
    TableKind.TOTAL: "disk-subsystem-total",
    TableKind.BACKGROUND_MAINTENANCE: "disk-subsystem-of-dbmaintenance",
    TableKind.LOG_REPLICATION: "disk-subsystem-of-logreplication",
}


def _elements(parent: etree._Element, name: str, items: list[tuple[str, str]]) -> None:
    section = etree.SubElement(parent, name)
    for key, value in items:
        etree.SubElement(section, "element", name=key, value=value)


def write_result_xml(run: Run) -> bytes:
    root = etree.Element("output")
    _elements(
        root,
        "test-summary",
        [
            ("Overall Test Result", run.overall_result or ""),
            ("Machine Name", run.machine),
            ("Test Start Time", timestamp(run.test_start)),
            ("Test End Time", timestamp(run.test_end)),
            ("Collection Start Time", timestamp(run.collection_start)),
            ("Collection End Time", timestamp(run.collection_end)),
            ("Jetstress Version", run.jetstress_version or ""),
            ("Ese Version", run.ese_version or ""),
            ("Operating System", run.operating_system or ""),
            ("Performance Log", run.performance_log or ""),
        ],
    )
    _elements(root, "test-issues", [("issue", issue) for issue in run.issues])
    s = run.sizing
    _elements(
        root,
        "database-sizing",
        [
            (label, number(value))
            for label, value in (
                ("Achieved Transactional I/O per Second", s.achieved_iops),
                ("Target Transactional I/O per Second", s.target_iops),
                ("Initial Database Size (bytes)", s.initial_database_bytes),
                ("Final Database Size (bytes)", s.final_database_bytes),
                ("Database Files (Count)", s.database_files),
            )
            if value is not None
        ],
    )
    _elements(root, "jetstress-system", list(run.parameters.items()))
    for kind, table in run.tables.items():
        section = etree.SubElement(root, SECTIONS[kind])
        obj = etree.SubElement(section, "object", name="MSExchange Database ==> Instances")
        for row in table.rows:
            instance = etree.SubElement(obj, "instance", name=row.instance)
            for key, value in row.values.items():
                etree.SubElement(instance, "counter", name=COUNTER_NAMES[key], average=repr(float(value)))
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True))


def write_config_xml(profile: ConfigProfile) -> bytes:
    root = etree.Element("configuration")
    if profile.jetstress_version:
        etree.SubElement(root, "JetstressVersionGenerated").text = profile.jetstress_version
    design = etree.SubElement(root, "TestDesignInfo")
    for tag, value in (
        ("Type", profile.test_type),
        ("Duration", profile.duration),
        ("LogInterval", profile.log_interval_ms),
    ):
        if value is not None:
            etree.SubElement(design, tag).text = str(value)
    for name, (thresholds, kinds) in profile.threshold_sets.items():
        block = etree.SubElement(design, "Thresholds", Name=name)
        if kinds:
            block.set("TestRunTypes", ",".join(kinds))
        for tag, attr in (
            ("AverageDatabaseReadLatency", "db_read_avg_ms"),
            ("MaximumDatabaseReadLatency", "db_read_max_ms"),
            ("AverageLogWriteLatency", "log_write_avg_ms"),
            ("MaximumLogWriteLatency", "log_write_max_ms"),
        ):
            limit = getattr(thresholds, attr)
            if limit is not None:
                etree.SubElement(block, tag).text = number(limit)
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
            etree.SubElement(exchange, tag).text = (
                number(setting) if isinstance(setting, float) else str(setting)
            )
    instances = etree.SubElement(exchange, "EseInstances")
    for db in profile.instances:
        instance = etree.SubElement(instances, "EseInstance")
        paths = etree.SubElement(instance, "DatabasePaths")
        for path in db.database_paths:
            etree.SubElement(paths, "Path").text = path
        if db.log_path:
            etree.SubElement(instance, "LogPath").text = db.log_path
    return bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True))
