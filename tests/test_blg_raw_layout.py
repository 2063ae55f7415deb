"""Real logs of the raw-counter layout (PowerShell's test assets: tests/data/blg/powershell/README.md).

``CounterSamples.blg`` (Windows 10 build 14393, 64-bit writer) has CSV and TSV twins exported by
Windows from the same samples: the reader must give their cells exactly. ``BadCounterSamples.blg``
(Server 2003, 32-bit writer, 26 machines) has 275 samples, 5 of which Windows reports as errors.
``CorruptBlg.blg`` is a text file with a broken CSV header.
"""

from __future__ import annotations

import csv
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.ingest.perfmon.blg import BlgFile, read_blg
from esrp_report.model.errors import UnsupportedFormatError

DATA = Path(__file__).parent / "data" / "blg" / "powershell"
SAMPLES = DATA / "CounterSamples.blg"
BAD = DATA / "BadCounterSamples.blg"
CORRUPT = DATA / "CorruptBlg.blg"


# Every test runs with both engines (the "engine" fixture: tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine")


def _table(path: Path, delimiter: str) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter=delimiter))


@pytest.mark.parametrize(("suffix", "delimiter"), [(".csv", ","), (".tsv", "\t")])
def test_convert_gives_the_cells_windows_exported(tmp_path: Path, suffix: str, delimiter: str) -> None:
    """Same counter paths, every time stamp to the millisecond, every value the same double
    (Windows prints 17 significant digits), " " exactly where Windows has no value."""
    out = tmp_path / f"out{suffix}"
    result = CliRunner().invoke(app, ["convert", str(SAMPLES), "-o", str(out)])
    assert result.exit_code == 0, result.output
    ours, theirs = _table(out, delimiter), _table(DATA / f"CounterSamples{suffix}", delimiter)
    assert ours[0][1:] == theirs[0][1:]  # the counter paths, in Windows' order
    assert ours[0][0].startswith(theirs[0][0][:14])  # "(PDH-CSV 4.0) " / "(PDH-TSV 4.0) "
    assert ours[0][0].endswith("(480)") and theirs[0][0].endswith("(480)")
    assert len(ours) == len(theirs) == 26
    blanks = numbers = 0
    for mine, windows in zip(ours[1:], theirs[1:], strict=True):
        assert mine[0] == windows[0]
        for a, b in zip(mine[1:], windows[1:], strict=True):
            if b == " ":
                assert a == " "
                blanks += 1
            else:
                assert float(a) == float(b), (mine[0], a, b)
                numbers += 1
    assert (blanks, numbers) == (8, 242)


def test_the_log_s_own_facts() -> None:
    with BlgFile(SAMPLES) as log:
        for _batch in log.batches():
            pass
        assert log.header.os_version == "10.0.1.5" and log.header.os_build == 14393
        assert log.header.pointer_size == 8
        assert log.layouts_seen == ["raw"]
        assert [e.type_code for e in log.entries] == [
            0x10410500,
            0x21510500,
            0x20020400,
            0x10410400,
            0x20570500,
            0x00010000,
        ]
        assert log.entries[0].instance == "*" and log.entries[0].time_base == 2_630_633
        assert log.entries[1].time_base == 10_000_000
        assert (log.samples_read, log.samples_lost, log.error_samples) == (25, 0, 0)
        assert log.utc_offset_minutes == -480  # from the 100 ns counters' UTC clock
        assert log.problems == []  # no closing catalog is normal for this layout


