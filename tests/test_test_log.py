from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esrp_report.ingest.jetstress.test_log import ERROR_RULES, parse_test_log, read_test_log
from esrp_report.model.errors import InputError
from esrp_synth.jetstress_xml import timestamp_text

# Lines in the shapes of the published EMAIL5 appendix (Jetstress 14.01): one session holding an
# earlier Performance run and its checksum pass, then the 2-hour Performance run of the report.
# Wrapped messages, blank lines, a markdown fence, stray leading/trailing spaces and link
# remnants are as converted documents have them ("␣" marks two trailing spaces).
EMAIL5_PERFORMANCE = """\
3/10/2011 8:38:41 PM -- Database read latency thresholds: (average: 20 msec/read, maximum: 100 msec/read).
3/10/2011 8:38:41 PM -- Log write latency thresholds: (average: 10 msec/write, maximum: 100 msec/write).
3/10/2011 8:39:01 PM -- Performance logging started (interval: 15000 ms).
3/10/2011 8:39:01 PM -- Attaining prerequisites:
3/10/2011 8:42:58 PM -- \\MSExchange Database(JetstressWin)\\Database Cache Size, Last: 4853748000.0 (lower bound:
4831838000.0, upper bound: none)
3/10/2011 10:43:07 PM -- C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 10 20 38 41.blg has 494 samples.
3/10/2011 10:43:18 PM -- Instance2756.1 has 18.4 for I/O Database Reads Average Latency.

```



3/10/2011 10:43:18 PM -- Instance2756.20 has 18.4 for I/O Database Reads Average Latency.␣
 3/10/2011 10:43:18 PM -- Test has 0 Maximum Database Page Fault Stalls/sec.␣
 3/10/2011 10:43:18 PM -- The test has 0 Database Page Fault Stalls/sec samples higher than 0.␣
 3/10/2011 10:43:18 PM -- [C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 10 20 38 41.xml](#) has 478 samples queried.␣
 3/10/2011 10:43:20 PM -- Performance logging started (interval: 30000 ms).␣
 3/10/2011 10:43:20 PM -- Verifying database checksums ...␣
 3/11/2011 7:01:31 AM -- Performance logging has ended.␣
 3/11/2011 7:01:31 AM -- [C:\\Program Files\\Exchange Jetstress\\DBChecksum 2011 3 10 22 43 19.blg](#) has 995 samples.␣
 3/11/2011 7:01:52 AM -- Jetstress testing has ended.␣
 3/11/2011 1:27:01 PM -- Jetstress testing begins ...␣
 3/11/2011 1:27:23 PM -- Database cache settings: (minimum: 640.0 MB, maximum: 5.0 GB)␣
 3/11/2011 1:27:46 PM -- Database read latency thresholds: (average: 20 msec/read, maximum: 100 msec/read).␣
 3/11/2011 1:27:46 PM -- Log write latency thresholds: (average: 10 msec/write, maximum: 100 msec/write).␣
 3/11/2011 1:28:05 PM -- Operation mix: Sessions 5, Inserts 40%, Deletes 20%, Replaces 5%, Reads 35%, Lazy Commits
70%.
 3/11/2011 1:28:05 PM -- Performance logging started (interval: 15000 ms).␣
 3/11/2011 1:28:05 PM -- Attaining prerequisites:␣
 3/11/2011 1:32:28 PM -- \\MSEExchange Database(JetstressWin)\\Database Cache Size, Last: 4833878000.0 (lower bound: 4831838000.0, upper bound: none)␣
 3/11/2011 3:32:29 PM -- Performance logging has ended.␣
 3/11/2011 3:33:43 PM -- JetInterop batch transaction stats: 16830, 16795, 17036, 16837, 16758, 16929, 16873, 16800,
16888, 16839, 16602, 16637, 16778, 16810, 17024, 16748, 16701, 16865, 16748 and 16779.␣
 3/11/2011 3:33:50 PM -- Instance2756.1 (complete), Instance2756.2 (complete), Instance2756.3 (complete),

Instance2756.4 (complete) and Instance2756.5 (complete)

3/11/2011 3:33:50 PM -- [C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 11 13 27 46.blg](#) has 495 samples.

3/11/2011 3:33:50 PM -- Creating test report ...

3/11/2011 3:34:01 PM -- Instance2756.1 has 18.5 for I/O Database Reads Average Latency.

3/11/2011 3:34:01 PM -- Instance2756.1 has 0.8 for I/O Log Writes Average Latency.

3/11/2011 3:34:01 PM -- Instance2756.1 has 0.8 for I/O Log Reads Average Latency.

3/11/2011 3:34:01 PM -- Instance2756.2 has 18.4 for I/O Database Reads Average Latency.
3/11/2011 3:34:01 PM -- Instance2756.2 has 0.9 for I/O Log Writes Average Latency.␣
3/11/2011 3:34:01 PM -- Test has 0 Maximum Database Page Fault Stalls/sec.␣
3/11/2011 3:34:01 PM -- <C:\\Program Files\\Exchange Jetstress\\Performance 2011 3 11 13 27 46.xml> has 477 samples queried.
""".replace("␣", "  ")

