"""Tests of the raw-counter .blg writer alone: the bytes are taken apart here with ``struct`` (no reader).

The expected bytes of ``test_counter_samples_first_sample_byte_for_byte`` are copied from
CounterSamples.blg (PowerShell's test assets, MIT licence, Windows 10 build 14393).
"""

from __future__ import annotations

import io
import itertools
import struct
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from esrp_synth import blg_raw_writer as rw
from esrp_synth import blg_writer as bw
from esrp_synth.blg_raw_writer import Clock, LogHeader, RawArray, RawBlgWriter, RawCounter, RawItem, RawValue

PDH_GUID = uuid.UUID("933f3bb3-943e-490d-9ced-3cbb14c14479").bytes_le
T0 = datetime(2024, 3, 1, 10, 0, 0, 250_000)
FT0 = rw.filetime(T0)
SEC = 10_000_000

COUNTERS = (
    RawCounter("web1", "Network Interface", "Bytes Total/sec", bw.PERF_COUNTER_BULK_COUNT, "*", scale=-4),
    RawCounter("web1", "Processor", "% Processor Time", bw.PERF_100NSEC_TIMER_INV, "_Total"),
    RawCounter("web1", "Memory", "% Committed Bytes In Use", bw.PERF_RAW_FRACTION),
    RawCounter("\\\\db2", "PhysicalDisk", "Avg. Disk sec/Transfer", bw.PERF_AVERAGE_TIMER, "0 C:"),
    RawCounter(
        "db2", "Process", "Elapsed Time", bw.PERF_ELAPSED_TIME, "sqlservr", parent="x", instance_index=2
    ),
)
NICS = ("nic a", "nic b", "svchost", "svchost")


# --- a minimal struct-based view of a file ----------------------------------------------------
@dataclass
class Event:
    buffer: int
    offset: int
    size: int
    htype: int
    kind: int
    stamp: int
    times: bytes
    log_guid: bytes
    number: int
    count: int
    data: bytes


