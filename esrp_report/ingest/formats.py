"""The evidence formats, one registration each: how a file is recognised from its content, and
what reading it adds to the evidence.

Every command that takes evidence files (``check``, ``inspect``, ``convert``, ``init``,
``build``, ``compare``, ``catalog``) finds a file's format here, through :func:`detect_format`,
and reads it through :func:`read_into`. A new format is one reader module under ``ingest/`` plus
one :func:`register` call at the bottom of this file (``docs/architecture.md``).

Readers are imported when a file is tried against them, not when this module is: a folder
without binary logs never imports the streaming BLG reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from esrp_report.ingest.guards import require_regular_file
from esrp_report.ingest.text import sniff_encoding
from esrp_report.model.errors import InputError, UnsupportedFormatError

if TYPE_CHECKING:
    from esrp_report.ingest.event_log import EventLog
    from esrp_report.model import ConfigProfile, CounterLog, Problem, Run, TestLog

HEAD_BYTES = 8192


@dataclass
class Evidence:
    """Everything read from the inputs, before assembly into runs."""

    runs: list[Run] = field(default_factory=list)
    result_xmls: list[Run] = field(default_factory=list)
    counter_logs: list[CounterLog] = field(default_factory=list)
    test_logs: list[TestLog] = field(default_factory=list)
    configs: list[tuple[Path, ConfigProfile]] = field(default_factory=list)
    event_logs: list[EventLog] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files_read: int = 0
    unreadable: list[InputError] = field(default_factory=list)  # files of a known format that failed


@dataclass(frozen=True)
class Head:
    """The start of a file, as every format's recogniser sees it."""

    path: Path
    data: bytes

    @property
    def suffix(self) -> str:
        return self.path.suffix.casefold()

    @cached_property
    def text(self) -> str:
        return self.data.decode(sniff_encoding(self.data), errors="ignore")


@dataclass(frozen=True)
class EvidenceFormat:
    """One format: its name (as ``inspect`` prints it), what a file of it looks like (for error
    messages), how to recognise one from its head, and what reading one adds to the evidence."""

    name: str
    looks_like: str
    recognises: Callable[[Head], bool]
    read: Callable[[Path, Evidence], None]


FORMATS: list[EvidenceFormat] = []  # tried in order: the first that recognises a file reads it


def register(fmt: EvidenceFormat) -> EvidenceFormat:
    """Add a format (after the ones registered before it, which win ties)."""
    if any(known.name == fmt.name for known in FORMATS):
        raise ValueError(f"format {fmt.name!r} is registered already")
    FORMATS.append(fmt)
    return fmt


def read_head(path: Path) -> Head:
    """The first HEAD_BYTES of a file, for the recognisers; raises InputError when it cannot be
    read or is no regular file (a FIFO or a device is refused, never opened: either would hang)."""
    require_regular_file(path)
    try:
        with path.open("rb") as handle:
            return Head(path, handle.read(HEAD_BYTES))
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc


def detect(path: Path) -> EvidenceFormat:
    """The format of a file from its content (the extension only breaks ties)."""
    head = read_head(path)
    for fmt in FORMATS:
        if fmt.recognises(head):
            return fmt
    raise UnsupportedFormatError(
        path,
        "not a supported file",
        location="start of file",
        expected=", ".join(fmt.looks_like for fmt in FORMATS),
    )


def detect_format(path: Path) -> str:
    """The name of a file's format (see :func:`detect`)."""
    return detect(path).name


def read_into(path: Path, evidence: Evidence) -> str:
    """Read one file into ``evidence``; its format's name. Raises the reader's InputError."""
    fmt = detect(path)
    fmt.read(path, evidence)
    evidence.files_read += 1
    return fmt.name


# --- the formats ----------------------------------------------------------------------------------
# Readers are imported inside these functions on purpose (see the module docstring).
# ruff: noqa: PLC0415


def _is_blg(head: Head) -> bool:
    from esrp_report.ingest.perfmon.blg_signature import sniff_blg

    if sniff_blg(head.data):
        return True
    if head.suffix != ".blg":
        return False
    from esrp_report.ingest.perfmon import counter_csv

    return not counter_csv.sniff_counter_csv(head.data)


def _read_blg(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.perfmon.blg import stream as blg_stream

    evidence.counter_logs.append(blg_stream.read_blg_log(path))


def _is_event_log(head: Head) -> bool:
    return head.suffix in (".evt", ".evtx")


def _read_event_log(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest import event_log

    log = event_log.read_event_log(path)
    evidence.event_logs.append(log)
    evidence.problems.extend(log.problems)


def _is_counter_csv(head: Head) -> bool:
    from esrp_report.ingest.perfmon import counter_csv

    return counter_csv.sniff_counter_csv(head.data)


def _read_counter_csv(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.perfmon import counter_csv

    evidence.counter_logs.append(counter_csv.read_counter_log(path))


def _is_result_xml(head: Head) -> bool:
    from esrp_report.ingest.jetstress import result_xml

    return result_xml.sniff_result_xml(head.data)


def _read_result_xml(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.jetstress import result_xml

    evidence.result_xmls.append(result_xml.read_result_xml(path))


def _is_config_xml(head: Head) -> bool:
    from esrp_report.ingest.jetstress import config_xml

    return config_xml.sniff_config_xml(head.data)


def _read_config_xml(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.jetstress import config_xml

    profile, problems = config_xml.read_config_xml_with_problems(path)
    evidence.configs.append((path, profile))
    evidence.problems.extend(problems)


def _is_report_html(head: Head) -> bool:
    from esrp_report.ingest.jetstress import report_html

    return report_html.sniff_report_html(head.text)


def _read_report_html(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.jetstress import report_html

    evidence.runs.append(report_html.read_report(path))


_TIMESTAMP_LINE = re.compile(r"^\s*\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2}\s*[AP]M -- ", re.MULTILINE)


def _is_test_log(head: Head) -> bool:
    return _TIMESTAMP_LINE.search(head.text) is not None


def _read_test_log(path: Path, evidence: Evidence) -> None:
    from esrp_report.ingest.jetstress import test_log

    evidence.test_logs.append(test_log.read_test_log(path))


BLG = register(EvidenceFormat("perfmon-blg", "a binary perfmon log (.blg)", _is_blg, _read_blg))
EVENT_LOG = register(
    EvidenceFormat("windows-event-log", "a Windows event log (.evt, .evtx)", _is_event_log, _read_event_log)
)
COUNTER_CSV = register(
    EvidenceFormat("perfmon-csv", "a perfmon CSV/TSV log", _is_counter_csv, _read_counter_csv)
)
RESULT_XML = register(
    EvidenceFormat("jetstress-result-xml", "a Jetstress result XML", _is_result_xml, _read_result_xml)
)
CONFIG_XML = register(
    EvidenceFormat("jetstress-config-xml", "a Jetstress config XML", _is_config_xml, _read_config_xml)
)
REPORT_HTML = register(
    EvidenceFormat("jetstress-report-html", "a Jetstress HTML report", _is_report_html, _read_report_html)
)
TEST_LOG = register(
    EvidenceFormat("jetstress-test-log", "a Jetstress test log", _is_test_log, _read_test_log)
)
