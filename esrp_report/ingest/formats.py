"""The evidence formats, one registration each: the whole interface of a format.

A format says how a file of it is recognised from its content (``recognises``), what ``inspect``
prints of it (``describe``, memory-bounded however large the file), what reading it whole adds to
the evidence (``read``), how its samples come a batch at a time when a file can exceed memory
(``stream``), and how what two files of it gave combine (``merge``). A part a format cannot have
is declared :class:`Unsupported` with the reason, never left out (tests/test_format_registry.py).

Every command that takes evidence files (``check``, ``inspect``, ``convert``, ``init``,
``build``, ``compare``, ``catalog ingest``) finds a file's format here, through :func:`detect`,
and uses its parts through the one evidence pipeline in ``app/evidence.py``. A new format is one
reader module under ``ingest/`` plus one :func:`register` call at the bottom of this file
(``docs/architecture.md``).

Readers are imported when a file is tried against them, not when this module is: a folder
without binary logs never imports the streaming BLG reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


# The fields one file's reading fills, which a format's merge carries over; the counts are the
# pipeline's own (app/evidence.py).
EVIDENCE_PARTS = tuple(f.name for f in fields(Evidence) if f.name not in ("files_read", "unreadable"))


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
class ReadOptions:
    """What the user said about how to read (``--encoding``: a perfmon CSV/TSV's code page
    instead of the one found from its bytes)."""

    encoding: str | None = None


@dataclass(frozen=True)
class Unsupported:
    """A part a format does not have, and why (said to the user when a command needs it)."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ValueError("an unsupported part needs its reason")


Description = dict[str, Any]  # JSON-ready, in the order ``inspect`` prints it
Describe = Callable[[Path, ReadOptions], Description]
Read = Callable[[Path, ReadOptions], Evidence]
Stream = Callable[[Path, ReadOptions], "CounterLog"]
Merge = Callable[[Evidence, Evidence], None]


@dataclass(frozen=True)
class EvidenceFormat:
    """One format: its name (as ``inspect`` prints it), what a file of it looks like (for error
    messages), and its parts (see the module docstring)."""

    name: str
    looks_like: str
    recognises: Callable[[Head], bool]
    describe: Describe | Unsupported
    read: Read
    stream: Stream | Unsupported
    merge: Merge


PARTS = ("recognises", "describe", "read", "stream", "merge")  # every format has each, or says why not


FORMATS: list[EvidenceFormat] = []  # tried in order: the first that recognises a file reads it


def register(fmt: EvidenceFormat) -> EvidenceFormat:
    """Add a format (after the ones registered before it, which win ties); one lacking a part,
    or whose part is neither callable nor declared Unsupported, is refused here."""
    if any(known.name == fmt.name for known in FORMATS):
        raise ValueError(f"format {fmt.name!r} is registered already")
    for part in PARTS:
        value = getattr(fmt, part, None)
        if not (callable(value) or isinstance(value, Unsupported)):
            raise TypeError(f"format {fmt.name!r}: its {part} is {value!r}, neither callable nor Unsupported")
    FORMATS.append(fmt)
    return fmt


def merging(*parts: str) -> Merge:
    """A merge that keeps each file's findings one per file: ``parts`` (Evidence fields) and the
    problems of the file are appended to the whole, in the order the files were read; pairing
    them into runs is assembly's (analysis/solution.py)."""
    unknown = [p for p in parts if p not in EVIDENCE_PARTS]
    if unknown:
        raise ValueError(f"not evidence fields: {', '.join(unknown)}")
    carried = tuple(dict.fromkeys((*parts, "problems")))

    def merge(whole: Evidence, one: Evidence) -> None:
        for part in carried:
            getattr(whole, part).extend(getattr(one, part))

    return merge


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


# --- the formats ----------------------------------------------------------------------------------
# Readers are imported inside these functions on purpose (see the module docstring).
# ruff: noqa: PLC0415

_WHOLE = "{what} is read whole: {why}; there are no samples to stream"
_REPORT_SMALL = "a few hundred kB at most"


def _is_blg(head: Head) -> bool:
    from esrp_report.ingest.perfmon.blg_signature import sniff_blg

    if sniff_blg(head.data):
        return True
    if head.suffix != ".blg":
        return False
    from esrp_report.ingest.perfmon import counter_csv

    return not counter_csv.sniff_counter_csv(head.data)