def _reference_raw_values(path: Path) -> list[tuple[int, list[tuple[int, int, int]]]]:
    """An oracle written from the format notes alone, for single-counter samples: per sample
    record, (event stamp, [(status, N, D) per counter])."""
    data = path.read_bytes()
    size = struct.unpack_from("<I", data, 0)[0]
    out = []
    for buffer in range(1, len(data) // size):
        base = buffer * size
        used = struct.unpack_from("<I", data, base + 0x30)[0]
        position = 0x48
        while position + 72 <= used:
            length, kind, stamp = data[base + position], data[base + position + 4], 0
            length = struct.unpack_from("<H", data, base + position)[0]
            stamp = struct.unpack_from("<Q", data, base + position + 16)[0]
            if kind == 34:
                record = data[base + position + 72 : base + position + length]
                values = []
                at = 8
                while at < len(record):
                    sub_length = struct.unpack_from("<I", record, at + 4)[0]
                    assert record[at : at + 4] == b"BL\x03\x01"
                    status = struct.unpack_from("<I", record, at + 8)[0]
                    n, d = struct.unpack_from("<qq", record, at + 8 + 16)
                    values.append((status, n, d))
                    at += sub_length
                out.append((stamp, values))
            position = (position + length + 7) & ~7
    return out


def test_bad_counter_samples_keeps_every_readable_value_and_accounts_for_the_errors() -> None:
    log = read_blg(BAD)
    reference = _reference_raw_values(BAD)
    assert log.samples.height == len(reference) == 275
    assert log.counters.height == 26 and log.counters.get_column("machine").n_unique() == 26
    failed = [i for i, (_stamp, values) in enumerate(reference) if any(s for s, _n, _d in values)]
    assert failed == [82, 83, 151, 226, 227]
    # % Processor Time (100NSEC_TIMER_INV): a value wherever both samples were collected, the raw
    # values moved forward and time passed; none anywhere else (never a zero for a failure).
    columns = log.counters.get_column("column").to_list()
    # A value below 0 is what PDH flags PDH_CALC_NEGATIVE_VALUE: left empty and counted (issue 29).
    expected_values = negative = 0
    for column, name in enumerate(columns):
        cooked = log.samples.get_column(name).to_list()
        for i in range(1, 275):
            (s0, n0, d0), (s1, n1, d1) = reference[i - 1][1][column], reference[i][1][column]
            readable = s0 == s1 == 0 and n1 >= n0 and d1 > d0
            value = 100.0 * (1.0 - (n1 - n0) / (d1 - d0)) if readable else None
            if value is not None and value < 0:
                negative += 1
                value = None
            expected_values += value is not None
            assert cooked[i] == value, (name, i)
        assert cooked[0] is None
    assert (expected_values, negative) == (275 * 26 - 131 - 79, 79)
    [dropped] = [p for p in log.problems if "below 0" in p.message]
    assert (
        dropped.message.startswith("79 cooked value(s) below 0")
        and "PDH_CALC_NEGATIVE_VALUE" in dropped.message
    )
    (problem,) = [p for p in log.problems if "collection failed" in p.message]
    assert problem.message.startswith(
        "5 sample(s) with counters whose collection failed: 52 value(s) missing"
    )
    assert "0x800007D0 PDH_CSTATUS_NO_MACHINE" in problem.message
    assert "2007-07-03 04:00:13.968" in problem.location and "2007-07-04 04:11:09.875" in problem.location


def test_inspect_tells_the_failed_samples_and_the_header_facts() -> None:
    result = CliRunner().invoke(app, ["inspect", str(BAD), "--json"])
    assert result.exit_code == 0, result.output
    assert '"samples_with_failed_counters": 5' in result.output
    assert '"samples": 275' in result.output
    assert "Windows 5.2.1.2 build 3790, 32-bit" in result.output
    assert "raw counters" in result.output


def _rewritten(tmp_path: Path, change: bytes, into: bytes) -> Path:
    data = SAMPLES.read_bytes().replace(change, into)
    path = tmp_path / "changed.blg"
    path.write_bytes(data)
    return path


def test_an_unknown_sub_record_kind_is_skipped_and_the_sample_s_known_counters_kept(tmp_path: Path) -> None:
    # Issue 29: a kind not understood threw away whole samples whose other sub-records were known.
    path = _rewritten(tmp_path, b"BL\x03\x02", b"BL\x03\x07")  # every wildcard sub-record
    log = read_blg(path)
    whole = read_blg(SAMPLES)
    assert log.sample_count == 25
    paths = log.counters["path"].to_list()
    assert not any("network interface" in p for p in paths)
    assert len(paths) == whole.counters.height - 5  # the wildcard's five instances only
    named = dict(zip(whole.counters["path"], whole.counters["column"], strict=True))
    for path_, column in zip(paths, log.counters["column"], strict=True):
        assert log.samples[column].to_list() == whole.samples[named[path_]].to_list()
    [skipped] = [p for p in log.problems if "42 4C 03 07" in p.message]
    assert "25 sample sub-record(s)" in skipped.message
    assert f"{25 * 0x1F0:,} bytes" in skipped.message
    assert skipped.lost == 0


def test_an_unknown_sample_layout_is_unsupported_naming_the_producer(tmp_path: Path) -> None:
    data = SAMPLES.read_bytes().replace(b"BL\x03\x02", b"BL\x03\x07").replace(b"BL\x03\x01", b"BL\x03\x07")
    path = tmp_path / "changed.blg"
    path.write_bytes(data)  # every sub-record of every sample of a kind not known
    with pytest.raises(
        UnsupportedFormatError, match=r"unsupported: .*Windows 10\.0\.1\.5 build 14393"
    ) as caught:
        read_blg(path)
    assert "42 4C 03 07" in str(caught.value)
    assert "damaged" not in str(caught.value)
    with BlgFile(path) as log:
        for _batch in log.batches():
            pass
        # One problem names the first such sample and counts them all as lost.
        assert (log.samples_read, log.samples_lost, log.samples_unsupported) == (0, 25, 25)
        assert sum(p.lost for p in log.problems) == log.samples_lost
    result = CliRunner().invoke(app, ["inspect", str(path), "--json"])
    assert result.exit_code == 2
    # What could be read is shown: the header, the machine, the counters asked for.
    assert '"producer": "Windows 10.0.1.5 build 14393, 64-bit"' in result.stdout
    assert "\\\\\\\\charlieparker\\\\processor(_total)\\\\% processor time" in result.stdout
    assert '"original_file": "C:\\\\Users\\\\jeffbi\\\\CounterSamples.blg"' in result.stdout
    assert "Traceback" not in result.output


def test_an_unknown_event_header_is_unsupported(tmp_path: Path) -> None:
    data = bytearray(SAMPLES.read_bytes())
    position = 65536 + 0x48
    while data[position + 2] == 0x14:
        data[position + 2] = 0x15
        position = (position + struct.unpack_from("<H", data, position)[0] + 7) & ~7
    path = tmp_path / "header.blg"
    path.write_bytes(bytes(data))
    with pytest.raises(UnsupportedFormatError, match=r"event header type\(s\) 0x15"):
        read_blg(path)


def test_a_text_file_named_blg_gets_one_clear_message_from_every_command(tmp_path: Path) -> None:
    messages = set()
    for args in (
        ["inspect", str(CORRUPT)],
        ["convert", str(CORRUPT), "-o", str(tmp_path / "x.csv")],
        ["check", str(CORRUPT)],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
        messages.add(" ".join(result.stderr.split()))
    (message,) = messages
    assert "a text file, not a binary perfmon log" in message
    assert '"(Pacific Daylight Time)(420)"' in message
    assert "PDH-CSV 4.0" in message
