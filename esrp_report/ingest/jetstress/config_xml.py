"""Jetstress configuration XML (``JetstressConfig.xml``, root ``configuration``; facts §1.3, §4).

Unknown elements are ignored; a value that does not parse is reported as a :class:`Problem`
and left absent, never fatal. Element names are matched without namespace and case, since
only their spelling, not their namespace, is documented.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from esrp_report.ingest.safe_xml import read_xml, root_name, xml_number
from esrp_report.model import ConfigProfile, DatabaseConfig, Problem, TestKind, Thresholds
from esrp_report.model.errors import UnsupportedFormatError

ROOT = "configuration"

THRESHOLD_FIELDS: dict[str, str] = {
    "AverageDatabaseReadLatency": "db_read_avg_ms",
    "MaximumDatabaseReadLatency": "db_read_max_ms",
    "AverageLogWriteLatency": "log_write_avg_ms",
    "MaximumLogWriteLatency": "log_write_max_ms",
}
# Attributes that may name an EseInstance; Jetstress itself writes none (only IopsBias), so
# instances are otherwise named by position.
INSTANCE_NAME_ATTRIBUTES: tuple[str, ...] = ("Name", "name", "InstanceName")
# ISO-8601 durations as Jetstress writes them: P0Y0M0DT2H0M0S.
_DURATION = re.compile(
    r"^P(?!$)(?:\d+(?:\.\d+)?Y)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?W)?(?:\d+(?:\.\d+)?D)?"
    r"(?:T(?=\d)(?:\d+(?:\.\d+)?H)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?S)?)?$"
)
_RUN_TYPE_SEPARATORS = re.compile(r"[,;\s]+")


def default_instance_name(position: int) -> str:
    """The name an EseInstance gets from its 1-based position when it carries none."""
    return f"Instance.{position}"


def sniff_config_xml(head: bytes) -> bool:
    """Does a file's head look like a Jetstress configuration XML (root element <configuration>)?"""
    return root_name(head) == ROOT


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _children(element: etree._Element, name: str) -> Iterator[etree._Element]:
    wanted = name.casefold()
    for child in element:
        if isinstance(child.tag, str) and _local(child).casefold() == wanted:
            yield child


def _find(element: etree._Element, path: str) -> etree._Element | None:
    current: etree._Element | None = element
    for step in path.split("/"):
        if current is None:
            return None
        current = next(_children(current, step), None)
    return current


def _text(element: etree._Element | None) -> str | None:
    if element is None or element.text is None:
        return None
    return element.text.strip() or None


class _Reader:
    def __init__(self, root: etree._Element, source: str) -> None:
        self.root = root
        self.source = source
        self.problems: list[Problem] = []

    def problem(
        self,
        message: str,
        element: etree._Element | None,
        severity: str = "warning",
        lost: int = 0,
        *,
        doubt: bool = False,
    ) -> None:
        location = f"line {element.sourceline}" if element is not None else None
        self.problems.append(
            Problem(self.source, message, location=location, severity=severity, lost=lost, doubt=doubt)
        )

    def text(self, path: str) -> str | None:
        return _text(_find(self.root, path))

    def number(self, path: str, element: etree._Element | None = None) -> float | None:
        found = element if element is not None else _find(self.root, path)
        value = _text(found)
        if value is None:
            return None
        try:
            return xml_number(value)
        except ValueError:
            self.problem(f"{path}: not a number: {value!r}; ignored", found, "error", 1, doubt=True)
            return None

    def integer(self, path: str) -> int | None:
        value = self.number(path)
        if value is None:
            return None
        if not value.is_integer():
            found = _find(self.root, path)
            self.problem(f"{path}: not a whole number: {_text(found)!r}; ignored", found, lost=1)
            return None
        return int(value)


def read_config_xml(path: str | Path) -> ConfigProfile:
    """Read a Jetstress configuration XML; values that cannot be read are left out
    (read_config_xml_with_problems says which). Raises InputError for a file that is no configuration XML."""
    return read_config_xml_with_problems(path)[0]


