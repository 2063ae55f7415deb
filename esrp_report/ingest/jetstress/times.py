"""Time stamps as Jetstress prints them, in every place it prints one: the report's Test Summary,
its test log ("9/15/2017 11:29:50 AM -- Preparing for testing ..."), the result XML.

Jetstress formats a time with the test machine's culture, so a report from a German or Polish
server prints "04.09.2012 08:07:13" where a US one prints "9/4/2012 8:07:13 AM", and a British one
"04/09/2012 08:07:13". Evidence: the four published seeds (four vendors) and the project's samples
print the US form only; the other forms are the .NET cultures' general date/time patterns, so they
are accepted by shape, not by a seen file.

The rule for the order of day and month, strict only where the text decides it:
- ``D.M.YYYY`` (a dot) is day first: every culture that writes its date with dots writes the day
  first;
- ``YYYY-M-D`` (ISO) is year, month, day;
- ``A/B/YYYY``: a field above 12 decides (it is the day); when neither is, the stamps around it
  decide (:func:`day_first_of`, over the whole report or log); when none of them does, month first,
  the US form every seed prints. A set of stamps that says both is a contradiction, named by the
  caller.

This module is the one owner of the shape: the test-log reader, the report readers and the
document readers ask it (they each had their own US-only pattern)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

# The date shapes a stamp may start with: M/D/YYYY or D.M.YYYY (either order) and ISO.
_DATE = r"\d{1,2}[/.]\d{1,2}[/.]\d{4}|\d{4}-\d{1,2}-\d{1,2}"
_CLOCK = r"\d{1,2}:\d{2}:\d{2}"
_HALF = r"[AaPp]\.?\s?[Mm]\.?"  # AM/PM, a.m./p.m.
_STAMP = rf"(?P<date>{_DATE})[ T](?P<clock>{_CLOCK})(?P<fraction>\.\d{{1,7}})?(?:\s*(?P<half>{_HALF}))?"
STAMP = re.compile(_STAMP)
# A test-log entry: a stamp, " -- ", the message.
LOG_ENTRY = re.compile(rf"^(?P<stamp>{_STAMP})\s+--(?:\s|$)(?P<message>.*)$")
# How the lead of a log line looks when it is one, for the readers that must not split it into
# cells (a cheap prefilter: the full parse is LOG_ENTRY's).
LOG_LINE_START = re.compile(rf"^(?:{_DATE})[ T]{_CLOCK}\S*(?:\s*{_HALF})?\s+--")
EXPECTED = "a time such as '9/15/2017 11:29:50 AM', '15.09.2017 11:29:50' or '2017-09-15 11:29:50'"


def _fields(text: str) -> tuple[int, int] | None:
    """The first two fields of a slashed date, or None for any other form."""
    match = STAMP.fullmatch(" ".join(text.split()))
    if match is None or "/" not in match["date"]:
        return None
    first, second = (int(f) for f in match["date"].split("/")[:2])
    if (first > 12 and second > 12) or max(first, second) > 31:
        return None  # no date in either order ("13/45/2011"): it decides nothing, and is not read
    return first, second


def day_first_of(texts: Iterable[str]) -> bool | None:
    """Does this set of stamps print the day first (True), the month first (False), or does none
    of them tell (None)? A set where one says each is also None: the caller names it
    (:func:`contradicts`)."""
    day = month = False
    for text in texts:
        fields = _fields(text)
        if fields is None:
            continue
        day = day or fields[0] > 12
        month = month or fields[1] > 12
    if day == month:
        return None
    return day


def contradicts(texts: Iterable[str]) -> bool:
    """Do these slashed stamps disagree on the order of day and month (a "13/2/2012" beside a
    "2/13/2012")?"""
    fields = [f for f in map(_fields, texts) if f is not None]
    return any(a > 12 for a, _b in fields) and any(b > 12 for _a, b in fields)


def forms(texts: Iterable[str]) -> set[str]:
    """The forms these stamps are printed in ("M/D/YYYY h:mm:ss AM", "D.M.YYYY H:mm:ss", ...): one
    machine's culture prints one, so more than one in a log is worth naming."""
    out: set[str] = set()
    for text in texts:
        match = STAMP.fullmatch(" ".join(text.split()))
        if match is None:
            continue
        date = match["date"]
        shape = "YYYY-M-D" if "-" in date else "D.M.YYYY" if "." in date else "A/B/YYYY"
        out.add(shape + (" h:mm:ss AM" if match["half"] else " H:mm:ss"))
    return out


def parse_stamp(text: str, day_first: bool | None = None) -> datetime | None:
    """The time a stamp prints, or None when it is not one (or names no real time: "2/30/2012",
    "13:00:00 PM"). ``day_first`` is the order the stamps around it decided (:func:`day_first_of`)."""
    match = STAMP.fullmatch(" ".join(text.split()))
    if match is None:
        return None
    date = match["date"]
    if "-" in date:
        year, month, day = (int(f) for f in date.split("-"))
    else:
        dotted = "." in date
        first, second, year = (int(f) for f in date.split("." if dotted else "/"))
        if dotted or first > 12 or (second <= 12 and day_first):
            day, month = first, second
        else:
            month, day = first, second
    hour, minute, second_ = (int(f) for f in match["clock"].split(":"))
    half = match["half"]
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half[0] in "pP" else 0)
    fraction = match["fraction"]
    micro = round(float(fraction) * 1_000_000) if fraction else 0
    try:
        return datetime(year, month, day, hour, minute, second_, min(micro, 999_999))
    except ValueError:
        return None
