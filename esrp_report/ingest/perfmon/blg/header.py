"""The log-file header of buffer 0: machine facts, clocks, the time zone, and the checks that
tell a Vista-or-later binary log from an older PDH-BIN one, a text file or something else."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime

from esrp_report.ingest.perfmon.blg.filetime import _utc
from esrp_report.ingest.perfmon.blg_signature import BUFFER_HEADER, OLD_SIGNATURES, SYSTEM_HEADERS
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
EXPECTED_FILE = (
    "a Windows Vista-or-later binary perfmon log (event-trace buffers, log-file header in buffer 0)"
)


@dataclass(frozen=True)
class BlgHeader:
    """The log-file header of buffer 0."""

    buffer_size: int
    pointer_size: int
    os_version: str
    os_build: int
    processors: int
    cpu_mhz: int
    start: datetime | None  # UTC
    end: datetime | None  # UTC; None when the log was never closed
    boot: datetime | None  # UTC
    perf_frequency: int
    buffers_written: int
    events_lost: int
    buffers_lost: int
    bias_minutes: int  # time-zone header: UTC = local + bias (daylight bias not applied)
    standard_name: str
    daylight_name: str
    daylight_bias: int
    logger: str
    log_file: str


def parse_log_header(head: bytes, source: str) -> BlgHeader:
    """The log-file header of buffer 0; raises when the file is not a Vista+ binary log."""
    for signature in OLD_SIGNATURES:
        if head.startswith(signature) or head[2:].startswith(signature):
            raise UnsupportedFormatError(
                source,
                "an older (Windows XP / Server 2003) 'PDH-BIN' binary log; this reader handles the "
                "Vista-and-later format only",
                location="byte 0",
                expected="convert it on Windows with 'relog FILE.blg -f csv -o FILE.csv' and read the CSV",
            )
    if len(head) < BUFFER_HEADER + 32 + 272:
        raise CounterLogError(
            source,
            f"too short for a binary perfmon log ({len(head)} bytes)",
            location="byte 0",
            expected=EXPECTED_FILE,
        )
    buffer_size = _U32.unpack_from(head, 0)[0]
    header_type = head[BUFFER_HEADER + 2]
    if buffer_size < 1024 or buffer_size & (buffer_size - 1) or header_type not in SYSTEM_HEADERS:
        text = _text_start(head)
        if text is not None:
            raise CounterLogError(
                source,
                f"a text file, not a binary perfmon log: it begins [{text}]"
                + (
                    "; a perfmon CSV/TSV would begin '\"(PDH-CSV 4.0) (time zone)(bias)\"', this header "
                    "lacks that signature"
                    if text.lstrip('"').startswith("(")
                    else ""
                ),
                location="byte 0",
                expected=EXPECTED_FILE,
            )
        raise CounterLogError(
            source,
            "not a binary perfmon log (no event-trace buffer header / log-file header)",
            location="byte 0",
            expected=EXPECTED_FILE,
            found=head[:16].hex(" "),
        )
    p = BUFFER_HEADER + 32
    (size_again, version, build, cpus, end, _res, _max, _mode, written, _sb, pointer, lost, mhz) = (
        struct.unpack_from("<IIIIQIIIIIIII", head, p)
    )
    if size_again != buffer_size or pointer not in (4, 8):
        raise CounterLogError(
            source,
            f"log-file header inconsistent (buffer size {size_again} vs {buffer_size}, "
            f"pointer size {pointer})",
            location=f"byte {p}",
            expected=EXPECTED_FILE,
        )
    shift = 8 if pointer == 8 else 0
    if len(head) < p + 272 + shift:  # the 64-bit header is 8 bytes longer than the check above
        raise CounterLogError(
            source,
            f"too short for a binary perfmon log with {pointer * 8}-bit pointers ({len(head)} bytes)",
            location=f"byte {len(head)}",
            expected=EXPECTED_FILE,
        )
    zone = p + 64 + shift
    bias, standard_raw = struct.unpack_from("<i64s", head, zone)
    daylight_raw = head[zone + 88 : zone + 152]
    daylight_bias = _I32.unpack_from(head, zone + 168)[0]
    boot, frequency, start, _clock, buffers_lost = struct.unpack_from("<QqQII", head, p + 240 + shift)
    strings = head[p + 272 + shift :].decode("utf-16-le", errors="replace").split("\x00")
    major, minor, sub, subminor = version & 0xFF, (version >> 8) & 0xFF, (version >> 16) & 0xFF, version >> 24
    return BlgHeader(
        buffer_size=buffer_size,
        pointer_size=pointer,
        os_version=f"{major}.{minor}.{sub}.{subminor}",
        os_build=build,
        processors=cpus,
        cpu_mhz=mhz,
        start=_utc(start),
        end=_utc(end),
        boot=_utc(boot),
        perf_frequency=frequency,
        buffers_written=written,
        events_lost=lost,
        buffers_lost=buffers_lost,
        bias_minutes=bias,
        standard_name=_utf16z(standard_raw),
        daylight_name=_utf16z(daylight_raw),
        daylight_bias=daylight_bias,
        logger=strings[0] if strings else "",
        log_file=strings[1] if len(strings) > 1 else "",
    )


def _text_start(head: bytes) -> str | None:
    """The first line (at most 60 characters) when the file starts as text (UTF-8 or UTF-16)."""
    for encoding in ("utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8",):
        try:
            text = head[:240].decode(encoding, errors="strict")
        except UnicodeDecodeError as exc:
            text = head[: exc.start].decode(encoding)
        line = text.lstrip("\ufeff").split("\n", 1)[0]
        if len(line) >= 8 and all(c.isprintable() or c in "\t\r" for c in line):
            return line[:60]
    return None


def _utf16z(raw: bytes) -> str:
    return raw.decode("utf-16-le", errors="replace").split("\x00", 1)[0]
