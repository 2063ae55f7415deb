"""Jetstress configuration XML (``JetstressConfig.xml``, root ``configuration``; facts §1.3, §4).

Unknown elements are ignored; a value that does not parse is reported, never fatal.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from esrp_report.errors import UnsupportedFormatError
from esrp_report.ingest.safe_xml import read_xml, root_name
from esrp_report.model import ConfigProfile, DatabaseConfig, Problem, Thresholds

THRESHOLD_FIELDS = {
    "AverageDatabaseReadLatency": "db_read_avg_ms",
    "MaximumDatabaseReadLatency": "db_read_max_ms",
    "AverageLogWriteLatency": "log_write_avg_ms",
    "MaximumLogWriteLatency": "log_write_max_ms",
}


def sniff_config_xml(head: bytes) -> bool:
    return root_name(head) == "configuration"


def read_config_xml(path: str | Path) -> ConfigProfile:
    return read_config_xml_with_problems(path)[0]


def read_config_xml_with_problems(path: str | Path) -> tuple[ConfigProfile, list[Problem]]:
    source = str(path)
    root = read_xml(path)
    if etree.QName(root).localname != "configuration":
        raise UnsupportedFormatError(
            path,
            "not a Jetstress configuration XML",
            location="root element",
            expected="<configuration>",
            found=f"<{etree.QName(root).localname}>",
        )
    problems: list[Problem] = []

    def text(xpath: str) -> str | None:
        found = root.find(xpath)
        return found.text.strip() if found is not None and found.text else None

    def number(xpath: str, kind: type[int] | type[float] = float) -> float | None:
        value = text(xpath)
        if value is None:
            return None
        try:
            return kind(value)
        except ValueError:
            line = root.find(xpath).sourceline  # type: ignore[union-attr]
            problems.append(
                Problem(source, f"{xpath}: not a number: {value!r}; ignored", location=f"line {line}")
            )
            return None

    def integer(xpath: str) -> int | None:
        value = number(xpath, int)
        return None if value is None else int(value)

    profile = ConfigProfile(
        source=source,
        test_type=text("TestDesignInfo/Type"),
        duration=text("TestDesignInfo/Duration"),
        mailbox_count=integer("ExchangeProfile/MailboxCount"),
        mailbox_iops=number("ExchangeProfile/MailboxIops"),
        mailbox_quota_mb=number("ExchangeProfile/MailboxQuota"),
        thread_count=integer("ExchangeProfile/ThreadCount"),
        database_copy_count=integer("ExchangeProfile/DatabaseCopyCount"),
        log_interval_ms=integer("TestDesignInfo/LogInterval"),
        jetstress_version=text("JetstressVersionGenerated"),
    )
    for block in root.iter("Thresholds"):
        thresholds = Thresholds()
        for element, attr in THRESHOLD_FIELDS.items():
            found = block.find(element)
            if found is None or not found.text:
                continue
            try:
                setattr(thresholds, attr, float(found.text))
            except ValueError:
                problems.append(
                    Problem(
                        source,
                        f"Thresholds/{element}: not a number: {found.text!r}; ignored",
                        location=f"line {found.sourceline}",
                    )
                )
        kinds = [k.strip() for k in str(block.get("TestRunTypes", "")).split(",") if k.strip()]
        profile.threshold_sets[str(block.get("Name", f"set {len(profile.threshold_sets) + 1}"))] = (
            thresholds,
            kinds,
        )
    for index, instance in enumerate(root.iterfind("ExchangeProfile/EseInstances/EseInstance"), start=1):
        paths = [p.text.strip() for p in instance.iterfind("DatabasePaths/Path") if p.text]
        log = instance.findtext("LogPath")
        profile.instances.append(DatabaseConfig(f"Instance.{index}", log.strip() if log else None, paths))
    return profile, problems