def events(blob: bytes, size: int) -> list[Event]:
    """Every PDH event of buffers 1..N, walking each buffer exactly to its used end."""
    found = []
    for k in range(1, len(blob) // size):
        base = k * size
        used = struct.unpack_from("<I", blob, base + 0x30)[0]
        at = base + 72
        while at < base + used:
            length, htype, marker, kind, _level, version = struct.unpack_from("<HBBBBH", blob, at)
            assert marker == 0xC0 and version == 60
            assert blob[at + 24 : at + 40] == PDH_GUID
            stamp = struct.unpack_from("<q", blob, at + 16)[0]
            number, count = struct.unpack_from("<II", blob, at + 64)
            found.append(
                Event(
                    k,
                    at - base,
                    length,
                    htype,
                    kind,
                    stamp,
                    blob[at + 40 : at + 48],
                    blob[at + 48 : at + 64],
                    number,
                    count,
                    blob[at + 72 : at + length],
                )
            )
            at += (length + 7) & ~7
        assert at == base + used
    return found


def records(evs: list[Event]) -> list[tuple[int, int, bytes]]:
    """(kind, stamp, data) of each record, its fragments joined (checked numbered 1..count)."""
    out = []
    parts: list[Event] = []
    for ev in evs:
        parts.append(ev)
        assert ev.number == len(parts) and ev.count == parts[0].count
        assert (ev.kind, ev.stamp) == (parts[0].kind, parts[0].stamp)
        if ev.number == ev.count:
            out.append((ev.kind, ev.stamp, b"".join(p.data for p in parts)))
            parts = []
    assert not parts
    return out


def utf16_at(data: bytes, at: int) -> str:
    end = at
    while data[end : end + 2] != b"\0\0":
        end += 2
    return data[at:end].decode("utf-16-le")


def parse_entries(record: bytes) -> list[dict[str, Any]]:
    assert struct.unpack_from("<II", record, 0) == (0x6FF, 0x00020008)
    out = []
    at = 8
    while at < len(record):
        size, flags, user, ctype, tbase, scale, mo, oo, io_, po, idx, co = struct.unpack_from(
            "<IIIIqiiiiiii", record, at
        )
        assert size % 8 == 0 and at + size <= len(record)
        area = record[at + 52 : at + size]

        def text(off: int, area: bytes = area) -> str | None:
            return None if off < 0 else utf16_at(area, off)

        last = max(mo, oo, io_, po, co)
        strings_end = last + 2 * len(utf16_at(area, last)) + 2

        out.append(
            {
                "size": size,
                "flags": flags,
                "user": user,
                "type": ctype,
                "time_base": tbase,
                "scale": scale,
                "machine": text(mo),
                "object": text(oo),
                "instance": text(io_),
                "parent": text(po),
                "index": idx,
                "counter": text(co),
                "strings_end": strings_end,
                "tail": area[strings_end:],
            }
        )
        at += size
    assert at == len(record)
    return out


def parse_sample(record: bytes) -> list[dict[str, Any]]:
    tag, length = struct.unpack_from("<4sI", record, 0)
    assert tag == b"BL\x03\x00" and length == len(record)
    subs = []
    at = 8
    while at < length:
        tag, sub_length = struct.unpack_from("<4sI", record, at)
        assert sub_length % 8 == 0 and at + sub_length <= length
        body = record[at + 8 : at + sub_length]
        if tag == b"BL\x03\x01":
            assert sub_length == 48
            status, stamp, pad, first, second, multi, pad2 = struct.unpack("<IqIqqII", body)
            assert pad == pad2 == 0
            subs.append({"kind": 1, "status": status, "stamp": stamp, "value": (first, second, multi)})
        else:
            assert tag == b"BL\x03\x02"
            body_size, n, status, pad, stamp = struct.unpack_from("<IIIIq", body, 0)
            assert body_size == sub_length - 8 and pad == 0
            items = []
            for k in range(n):
                name_at, multi, first, second = struct.unpack_from("<IIqq", body, 24 + 24 * k)
                assert 24 + 24 * n <= name_at < body_size
                items.append((utf16_at(body, name_at), first, second, multi))
            subs.append({"kind": 2, "status": status, "stamp": stamp, "items": items})
        at += sub_length
    return subs


# --- writing helpers ---------------------------------------------------------------------------
def sample(k: int, *, nics: tuple[str, ...] = NICS) -> list[rw.SampleValue]:
    clock = Clock(perf_time=1_000_000 + k * 3 * 2_630_633, time_100ns=FT0 + k * 3 * SEC)
    return rw.sample_values(
        COUNTERS,
        clock,
        [[(n, 100 * k + j) for j, n in enumerate(nics)], 10 * k, 7 + k, 2 * k, 5],
        [None, None, 1000, 3 * k + 1, None],
    )


def write(
    samples: int = 4, *, stamp_step: int = 3 * SEC, header: LogHeader | None = None, **kw: Any
) -> bytes:
    stream = io.BytesIO()
    with RawBlgWriter(stream, COUNTERS, header=header, **kw) as writer:
        for k in range(samples):
            writer.add_sample(sample(k), FT0 + k * stamp_step)
    return stream.getvalue()


# --- container -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("pointer_size", "style"), [(8, "win10"), (4, "vista"), (8, "vista")])
def test_buffers_are_whole_and_walk_to_their_used_end(pointer_size: int, style: Any) -> None:
    size = 2048
    blob = write(40, pointer_size=pointer_size, buffer_size=size, fragment_data=500, buffer_style=style)
    assert len(blob) % size == 0
    n = len(blob) // size
    assert n >= 4
    assert struct.unpack_from("<I", blob, 72 + 32 + 36)[0] == n  # BuffersWritten
    for k in range(n):
        buffer_size, used = (
            struct.unpack_from("<I", blob, k * size)[0],
            struct.unpack_from("<I", blob, k * size + 0x30)[0],
        )
        flag = struct.unpack_from("<H", blob, k * size + 0x34)[0]
        assert buffer_size == size
        assert 72 < used <= size and used % 8 == 0
        assert blob[k * size + used : (k + 1) * size] == b"\xff" * (size - used)
        last = k == n - 1
        if style == "win10":
            assert flag == (1 if k == 0 else 0x21 if last else 0x20)
        else:
            assert flag == (1 if k == 0 or last else 0)
    evs = events(blob, size)
    assert {e.htype for e in evs} == {0x14 if pointer_size == 8 else 0x0A}
    assert struct.unpack_from("<B", blob, 72 + 2)[0] == (0x02 if pointer_size == 8 else 0x01)


def test_records_are_fragmented_across_events_and_buffers_and_join_to_the_same_bytes() -> None:
    whole = records(events(write(6), 65536))
    size, step = 1024, 200
    evs = events(write(6, buffer_size=size, fragment_data=step), size)
    assert max(e.count for e in evs) > 1
    assert all(0 < len(e.data) <= step and e.size == 72 + len(e.data) for e in evs)
    assert all(len(e.data) == step for e in evs if e.number < e.count)
    crossing = [
        (a, b) for a, b in itertools.pairwise(evs) if b.number == a.number + 1 and b.buffer != a.buffer
    ]
    assert crossing, "some record should continue in the next buffer"
    assert records(evs) == whole


def test_every_event_carries_the_header_log_guid_and_event_times() -> None:
    guid = uuid.UUID("8823f583-d12f-4ed2-9ccf-7a3bf55fdecb")
    blob = write(header=LogHeader(log_guid=guid, event_times=(0, 0x001A0200)))
    evs = events(blob, 65536)
    assert {e.log_guid for e in evs} == {guid.bytes_le}
    assert {e.times for e in evs} == {bytes.fromhex("0000000000021a00")}
    assert utf16_at(blob, 72 + 32 + 280) == str(guid)


@pytest.mark.parametrize(("pointer_size", "shift"), [(4, 0), (8, 8)])
def test_log_file_header_fields_move_with_the_pointer_size(pointer_size: int, shift: int) -> None:
    tz = rw.TimeZone(
        480, "@tzres.dll,-212", "@tzres.dll,-211", (0, 11, 0, 1, 2, 0, 0, 0), 0, (0, 3, 0, 2, 2, 0, 0, 0), -60
    )
    start = datetime(2016, 11, 26, 21, 54, 51, 790_000, tzinfo=UTC)
    header = LogHeader(
        perf_freq=2_630_633,
        time_zone=tz,
        os_version=(5, 2, 1, 2),
        os_build=3790,
        log_file_name="C:\\Users\\x\\CounterSamples.blg",
        start_utc=start,
        end_utc=start + timedelta(seconds=1),
        boot_utc=datetime(2016, 11, 18),
    )
    blob = write(header=header, pointer_size=pointer_size)
    p = 72 + 32
    assert struct.unpack_from("<I4BI", blob, p) == (65536, 5, 2, 1, 2, 3790)
    assert struct.unpack_from("<q", blob, p + 16)[0] == rw.filetime(start + timedelta(seconds=1))  # EndTime
    assert struct.unpack_from("<I", blob, p + 44)[0] == pointer_size
    tz_at = p + 64 + shift
    assert struct.unpack_from("<i", blob, tz_at)[0] == 480
    assert utf16_at(blob, tz_at + 4) == "@tzres.dll,-212" and utf16_at(blob, tz_at + 88) == "@tzres.dll,-211"
    assert struct.unpack_from("<8H", blob, tz_at + 152) == (0, 3, 0, 2, 2, 0, 0, 0)
    assert struct.unpack_from("<i", blob, tz_at + 168)[0] == -60
    boot, freq, start_ft = struct.unpack_from("<qqq", blob, p + 240 + shift)
    assert (boot, freq, start_ft) == (rw.filetime(datetime(2016, 11, 18)), 2_630_633, rw.filetime(start))
    names_at = p + 272 + shift
    logger = utf16_at(blob, names_at)
    uuid.UUID(logger)
    assert utf16_at(blob, names_at + 2 * len(logger) + 2) == "C:\\Users\\x\\CounterSamples.blg"
    size = struct.unpack_from("<H", blob, 72 + 4)[0]
    assert size == 32 + 272 + shift + 2 * (len(logger) + 1) + 2 * (
        len("C:\\Users\\x\\CounterSamples.blg") + 1
    )


def test_buffer_stamps_are_utc_and_the_last_is_flushed_at_a_given_end_time() -> None:
    size = 2048
    end = datetime(2024, 3, 1, 18, 10)  # naive = UTC; the samples end at 10:00:06 local = 18:00:06 UTC
    header = LogHeader(time_zone=rw.fixed_time_zone(-480), end_utc=end)
    blob = write(40, stamp_step=SEC, header=header, buffer_size=size, fragment_data=500)
    n = len(blob) // size
    stamps = [struct.unpack_from("<q", blob, k * size + 0x10)[0] for k in range(n)]
    assert stamps[0] == 0  # win10 style: buffer 0 carries no stamp
    assert stamps[1:-1] == sorted(stamps[1:-1]) and stamps[1] >= FT0 + 480 * 60 * SEC
    assert stamps[-2] <= FT0 + 480 * 60 * SEC + 39 * SEC
    assert stamps[-1] == rw.filetime(end) == struct.unpack_from("<q", blob, 72 + 32 + 16)[0]


def test_only_a_counter_list_and_samples_no_name_table_or_catalog() -> None:
    recs = records(events(write(3), 65536))
    assert [k for k, _, _ in recs] == [32, 34, 34, 34]
    assert recs[0][1] == FT0 - 10  # the counter list precedes the first sample by 1 µs
    assert [s for _, s, _ in recs[1:]] == [FT0, FT0 + 3 * SEC, FT0 + 6 * SEC]


# --- record 32 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pointer_size", [4, 8])
def test_entries_parse_back(pointer_size: int) -> None:
    header = LogHeader(perf_freq=3_579_545)
    recs = records(events(write(1, header=header, pointer_size=pointer_size), 65536))
    entries = parse_entries(recs[0][2])
    wide = 0x20000000 if pointer_size == 8 else 0
    assert [
        (e["machine"], e["object"], e["instance"], e["parent"], e["index"], e["counter"]) for e in entries
    ] == [
        ("\\\\web1", "Network Interface", "*", None, 0, "Bytes Total/sec"),
        ("\\\\web1", "Processor", "_Total", None, 0, "% Processor Time"),
        ("\\\\web1", "Memory", None, None, 0, "% Committed Bytes In Use"),
        ("\\\\db2", "PhysicalDisk", "0 C:", None, 0, "Avg. Disk sec/Transfer"),
        ("\\\\db2", "Process", "sqlservr", "x", 2, "Elapsed Time"),
    ]
    assert [e["flags"] for e in entries] == [wide | 1, wide, wide, wide, wide]
    assert [e["user"] for e in entries] == [0, 1, 2, 3, 4]
    assert [e["type"] for e in entries] == [c.counter_type for c in COUNTERS]
    assert [e["scale"] for e in entries] == [-4, 0, 0, 0, 0]
    assert [e["time_base"] for e in entries] == [3_579_545, SEC, 3_579_545, 3_579_545, SEC]
    for e in entries:
        assert e["size"] == (52 + e["strings_end"] + 7) & ~7  # strings back to back, rounded up to 8
        assert set(e["tail"]) <= {0}


def test_entry_options_time_base_flags_user_data_and_slack() -> None:
    counters = (
        RawCounter("mmm", "o", "c", bw.PERF_COUNTER_COUNTER, time_base=1234, flags=7, user_data=0xC9CB38B0),
        RawCounter("mmm", "o", "cc", bw.PERF_COUNTER_RAWCOUNT),
    )
    # 52 + 20 bytes of strings = 72, a multiple of 8 already; 52 + 22 rounds up to 80
    for slack, sizes in ((0, [72, 80]), (1, [80, 80]), (8, [80, 88]), (9, [88, 88])):
        stream = io.BytesIO()
        with RawBlgWriter(stream, counters, entry_slack=slack) as writer:
            writer.add_sample([RawValue(1), RawValue(2)], FT0)
            assert writer.time_bases == (1234, 10_000_000)
        entries = parse_entries(records(events(stream.getvalue(), 65536))[0][2])
        assert [e["size"] for e in entries] == sizes
        assert (entries[0]["flags"], entries[0]["user"], entries[0]["time_base"]) == (7, 0xC9CB38B0, 1234)


# --- record 34 -----------------------------------------------------------------------------------
def test_sample_sub_records_follow_the_entries_with_their_values() -> None:
    recs = records(events(write(3), 65536))
    for k, (_, stamp, data) in enumerate(recs[1:]):
        subs = parse_sample(data)
        assert [s["kind"] for s in subs] == [2, 1, 1, 1, 1]
        assert {s["stamp"] for s in subs} == {stamp} and {s["status"] for s in subs} == {0}
        perf, utc = 1_000_000 + k * 3 * 2_630_633, FT0 + k * 3 * SEC
        assert subs[0]["items"] == [(n, 100 * k + j, perf, 1) for j, n in enumerate(NICS)]
        assert [s["value"] for s in subs[1:]] == [
            (10 * k, utc, 1),
            (7 + k, 1000, 1),
            (2 * k, 3 * k + 1, 1),
            (5, utc, 1),
        ]


def test_wildcard_instance_sets_change_between_samples_and_may_be_empty() -> None:
    sets = [NICS, ("nic b",), (), ("a" * 61, "nic a")]  # odd name lengths: the area needs padding
    stream = io.BytesIO()
    with RawBlgWriter(stream, COUNTERS) as writer:
        for k, nics in enumerate(sets):
            writer.add_sample(sample(k, nics=nics), FT0 + k * SEC)
    recs = records(events(stream.getvalue(), 65536))
    for k, (_, _, data) in enumerate(recs[1:]):
        array = parse_sample(data)[0]
        assert [item[0] for item in array["items"]] == list(sets[k])
        length = struct.unpack_from("<I", data, 12)[0]
        names = sum(2 * (len(n) + 1) for n in sets[k])
        assert length == 8 + ((24 + 24 * len(sets[k]) + names + 7) & ~7)
        assert data[8 + 8 + 24 + 24 * len(sets[k]) + names : 8 + length] == b"\0" * (
            length - 8 - 24 - 24 * len(sets[k]) - names
        )


def test_failed_collections_and_own_stamps_per_sub_record() -> None:
    counters = tuple(
        RawCounter(f"s{k}", "Processor", "% Processor Time", bw.PERF_100NSEC_TIMER_INV, "_Total")
        for k in range(3)
    )
    stamps = [FT0 + 40 * SEC, FT0 + 10 * SEC, FT0 + 25 * SEC]
    values = [
        RawValue(5, FT0 + 40 * SEC + 3 * 3600 * SEC, stamp=stamps[0]),
        RawValue.failed(stamp=stamps[1]),
        RawValue(9, 2, 1, rw.PDH_CSTATUS_NEW_DATA, stamps[2]),
    ]
    stream = io.BytesIO()
    with RawBlgWriter(stream, counters, pointer_size=4) as writer:
        writer.add_sample(values)  # no local_time: the event takes the last sub-record's stamp
        writer.add_sample(values, FT0 + 60 * SEC)  # given: the event has it, sub-records keep theirs
    recs = records(events(stream.getvalue(), 65536))
    assert [s for _, s, _ in recs] == [stamps[2] - 10, stamps[2], FT0 + 60 * SEC]
    for _, _, data in recs[1:]:
        subs = parse_sample(data)
        assert [s["stamp"] for s in subs] == stamps
        assert [s["status"] for s in subs] == [0, 0x800007D0, 1]
        assert [s["value"] for s in subs] == [(5, FT0 + 40 * SEC + 3 * 3600 * SEC, 1), (0, 0, 1), (9, 2, 1)]


def test_64_bit_values_are_written_as_twos_complement() -> None:
    counters = (
        RawCounter("m", "o", "c", bw.PERF_COUNTER_LARGE_RAWCOUNT),
        RawCounter("m", "o", "d", bw.PERF_COUNTER_BULK_COUNT, "*"),
    )
    stream = io.BytesIO()
    with RawBlgWriter(stream, counters) as writer:
        writer.add_sample(
            [RawValue(2**64 - 1, -(2**63), 2**32 - 1), RawArray((RawItem("i", -1, 2**63 - 1, 0),))], FT0
        )
    subs = parse_sample(records(events(stream.getvalue(), 65536))[1][2])
    assert subs[0]["value"] == (-1, -(2**63), 2**32 - 1)
    assert subs[1]["items"] == [("i", -1, 2**63 - 1, 0)]


# --- the SecondValue helper ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("counter_type", "base", "expected"),
    [
        (bw.PERF_COUNTER_COUNTER, None, (111, 1)),
        (bw.PERF_COUNTER_BULK_COUNT, None, (111, 1)),
        (bw.PERF_COUNTER_TIMER_INV, None, (111, 1)),
        (bw.PERF_COUNTER_LARGE_QUEUELEN_TYPE, None, (111, 1)),
        (bw.PERF_100NSEC_TIMER, None, (222, 1)),
        (bw.PERF_100NSEC_TIMER_INV, None, (222, 1)),
        (bw.PERF_COUNTER_100NS_QUEUELEN_TYPE, None, (222, 1)),
        (bw.PERF_OBJ_TIME_TIMER, None, (333, 1)),
        (bw.PERF_ELAPSED_TIME, None, (333, 1)),
        (bw.PERF_RAW_FRACTION, 4_294_967_295, (4_294_967_295, 1)),
        (bw.PERF_SAMPLE_FRACTION, 50, (50, 1)),
        (bw.PERF_AVERAGE_TIMER, 44, (44, 1)),
        (bw.PERF_AVERAGE_BULK, 44, (44, 1)),
        (bw.PERF_PRECISION_100NS_TIMER, None, (222, 1)),
        (bw.PERF_PRECISION_SYSTEM_TIMER, None, (111, 1)),
        (bw.PERF_PRECISION_100NS_TIMER, 999, (999, 1)),
        (bw.PERF_100NSEC_MULTI_TIMER, 4, (222, 4)),
        (bw.PERF_COUNTER_MULTI_TIMER, 4, (111, 4)),
        (bw.PERF_COUNTER_RAWCOUNT, None, (0, 1)),
        (bw.PERF_COUNTER_LARGE_DELTA, None, (0, 1)),
    ],
)
def test_second_value_by_counter_type(counter_type: int, base: int | None, expected: tuple[int, int]) -> None:
    assert rw.second_value(counter_type, Clock(111, 222, 333), base) == expected


