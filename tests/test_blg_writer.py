"""Tests of the .blg writer alone: the bytes are taken apart here with ``struct`` (no reader)."""

from __future__ import annotations

import io
import itertools
import struct
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esrp_synth import blg_writer as bw
from esrp_synth.blg_writer import BASE_TYPE_FOR, BlgWriter, Counter, PerfObject, SampleSpec, write_blg

C = Counter
T0 = datetime(2024, 3, 1, 10, 0, 0, 250_000)
PDH_GUID = uuid.UUID("933f3bb3-943e-490d-9ced-3cbb14c14479").bytes_le

OBJECTS = (
    PerfObject(
        "LogicalDisk",
        (
            C("% Free Space", bw.PERF_RAW_FRACTION, 4),
            C("Avg. Disk sec/Transfer", bw.PERF_AVERAGE_TIMER, 8),
            C("% Disk Time", bw.PERF_PRECISION_100NS_TIMER),
            C("Free Megabytes", bw.PERF_COUNTER_RAWCOUNT, 4, scale=-2),
            C("Disk Bytes/sec", bw.PERF_COUNTER_BULK_COUNT),
            C("Avg. Disk Queue Length", bw.PERF_COUNTER_100NS_QUEUELEN_TYPE),
        ),
        ("HarddiskVolume1", "C:", "_Total"),
    ),
    PerfObject(
        "Memory",
        (
            C("Available Bytes", bw.PERF_COUNTER_LARGE_RAWCOUNT),
            C("Pages/sec", bw.PERF_COUNTER_COUNTER, 4),
            C("% Committed Bytes In Use", bw.PERF_LARGE_RAW_FRACTION),
        ),
        None,
    ),
    PerfObject(
        "Process",
        (
            C("Elapsed Time", bw.PERF_ELAPSED_TIME),
            C("ID Process", bw.PERF_COUNTER_RAWCOUNT, 4),
            C("% Processor Time", bw.PERF_100NSEC_TIMER),
            C("Multi", bw.PERF_100NSEC_MULTI_TIMER),
        ),
        ("Idle", "svchost", "svchost", "System"),
        has_object_time=True,
    ),
)


# --- a minimal struct-based view of a file ----------------------------------------------------
@dataclass
class Event:
    buffer: int
    offset: int  # inside the buffer
    size: int
    kind: int
    stamp: int
    log_guid: bytes
    number: int
    count: int
    data: bytes
    pad: bytes