def _describe_blg(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest.perfmon import blg

    return dict(blg.describe_blg(path))


def _read_blg(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest.perfmon.blg import stream as blg_stream

    return Evidence(counter_logs=[blg_stream.read_blg_log(path)])


def _stream_blg(path: Path, _options: ReadOptions) -> CounterLog:
    from esrp_report.ingest.perfmon.blg import stream as blg_stream

    return blg_stream.open_blg(path)


def _is_event_log(head: Head) -> bool:
    return head.suffix in (".evt", ".evtx")


def _describe_event_log(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest import event_log

    return event_log.describe_event_log(event_log.read_event_log(path))


def _read_event_log(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest import event_log

    log = event_log.read_event_log(path)
    return Evidence(event_logs=[log], problems=list(log.problems))


def _is_counter_csv(head: Head) -> bool:
    from esrp_report.ingest.perfmon import counter_csv

    return counter_csv.sniff_counter_csv(head.data)


def _describe_counter_csv(path: Path, options: ReadOptions) -> Description:
    from esrp_report.ingest.perfmon import counter_csv

    return counter_csv.describe_counter_file(path, encoding=options.encoding)


def _read_counter_csv(path: Path, options: ReadOptions) -> Evidence:
    from esrp_report.ingest.perfmon import counter_csv

    if options.encoding is None:  # a command's --encoding may be in force for the whole evidence
        return Evidence(counter_logs=[counter_csv.read_counter_log(path)])
    with counter_csv.encoding_given(options.encoding):
        return Evidence(counter_logs=[counter_csv.read_counter_log(path)])


def _stream_counter_csv(path: Path, options: ReadOptions) -> CounterLog:
    from esrp_report.ingest.perfmon import counter_csv

    return counter_csv.open_counter_csv(path, encoding=options.encoding or counter_csv.ENCODING.get())


def _is_result_xml(head: Head) -> bool:
    from esrp_report.ingest.jetstress import result_xml

    return result_xml.sniff_result_xml(head.data)


def _describe_result_xml(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest.jetstress import describe, result_xml

    return describe.describe_run(result_xml.read_result_xml(path))


def _read_result_xml(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest.jetstress import result_xml

    return Evidence(result_xmls=[result_xml.read_result_xml(path)])


def _is_config_xml(head: Head) -> bool:
    from esrp_report.ingest.jetstress import config_xml

    return config_xml.sniff_config_xml(head.data)


def _describe_config_xml(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest.jetstress import config_xml, describe

    return describe.describe_config(*config_xml.read_config_xml_with_problems(path))


def _read_config_xml(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest.jetstress import config_xml

    profile, problems = config_xml.read_config_xml_with_problems(path)
    return Evidence(configs=[(path, profile)], problems=list(problems))


def _is_report_html(head: Head) -> bool:
    from esrp_report.ingest.jetstress import report_html

    return report_html.sniff_report_html(head.text)


def _describe_report_html(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest.jetstress import describe, report_html

    return describe.describe_run(report_html.read_report(path))


def _read_report_html(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest.jetstress import report_html

    return Evidence(runs=[report_html.read_report(path)])


def _is_test_log(head: Head) -> bool:
    # Any line a stamp in the machine's culture starts, then " -- " (ingest/jetstress/times.py).
    from esrp_report.ingest.jetstress.times import LOG_LINE_START

    return any(LOG_LINE_START.match(line.strip()) for line in head.text.splitlines())


def _describe_test_log(path: Path, _options: ReadOptions) -> Description:
    from esrp_report.ingest.jetstress import describe, test_log

    return describe.describe_test_log(test_log.read_test_log(path))


def _read_test_log(path: Path, _options: ReadOptions) -> Evidence:
    from esrp_report.ingest.jetstress import test_log

    return Evidence(test_logs=[test_log.read_test_log(path)])


BLG = register(
    EvidenceFormat(
        "perfmon-blg",
        "a binary perfmon log (.blg)",
        _is_blg,
        describe=_describe_blg,
        read=_read_blg,
        stream=_stream_blg,
        # One log per file: a run's log is found by the name its report gives (analysis/solution.py).
        merge=merging("counter_logs"),
    )
)
EVENT_LOG = register(
    EvidenceFormat(
        "windows-event-log",
        "a Windows event log (.evt, .evtx)",
        _is_event_log,
        describe=_describe_event_log,
        read=_read_event_log,
        stream=Unsupported(_WHOLE.format(what="an event log", why="its events are kept, not sampled")),
        # Every log kept: a run counts the error events of all of them within its window.
        merge=merging("event_logs"),
    )
)
COUNTER_CSV = register(
    EvidenceFormat(
        "perfmon-csv",
        "a perfmon CSV/TSV log",
        _is_counter_csv,
        describe=_describe_counter_csv,
        read=_read_counter_csv,
        stream=_stream_counter_csv,
        merge=merging("counter_logs"),  # as a binary log's
    )
)
RESULT_XML = register(
    EvidenceFormat(
        "jetstress-result-xml",
        "a Jetstress result XML",
        _is_result_xml,
        describe=_describe_result_xml,
        read=_read_result_xml,
        stream=Unsupported(_WHOLE.format(what="a result XML", why=_REPORT_SMALL)),
        # Kept apart from the reports: assembly lays each over the report of its run.
        merge=merging("result_xmls"),
    )
)
CONFIG_XML = register(
    EvidenceFormat(
        "jetstress-config-xml",
        "a Jetstress config XML",
        _is_config_xml,
        describe=_describe_config_xml,
        read=_read_config_xml,
        stream=Unsupported(_WHOLE.format(what="a config XML", why=_REPORT_SMALL)),
        merge=merging("configs"),  # one per file, with its path: a run takes the one beside it
    )
)
REPORT_HTML = register(
    EvidenceFormat(
        "jetstress-report-html",
        "a Jetstress HTML report",
        _is_report_html,
        describe=_describe_report_html,
        read=_read_report_html,
        stream=Unsupported(_WHOLE.format(what="a Jetstress report", why=_REPORT_SMALL)),
        merge=merging("runs"),  # one run per report
    )
)
TEST_LOG = register(
    EvidenceFormat(
        "jetstress-test-log",
        "a Jetstress test log",
        _is_test_log,
        describe=_describe_test_log,
        read=_read_test_log,
        stream=Unsupported(_WHOLE.format(what="a test log", why="a few thousand lines")),
        merge=merging("test_logs"),  # one per file: a run takes the one of its name
    )
)
