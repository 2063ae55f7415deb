"""Jetstress test logs: ``M/D/YYYY h:mm:ss AM -- message`` lines, in a report or a text file.

Long messages wrap onto lines without a timestamp; they are joined to the entry they continue.
Pasted or converted logs carry link remnants (``[C:\\x.blg](#)``, ``<C:\\x.blg>``) and markdown
fences; the remnants are reduced to the text they wrap, the fences dropped.

A log often holds more than one test (a Performance run followed by its checksum pass, or an
earlier run of the same session). Values that a later test states again replace earlier ones,
because the report that embeds a log belongs to the last test in it; lists (intervals, sample
counts) keep every occurrence in order.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal, InvalidOperation, Overflow
from pathlib import Path

from esrp_report.ingest.jetstress import times
from esrp_report.ingest.text import read_text
from esrp_report.model import LogEntry, Problem, TestLog, Thresholds
from esrp_report.model.errors import InputError

EXPECTED_LINE = "lines 'M/D/YYYY h:mm:ss AM -- message' (or the machine culture's date and time)"
# Starts like a timestamp (a date, then a time) but may not be one we can read.
_LOOKS_LIKE_ENTRY = re.compile(r"^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\s+\d{1,2}:\d{2}")
_FENCE = re.compile(r"^(?:```|~~~)")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ANGLE_PATH = re.compile(r"<((?:[A-Za-z]:|\\\\)[^<>]*)>")

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_THRESHOLD = re.compile(
    rf"(?P<what>Database read|Log write) latency thresholds:\s*\(\s*average:\s*(?P<avg>{_NUMBER})\s*"
    rf"(?P<unit>msec|ms|seconds?|sec|s)\s*/\s*(?:read|write),\s*maximum:\s*(?P<max>{_NUMBER})\s*"
    r"(?P<max_unit>msec|ms|seconds?|sec|s)\b",
    re.IGNORECASE,
)
_INTERVAL = re.compile(r"Performance logging started\s*\(interval:\s*(?P<ms>\d+)\s*ms\)", re.IGNORECASE)
_MIX = re.compile(r"Operation mix:\s*(?P<body>.*)$", re.IGNORECASE)
_MIX_ITEM = re.compile(rf"(?P<name>[A-Za-z][A-Za-z ]*?)\s+(?P<value>{_NUMBER})\s*%?\s*(?:[,.;]|and\b|$)")
_SAMPLES = re.compile(r"^(?P<file>.+?\.blg)\s+has\s+(?P<n>\d+)\s+samples\b(?!\s+queried)", re.IGNORECASE)
_QUERIED = re.compile(r"^(?P<file>.+?\.xml)\s+has\s+(?P<n>\d+)\s+samples\s+queried", re.IGNORECASE)
_INSTANCE_LATENCY = re.compile(
    rf"^(?P<instance>Instance\S+)\s+has\s+(?P<value>{_NUMBER})\s+for\s+(?P<counter>.+?)\.?$", re.IGNORECASE
)
_PREREQUISITES = re.compile(r"^Attaining prerequisites\b", re.IGNORECASE)

# What marks an entry as reporting an error: the JET errors and I/O faults Jetstress 2013 detects
# (facts §1.4), "error"/"fail" wording, and the "Fail – ..." verdict lines. Data, not code, so the
# list can grow when a real log shows a new shape.
ERROR_RULES: tuple[tuple[str, str], ...] = (
    ("error wording", r"\berrors?\b"),
    ("failure wording", r"\bfail(?:ed|ure|ures|s|ing)?\b"),
    ("fail verdict", r"^\s*fail\s*[-–—:]"),
    ("JET -1018 read verify failure", r"-1018\b"),
    ("JET -1019 page not initialized", r"-1019\b"),
    ("JET -1021 disk I/O (CRC)", r"-1021\b"),
    ("JET -1022 disk I/O", r"-1022\b"),
    ("JET -1119 read lost flush verify", r"-1119\b"),
    ("hung I/O", r"\bhung\s*i/?o\b"),
    ("page time stamp", r"\bdbtimetoo\w*"),
)
# Entries that use those words to say nothing went wrong.
NOT_AN_ERROR_RULES: tuple[str, ...] = (
    r"\b(?:no|0|zero)\s+(?:[\w/]+\s+){0,3}errors?\b",
    r"\berrors?\s+(?:were\s+|was\s+)?not\s+found\b",
    r"\bwithout\s+(?:any\s+)?errors?\b",
    r"\bcontinueonerrors\b",
)
_ERRORS = tuple(re.compile(pattern, re.IGNORECASE) for _name, pattern in ERROR_RULES)
_NOT_ERRORS = tuple(re.compile(pattern, re.IGNORECASE) for pattern in NOT_AN_ERROR_RULES)


def _clean(message: str) -> str:
    message = _MARKDOWN_LINK.sub(r"\1", message)
    message = _ANGLE_PATH.sub(r"\1", message)
    return " ".join(message.split())


def parse_test_log(text: str, source: str, first_line: int = 1) -> TestLog:
    """Parse test-log text; ``first_line`` is the line number of ``text``'s first line in ``source``.

    Raises :class:`InputError` when no line of ``text`` is a timestamped entry.
    """
    log = TestLog(source=source)
    pending: list[tuple[datetime, list[str], int]] = []
    lines = [raw.strip().lstrip("\ufeff") for raw in text.splitlines()]
    # The log's own stamps decide the order of day and month ("04/09/2012" is April or September).
    stamps = [m.group("stamp") for line in lines if (m := times.LOG_ENTRY.match(line)) is not None]
    day_first = times.day_first_of(stamps)
    if times.contradicts(stamps):
        log.problems.append(
            Problem(
                source,
                "the log's dates disagree on the order of day and month (one has a day above 12 first, "
                "another second); slashed dates are read month first",
                location=f"line {first_line}",
            )
        )
    for offset, line in enumerate(lines):
        line_no = first_line + offset
        if not line or _FENCE.match(line):
            continue
        match = times.LOG_ENTRY.match(line)
        if match is not None:
            stamp = times.parse_stamp(match.group("stamp"), day_first)
            if stamp is None:
                log.problems.append(
                    Problem(
                        source,
                        f"unreadable timestamp {match.group('stamp')!r}; entry skipped",
                        location=f"line {line_no}",
                        lost=1,
                    )
                )
                continue
            pending.append((stamp, [match.group("message")], line_no))
        elif _LOOKS_LIKE_ENTRY.match(line):
            log.problems.append(
                Problem(
                    source,
                    f"line starts like an entry but does not parse; expected {EXPECTED_LINE}: {line[:60]!r}",
                    location=f"line {line_no}",
                    lost=1,
                )
            )
        elif pending:
            pending[-1][1].append(line)
    if not pending:
        damaged = (
            f" ({len(log.problems)} line(s) start like entries but do not parse)" if log.problems else ""
        )
        raise InputError(
            source, f"no test-log entries{damaged}", location=f"line {first_line}", expected=EXPECTED_LINE
        )
    log.entries = [LogEntry(stamp, _clean(" ".join(parts)), line) for stamp, parts, line in pending]
    _derive(log)
    return log


def read_test_log(path: str | Path) -> TestLog:
    """Read a Jetstress test log in any supported encoding. Raises InputError when it cannot be read or has no
    timestamped entry."""
    text, _encoding = read_text(path)
    return parse_test_log(text, str(path))


def _milliseconds(value: str, unit: str) -> float:
    """The figure in ms; infinity when it is past the float range (the caller refuses it)."""
    # Decimal keeps "0.02 seconds" exactly 20 ms instead of 20.000000000000004.
    scale = 1000 if unit.casefold().startswith("s") else 1
    try:
        return float(Decimal(value) * scale)
    except Overflow:  # "1e999999999 s": past Decimal's own exponent range, a traceback before
        return math.inf


def _not_finite(log: TestLog, entry: LogEntry, what: str, *values: float) -> bool:
    """True, with a problem naming the line, when a figure is past the float range: it is no
    threshold or latency anyone measured, and judging it would turn every rule to nonsense."""
    if all(math.isfinite(v) for v in values):
        return False
    log.problems.append(
        Problem(
            log.source,
            f"{what} is beyond the float range (a number of about 1.8e308 or more); ignored",
            location=f"line {entry.line}",
            lost=1,
        )
    )
    return True


def _whole(digits: str, log: TestLog, entry: LogEntry) -> int | None:
    """A count or interval; one of more than 18 digits is no real value (and past 4,300 digits
    Python refuses to convert it): a problem, not a number."""
    if len(digits) <= 18:
        return int(digits)
    log.problems.append(
        Problem(
            log.source,
            f"a number of {len(digits):,} digits ({digits[:20]}...) is no count or interval; ignored",
            location=f"line {entry.line}",
            lost=1,
        )
    )
    return None


def _is_error(message: str) -> bool:
    if not any(rule.search(message) for rule in _ERRORS):
        return False
    # A JET error code or hung I/O is an error even in a sentence that also says "no errors".
    stripped = message
    for rule in _NOT_ERRORS:
        stripped = rule.sub(" ", stripped)
    return any(rule.search(stripped) for rule in _ERRORS)


def _derive(log: TestLog) -> None:
    thresholds = Thresholds()
    stated: dict[str, tuple[float, float]] = {}
    awaiting_prerequisites = False
    for entry in log.entries:
        msg = entry.message
        if awaiting_prerequisites:
            log.prerequisites_attained_at = entry.timestamp
            awaiting_prerequisites = False
        if _PREREQUISITES.match(msg):
            awaiting_prerequisites = True
            continue
        if (t := _THRESHOLD.search(msg)) is not None:
            try:
                avg = _milliseconds(t.group("avg"), t.group("unit"))
                high = _milliseconds(t.group("max"), t.group("max_unit"))
            except InvalidOperation:  # pragma: no cover - the pattern only admits numbers
                continue
            if _not_finite(log, entry, f"{t.group('what')} latency threshold", avg, high):
                continue
            what = "database read" if t.group("what").casefold().startswith("database") else "log write"
            if what in stated and stated[what] != (avg, high):
                log.problems.append(
                    Problem(
                        log.source,
                        f"{what} latency thresholds change from {stated[what]} to {(avg, high)} ms; "
                        "the later (last test in the log) is used",
                        location=f"line {entry.line}",
                        severity="note",
                    )
                )
            stated[what] = (avg, high)
            if what == "database read":
                thresholds.db_read_avg_ms, thresholds.db_read_max_ms = avg, high
            else:
                thresholds.log_write_avg_ms, thresholds.log_write_max_ms = avg, high
            continue
        if (i := _INTERVAL.search(msg)) is not None:
            if (interval := _whole(i.group("ms"), log, entry)) is not None:
                log.logging_intervals_ms.append(interval)
            continue
        if (mix := _MIX.search(msg)) is not None:
            for item in _MIX_ITEM.finditer(mix.group("body")):
                name = "_".join(item.group("name").casefold().split())
                share = float(item.group("value"))
                if not _not_finite(log, entry, f"operation mix {name}", share):
                    log.operation_mix[name] = share
            continue
        if (q := _QUERIED.search(msg)) is not None:
            if (queried := _whole(q.group("n"), log, entry)) is not None:
                log.samples_queried.append((q.group("file").strip(), queried))
            continue
        if (s := _SAMPLES.search(msg)) is not None:
            if (count := _whole(s.group("n"), log, entry)) is not None:
                log.sample_counts.append((s.group("file").strip(), count))
            continue
        if (lat := _INSTANCE_LATENCY.match(msg)) is not None:
            latency = float(lat.group("value"))
            if not _not_finite(
                log, entry, f"{lat.group('instance')} {lat.group('counter').strip()}", latency
            ):
                counters = log.instance_latencies.setdefault(lat.group("instance"), {})
                counters[lat.group("counter").strip()] = latency
            continue
        if _is_error(msg):
            log.errors.append(entry)
    log.thresholds = thresholds