def buffer_headers(blob: bytes, size: int) -> list[tuple[int, ...]]:
    return [struct.unpack_from("<IIIIqqq4BIIHH", blob, k * size) for k in range(len(blob) // size)]


def events(blob: bytes, size: int) -> list[Event]:
    found = []
    for k in range(1, len(blob) // size):
        base = k * size
        end = base + struct.unpack_from("<I", blob, base + 0x30)[0]
        at = base + 72
        while at < end:
            length, htype, marker, kind = struct.unpack_from("<HBBB", blob, at)
            assert (htype, marker) == (0x0A, 0xC0)
            assert struct.unpack_from("<H", blob, at + 6)[0] == 60
            assert blob[at + 24 : at + 40] == PDH_GUID
            stamp = struct.unpack_from("<q", blob, at + 16)[0]
            number, count = struct.unpack_from("<II", blob, at + 64)
            aligned = (length + 7) & ~7
            found.append(
                Event(
                    k,
                    at - base,
                    length,
                    kind,
                    stamp,
                    blob[at + 48 : at + 64],
                    number,
                    count,
                    blob[at + 72 : at + length],
                    blob[at + length : at + aligned],
                )
            )
            at += aligned
        assert at == end
    return found


def records(evs: list[Event], kind: int) -> list[bytes]:
    out: list[bytes] = []
    parts: list[Event] = []
    for ev in evs:
        if ev.kind != kind:
            continue
        parts.append(ev)
        assert ev.number == len(parts)
        assert ev.count == parts[0].count
        assert ev.stamp == parts[0].stamp
        if ev.number == ev.count:
            out.append(b"".join(p.data for p in parts))
            parts = []
    assert not parts
    return out


def filetime(dt: datetime) -> int:
    delta = dt - datetime(1601, 1, 1)
    return (delta.days * 86400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def sample_arrays(
    k: int, objects: tuple[PerfObject, ...] = OBJECTS
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    values: dict[str, np.ndarray] = {}
    bases: dict[str, np.ndarray] = {}
    for n, obj in enumerate(objects):
        rows = len(obj.instances) if obj.instances is not None else 1
        shape = (rows, len(obj.counters))
        values[obj.name] = (
            np.arange(rows * len(obj.counters)).reshape(shape) * 1009 + 7 * k + 100 * n
        ).astype(np.int64)
        bases[obj.name] = values[obj.name] * 3 + 1
    # Exercise the top of each range: a DWORD at 2**32-1 and a large 64-bit value.
    values["LogicalDisk"][0, 3] = 2**32 - 1
    values["Memory"][0, 0] = 2**63 - 1
    return values, bases


def write(samples: int = 4, **options: Any) -> bytes:
    stream = io.BytesIO()
    close_options = {"write_catalog": options.pop("write_catalog", True)}
    writer = BlgWriter(stream, machine="TESTBOX", objects=OBJECTS, **options)
    for k in range(samples):
        values, bases = sample_arrays(k)
        writer.add_sample(
            T0 + timedelta(seconds=15 * k),
            10**9 + k * 15 * 10**7,
            filetime(T0) + k * 15 * 10**7,
            values,
            bases,
            object_times={"Process": 5_000 + k},
        )
    writer.close(**close_options)
    return stream.getvalue()


def data_blocks(record: bytes) -> list[bytes]:
    assert record[:4] == b"BL\x03\x00"
    assert struct.unpack_from("<I", record, 4)[0] == len(record)
    blocks = []
    at = 8
    while at < len(record):
        tag, length = struct.unpack_from("<4sI", record, at)
        assert tag == b"BL\x03\x05"
        blocks.append(record[at + 8 : at + length])
        at += length
    assert at == len(record)
    return blocks


# --- buffers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [65536, 4096])
def test_buffers_are_whole_and_their_headers_consistent(size: int) -> None:
    blob = write(samples=80, buffer_size=size, fragment_data=1000)
    assert len(blob) % size == 0
    headers = buffer_headers(blob, size)
    assert len(headers) >= 3
    assert struct.unpack_from("<I", blob, 72 + 32 + 36)[0] == len(headers)  # BuffersWritten
    stamps = []
    for k, head in enumerate(headers):
        buffer_size, saved, _current, _refs, stamp, sequence, _clock, _cpu, align, _logger, _, state, used = (
            head[:13]
        )
        flag, btype = head[13:15]
        assert buffer_size == size
        assert sequence == k
        assert align == 8 and state == 3
        assert 72 < used <= size and used % 8 == 0
        assert saved == (0 if k == 0 else used)
        assert blob[k * size + used : (k + 1) * size] == b"\xff" * (size - used)
        assert (flag, btype) == ((1, 4) if k == 0 else (1, 0) if k == len(headers) - 1 else (0, 0))
        stamps.append(stamp)
    assert stamps == sorted(stamps)
    evs = events(blob, size)  # walks each buffer exactly up to its Offset
    assert [e.kind for e in evs][:2] == [36, 32]
    assert evs[-1].kind == 35


def test_pad_bytes_between_events_are_not_zero() -> None:
    evs = events(write(), 65536)
    pads = [e.pad for e in evs if e.pad]
    assert pads, "the layout should produce at least one padded event"
    assert all(0 not in pad and 0xFF not in pad for pad in pads)


# --- fragments ------------------------------------------------------------------------------------
def test_records_are_split_into_numbered_fragments_that_cross_buffers() -> None:
    size, step = 4096, 1000
    blob = write(samples=6, buffer_size=size, fragment_data=step)
    evs = events(blob, size)
    samples = [e for e in evs if e.kind == 34]
    assert max(e.count for e in samples) > 1
    for ev in samples:
        assert len(ev.data) == (step if ev.number < ev.count else len(ev.data))
        assert 0 < len(ev.data) <= step
    crossing = [
        (a, b) for a, b in itertools.pairwise(samples) if b.number == a.number + 1 and b.buffer != a.buffer
    ]
    assert crossing, "some record should continue in the next buffer"
    recs = records(evs, 34)
    assert len(recs) == 6
    for rec in recs:
        data_blocks(rec)  # the container length equals the concatenated data


def test_every_fragment_carries_the_log_guid_of_the_header() -> None:
    blob = write()
    evs = events(blob, 65536)
    payload = 72 + 32
    name_at = payload + 272
    end = blob.index(b"\0\0", name_at)
    while (end - name_at) % 2:
        end = blob.index(b"\0\0", end + 1)
    guid_text = blob[name_at:end].decode("utf-16-le")
    assert {e.log_guid for e in evs} == {uuid.UUID(guid_text).bytes_le}


def test_record_of_exactly_fragment_data_bytes_is_one_event() -> None:
    length = len(records(events(write(samples=1), 65536), 34)[0])
    assert length % 8 == 0
    one = events(write(samples=2, fragment_data=length), 65536)
    assert [(e.number, e.count, len(e.data)) for e in one if e.kind == 34] == [(1, 1, length)] * 2
    two = events(write(samples=1, fragment_data=length - 1), 65536)
    assert [(e.number, e.count, len(e.data)) for e in two if e.kind == 34] == [(1, 2, length - 1), (2, 2, 1)]


def test_event_that_fills_a_buffer_exactly() -> None:
    length = len(records(events(write(samples=1), 65536), 34)[0])
    size = 72 + 72 + length  # one whole-record event fills a buffer to the byte
    blob = write(samples=3, buffer_size=size, fragment_data=length)
    headers = buffer_headers(blob, size)
    full = [k for k, h in enumerate(headers) if h[12] == size]
    assert len(full) >= 2
    for k in full:
        assert struct.unpack_from("<H", blob, k * size + 72)[0] == size - 72
    assert len(records(events(blob, size), 34)) == 3


# --- sample records ------------------------------------------------------------------------------
def test_data_blocks_lengths_times_and_objects() -> None:
    blob = write(samples=3, perf_freq=3_579_545, utc_offset_minutes=-240)
    evs = events(blob, 65536)
    recs = records(evs, 34)
    stamps = [e.stamp for e in evs if e.kind == 34 and e.number == 1]
    for k, (rec, stamp) in enumerate(zip(recs, stamps, strict=True)):
        local = T0 + timedelta(seconds=15 * k)
        assert stamp == filetime(local)
        blocks = data_blocks(rec)
        assert len(blocks) == len(OBJECTS)
        for block, obj in zip(blocks, OBJECTS, strict=True):
            assert block[:8] == "PERF".encode("utf-16-le")
            little, version, revision, total, header, nobj = struct.unpack_from("<6I", block, 8)
            assert (little, version, revision, nobj) == (1, 1, 1, 1)
            assert total == len(block)  # = sub-record length - 8
            systime = struct.unpack_from("<8H", block, 36)
            ms = local.microsecond // 1000
            assert systime == (
                local.year,
                local.month,
                5,
                local.day,
                local.hour,
                local.minute,
                local.second,
                ms,
            )
            perf_time, perf_freq, time_100ns = struct.unpack_from("<qqq", block, 56)
            assert (perf_time, perf_freq) == (10**9 + k * 15 * 10**7, 3_579_545)
            assert time_100ns == filetime(T0) + k * 15 * 10**7
            name_length, name_offset = struct.unpack_from("<II", block, 80)
            assert block[name_offset : name_offset + name_length].decode("utf-16-le") == "TESTBOX\0"
            assert header % 8 == 0 and header >= name_offset + name_length
            object_total, _definition, object_header = struct.unpack_from("<III", block, header)
            assert object_header == 64
            assert header + object_total == total
            instances = struct.unpack_from("<i", block, header + 40)[0]
            assert instances == (-1 if obj.instances is None else len(obj.instances))
            object_time, object_freq = struct.unpack_from("<qq", block, header + 48)
            assert (object_time, object_freq) == ((5_000 + k, 10_000_000) if obj.has_object_time else (0, 0))


def parse_object(block: bytes) -> tuple[list[tuple[int, ...]], list[tuple[str | None, bytes]]]:
    """Counter definitions and (instance name, counter block) pairs of a one-object data block."""
    header = struct.unpack_from("<I", block, 24)[0]
    obj = block[header:]
    total, definition_length, header_length = struct.unpack_from("<III", obj, 0)
    count, instances = struct.unpack_from("<I4xi", obj, 32)
    defs = [struct.unpack_from("<IIIIIiIIII", obj, header_length + 40 * i) for i in range(count)]
    assert header_length + 40 * count == definition_length
    blocks: list[tuple[str | None, bytes]] = []
    at = definition_length
    for _ in range(max(instances, 0)):
        length, _parent, _parent_instance, unique, name_offset, name_length = struct.unpack_from(
            "<IIIiII", obj, at
        )
        assert length % 8 == 0 and unique == -1
        name = obj[at + name_offset : at + name_offset + name_length].decode("utf-16-le")
        assert name.endswith("\0")
        at += length
        block_length = struct.unpack_from("<I", obj, at)[0]
        blocks.append((name[:-1], obj[at : at + block_length]))
        at += block_length
    if instances == -1:
        block_length = struct.unpack_from("<I", obj, at)[0]
        blocks.append((None, obj[at : at + block_length]))
        at += block_length
    assert at == total
    return defs, blocks


def test_values_and_bases_sit_at_their_counter_offsets() -> None:
    blob = write(samples=2)
    titles = BlgWriter(
        io.BytesIO(), machine="x", objects=OBJECTS, start_utc=datetime(2024, 1, 1)
    ).title_indices
    for k, rec in enumerate(records(events(blob, 65536), 34)):
        values, bases = sample_arrays(k)
        for block, obj in zip(data_blocks(rec), OBJECTS, strict=True):
            defs, blocks = parse_object(block)
            assert [name for name, _ in blocks] == list(obj.instances or [None])
            # Definitions: each counter, then its base (same name index) where it needs one.
            expected: list[tuple[int, int, int, int]] = []
            for col, counter in enumerate(obj.counters):
                expected.append((titles[counter.name], counter.counter_type, counter.size, col))
                if counter.counter_type in BASE_TYPE_FOR:
                    base = BASE_TYPE_FOR[counter.counter_type]
                    expected.append((titles[counter.name], base, 8 if base & 0x100 else 4, -1 - col))
            assert [(d[1], d[7], d[8]) for d in defs] == [e[:3] for e in expected]
            for row, (_, counter_block) in enumerate(blocks):
                assert len(counter_block) % 8 == 0
                for d, (_, _, size, col) in zip(defs, expected, strict=True):
                    offset = d[9]
                    assert offset >= 4 and offset % size == 0 and offset + size <= len(counter_block)
                    raw = struct.unpack_from("<q" if size == 8 else "<I", counter_block, offset)[0]
                    source = values if col >= 0 else bases
                    assert raw == source[obj.name][row, col if col >= 0 else -1 - col]


def test_instances_can_change_between_samples() -> None:
    stream = io.BytesIO()
    writer = BlgWriter(stream, machine="TESTBOX", objects=OBJECTS)
    values, bases = sample_arrays(0)
    writer.add_sample(T0, 1, 2, values, bases)
    changed = ("svchost", "Idle", "svchost", "svchost", "cmd")
    v = np.arange(5 * 4, dtype=np.int64).reshape(5, 4)
    writer.add_sample(
        T0 + timedelta(seconds=1),
        3,
        4,
        {**values, "Process": v},
        {**bases, "Process": v},
        instances={"Process": changed},
    )
    writer.add_sample(T0 + timedelta(seconds=2), 5, 6, values, bases)
    writer.close()
    recs = records(events(stream.getvalue(), 65536), 34)
    names = [[n for n, _ in parse_object(data_blocks(r)[2])[1]] for r in recs]
    assert names == [list(OBJECTS[2].instances or ()), list(changed), list(OBJECTS[2].instances or ())]


# --- header --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("pointer_size", "shift", "header_type"), [(4, 0, 0x01), (8, 8, 0x02)])
def test_log_file_header_layout(pointer_size: int, shift: int, header_type: int) -> None:
    start = datetime(2024, 3, 1, 15, 0, tzinfo=UTC)
    blob = write(pointer_size=pointer_size, start_utc=start, perf_freq=3_579_545, utc_offset_minutes=-300)
    version, htype, marker, size = struct.unpack_from("<HBBH", blob, 72)
    assert (version, htype, marker) == (2, header_type, 0xC0)
    head = buffer_headers(blob, 65536)[0]
    assert head[12] == (72 + size + 7) & ~7
    p = 72 + 32
    assert struct.unpack_from("<I", blob, p)[0] == 65536
    assert struct.unpack_from("<I", blob, p + 44)[0] == pointer_size
    bias = struct.unpack_from("<i", blob, p + 64 + shift)[0]
    assert bias == 300
    daylight_month = struct.unpack_from("<H", blob, p + 64 + shift + 152 + 2)[0]
    assert daylight_month == 0 and struct.unpack_from("<i", blob, p + 64 + shift + 168)[0] == 0
    boot, freq, start_ft = struct.unpack_from("<qqq", blob, p + 240 + shift)
    assert freq == 3_579_545
    assert start_ft == filetime(datetime(2024, 3, 1, 15, 0))
    assert boot < start_ft
    end_time = struct.unpack_from("<q", blob, p + 16)[0]
    # EndTime = UTC of the last sample (local time + 5 h here).
    assert end_time == filetime(T0 + timedelta(seconds=45, hours=5))
    guid = blob[p + 272 + shift : p + 272 + shift + 72].decode("utf-16-le")
    uuid.UUID(guid)


def test_start_defaults_to_first_sample_and_name_table_events_use_local_time() -> None:
    blob = write(utc_offset_minutes=120)
    p = 72 + 32
    start_ft = struct.unpack_from("<q", blob, p + 256)[0]
    assert start_ft == filetime(T0 - timedelta(hours=2))
    evs = events(blob, 65536)
    assert {e.stamp for e in evs if e.kind in (32, 36)} == {filetime(T0)}


def test_unclosed_log_has_no_catalog_and_no_end_time() -> None:
    blob = write(write_catalog=False)
    evs = events(blob, 65536)
    assert 35 not in {e.kind for e in evs}
    assert evs[-1].kind == 34
    assert struct.unpack_from("<q", blob, 72 + 32 + 16)[0] == 0


# --- name table, paths, catalog -----------------------------------------------------------------
def utf16_strings(data: bytes) -> list[str]:
    text = data.decode("utf-16-le")
    assert text.endswith("\0")
    return text[:-1].split("\0")


def test_name_table_events_are_self_contained_and_cover_every_index() -> None:
    objects = (
        *OBJECTS,
        PerfObject("Big", tuple(C(f"Counter number {i:04d}", 0x10000, 4) for i in range(400)), None),
    )
    stream = io.BytesIO()
    with BlgWriter(stream, machine="\\\\TESTBOX", objects=objects, fragment_data=2000) as writer:
        titles = writer.title_indices
    evs = [e for e in events(stream.getvalue(), 65536) if e.kind == 36]
    assert len(evs) > 1
    table: dict[int, str] = {}
    for ev in evs:
        assert (ev.number, ev.count) == (1, 1) and len(ev.data) <= 2000
        strings = utf16_strings(ev.data)
        assert strings[0] == "\\\\TESTBOX"
        assert len(strings) % 2 == 1
        for index, name in zip(strings[1::2], strings[2::2], strict=True):
            table[int(index)] = name
    assert table.pop(1) == str(max(titles.values()))
    assert table == {index: name for name, index in titles.items()}
    assert all(index % 2 == 0 for index in table)


def test_paths_record_lists_every_object() -> None:
    (rec,) = records(events(write(), 65536), 32)
    magic, count = struct.unpack_from("<II", rec, 0)
    assert magic == 0x6FF and count & 0xFFFF == len(OBJECTS)
    at = 8
    paths = []
    for _ in OBJECTS:
        size = struct.unpack_from("<I", rec, at)[0]
        assert size % 8 == 0
        offsets = struct.unpack_from("<iiiiii", rec, at + 28)
        area = at + 52

        def text(offset: int, area: int = area) -> str:
            end = area + offset
            while rec[end : end + 2] != b"\0\0":
                end += 2
            return rec[area + offset : end].decode("utf-16-le")

        machine, obj, inst, _parent, _index, counter = offsets
        paths.append(
            f"{text(machine)}\\{text(obj)}" + (f"({text(inst)})" if inst >= 0 else "") + f"\\{text(counter)}"
        )
        at += size
    assert at == len(rec)
    assert paths == ["\\\\TESTBOX\\LogicalDisk(*)\\*", "\\\\TESTBOX\\Memory\\*", "\\\\TESTBOX\\Process(*)\\*"]


def test_catalog_counts_times_definitions_and_instances() -> None:
    stream = io.BytesIO()
    writer = BlgWriter(stream, machine="TESTBOX", objects=OBJECTS, perf_freq=3_579_545)
    values, bases = sample_arrays(0)
    writer.add_sample(T0, 1, 2, values, bases)
    more = ("Idle", "svchost", "cmd", "svchost", "svchost")
    v = np.zeros((5, 4), dtype=np.int64)
    writer.add_sample(
        T0 + timedelta(seconds=1),
        3,
        4,
        {**values, "Process": v},
        {**bases, "Process": v},
        instances={"Process": more},
    )
    writer.add_sample(T0 + timedelta(seconds=2), 5, 6, values, bases)
    writer.close()
    evs = events(stream.getvalue(), 65536)
    assert evs[-1].kind == 35
    (rec,) = records(evs, 35)
    first, last, count, nobj, length, magic = struct.unpack_from("<qqIIII", rec, 0)
    assert (first, last, count, nobj, length, magic) == (
        filetime(T0),
        filetime(T0 + timedelta(seconds=2)),
        3,
        3,
        len(rec),
        0x5FF,
    )
    at = 32
    listed = {}
    for obj in OBJECTS:
        tag, entry_length = struct.unpack_from("<4sI", rec, at)
        assert tag == b"BL\x03\x05" and entry_length % 8 == 0
        body = rec[at + 8 : at + entry_length]
        ninst, n = struct.unpack_from("<iI", body, 0)
        types = struct.unpack_from(f"<{n}I", body, 8 + 4 * n)
        q = (8 + 8 * n + 7) & ~7
        time_bases = struct.unpack_from(f"<{n}q", body, q)
        scales = struct.unpack_from(f"<{n}i", body, q + 8 * n)
        q = (q + 12 * n + 7) & ~7
        for ctype, tb in zip(types, time_bases, strict=True):
            timer = ctype & 0x00300000
            assert tb == (10_000_000 if timer in (0x00100000, 0x00200000) else 3_579_545)
        if obj.name == "LogicalDisk":
            assert scales[types.index(bw.PERF_COUNTER_RAWCOUNT)] == -2
        names = []
        if ninst >= 0:
            strings = q + 16 * ninst
            for i in range(ninst):
                offset, ordinal, m1, m2 = struct.unpack_from("<IIii", body, q + 16 * i)
                assert (m1, m2) == (-1, -1)
                end = body.index(b"\0\0", strings + offset)
                while (end - strings - offset) % 2:
                    end = body.index(b"\0\0", end + 1)
                names.append((body[strings + offset : end].decode("utf-16-le"), ordinal))
        else:
            assert obj.instances is None
        listed[obj.name] = (ninst, names)
        at += entry_length
    assert at == len(rec)
    assert listed["Memory"] == (-1, [])
    assert listed["LogicalDisk"][1] == [("HarddiskVolume1", 0), ("C:", 0), ("_Total", 0)]
    assert listed["Process"][0] == 6
    assert listed["Process"][1] == [
        ("Idle", 0),
        ("svchost", 2),
        ("svchost", 1),
        ("svchost", 0),
        ("System", 0),
        ("cmd", 0),
    ]


# --- errors and convenience ----------------------------------------------------------------------
def test_dword_value_out_of_range_is_refused() -> None:
    writer = BlgWriter(io.BytesIO(), machine="TESTBOX", objects=OBJECTS)
    values, bases = sample_arrays(0)
    values["Memory"][0, 1] = 2**32
    with pytest.raises(ValueError, match=r"outside 0\.\.2\*\*32-1"):
        writer.add_sample(T0, 1, 2, values, bases)
    values["Memory"][0, 1] = -1
    with pytest.raises(ValueError, match="DWORD"):
        writer.add_sample(T0, 1, 2, values, bases)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="has_object_time"):
        PerfObject("Process", (C("Elapsed Time", bw.PERF_ELAPSED_TIME),), ("a",))
    with pytest.raises(ValueError, match="size"):
        C("x", bw.PERF_COUNTER_RAWCOUNT, 2)
    writer = BlgWriter(io.BytesIO(), machine="TESTBOX", objects=OBJECTS)
    values, bases = sample_arrays(0)
    with pytest.raises(ValueError, match="shape"):
        writer.add_sample(T0, 1, 2, {**values, "Memory": np.zeros((2, 3), dtype=np.int64)}, bases)
    with pytest.raises(ValueError, match="give bases"):
        writer.add_sample(T0, 1, 2, values)
    with pytest.raises(ValueError, match="no instances"):
        writer.add_sample(T0, 1, 2, values, bases, instances={"Memory": ("a",)})
    with pytest.raises(ValueError, match="fragment_data"):
        BlgWriter(io.BytesIO(), machine="TESTBOX", objects=OBJECTS, buffer_size=4096, fragment_data=4000)


def test_write_blg_matches_the_writer_byte_for_byte(tmp_path: Path) -> None:
    specs = []
    for k in range(4):
        values, bases = sample_arrays(k)
        specs.append(
            SampleSpec(
                T0 + timedelta(seconds=15 * k),
                10**9 + k * 15 * 10**7,
                filetime(T0) + k * 15 * 10**7,
                values,
                bases,
                object_times={"Process": 5_000 + k},
            )
        )
    path = tmp_path / "log.blg"
    write_blg(path, machine="TESTBOX", objects=OBJECTS, samples=specs)
    assert path.read_bytes() == write()
