"""Jetstress test logs: ``M/D/YYYY h:mm:ss AM -- message`` lines, in a report or a text file.

Long messages wrap onto lines without a timestamp; they are joined to the entry they continue.
Pasted or converted logs carry link remnants (``[C:\\x.blg](#)``, ``<C:\\x.blg>``); they are
reduced to the path.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from esrp_report.errors import InputError
from esrp_report.ingest.text import read_text
from esrp_report.model import LogEntry, Problem, TestLog, Thresholds

_ENTRY = re.compile(
    r"^\s*(?P<stamp>\d{1,2}/\d{1,2}/\d{4}\s+\d{1,2}:\d{2}:\d{2}\s*[AaPp][Mm])\s+--\s?(?P<message>.*)$"
)
_LOOKS_LIKE_ENTRY = re.compile(r"^\s*\d{1,2}/\d{1,2}/\d{2,4}\s+\d")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\(#?[^)]*\)")
_ANGLE_PATH = re.compile(r"<([A-Za-z]:\\[^<>]*)>")

_THRESHOLD = re.compile(
    r"(?P<what>Database read|Log write) latency thresholds:\s*\(average:\s*(?P<avg>[\d.]+)\s*"
    r"(?P<unit>msec|seconds?)/(?:read|write),\s*maximum:\s*(?P<max>[\d.]+)",
    re.IGNORECASE,
)
_INTERVAL = re.compile(r"Performance logging started \(interval:\s*(?P<ms>\d+)\s*ms\)", re.IGNORECASE)
_MIX = re.compile(r"Operation mix:\s*(?P<body>.*)$", re.IGNORECASE)
_MIX_ITEM = re.compile(r"(?P<name>[A-Za-z][A-Za-z ]*?)\s+(?P<value>[\d.]+)%?(?:[,.]|$)")
_SAMPLES = re.compile(r"(?P<file>\S.*?\.blg)\s+has\s+(?P<n>\d+)\s+samples", re.IGNORECASE)
_QUERIED = re.compile(r"(?P<file>\S.*?\.xml)\s+has\s+(?P<n>\d+)\s+samples queried", re.IGNORECASE)
_INSTANCE_LATENCY = re.compile(r"^(?P<instance>\S+) has (?P<value>[\d.]+) for (?P<counter>.+?)\.?$")

# What marks an entry as an error (FG13: JET errors, hung I/O, page time stamps; "Fail" verdicts).
ERROR_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\berror\b",
        r"\bfail(?:ed|ure|s)?\b",
        r"-10(?:18|19|21|22)\b",
        r"-1119\b",
        r"\bhung i/?o\b",
        r"\bdbtimetoo(?:new|old)\b",
    )
)
# Entries that mention those words without reporting one.
NOT_ERRORS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE) for p in (r"\b0 errors?\b", r"no errors", r"errors? (?:were )?not found")
)


def _parse_stamp(text: str) -> datetime:
    return datetime.strptime(" ".join(text.split()).upper(), "%m/%d/%Y %I:%M:%S %p")


def _clean(message: str) -> str:
    message = _MARKDOWN_LINK.sub(r"\1", message)
    message = _ANGLE_PATH.sub(r"\1", message)
    return " ".join(message.split())


def parse_test_log(text: str, source: str, first_line: int = 1) -> TestLog:
    """Parse test-log text; ``first_line`` is the line number of ``text``'s first line in ``source``."""
    log = TestLog(source=source)
    pending: list[tuple[datetime, list[str], int]] = []
    for offset, raw in enumerate(text.splitlines()):
        line_no = first_line + offset
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        match = _ENTRY.match(line)
        if match:
            try:
                stamp = _parse_stamp(match.group("stamp"))
            except ValueError:
                log.problems.append(
                    Problem(source, "unreadable timestamp; line skipped", location=f"line {line_no}", lost=1)
                )
                continue
            pending.append((stamp, [match.group("message")], line_no))
        elif _LOOKS_LIKE_ENTRY.match(line):
            log.problems.append(
                Problem(
                    source,
                    f"line looks like a log entry but does not parse: {line[:60]!r}",
                    location=f"line {line_no}",
                    lost=1,
                )
            )
        elif pending:
            pending[-1][1].append(line)
    if not pending:
        raise InputError(
            source,
            "no test-log entries",
            location=f"line {first_line}",
            expected="lines 'M/D/YYYY h:mm:ss AM -- message'",
        )
    log.entries = [LogEntry(stamp, _clean(" ".join(parts)), line) for stamp, parts, line in pending]
    _derive(log)
    return log


def read_test_log(path: str | Path) -> TestLog:
    text, _encoding = read_text(path)
    return parse_test_log(text, str(path))


def _derive(log: TestLog) -> None:
    thresholds = Thresholds()
    awaiting_prerequisites = False
    for entry in log.entries:
        msg = entry.message
        if awaiting_prerequisites:
            log.prerequisites_attained_at = entry.timestamp
            awaiting_prerequisites = False
        if msg.casefold().startswith("attaining prerequisites"):
            awaiting_prerequisites = True
            continue
        if (t := _THRESHOLD.search(msg)) is not None:
            scale = 1000.0 if t.group("unit").casefold().startswith("sec") else 1.0
            avg, high = float(t.group("avg")) * scale, float(t.group("max")) * scale
            if t.group("what").casefold().startswith("database"):
                thresholds.db_read_avg_ms, thresholds.db_read_max_ms = avg, high
            else:
                thresholds.log_write_avg_ms, thresholds.log_write_max_ms = avg, high
            continue
        if (i := _INTERVAL.search(msg)) is not None:
            log.logging_intervals_ms.append(int(i.group("ms")))
            continue
        if (mix := _MIX.search(msg)) is not None:
            for item in _MIX_ITEM.finditer(mix.group("body")):
                log.operation_mix[item.group("name").strip().casefold().replace(" ", "_")] = float(
                    item.group("value")
                )
            continue
        if (q := _QUERIED.search(msg)) is not None:
            log.samples_queried.append((q.group("file").strip(), int(q.group("n"))))
            continue
        if (s := _SAMPLES.search(msg)) is not None:
            log.sample_counts.append((s.group("file").strip(), int(s.group("n"))))
            continue
        if (lat := _INSTANCE_LATENCY.match(msg)) is not None:
            log.instance_latencies.setdefault(lat.group("instance"), {})[lat.group("counter")] = float(
                lat.group("value")
            )
            continue
        if any(p.search(msg) for p in ERROR_PATTERNS) and not any(p.search(msg) for p in NOT_ERRORS):
            log.errors.append(entry)
    log.thresholds = thresholds
