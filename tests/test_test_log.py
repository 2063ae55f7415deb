from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from esrp_report.errors import InputError
from esrp_report.ingest.test_log import parse_test_log, read_test_log

# Lines as they appear in published appendices: wrapped messages, stray spaces, link remnants.
PERFORMANCE = """
3/11/2011 1:27:46 PM -- Database read latency thresholds: (average: 20 msec/read, maximum: 100 msec/read).
 3/11/2011 1:27:46 PM -- Log write latency thresholds: (average: 10 msec/write, maximum: 100 msec/write).
3/11/2011 1:28:05 PM -- Operation mix: Sessions 5, Inserts 40%, Deletes 20%, Replaces 5%, Reads 35%, Lazy Commits
70%.
3/11/2011 1:28:05 PM -- Performance logging started (interval: 15000 ms).
3/11/2011 1:28:05 PM -- Attaining prerequisites:
3/11/2011 1:32:28 PM -- \\MSExchange Database(JetstressWin)\\Database Cache Size, Last: 4833878000.0 (lower bound:
4831838000.0, upper bound: none)
3/11/2011 3:32:29 PM -- Performance logging has ended.
3/11/2011 3:33:50 PM -- [C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 11 13 27 46.blg](#) has 495 samples.
3/11/2011 3:34:01 PM -- Instance2756.1 has 18.5 for I/O Database Reads Average Latency.
3/11/2011 3:34:01 PM -- Instance2756.1 has 0.8 for I/O Log Writes Average Latency.
3/11/2011 3:34:01 PM -- The test has 0 Database Page Fault Stalls/sec samples higher than 0.
3/11/2011 3:34:01 PM -- <C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 11 13 27 46.xml> has 477 samples queried.
3/11/2011 3:35:01 PM -- Performance logging started (interval: 30000 ms).
"""


def test_real_log_shapes() -> None:
    log = parse_test_log(PERFORMANCE, "perf.html", first_line=100)
    assert len(log.entries) == 13
    t = log.thresholds
    assert (t.db_read_avg_ms, t.db_read_max_ms, t.log_write_avg_ms, t.log_write_max_ms) == (20, 100, 10, 100)
    assert log.operation_mix == {
        "sessions": 5,
        "inserts": 40,
        "deletes": 20,
        "replaces": 5,
        "reads": 35,
        "lazy_commits": 70,
    }
    assert log.logging_intervals_ms == [15000, 30000]
    assert log.prerequisites_attained_at == datetime(2011, 3, 11, 13, 32, 28)
    assert log.sample_counts == [
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 11 13 27 46.blg", 495)
    ]
    assert log.samples_queried[0][1] == 477
    assert log.instance_latencies["Instance2756.1"] == {
        "I/O Database Reads Average Latency": 18.5,
        "I/O Log Writes Average Latency": 0.8,
    }
    assert log.errors == []
    assert log.entries[0].line == 101
    assert log.entries[2].message.endswith("Lazy Commits 70%.")


def test_stress_soft_recovery_and_2007_seconds() -> None:
    stress = parse_test_log(
        "4/23/2012 8:06:56 AM -- Database read latency thresholds: (average: 20 msec/read, "
        "maximum: 200 msec/read).",
        "s",
    )
    assert stress.thresholds.db_read_max_ms == 200
    old = parse_test_log(
        "5/31/2007 12:59:31 AM -- Log write latency thresholds: (average: 0.01 seconds/write, "
        "maximum: 0.05 seconds/write).",
        "old",
    )
    assert (old.thresholds.log_write_avg_ms, old.thresholds.log_write_max_ms) == (10, 50)
    recovery = parse_test_log("3/16/2011 1:20:44 PM -- Performance logging started (interval: 2000 ms).", "r")
    assert recovery.logging_intervals_ms == [2000]


def test_errors_are_collected() -> None:
    log = parse_test_log(
        "6/3/2019 7:41:47 PM -- Fail - The test has 1.05381856535713 Average Database Page Fault Stalls/sec.\n"
        "6/3/2019 7:41:48 PM -- E:\\db\\Jetstress001001.edb: JET error -1018 at page 42.\n"
        "6/3/2019 7:41:49 PM -- No errors were found.\n",
        "e",
    )
    assert [e.line for e in log.errors] == [1, 2]


def test_damaged_lines_are_counted_and_text_without_entries_is_refused(tmp_path: Path) -> None:
    log = parse_test_log("13/45/2011 1:00:00 PM -- impossible date\n3/11/2011 1:27:46 PM -- ok\n", "d")
    assert len(log.entries) == 1
    assert [(p.location, p.lost) for p in log.problems] == [("line 1", 1)]
    path = tmp_path / "notes.txt"
    path.write_text("just some text\n", encoding="utf-16")
    with pytest.raises(InputError, match=r"notes\.txt: line 1: no test-log entries"):
        read_test_log(path)