# The 3650-4 appendix's 24-hour Stress log: the log-write threshold line is cut by a fence.
STRESS_3650 = """\
4/23/2012 8:06:56 AM -- Database read latency thresholds: (average: 20 msec/read, maximum: 200 msec/read).
4/23/2012 8:06:56 AM -- Log write latency thresholds: (average: 10 msec/write, maximum:

```

200 msec/write).
 4/23/2012 8:06:58 AM -- Operation mix: Sessions 3, Inserts 40%, Deletes 20%, Replaces 5%, Reads 35%, Lazy Commits 70%.
 4/23/2012 8:06:58 AM -- Performance logging started (interval: 15000 ms).
 4/23/2012 8:06:58 AM -- Attaining prerequisites:
 4/23/2012 8:13:19 AM -- \\MSExchange Database(JetstressWin)\\Database Cache Size, Last: 484425700.0 (lower bound: 483183800.0, upper bound: none)
 4/24/2012 8:13:19 AM -- Performance logging has ended.
 4/24/2012 8:13:21 AM -- C:\\Program Files\\Exchange Jetstress\\results\\Stress_2012_4_23_8_6_56.blg has 5780 samples.
 4/24/2012 8:14:00 AM -- Instance37680.1 has 15.7 for I/O Database Reads Average Latency.
 4/24/2012 8:14:00 AM -- Instance37680.1 has 1.1 for I/O Log Writes Average Latency.
 4/24/2012 8:14:00 AM -- C:\\Program Files\\Exchange Jetstress\\results\\Stress_2012_4_23_8_6_56.xml has 5754 samples queried.
"""

SOFT_RECOVERY_3650 = """\
4/27/2012 9:31:53 PM -- C:\\Program Files\\Exchange Jetstress\\results\\Performance_2012_4_27_19_52_59.xml has 393 samples queried.
4/27/2012 9:31:55 PM -- Performance logging started (interval: 2000 ms).
4/27/2012 9:31:55 PM -- Recovering databases ...
4/27/2012 10:02:18 PM -- Performance logging has ended.
4/27/2012 10:02:18 PM -- Instance9568.1 (1823.567) and Instance9568.2 (1807.816)
4/27/2012 10:02:18 PM -- C:\\Program Files\\Exchange Jetstress\\results\\SoftRecovery_2012_4_27_21_31_53.blg has 906 samples.
"""


def test_email5_performance_log_from_the_published_appendix() -> None:
    log = parse_test_log(EMAIL5_PERFORMANCE, "Performance_2011_3_11_13_27_46.html", first_line=700)
    t = log.thresholds
    assert (t.db_read_avg_ms, t.db_read_max_ms, t.log_write_avg_ms, t.log_write_max_ms) == (20, 100, 10, 100)
    assert log.logging_intervals_ms == [15000, 30000, 15000]
    assert log.operation_mix == {
        "sessions": 5,
        "inserts": 40,
        "deletes": 20,
        "replaces": 5,
        "reads": 35,
        "lazy_commits": 70,
    }
    # The last test in the log is the report's: its prerequisites ended at 1:32:28 PM.
    assert log.prerequisites_attained_at == datetime(2011, 3, 11, 13, 32, 28)
    assert log.sample_counts == [
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 10 20 38 41.blg", 494),
        (r"C:\Program Files\Exchange Jetstress\DBChecksum 2011 3 10 22 43 19.blg", 995),
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 11 13 27 46.blg", 495),
    ]
    assert log.samples_queried == [
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 10 20 38 41.xml", 478),
        (r"C:\Program Files\Exchange Jetstress\Performance 2011 3 11 13 27 46.xml", 477),
    ]
    assert log.instance_latencies["Instance2756.1"] == {
        "I/O Database Reads Average Latency": 18.5,
        "I/O Log Writes Average Latency": 0.8,
        "I/O Log Reads Average Latency": 0.8,
    }
    assert log.instance_latencies["Instance2756.2"] == {
        "I/O Database Reads Average Latency": 18.4,
        "I/O Log Writes Average Latency": 0.9,
    }
    assert log.instance_latencies["Instance2756.20"] == {"I/O Database Reads Average Latency": 18.4}
    assert log.errors == [] and log.problems == []


