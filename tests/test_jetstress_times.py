"""Jetstress prints its times in the test machine's culture (ingest/jetstress/times.py): the US
form of every seed, and the forms a German, Polish, British or ISO machine gives, read alike in the
report, its test log and the result XML; the order of day and month decided by the stamps around."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from esrp_report.ingest.jetstress import times
from esrp_report.ingest.jetstress.test_log import parse_test_log


@pytest.mark.parametrize(
    ("text", "day_first", "expected"),
    [
        ("9/15/2017 11:29:50 AM", None, datetime(2017, 9, 15, 11, 29, 50)),
        ("9/15/2017 11:29:50 p.m.", None, datetime(2017, 9, 15, 23, 29, 50)),
        ("12/1/2017 12:00:01 AM", None, datetime(2017, 12, 1, 0, 0, 1)),
        ("15.09.2017 11:29:50", None, datetime(2017, 9, 15, 11, 29, 50)),
        ("04.09.2012 08:07:13", None, datetime(2012, 9, 4, 8, 7, 13)),
        ("04/09/2012 08:07:13", None, datetime(2012, 4, 9, 8, 7, 13)),
        ("04/09/2012 08:07:13", True, datetime(2012, 9, 4, 8, 7, 13)),
        ("15/09/2017 11:29:50", None, datetime(2017, 9, 15, 11, 29, 50)),
        ("2017-09-15 11:29:50", None, datetime(2017, 9, 15, 11, 29, 50)),
        ("2017-09-15T11:29:50.25", None, datetime(2017, 9, 15, 11, 29, 50, 250000)),
    ],
)
def test_a_stamp_in_any_culture_form_is_read(text: str, day_first: bool | None, expected: datetime) -> None:
    assert times.parse_stamp(text, day_first) == expected


@pytest.mark.parametrize(
    "text", ["2/30/2012 1:00:00 AM", "9/15/2017 13:00:00 PM", "15.13.2017 10:00:00", "soon"]
)
def test_what_names_no_real_time_is_none(text: str) -> None:
    assert times.parse_stamp(text) is None


def test_the_stamps_around_decide_the_order_of_day_and_month() -> None:
    assert times.day_first_of(["04/09/2012 08:07:13", "15/09/2012 10:00:00"]) is True
    assert times.day_first_of(["9/4/2012 8:07:13 AM", "9/15/2012 10:00:00 AM"]) is False
    assert times.day_first_of(["04/09/2012 08:07:13"]) is None
    both = ["13/2/2012 08:00:00", "2/13/2012 08:00:00"]
    assert times.day_first_of(both) is None and times.contradicts(both)


def test_a_british_log_is_read_in_its_own_order() -> None:
    """The first entries alone could be April; the later one (day 15) says the log is day first."""
    text = "04/09/2012 23:59:58 -- Preparing for testing ...\n15/09/2012 00:00:01 -- Test has ended.\n"
    log = parse_test_log(text, "log.txt")
    assert [e.timestamp for e in log.entries] == [
        datetime(2012, 9, 4, 23, 59, 58),
        datetime(2012, 9, 15, 0, 0, 1),
    ]
    assert not log.problems


def test_a_log_whose_dates_disagree_says_so() -> None:
    text = "13/2/2012 08:00:00 -- one\n2/13/2012 08:00:01 -- two\n"
    log = parse_test_log(text, "log.txt")
    assert len(log.entries) == 2
    assert any("order of day and month" in p.message for p in log.problems)


def test_a_german_log_line_is_an_entry() -> None:
    log = parse_test_log("04.09.2012 08:07:13 -- Preparing for testing ...\n", "log.txt")
    assert log.entries[0].timestamp == datetime(2012, 9, 4, 8, 7, 13)
    assert log.entries[0].message == "Preparing for testing ..."


def test_a_german_test_log_file_is_recognised_as_one(tmp_path: Path) -> None:
    from esrp_report.ingest.formats import detect_format

    path = tmp_path / "log.txt"
    path.write_text("04.09.2012 08:07:13 -- Preparing for testing ...\n", encoding="utf-8")
    assert detect_format(path) == "jetstress-test-log"
