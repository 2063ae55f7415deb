"""Inputs the fuzzer (benchmarks/fuzz.py, docs/fuzzing.md) found to crash a reader, one test each.

Each input is saved under tests/data/fuzz/; the reader must answer with an InputError (a clear
user error), never with another exception.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from esrp_report.ingest.config.manifest import ManifestError, read_manifest
from esrp_report.ingest.documents.published import read_document
from esrp_report.ingest.jetstress.config_xml import read_config_xml_with_problems
from esrp_report.ingest.jetstress.report_html import read_report
from esrp_report.ingest.jetstress.result_xml import read_result_xml
from esrp_report.ingest.jetstress.test_log import read_test_log
from esrp_report.ingest.perfmon.blg import read_blg
from esrp_report.ingest.perfmon.counter_csv import read_counter_csv
from esrp_report.model.errors import CounterLogError, InputError, XmlInputError

DATA = Path(__file__).parent / "data" / "fuzz"
SAMPLE_LOG = Path(__file__).parent / "data" / "blg" / "SampleLog.blg"


def test_manifest_integer_past_float_range_is_an_input_error() -> None:
    # iops_per_mailbox = 999...9 (400 digits): float(int) raised OverflowError.
    with pytest.raises(ManifestError, match="iops_per_mailbox out of range"):
        read_manifest(DATA / "manifest-integer-past-float.toml")


def test_manifest_integer_of_5000_digits_is_an_input_error() -> None:
    # tomllib raises a plain ValueError (not TOMLDecodeError) past Python's 4,300-digit limit.
    with pytest.raises(InputError, match="not valid TOML"):
        read_manifest(DATA / "manifest-integer-5000-digits.toml")


def test_config_xml_unknown_encoding_after_a_bom_is_an_input_error() -> None:
    # A UTF-16 BOM, then bytes shifted by one: the declaration (encoding='utf-nan') survives
    # decoding, and expat's encoding lookup raised LookupError.
    with pytest.raises(XmlInputError, match="unknown encoding"):
        read_config_xml_with_problems(DATA / "config-xml-unknown-encoding-after-bom.xml")


def test_result_xml_unknown_encoding_after_a_bom_is_an_input_error(tmp_path: Path) -> None:
    shifted = b"\xff\xfe\x00" + "<?xml version='1.0' encoding='utf-inf'?>\n<output/>\n".encode("utf-16-le")
    path = tmp_path / "Performance_2011_3_11_13_27_46.xml"
    path.write_bytes(shifted)
    with pytest.raises(XmlInputError):
        read_result_xml(path)


def test_test_log_numbers_of_5000_digits_are_problems() -> None:
    # int() of a 5,000-digit interval or sample count raised ValueError (Python's 4,300-digit limit).
    log = read_test_log(DATA / "test-log-numbers-of-5000-digits.log")
    assert log.logging_intervals_ms == [] and log.sample_counts == [] and log.samples_queried == []
    assert [p.message.split(" (")[0] for p in log.problems] == ["a number of 5,000 digits"] * 3


def test_report_backup_time_of_huge_hours_is_a_problem() -> None:
    # Elapsed backup times of 5,000-digit hours (ValueError from int()) and of 400-digit hours
    # (OverflowError adding the seconds) are cells that are not durations.
    run = read_report(DATA / "DatabaseBackup_2012_4_26_11_59_0.html")
    assert [row.elapsed_seconds for row in run.backup[:2]] == [None, None]
    assert sum(p.message.startswith("not a duration") for p in run.problems) == 2


def test_published_user_count_of_5000_digits_is_an_input_error() -> None:
    with pytest.raises(InputError, match="a count of 5,000 digits"):
        read_document(DATA / "published-users-of-5000-digits.txt")


@pytest.mark.parametrize("engine", ["auto", "pyarrow"])
@pytest.mark.parametrize("name", ["Performance_bias_400_digits.csv", "Performance_bias_5000_digits.csv"])
def test_counter_csv_absurd_time_zone_bias_is_a_problem(name: str, engine: str) -> None:
    # "(PDH-CSV 4.0) (Eastern Standard Time)(999...)": OverflowError (C long) in the timestamp
    # shift, or ValueError from int() past 4,300 digits. Now: no bias, and the reason said.
    log = read_counter_csv(DATA / name, engine=engine)
    assert log.utc_offset_minutes is None
    assert "is not a number of minutes within a day" in log.problems[0].message
    assert log.samples.height > 0


@pytest.mark.parametrize("name", ["blg-log-header-cut-short-a.blg", "blg-log-header-cut-short-b.blg"])
def test_blg_log_header_cut_short_is_a_counter_log_error(name: str) -> None:
    with pytest.raises(InputError, match="too short for a binary perfmon log with 64-bit pointers"):
        read_blg(DATA / name)


@pytest.mark.parametrize(
    ("name", "samples"),
    [("blg-sample-record-without-counters.blg", 1), ("blg-raw-wildcard-never-has-instances.blg", 3)],
)
def test_blg_samples_without_a_counter_are_no_traceback(name: str, samples: int) -> None:
    # Samples are read but no counter column exists, and read_blg raised polars' ShapeError (both
    # engines, both layouts). Found by the fuzzer (benchmarks/fuzz.py, seeds 3 and 4) in mutants of
    # the raw-counter seeds; two 2 KB logs of esrp_synth/blg_raw_writer.py reach it:
    # - one counter, one sample whose record 34 declares 8 bytes (its header, no sub-record): the
    #   writer's output with the 4 bytes of that length changed (damage);
    # - a sound log: one wildcard entry (Network Interface(*)) whose instance set is empty in each of
    #   its 3 samples (a BL 03 02 array of 0 items), as a machine without such instances logs it.
    # Now refused with the reason (no Polars ShapeError), by every command that reads the log.
    with pytest.raises(CounterLogError, match=rf"{samples} sample\(s\) read, but no counter column"):
        read_blg(DATA / name)


def test_blg_counter_patterns_matching_nothing_are_no_traceback() -> None:
    # The same frame building, reached through the API: read_blg(counters=...) with patterns that
    # select no counter of a sound log (found by review of the finding above).
    with pytest.raises(CounterLogError, match="the counter selection matches none of the log's counters"):
        read_blg(SAMPLE_LOG, counters=["\\\\NoSuchMachine\\NoSuchObject\\x"])


@pytest.mark.parametrize(
    "name", ["Performance_slow_damaged_rows_a.csv", "Performance_slow_damaged_rows_b.csv"]
)
def test_counter_csv_pyarrow_locates_many_damaged_rows_quickly(name: str) -> None:
    # 64 KB of short damaged rows: locating each skipped row looped over every match of its text
    # that was not at a line start (3 s here, past the fuzzer's 10 s limit under load); now ~0.1 s.
    started = time.perf_counter()
    with contextlib.suppress(CounterLogError):
        read_counter_csv(DATA / name, engine="pyarrow")
    assert time.perf_counter() - started < 1.5