@pytest.mark.parametrize(
    "counter_type", [bw.PERF_RAW_FRACTION, bw.PERF_AVERAGE_TIMER, bw.PERF_COUNTER_MULTI_TIMER, 0x12345678]
)
def test_second_value_refuses_a_missing_base_or_an_unknown_type(counter_type: int) -> None:
    with pytest.raises(ValueError, match=r"base|no known"):
        rw.second_value(counter_type, Clock(1, 2))


def test_object_clock_defaults_to_the_100ns_clock() -> None:
    assert rw.second_value(bw.PERF_ELAPSED_TIME, Clock(1, 2)) == (2, 1)


def test_counter_samples_first_sample_byte_for_byte() -> None:
    """The first sample of CounterSamples.blg rebuilt from its declared counters and raw values."""
    typed = [
        ("\\\\charlieparker\\network interface(*)\\bytes total/sec", 0x10410500, -4, 0xC9CB38B0),
        ("\\\\charlieparker\\processor(_total)\\% processor time", 0x21510500, 0, 0xC9CB36D0),
        ("\\\\charlieparker\\memory\\% committed bytes in use", 0x20020400, 0, 0xC9CB3310),
        ("\\\\charlieparker\\memory\\cache faults/sec", 0x10410400, -1, 0xC9CB34F0),
        ("\\\\charlieparker\\physicaldisk(_total)\\% disk time", 0x20570500, 0, 0xC9CB2D70),
        ("\\\\charlieparker\\physicaldisk(_total)\\current disk queue length", 0x00010000, 1, 0xC9C413A0),
    ]
    counters = [RawCounter.from_path(p, t, scale=s, user_data=u) for p, t, s, u in typed]
    assert [c.path for c in counters] == [p for p, *_ in typed]
    nics = [
        "intel[r] ethernet connection i218-lm",
        "intel[r] dual band wireless-ac 7260",
        "isatap.{ea2a01ef-c879-4737-9677-c2fbbc1b5af4}",
        "isatap.jetsoft.com",
        "teredo tunneling pseudo-interface",
    ]
    clock = Clock(perf_time=2_006_530_743_703, time_100ns=131_246_703_908_743_382)
    values = rw.sample_values(
        counters,
        clock,
        [
            list(zip(nics, [0, 3_983_296_633, 0, 0, 321_872], strict=True)),
            4_903_144_765_625,
            3_733_930_794,
            574_088_259,
            554_043_229_430,
            0,
        ],
        [None, None, 4_294_967_295, None, None, None],
    )
    header = LogHeader(
        perf_freq=2_630_633,
        time_zone=rw.fixed_time_zone(-480, "@tzres.dll,-212"),
        log_guid=uuid.UUID("8823f583-d12f-4ed2-9ccf-7a3bf55fdecb"),
        event_times=(0, 0x001A0200),
    )
    stream = io.BytesIO()
    with RawBlgWriter(stream, counters, header=header) as writer:
        writer.add_sample(values, 131_246_415_908_740_000)
    blob = stream.getvalue()
    first_entry = bytes.fromhex(
        "a000000001000020b038cbc900054110e923280000000000fcffffff000000002000000044000000"
        "ffffffff00000000480000005c005c0063006800610072006c00690065007000610072006b006500"
        "720000006e006500740077006f0072006b00200069006e0074006500720066006100630065000000"
        "2a00000062007900740065007300200074006f00740061006c002f00730065006300000000000000"
    )
    paths_event = 0x10048
    assert struct.unpack_from("<HB", blob, paths_event) == (1008, 0x14)
    assert blob[paths_event + 72 + 8 : paths_event + 72 + 8 + 160] == first_entry
    sample_event = 0x10438  # as in the real file
    expected_head = bytes.fromhex(
        "300314c022003c00f03e00009c0d0000a09b487eeb47d201b33b3f933e940d499ced3cbb14c14479"
        "0000000000021a0083f523882fd1d24e9ccf7a3bf55fdecb0100000001000000"
        "424c0300e8020000424c0302f0010000e8010000050000000000000000000000a09b487eeb47d201"
        "90000000010000000000000000000000975d8d2ed3010000da00000001000000"
    )
    assert blob[sample_event : sample_event + len(expected_head)] == expected_head
    record = blob[sample_event + 72 : sample_event + 72 + 0x2E8]
    assert record[0x1F8 : 0x1F8 + 96] == bytes.fromhex(
        "424c03013000000000000000a09b487eeb47d20100000000b9b8339a75040000d6e86b8c2e48d2010100000000000000"
        "424c03013000000000000000a09b487eeb47d201000000002a438fde00000000ffffffff000000000100000000000000"
    )
    assert struct.unpack_from("<I", blob, 0x10000 + 0x30)[0] == 0x10438 + 0x330 - 0x10000