def test_wrapped_lines_join_their_entry_and_keep_its_first_line_number() -> None:
    log = parse_test_log(EMAIL5_PERFORMANCE, "p.html", first_line=700)
    by_message = {e.message: e for e in log.entries}
    cache = next(m for m in by_message if m.startswith("\\MSExchange Database(JetstressWin)"))
    assert cache.endswith("(lower bound: 4831838000.0, upper bound: none)")
    assert by_message[cache].line == 704  # fifth line of the text
    stats = next(m for m in by_message if m.startswith("JetInterop batch transaction stats"))
    assert stats.endswith("16748 and 16779.")
    shutdown = next(m for m in by_message if m.startswith("Instance2756.1 (complete)"))
    assert shutdown.endswith("Instance2756.4 (complete) and Instance2756.5 (complete)")
    # Link remnants are reduced to the path they wrap; the fence is not part of any message.
    assert not any("](#)" in m or "<C:" in m or "```" in m for m in by_message)
    assert len(log.entries) == 36  # one per timestamped line


def test_stress_thresholds_across_a_fence_and_per_instance_latencies() -> None:
    log = parse_test_log(STRESS_3650, "Stress_2012_4_23_8_6_56.html")
    t = log.thresholds
    assert (t.db_read_avg_ms, t.db_read_max_ms, t.log_write_avg_ms, t.log_write_max_ms) == (20, 200, 10, 200)
    assert log.operation_mix["sessions"] == 3
    assert log.prerequisites_attained_at == datetime(2012, 4, 23, 8, 13, 19)
    assert log.sample_counts == [
        (r"C:\Program Files\Exchange Jetstress\results\Stress_2012_4_23_8_6_56.blg", 5780)
    ]
    assert log.samples_queried[0][1] == 5754
    assert log.instance_latencies == {
        "Instance37680.1": {"I/O Database Reads Average Latency": 15.7, "I/O Log Writes Average Latency": 1.1}
    }


def test_soft_recovery_and_backup_intervals() -> None:
    recovery = parse_test_log(SOFT_RECOVERY_3650, "SoftRecovery_2012_4_27_21_31_53.html")
    assert recovery.logging_intervals_ms == [2000]
    assert recovery.sample_counts[0][1] == 906
    assert recovery.prerequisites_attained_at is None
    assert recovery.thresholds.db_read_avg_ms is None  # not stated: absent, never 0
    backup = parse_test_log(
        "4/26/2012 11:59:04 AM -- Performance logging started (interval: 30000 ms).\n"
        "4/26/2012 11:59:04 AM -- Backing up databases ...\n",
        "b",
    )
    assert backup.logging_intervals_ms == [30000]


def test_jetstress_2007_thresholds_in_seconds_become_exact_milliseconds() -> None:
    log = parse_test_log(
        "5/31/2007 12:59:31 AM -- Database read latency thresholds: (average: 0.02 seconds/read, "
        "maximum: 0.05 seconds/read).\n"
        "5/31/2007 12:59:31 AM -- Log write latency thresholds: (average: 0.01 seconds/write, "
        "maximum: 0.05 seconds/write).\n",
        "old",
    )
    t = log.thresholds
    assert (t.db_read_avg_ms, t.db_read_max_ms, t.log_write_avg_ms, t.log_write_max_ms) == (20, 50, 10, 50)
    assert log.entries[0].timestamp == datetime(2007, 5, 31, 0, 59, 31)


def test_thresholds_that_change_within_a_log_keep_the_last_and_say_so() -> None:
    log = parse_test_log(
        "3/14/2011 9:02:03 AM -- Database read latency thresholds: (average: 20 msec/read, maximum: 200 msec/read).\n"
        "3/16/2011 1:02:03 PM -- Database read latency thresholds: (average: 20 msec/read, maximum: 100 msec/read).\n",
        "two.txt",
    )
    assert log.thresholds.db_read_max_ms == 100
    (note,) = log.problems
    assert note.severity == "note" and note.location == "line 2" and "200.0" in note.message