def read_config_xml_with_problems(path: str | Path) -> tuple[ConfigProfile, list[Problem]]:
    """Read a Jetstress configuration XML; values that cannot be read come back as problems."""
    source = str(path)
    root = read_xml(path)
    if _local(root) != ROOT:
        raise UnsupportedFormatError(
            path,
            "not a Jetstress configuration XML",
            location=f"line {root.sourceline}, root element",
            expected=f"<{ROOT}>",
            found=f"<{_local(root)}>",
        )
    reader = _Reader(root, source)
    profile = ConfigProfile(
        source=source,
        test_type=reader.text("TestDesignInfo/Type"),
        duration=reader.text("TestDesignInfo/Duration"),
        mailbox_count=reader.integer("ExchangeProfile/MailboxCount"),
        mailbox_iops=reader.number("ExchangeProfile/MailboxIops"),
        mailbox_quota_mb=reader.number("ExchangeProfile/MailboxQuota"),
        thread_count=reader.integer("ExchangeProfile/ThreadCount"),
        database_copy_count=reader.integer("ExchangeProfile/DatabaseCopyCount"),
        log_interval_ms=reader.integer("TestDesignInfo/LogInterval"),
        jetstress_version=reader.text("JetstressVersionGenerated"),
    )
    known_types = {kind.value.casefold() for kind in TestKind}
    if profile.test_type is not None and profile.test_type.casefold() not in known_types:
        reader.problem(
            f"TestDesignInfo/Type {profile.test_type!r} is not a known Jetstress test type; kept as written",
            _find(root, "TestDesignInfo/Type"),
            severity="note",
        )
    if profile.duration is not None and not _DURATION.match(profile.duration):
        reader.problem(
            f"TestDesignInfo/Duration {profile.duration!r} is not an ISO-8601 duration like "
            "'P0Y0M0DT2H0M0S'; kept as written",
            _find(root, "TestDesignInfo/Duration"),
            severity="note",
        )
    _read_thresholds(reader, profile)
    _read_instances(reader, profile)
    return profile, reader.problems


def _read_thresholds(reader: _Reader, profile: ConfigProfile) -> None:
    blocks = [
        e for e in reader.root.iter() if isinstance(e.tag, str) and _local(e).casefold() == "thresholds"
    ]
    for position, block in enumerate(blocks, start=1):
        thresholds = Thresholds()
        for element_name, attr in THRESHOLD_FIELDS.items():
            element = next(_children(block, element_name), None)
            if element is not None:
                setattr(thresholds, attr, reader.number(f"Thresholds/{element_name}", element))
        run_types = [t for t in _RUN_TYPE_SEPARATORS.split(block.get("TestRunTypes", "")) if t]
        name = (block.get("Name") or "").strip()
        if not name:
            name = f"Thresholds {position}"
            reader.problem(f"<Thresholds> without a Name; called {name!r}", block, severity="note")
        if name in profile.threshold_sets:
            reader.problem(f"second <Thresholds Name={name!r}>; the first is used", block, lost=1)
            continue
        profile.threshold_sets[name] = (thresholds, run_types)


def _read_instances(reader: _Reader, profile: ConfigProfile) -> None:
    holder = _find(reader.root, "ExchangeProfile/EseInstances")
    if holder is None:
        return
    for position, instance in enumerate(_children(holder, "EseInstance"), start=1):
        name = next(
            (n.strip() for attr in INSTANCE_NAME_ATTRIBUTES if (n := instance.get(attr)) and n.strip()),
            default_instance_name(position),
        )
        paths_holder = next(_children(instance, "DatabasePaths"), None)
        paths = [
            text
            for p in (_children(paths_holder, "Path") if paths_holder is not None else ())
            if (text := _text(p))
        ]
        log_path = _text(next(_children(instance, "LogPath"), None))
        if not paths and log_path is None:
            reader.problem(f"EseInstance {position} names no database or log path", instance, severity="note")
        profile.instances.append(DatabaseConfig(name, log_path, paths))