# --- the API -------------------------------------------------------------------------------------
def test_write_raw_blg_matches_the_writer_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "raw.blg"
    rw.write_raw_blg(path, COUNTERS, (rw.RawSample(sample(k), FT0 + k * 3 * SEC) for k in range(4)))
    assert path.read_bytes() == write(4)


def test_empty_log_still_has_a_header_and_a_counter_list() -> None:
    stream = io.BytesIO()
    RawBlgWriter(stream, COUNTERS, header=LogHeader(start_utc=datetime(2024, 1, 1))).close()
    recs = records(events(stream.getvalue(), 65536))
    assert [k for k, _, _ in recs] == [32]
    assert len(parse_entries(recs[0][2])) == len(COUNTERS)


def test_from_path_parses_parent_and_index() -> None:
    c = RawCounter.from_path("\\\\h\\Thread(w3wp/12#3)\\% Processor Time", bw.PERF_100NSEC_TIMER)
    assert (c.machine, c.object, c.parent, c.instance, c.instance_index, c.counter) == (
        "h",
        "Thread",
        "w3wp",
        "12",
        3,
        "% Processor Time",
    )
    assert c.path == "\\\\h\\Thread(w3wp/12#3)\\% Processor Time"
    assert not c.wildcard and RawCounter.from_path("\\\\h\\o(*)\\c", 0).wildcard