@pytest.mark.parametrize(
    "message",
    [
        "Fail – The test has 1.05381856535713 Average Database Page Fault Stalls/sec. This should be not higher than 1.",
        "Fail - The test has 2 Maximum Database Page Fault Stalls/sec.",
        r"E:\db\Jetstress001001.edb: JET error -1018 at page 42.",
        "Read verification failed on page 7 (-1019).",
        "Checksum mismatch -1021 on volume F:",
        "Volume G: reported -1022.",
        "Lost flush detected (-1119).",
        "Hung IO detected on volume E:",
        "DbtimeTooNew on page 1234 of Jetstress002001.edb",
        "The test has 3 I/O errors on volume H:",
        "Jetstress failed to attach database 2.",
    ],
)
def test_error_entries_are_collected(message: str) -> None:
    log = parse_test_log(
        f"6/3/2019 7:41:47 PM -- {message}\n6/3/2019 7:41:48 PM -- Creating test report ...", "e"
    )
    assert [e.message for e in log.errors] == [message]


@pytest.mark.parametrize(
    "message",
    [
        "No errors were found.",
        "Volume E: has 0 I/O errors.",
        "Test has 0 Maximum Database Page Fault Stalls/sec.",
        "The test has 0 Database Page Fault Stalls/sec samples higher than 0.",
        "Database failover settings: none",
    ],
)
def test_messages_that_only_mention_errors_are_not_errors(message: str) -> None:
    assert parse_test_log(f"6/3/2019 7:41:47 PM -- {message}", "e").errors == []


def test_error_rules_are_data() -> None:
    names = [name for name, _pattern in ERROR_RULES]
    assert len(names) == len(set(names)) >= 8


def test_damaged_timestamps_become_problems_with_line_numbers() -> None:
    log = parse_test_log(
        "13/45/2011 1:00:00 PM -- impossible date\n"
        "3/11/2011 1:27:46 PM -- ok\n"
        "3/11/2011 13:27:46 -- no AM/PM\n"
        "3/11/2011 1:28:00 PM -- later\n",
        "d.txt",
        first_line=10,
    )
    # A 24-hour stamp is a culture's form (times.py): read, and the mix of forms named, not lost.
    assert [e.message for e in log.entries] == ["ok", "no AM/PM", "later"]
    assert [(p.location, p.lost) for p in log.problems] == [("line 10", 0), ("line 10", 1)]
    assert "2 forms" in log.problems[0].message
    assert "'13/45/2011 1:00:00 PM'" in log.problems[1].message


def test_text_without_entries_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text\nand more\n", encoding="utf-16")
    with pytest.raises(
        InputError, match=r"notes\.txt: line 1: no test-log entries; expected lines 'M/D/YYYY"
    ):
        read_test_log(path)
    with pytest.raises(InputError):
        parse_test_log("", "empty")
    # Two-digit years and clocks without seconds are no Jetstress stamp in any culture.
    with pytest.raises(InputError, match=r"no test-log entries \(2 line\(s\) start like entries"):
        parse_test_log("31/12/11 1:00 PM -- a\n11.03.11 13:27 -- b\n", "locale.txt")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "cp1252"])
def test_read_test_log_in_each_encoding(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "log.txt"
    text = "3/11/2011 1:27:46 PM -- Creating test report for Zürich ...\r\n3/11/2011 1:28:05 PM -- done\r\n"
    path.write_bytes(text.encode(encoding))
    log = read_test_log(path)
    assert log.source == str(path)
    assert [e.message for e in log.entries] == ["Creating test report for Zürich ...", "done"]


_words = st.lists(
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,:()%\\",
        min_size=1,
        max_size=8,
    ),
    min_size=1,
    max_size=12,
)


@given(
    start=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
    steps=st.lists(st.integers(min_value=0, max_value=100_000), min_size=1, max_size=8),
    messages=st.lists(_words, min_size=8, max_size=8),
    wraps=st.lists(st.integers(min_value=0, max_value=12), min_size=8, max_size=8),
    padding=st.sampled_from(["", " ", "  ", "\t"]),
)
@settings(max_examples=100, deadline=None)
def test_any_wrapped_log_reads_back_its_entries(
    start: datetime, steps: list[int], messages: list[list[str]], wraps: list[int], padding: str
) -> None:
    lines: list[str] = []
    expected: list[tuple[datetime, str]] = []
    stamp = start.replace(microsecond=0)
    for step, words, wrap in zip(steps, messages, wraps, strict=False):
        stamp += timedelta(seconds=step)
        # A continuation line must not itself start like a date; word sets never contain '/'.
        head, tail = words[:wrap] or words[:1], words[wrap:] if wrap else words[1:]
        lines.append(f"{padding}{timestamp_text(stamp)} -- {' '.join(head)}{padding}")
        if tail:
            lines += ["", f"{padding}{' '.join(tail)}"]
        expected.append((stamp, " ".join(words)))
    log = parse_test_log("\n".join(lines), "prop")
    assert [(e.timestamp, e.message) for e in log.entries] == expected