@pytest.mark.parametrize(
    ("values", "local_time", "error"),
    [
        ("short", FT0, ValueError),
        ("single-for-wildcard", FT0, TypeError),
        ("array-for-single", FT0, TypeError),
        ("no-stamp", None, ValueError),
        ("too-big", FT0, ValueError),
        ("bad-status", FT0, ValueError),
    ],
)
def test_bad_samples_are_refused_before_anything_is_written(
    values: str, local_time: int | None, error: type[Exception]
) -> None:
    good = sample(0)
    bad: list[rw.SampleValue] = {
        "short": good[:-1],
        "single-for-wildcard": [RawValue(1), *good[1:]],
        "array-for-single": [good[0], RawArray(()), *good[2:]],
        "no-stamp": good,
        "too-big": [good[0], RawValue(2**64), *good[2:]],
        "bad-status": [good[0], RawValue(1, status=-1), *good[2:]],
    }[values]
    stream = io.BytesIO()
    writer = RawBlgWriter(stream, COUNTERS)
    with pytest.raises(error):
        writer.add_sample(bad, local_time)
    assert stream.getvalue() == b""


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="pointer_size"):
        RawBlgWriter(io.BytesIO(), COUNTERS, pointer_size=2)
    with pytest.raises(ValueError, match="fragment_data"):
        RawBlgWriter(io.BytesIO(), COUNTERS, buffer_size=1024, fragment_data=2000)
    with pytest.raises(ValueError, match="at least one counter"):
        RawBlgWriter(io.BytesIO(), ())
    with pytest.raises(ValueError, match="machine"):
        RawCounter("\\\\", "o", "c", 0)
    with pytest.raises(ValueError, match="31"):
        rw.TimeZone(0, "x" * 32, "y")
    writer = RawBlgWriter(io.BytesIO(), COUNTERS)
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.add_sample(sample(0), FT0)
