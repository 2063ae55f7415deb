r"""Perfmon counter logs written by perfmon or relog as CSV or TSV ("PDH-CSV 4.0").

Header: ``"(PDH-CSV 4.0) (Pacific Standard Time)(480)","\\MACHINE\Object(Inst)\Counter",...``
where 480 is the bias (UTC - local, in minutes). Rows: ``"MM/DD/YYYY HH:MM:SS.fff","1.5"," ",...``;
``" "`` (or an empty cell) is a missing sample.

The text is decoded in the code page it was written in (:mod:`.code_page`: a byte-order mark,
UTF-8, else the Windows code page that reads the header as perfmon text; ``encoding`` names it
instead). Only the header holds text outside ASCII, so a file in a code page is parsed as it
is, its header decoded on its own; UTF-16, and a file whose rows are not ASCII, are transcoded to
UTF-8 once, a chunk at a time.

Two engines read the rows with the same results and the same problems for damaged rows: the
compiled PDH-CSV row parser (``_pdhcsv``, used when it was built) and PyArrow's CSV reader with an
explicit schema. Python touches only the header, the last line (to spot a file cut short) and,
when something is damaged, the damaged rows.
"""

from __future__ import annotations

import codecs
import csv
import io
import mmap
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import polars as pl

from esrp_report.ingest.perfmon import code_page
from esrp_report.ingest.perfmon.code_page import TextEncoding
from esrp_report.ingest.perfmon.counter_path import parse_counter_path
from esrp_report.ingest.perfmon.describe import describe_counter_log, describe_log, summarise
from esrp_report.ingest.text import sniff_encoding
from esrp_report.model import COUNTERS_SCHEMA, CounterLog, LogDamage, Problem, StreamedCounterLog
from esrp_report.model.errors import CounterLogError, UnsupportedFormatError

if TYPE_CHECKING:  # PyArrow is the second engine's, NumPy serves damaged rows: imported on use (start-up)
    import numpy as np
    import pyarrow as pa

try:
    from esrp_report.ingest import _pdhcsv  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the PyArrow engine serves
    _pdhcsv = None

ENGINES = ("auto", "native", "pyarrow")
HEAD_BYTES = 65536
TIMESTAMP_FORMAT = "%m/%d/%Y %H:%M:%S%.f"
_EXPECTED_HEADER = '"(PDH-CSV 4.0) (<time zone>)(<bias minutes>)" followed by counter paths'
_EXPECTED_ROW = '"MM/DD/YYYY HH:MM:SS.fff" followed by one number (or " ") per counter'
_SIGNATURE = re.compile(r'^\ufeff?\s*"?\s*\(PDH-(?P<kind>CSV|TSV)\b[^)]*\)?', re.IGNORECASE)
_GROUP = re.compile(r"\(([^()]*)(\)|$)")
_BIAS = re.compile(r"^\s*[-+]?\d+\s*$")
_MAX_BIAS = 24 * 60  # minutes
_DATA_ROW = re.compile(r'^\ufeff?"?\d{1,2}/\d{1,2}/\d{4} ')
_TRANSCODE_CHUNK = 4 << 20
_LISTED_LINES = 10
_NO_STAMP = -(2**63)  # the parser's unreadable time stamp (INT64_MIN)


def native_parser_available() -> bool:
    """Was the compiled PDH-CSV parser built with this installation?"""
    return _pdhcsv is not None


def sniff_counter_csv(head: bytes) -> bool:
    """Is this the start of a PDH CSV/TSV file, in any of the supported encodings?"""
    text = head[:4096].decode(sniff_encoding(head), errors="ignore")
    return _SIGNATURE.match(text) is not None


def read_counter_csv(path: str | Path, *, engine: str = "auto", encoding: str | None = None) -> CounterLog:
    """Read a perfmon CSV/TSV log; damaged rows are dropped and reported as Problems.

    ``engine``: "native" (the compiled row parser), "pyarrow", or "auto" (native when built).
    ``encoding``: the file's code page (``cp1251``, ``windows-1251``, ``1251``, ``utf-8`` ...)
    instead of the one found from its bytes.
    """
    native = _native(engine)
    source = Path(path)
    found = _encoding(source, encoding)
    try:
        log = _read(source, found.codec, native=native)
    except _NotUtf8:
        # The header is UTF-8 but later bytes are not: decode leniently and say so.
        log = _read(source, "utf-8-lenient", native=native)
    log.encoding, log.encoding_basis = found.name, found.basis
    return log


def _native(engine: str) -> bool:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    if engine == "native" and _pdhcsv is None:
        raise RuntimeError("the compiled PDH-CSV parser is not built in this installation")
    return engine != "pyarrow" and _pdhcsv is not None


def _encoding(source: Path, override: str | None = None) -> TextEncoding:
    """The file's encoding: the one named (``override``), else found from its header line."""
    try:
        with source.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            line = head
            # The whole header line: a log of thousands of counters has one longer than the head.
            while b"\n" not in line and (more := handle.read(1 << 20)):
                line += more
    except OSError as exc:
        raise CounterLogError(source, f"cannot read file: {exc.strerror or exc}") from exc
    if not head.strip(b"\x00\r\n\t \xef\xbb\xbf\xff\xfe"):
        raise CounterLogError(source, "empty file", location="line 1", expected=_EXPECTED_HEADER)
    if override is not None:
        try:
            return code_page.given(override)
        except ValueError as exc:
            raise CounterLogError(source, str(exc), location="--encoding") from None
    first = line.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        return code_page.detect(head, first)
    except code_page.UndecidableEncoding as exc:
        raise CounterLogError(
            source,
            f"cannot tell the text encoding: {exc}",
            location="line 1",
            expected="a header in UTF-8 or in one Windows code page (name it with --encoding)",
        ) from None


_ASCII_PROBE = b'0123456789,."/: \t\r\n-+E'


def _direct(source: Path, codec: str) -> bool:
    """Can the file be parsed as it is, its header decoded in ``codec``? So when ``codec`` reads
    ASCII as ASCII and every byte after the header is ASCII (time stamps and numbers)."""
    if codec in ("utf-8", "utf-8-sig"):
        return True
    if codec == "utf-8-lenient" or codec.startswith("utf-16"):
        return False
    try:
        if _ASCII_PROBE.decode(codec) != _ASCII_PROBE.decode("ascii"):
            return False
    except (UnicodeDecodeError, LookupError):
        return False
    with source.open("rb") as handle:
        started = False
        while chunk := handle.read(_TRANSCODE_CHUNK):
            if not started:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue  # still the header
                chunk, started = chunk[cut + 1 :], True
            if not chunk.isascii():
                return False
    return True


class _NotUtf8(Exception):
    """A file taken as UTF-8 holds bytes that are not."""


class _NotANumber(Exception):
    """A sample cell did not convert to a float in PyArrow's typed read."""


@dataclass
class _Header:
    separator: str
    paths: list[str]
    zone: str | None
    bias: int | None
    length: int  # bytes of the header line, line end included
    problems: list[Problem] = field(default_factory=list)
    first_cell: str = ""  # as the source wrote it: kept by convert when it states no offset


@dataclass
class _Damage:
    """Rows dropped for one reason, or (kind "number") cells left empty in rows that are kept."""

    message: str
    lines: list[int]  # physical 1-based line numbers, when known
    count: int  # rows dropped; for kind "number", cells left empty
    kind: str = ""  # damage of one kind from several stretches of a file merges (_merged)
    facts: tuple[Any, ...] = ()  # what the message names besides the count
    cells: dict[int, int] = field(default_factory=dict)  # kind "number": file column -> cells

    @property
    def drops_rows(self) -> bool:
        return self.kind != "number"


@dataclass
class _Body:
    """The data rows: ``data[start:end]`` (a last line cut short is left out); ``data[start]``
    begins line ``first_line`` of the file."""

    data: memoryview
    start: int
    end: int
    first_line: int

    @cached_property
    def lines(self) -> _Lines:
        return _Lines(self.data, self.start, self.end, self.first_line)


def _read(source: Path, encoding: str, *, native: bool) -> CounterLog:
    with _parsed_file(source, encoding) as (parsed, header_codec, decode_problems), _mapped(parsed) as data:
        header = _read_header(data, source, header_codec)
        counters, path_problems = _counters_frame(header, source)
        columns = counters.get_column("column").to_list()
        start = min(header.length, len(data))
        body, damage = _body(data, header, len(columns) + 1, start, 1 + _count_newlines(data[:start]))
        if native:
            samples = _native_samples(body, header, columns, damage)
        else:
            samples = _samples_frame(_arrow_rows(body, source, header, columns, damage), header, body, damage)
        lost_maxima = _lost_maxima(body, header, columns, damage)
    if samples.height == 0:
        lost = sum(d.count for d in damage if d.drops_rows)
        raise CounterLogError(
            source,
            "no readable samples" + (f" ({lost} damaged row(s) dropped)" if lost else ""),
            location="line 2",
            expected=_EXPECTED_ROW,
        )
    return CounterLog(
        source=str(source),
        format="pdh-tsv" if header.separator == "\t" else "pdh-csv",
        counters=counters,
        samples=samples,
        utc_offset_minutes=-header.bias if header.bias is not None else None,
        time_zone_name=header.zone,
        problems=header.problems + path_problems + decode_problems + _damage_problems(source, damage),
        damage=log_damage(columns, damage, lost_maxima),
    )


# --- large logs: a window of rows at a time ------------------------------------------------------

STREAM_BYTES = 256 << 20  # logs larger than this are streamed (see read_counter_log)
BATCH_BYTES = 64 << 20  # text read, parsed and let go at a time when streaming


# The encoding a command was told (--encoding) for every perfmon CSV/TSV it reads, however
# deep in the evidence of a folder the reader is called.
ENCODING: ContextVar[str | None] = ContextVar("esrp_report_csv_encoding", default=None)


@contextmanager
def encoding_given(name: str | None) -> Iterator[None]:
    """Within the block, perfmon CSV/TSV logs read by :func:`read_counter_log` are decoded in
    ``name`` (None: found from each file's bytes)."""
    token = ENCODING.set(name)
    try:
        yield
    finally:
        ENCODING.reset(token)


def read_counter_log(path: str | Path, *, stream_bytes: int | None = None) -> CounterLog:
    """The log whole (:func:`read_counter_csv`) or, above ``stream_bytes``, streamed
    (:func:`open_counter_csv`): the same counters, problems and samples either way."""
    source = Path(path)
    try:
        size = source.stat().st_size
    except OSError:
        size = 0  # read_counter_csv says why it cannot be read
    if size > (STREAM_BYTES if stream_bytes is None else stream_bytes):
        return open_counter_csv(source, encoding=ENCODING.get())
    return read_counter_csv(source, encoding=ENCODING.get())


class ReadAgain(Exception):
    """The log turned out not to be UTF-8 after samples were handed out: start over (the
    stream now decodes leniently)."""


class CounterCsvStream:
    """A perfmon CSV/TSV read ``batch_bytes`` of text at a time (memory bounded by the batch,
    not the file). Each :meth:`batches` reads the file again; at its end ``samples_read`` and
    ``problems`` are final, and the same as :func:`read_counter_csv` reports (damaged rows are
    found window by window and merged, so counts, lines and first examples agree).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        engine: str = "auto",
        batch_bytes: int | None = None,
        encoding: str | None = None,
    ) -> None:
        self.native = _native(engine)
        self.source = Path(path)
        self.batch_bytes = max(1, BATCH_BYTES if batch_bytes is None else batch_bytes)
        self.text_encoding = _encoding(self.source, encoding)
        self.encoding = self.text_encoding.codec
        try:
            self._open()
        except _NotUtf8:
            self.encoding = "utf-8-lenient"
            self._open()
        self.samples_read = 0
        self.problems: list[Problem] = []
        self.damage = LogDamage()

    def _open(self) -> None:
        self.direct = _direct(self.source, self.encoding)
        with self.source.open("rb") as handle:
            head = _first_line(handle, "utf-8" if self.direct else self.encoding)
        codec = "utf-8-sig" if self.encoding in ("utf-8", "utf-8-sig") or not self.direct else self.encoding
        self.header = _read_header(memoryview(head), self.source, codec)
        self.counters, self.path_problems = _counters_frame(self.header, self.source)
        self.columns = self.counters.get_column("column").to_list()

    @property
    def format(self) -> str:
        return "pdh-tsv" if self.header.separator == "\t" else "pdh-csv"

    @property
    def utc_offset_minutes(self) -> int | None:
        return -self.header.bias if self.header.bias is not None else None

    def batches(self) -> Iterator[pl.DataFrame]:
        """Every sample, in file order, a frame of rows per window (``timestamp`` plus the
        counter columns, as in :attr:`CounterLog.samples`)."""
        handed_out = False
        while True:
            try:
                for frame in self._pass():
                    handed_out = True
                    yield frame
                return
            except _NotUtf8:
                if self.encoding == "utf-8-lenient":
                    raise  # pragma: no cover - a lenient decode yields valid UTF-8
                self.encoding = "utf-8-lenient"
                self.direct = False
                if handed_out:
                    raise ReadAgain(str(self.source)) from None

    def _pass(self) -> Iterator[pl.DataFrame]:
        header, fields = self.header, len(self.columns) + 1
        damage: list[_Damage] = []
        lost_maxima: dict[str, float] = {}
        samples = 0
        with (
            _parsed_file(self.source, self.encoding, direct=self.direct) as (parsed, _, decode_problems),
            parsed.open("rb") as handle,
        ):
            handle.seek(header.length)
            line = 1 + (1 if header.length else 0)
            for view, newlines, final in _windows(handle, self.batch_bytes):
                if final:
                    body, found = _body(view, header, fields, 0, line)
                else:
                    body, found = _Body(view, 0, len(view), line), []
                line += newlines
                if body.end > body.start:
                    if self.native:
                        frame = _native_samples(body, header, self.columns, found)
                    else:
                        rows = _arrow_rows(body, self.source, header, self.columns, found)
                        frame = _samples_frame(rows, header, body, found)
                    samples += frame.height
                else:
                    frame = None
                for name, value in _lost_maxima(body, header, self.columns, found).items():
                    lost_maxima[name] = max(value, lost_maxima.get(name, value))
                damage.extend(found)
                del body, view
                if frame is not None and frame.height:
                    yield frame
        self.samples_read = samples
        self.damage = log_damage(self.columns, damage, lost_maxima)
        self.problems = (
            header.problems
            + self.path_problems
            + decode_problems
            + _damage_problems(self.source, _merged(damage))
        )

    def no_samples(self) -> CounterLogError:
        """The error for a log with no readable sample row, with how many damaged rows were dropped."""
        lost = sum(p.lost for p in self.problems)
        return CounterLogError(
            self.source,
            "no readable samples" + (f" ({lost} damaged row(s) dropped)" if lost else ""),
            location="line 2",
            expected=_EXPECTED_ROW,
        )


def open_counter_csv(
    path: str | Path, *, engine: str = "auto", batch_bytes: int | None = None, encoding: str | None = None
) -> StreamedCounterLog:
    """A perfmon CSV/TSV as a log whose samples stay in the file (read a window at a time
    whenever they are needed). One pass here counts the samples and finds the damage."""
    stream = CounterCsvStream(path, engine=engine, batch_bytes=batch_bytes, encoding=encoding)
    while True:
        try:
            for _ in stream.batches():
                pass
            break
        except ReadAgain:
            continue  # not UTF-8 after all: counted again, decoded leniently
    if stream.samples_read == 0:
        raise stream.no_samples()
    return StreamedCounterLog(
        source=str(stream.source),
        format=stream.format,
        counters=stream.counters,
        reader=stream,
        sample_count=stream.samples_read,
        utc_offset_minutes=stream.utc_offset_minutes,
        time_zone_name=stream.header.zone,
        problems=list(stream.problems),
        damage=stream.damage,
        encoding=stream.text_encoding.name,
        encoding_basis=stream.text_encoding.basis,
    )


def _first_line(handle: BinaryIO, encoding: str) -> bytes:
    """The first line (line end included, or the whole file if it has none) as the UTF-8 bytes
    :func:`_utf8_copy` starts with."""
    if encoding in ("utf-8", "utf-8-sig"):
        parts = []
        while chunk := handle.read(1 << 20):
            parts.append(chunk)
            if b"\n" in chunk:
                break
        return b"".join(parts)
    codec = "utf-8" if encoding == "utf-8-lenient" else encoding
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    text = ""
    while "\n" not in text:
        chunk = handle.read(1 << 20)
        text += decoder.decode(chunk, final=not chunk)
        if not chunk:
            break
    end = text.find("\n")
    return (text if end < 0 else text[: end + 1]).encode("utf-8")


def _windows(handle: BinaryIO, size: int) -> Iterator[tuple[memoryview, int, bool]]:
    """The rest of the file in windows of whole lines (about ``size`` bytes each), with the
    number of line ends in each; the last window (``True``) is what follows the last line end."""
    carry = b""
    while chunk := handle.read(size):
        data = carry + chunk if carry else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        carry = data[cut:]
        with memoryview(data) as view:
            yield view[:cut], data.count(b"\n", 0, cut), False
        del data, chunk
    with memoryview(carry) as view:
        yield view, 0, True


@contextmanager
def _parsed_file(
    source: Path, encoding: str, *, direct: bool | None = None
) -> Iterator[tuple[Path, str, list[Problem]]]:
    """The file the engines parse and the codec of its header line, with the problems of
    decoding it: the file itself when it can be parsed as it is (:func:`_direct`), else its UTF-8
    copy."""
    if direct if direct is not None else _direct(source, encoding):
        yield source, "utf-8-sig" if encoding in ("utf-8", "utf-8-sig") else encoding, []
        return
    with _utf8_copy(source, encoding) as (copy, problems):
        yield copy, "utf-8-sig", problems


@contextmanager
def _utf8_copy(source: Path, encoding: str) -> Iterator[tuple[Path, list[Problem]]]:
    """The file itself when it is UTF-8, else a UTF-8 copy made chunk by chunk.

    Undecodable bytes become U+FFFD (and are counted), so one bad byte costs at most its row.
    """
    if encoding in ("utf-8", "utf-8-sig"):
        yield source, []
        return
    codec = "utf-8" if encoding == "utf-8-lenient" else encoding
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    replaced = 0
    with tempfile.TemporaryDirectory(prefix="esrp-csv-") as tmp:
        target = Path(tmp) / "utf8.csv"
        with source.open("rb") as src, target.open("wb") as dst:
            final = False
            while not final:
                chunk = src.read(_TRANSCODE_CHUNK)
                final = not chunk
                text = decoder.decode(chunk, final=final)
                replaced += text.count("\ufffd")
                dst.write(text.encode("utf-8"))
        problems = []
        if replaced:
            message = f"{replaced} character(s) could not be decoded as {codec} and were replaced"
            problems.append(Problem(str(source), message))
        yield target, problems


@contextmanager
def _mapped(path: Path) -> Iterator[memoryview]:
    """The file's bytes without copying them: both engines read them in place."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            yield memoryview(b"")
            return
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    try:
        yield view
    finally:
        view.release()
        with suppress(BufferError):  # a buffer still points into the map; the collector closes it
            mapped.close()


# --- header -------------------------------------------------------------------------------------


def _read_header(data: memoryview, source: Path, codec: str = "utf-8-sig") -> _Header:
    end = _find(data, b"\n")
    length = len(data) if end < 0 else end + 1
    try:
        line = bytes(data[:length]).decode(codec).rstrip("\r\n")
    except UnicodeDecodeError as exc:
        if codec == "utf-8-sig":
            raise _NotUtf8 from None
        # Only a code page named with --encoding can fail here: a detected one decoded this line.
        raise CounterLogError(
            source,
            f"the header is not text in {codec}: byte 0x{exc.object[exc.start]:02X} has no character there",
            location=f"line 1, byte offset {exc.start}",
            expected=f"a header written in {codec}",
        ) from None
    match = _SIGNATURE.match(line)
    if match is None:
        if not line.strip():
            raise CounterLogError(source, "no header", location="line 1", expected=_EXPECTED_HEADER)
        if _DATA_ROW.match(line):
            raise CounterLogError(
                source, "no header: line 1 is a data row", location="line 1", expected=_EXPECTED_HEADER
            )
        raise UnsupportedFormatError(
            source,
            "not a perfmon counter log",
            location="line 1, column 1",
            expected=_EXPECTED_HEADER,
            found=line[:80],
        )
    separator = _separator(line, match.group("kind"))
    try:
        cells = next(csv.reader([line], delimiter=separator, quotechar='"'))
    except csv.Error as exc:  # a cell past the csv module's field limit: no counter path is that long
        raise CounterLogError(
            source, f"unreadable header: {exc}", location="line 1", expected=_EXPECTED_HEADER
        ) from None
    zone, bias, problems = _zone_and_bias(cells[0], source)
    if len(cells) < 2:
        raise CounterLogError(
            source,
            "header names no counters",
            location="line 1",
            expected="counter paths after the first cell",
        )
    return _Header(separator, cells[1:], zone, bias, length, problems, cells[0].lstrip("\ufeff"))


def _separator(line: str, kind: str) -> str:
    """The character after the quoted first cell (perfmon always quotes), else what the kind says."""
    text = line.lstrip("\ufeff")
    if text.startswith('"'):
        close = text.find('"', 1)
        if 0 < close < len(text) - 1 and text[close + 1] in ",\t":
            return text[close + 1]
    if kind.upper() == "TSV" or ("\t" in text and "," not in text):
        return "\t"
    return ","


def _zone_and_bias(cell: str, source: Path) -> tuple[str | None, int | None, list[Problem]]:
    """``(PDH-CSV 4.0) (Pacific Standard Time)(480)``: the zone name and the bias, if present."""
    signature = _SIGNATURE.match(cell)
    rest = cell[signature.end() :] if signature else cell
    zone: str | None = None
    bias: int | None = None
    cut_short = False
    absurd: str | None = None
    for group in _GROUP.finditer(rest):
        text, closed = group.group(1), bool(group.group(2))
        if not closed:
            cut_short = True
        elif _BIAS.match(text) and bias is None and absurd is None:
            # Minutes within a day; a longer number (past C long, or Python's 4,300 digits) is damage.
            if len(text.strip().lstrip("+-")) > 4 or abs(int(text)) > _MAX_BIAS:
                absurd = text.strip()
            else:
                bias = int(text)
        elif zone is None and text.strip():
            zone = text.strip()
    problems: list[Problem] = []
    if absurd is not None:
        shown = absurd if len(absurd) <= 20 else f"{absurd[:20]}... ({len(absurd):,} characters)"
        problems.append(
            Problem(
                str(source),
                f"time-zone bias {shown} is not a number of minutes within a day; ignored",
                location="line 1, column 1",
            )
        )
    if cut_short:
        problems.append(
            Problem(
                str(source),
                f"the header's first cell is cut short ({cell!r}); what it named after the cut is unknown",
                location="line 1, column 1",
                severity="note",
            )
        )
    if bias is None:
        problems.append(
            Problem(
                str(source),
                "time-zone offset unknown (the header gives no bias): time stamps are the writer's "
                "local wall-clock times, kept as written and never labelled UTC",
                location="line 1, column 1",
            )
        )
    return zone, bias, problems


def _counters_frame(header: _Header, source: Path) -> tuple[pl.DataFrame, list[Problem]]:
    width = max(4, len(str(len(header.paths))))
    rows: list[tuple[str, str, str | None, str, str | None, str, bool]] = []
    first_column: dict[str, int] = {}
    repeats: dict[str, list[int]] = {}
    for index, text in enumerate(header.paths, start=1):
        try:
            parsed = parse_counter_path(text)
        except ValueError as exc:
            raise CounterLogError(source, str(exc), location=f"line 1, column {index + 1}") from None
        key = text.strip().casefold()  # Windows counter paths ignore case
        duplicate = key in first_column
        if duplicate:
            repeats.setdefault(key, [first_column[key]]).append(index + 1)
        else:
            first_column[key] = index + 1
        column = f"c{index:0{width}d}"
        rows.append((column, text, parsed.machine, parsed.object, parsed.instance, parsed.counter, duplicate))
    problems = [
        Problem(
            str(source),
            f"counter path {header.paths[columns[0] - 2]!r} appears {len(columns)} times "
            f"(columns {', '.join(map(str, columns))}); all are kept, the later ones flagged duplicate",
            location=f"line 1, column {columns[1]}",
        )
        for columns in repeats.values()
    ]
    frame = pl.DataFrame(rows, schema=COUNTERS_SCHEMA, orient="row")
    return frame, problems


# --- rows: what both engines share --------------------------------------------------------------


def _body(
    data: memoryview, header: _Header, fields: int, start: int, first_line: int
) -> tuple[_Body, list[_Damage]]:
    """The data rows from ``start`` (line ``first_line``) to the end of the file (the end of
    ``data``), without a last line that was cut short (which is reported instead)."""
    size = len(data)
    if size <= start or data[size - 1] == 0x0A:
        return _Body(data, start, size, first_line), []
    last_newline = _rfind(data, b"\n", start)
    line_start = start if last_newline < 0 else last_newline + 1
    tail = bytes(data[line_start:size])
    if not tail.strip(b"\x00\r\n\t \x1a"):
        return _Body(data, start, line_start, first_line), []  # padding after the last line end
    text = tail.decode("utf-8", errors="replace").rstrip("\r")
    cells = _cells(text, header.separator)
    quotes_closed = text.count('"') % 2 == 0 and (not text.startswith('"') or text.endswith('"'))
    if quotes_closed and len(cells) == fields:
        return _Body(data, start, size, first_line), []  # a whole row that only lacks its line end
    line = first_line + _count_newlines(data[start:line_start])
    return _Body(data, start, line_start, first_line), [
        _Damage("last line is cut short (file truncated?); row dropped", [line], 1, "cut")
    ]


def _cells(text: str, separator: str) -> list[str]:
    """The cells of one damaged row, to describe it. A cell past the csv module's field limit
    (128 KiB) is split without quote handling instead: a description, never a crash."""
    try:
        return next(csv.reader([text], delimiter=separator, quotechar='"'), [])
    except csv.Error:
        return [cell.strip('"') for cell in text.split(separator)]


class _Lines:
    """Line starts of the data rows; built only when a problem needs line numbers."""

    def __init__(self, data: memoryview, start: int, end: int, first_line: int) -> None:
        import numpy as np  # noqa: PLC0415 - damaged rows only (start-up: docs/benchmarks.md)

        self.raw = bytes(data[start:end])
        self.first_line = first_line
        octets = np.frombuffer(self.raw, dtype=np.uint8)
        newlines = np.flatnonzero(octets == 0x0A)
        self.starts = np.concatenate(([0], newlines + 1))
        self.ends = np.concatenate((newlines, [len(octets)]))
        lengths = self.ends - self.starts
        last = octets[np.maximum(self.ends - 1, 0)] if len(octets) else np.zeros(len(self.ends), np.uint8)
        blank = (lengths == 0) | ((lengths == 1) & (last == 0x0D))
        self.row_lines = np.flatnonzero(~blank) + self.first_line  # the lines both engines read as rows

    def text(self, line: int) -> str:
        index = line - self.first_line
        start, end = int(self.starts[index]), int(self.ends[index])
        return self.raw[start:end].decode("utf-8", errors="replace").rstrip("\r")

    def cells(self, line: int, separator: str) -> list[str]:
        return _cells(self.text(line), separator)

    def rows(self, lines: list[int], header: _Header, columns: list[str]) -> pl.DataFrame:
        """The cells of the rows at ``lines`` (those inside this body), as text: ``timestamp`` and
        one String column per sample column, a short row padded with nulls, a long one cut.
        Selected and parsed as a whole, never a row at a time."""
        import numpy as np  # noqa: PLC0415 - damaged rows only (start-up: docs/benchmarks.md)

        index = np.asarray(lines, dtype=np.int64) - self.first_line
        index = index[(index >= 0) & (index < len(self.starts))]
        names = ["timestamp", *columns]
        if not len(index):
            return pl.DataFrame(schema=dict.fromkeys(names, pl.String))
        # A byte is kept when it lies in a selected line (its newline included): +1 where a
        # selected line starts, -1 after it ends, summed along the bytes.
        marks = np.zeros(len(self.raw) + 2, dtype=np.int64)
        np.add.at(marks, self.starts[index], 1)
        np.add.at(marks, self.ends[index] + 1, -1)
        keep = np.cumsum(marks)[: len(self.raw)] > 0
        text = np.frombuffer(self.raw, dtype=np.uint8)[keep].tobytes()
        if not text.endswith(b"\n"):
            text += b"\n"
        # Damaged rows may hold broken quoting: read without quote handling and take the quotes
        # off each cell (counter values never hold the separator).
        cells = pl.read_csv(
            io.BytesIO(text),
            has_header=False,
            schema=dict.fromkeys(names, pl.String),
            missing_columns="insert",  # a short first row must not fix the width
            extra_columns="ignore",
            separator=header.separator,
            quote_char=None,
            truncate_ragged_lines=True,
            encoding="utf8-lossy",
        )
        return cells.with_columns(pl.all().str.strip_chars('"\r'))

    def find(self, texts: list[str]) -> list[int | None]:
        """The line of each skipped row's text (identical texts: successive occurrences)."""
        import numpy as np  # noqa: PLC0415 - damaged rows only (start-up: docs/benchmarks.md)

        cursor: dict[bytes, int] = {}
        found: list[int | None] = []
        for text in texts:
            needle = text.encode("utf-8")
            position = cursor.get(needle, 0)
            # At a line start: one search for newline + text (a loop over every match that is
            # not at a line start took seconds on a 64 KB file of short damaged rows).
            if position == 0 and self.raw.startswith(needle):
                position = 0
            else:
                hit = self.raw.find(b"\n" + needle, max(position - 1, 0))
                position = hit + 1 if hit >= 0 else -1
            if position < 0:
                found.append(None)
                continue
            cursor[needle] = position + 1
            found.append(int(np.searchsorted(self.starts, position, side="right")) - 1 + self.first_line)
        return found

    def remaining(self, dropped: list[_Damage]) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Lines of the rows still kept after ``dropped``, in order."""
        import numpy as np  # noqa: PLC0415 - damaged rows only (start-up: docs/benchmarks.md)

        gone = [line for item in dropped if item.drops_rows for line in item.lines]
        return np.asarray(self.row_lines[~np.isin(self.row_lines, gone)], dtype=np.int64)


def _field_count_damage(counts_and_lines: list[tuple[int, int | None]], expected: int) -> list[_Damage]:
    damage = []
    for label, too_many in (("too few", False), ("too many", True)):
        found = [(n, line) for n, line in counts_and_lines if (n > expected) == too_many]
        if found:
            counts = "/".join(map(str, sorted({n for n, _ in found})))
            damage.append(
                _Damage(
                    _field_count_message(len(found), label, counts, expected),
                    sorted(line for _, line in found if line is not None),
                    len(found),
                    label,
                    (frozenset(n for n, _ in found), expected),
                )
            )
    return damage


def _field_count_message(count: int, label: str, counts: str, expected: int) -> str:
    return f"{count} row(s) with {label} fields ({counts}, expected {expected}); rows dropped"


def _broken_quotes(lines: list[int]) -> _Damage:
    return _Damage(
        f"{len(lines)} row(s) with a quote that is not closed or text after a closing quote; rows dropped",
        lines,
        len(lines),
        "quotes",
    )


def _not_a_number(value: str, column: int, lines: list[int], cells: dict[int, int]) -> _Damage:
    """Cells that are not numbers (text, ``inf``, ``nan``): each is left empty and counted as
    damage of its own column; the other cells of the row are sound and kept."""
    count = sum(cells.values())
    columns = ", ".join(str(c) for c in sorted(cells)[:_LISTED_LINES])
    if len(cells) > _LISTED_LINES:
        columns += f" and {len(cells) - _LISTED_LINES} more"
    return _Damage(
        f"{count} cell(s) that are not numbers in {len(lines)} row(s) (first: {value.strip()!r} in "
        f"column {column}; columns {columns}); those cells left empty, the rest of their rows kept",
        lines,
        count,
        "number",
        (value, column),
        cells,
    )


def _unreadable_stamp(count: int, value: str, lines: list[int]) -> _Damage:
    return _Damage(
        f"{count} row(s) with an unreadable timestamp (first: {value.strip()!r}; "
        "expected MM/DD/YYYY HH:MM:SS.fff); rows dropped",
        lines,
        count,
        "stamp",
        (value,),
    )


def _merged(damage: list[_Damage]) -> list[_Damage]:
    """Damage found stretch by stretch, as one read of the whole file reports it: one problem per
    kind, its count the sum, its lines in file order, its "first" the first in the file."""
    kinds: dict[str, list[_Damage]] = {}
    for item in damage:
        kinds.setdefault(item.kind or str(id(item)), []).append(item)
    merged = []
    for items in kinds.values():
        first = items[0]
        if len(items) == 1:
            merged.append(first)
            continue
        count = sum(item.count for item in items)
        lines = [line for item in items for line in item.lines]
        if first.kind in ("too few", "too many"):
            expected = first.facts[1]
            fields = sorted(frozenset().union(*(item.facts[0] for item in items)))
            message = _field_count_message(count, first.kind, "/".join(map(str, fields)), expected)
            merged.append(_Damage(message, lines, count, first.kind, (frozenset(fields), expected)))
        elif first.kind == "number":
            cells: dict[int, int] = {}
            for item in items:
                for column, n in item.cells.items():
                    cells[column] = cells.get(column, 0) + n
            merged.append(_not_a_number(first.facts[0], first.facts[1], lines, cells))
        elif first.kind == "stamp":
            merged.append(_unreadable_stamp(count, first.facts[0], lines))
        elif first.kind == "quotes":
            merged.append(_broken_quotes(lines))
        else:
            merged.extend(items)
    return merged


def _damage_problems(source: Path, damage: list[_Damage]) -> list[Problem]:
    problems = []
    for item in sorted(damage, key=lambda d: d.lines[0] if d.lines else 0):
        location = None
        if item.lines:
            location = ("line " if len(item.lines) == 1 else "lines ") + ", ".join(
                map(str, item.lines[:_LISTED_LINES])
            )
            if len(item.lines) > _LISTED_LINES:
                location += f" and {len(item.lines) - _LISTED_LINES} more"
        problems.append(Problem(str(source), item.message, location=location, lost=item.count))
    return problems


# --- the compiled engine -------------------------------------------------------------------------


class _Verdicts:
    """The compiled parser's per-row results (layout in _pdhcsv.c), as NumPy arrays: built only
    when a row is damaged (NumPy is not imported otherwise: start-up, docs/benchmarks.md)."""

    def __init__(
        self,
        stamps_b: bytearray,
        status_b: bytearray,
        bad_b: bytearray,
        first_b: bytearray,
        lines_b: bytearray,
    ) -> None:
        import numpy as np  # noqa: PLC0415 - see the class docstring

        # status: 0 ok, 1 too few fields, 2 too many, 3 bad quoting
        self.status = np.frombuffer(status_b, dtype=np.uint8)
        self.stamps = np.frombuffer(stamps_b, dtype=np.int64)  # local microseconds since 1970, or _NO_STAMP
        self.bad = np.frombuffer(bad_b, dtype=np.int32)  # cells that are not numbers
        self.first_bad = np.frombuffer(first_b, dtype=np.int32)  # 1-based column of the first such cell
        self.lines = np.frombuffer(lines_b, dtype=np.int64)  # 1-based line of each row


class _ArrowRows:
    """The pair of Arrow C data interface capsules ``_pdhcsv.arrow_table`` made, for Polars."""

    def __init__(self, capsules: tuple[object, object]) -> None:
        self._capsules = capsules

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self._capsules


def _native_samples(body: _Body, header: _Header, columns: list[str], damage: list[_Damage]) -> pl.DataFrame:
    """Rows parsed by ``_pdhcsv`` (threads, GIL released) and handed to Polars through the Arrow
    C data interface (no copy of the values); damaged rows re-read here to say why."""
    assert _pdhcsv is not None
    threads = min(os.cpu_count() or 1, 4)
    values_b, stamps_b, status_b, bad_b, first_b, lines_b = _pdhcsv.parse(
        body.data[: body.end], body.start, len(columns), header.separator, threads, body.first_line
    )
    bias = header.bias * 60_000_000 if header.bias is not None else 0
    # Rows with a bad field count or an unreadable stamp are left out; a cell that is not a
    # number is NaN, as a missing one: it becomes an empty cell and its row is kept (the other
    # cells are sound). _native_damage says what was left out and counts bad cells per column.
    schema, array, kept = _pdhcsv.arrow_table(values_b, stamps_b, status_b, columns, bias)
    if kept != len(status_b) or bad_b.count(0) != len(bad_b):
        damage.extend(_native_damage(body, header, _Verdicts(stamps_b, status_b, bad_b, first_b, lines_b)))
    capsules = (schema, array)
    return pl.DataFrame(_ArrowRows(capsules))


def _native_damage(body: _Body, header: _Header, rows: _Verdicts) -> list[_Damage]:
    """The same problems the PyArrow engine reports, from the parser's per-row verdicts."""
    import numpy as np  # noqa: PLC0415 - damaged rows only (start-up: docs/benchmarks.md)

    lines = body.lines
    status, stamps, bad, first_bad, row_lines = rows.status, rows.stamps, rows.bad, rows.first_bad, rows.lines
    expected = len(header.paths) + 1
    ragged = np.flatnonzero((status == 1) | (status == 2))
    damage = _field_count_damage(
        [(len(lines.cells(int(row_lines[r]), header.separator)), int(row_lines[r])) for r in ragged], expected
    )
    broken = row_lines[status == 3].tolist()
    if broken:
        damage.append(_broken_quotes(broken))
    numbers_bad = np.flatnonzero((status == 0) & (bad > 0) & (stamps != _NO_STAMP))
    if len(numbers_bad):
        row = int(numbers_bad[0])
        column = int(first_bad[row])
        cells = lines.cells(int(row_lines[row]), header.separator)
        value = cells[column - 1] if column - 1 < len(cells) else ""
        bad_lines = row_lines[numbers_bad].tolist()
        damage.append(_not_a_number(value, column, bad_lines, _bad_cells(lines, bad_lines, header)))
    stamp_bad = np.flatnonzero((status == 0) & (stamps == _NO_STAMP))
    if len(stamp_bad):
        first = lines.cells(int(row_lines[stamp_bad[0]]), header.separator)
        first_text = first[0] if first else ""
        damage.append(_unreadable_stamp(len(stamp_bad), first_text, row_lines[stamp_bad].tolist()))
    return damage


# --- the PyArrow engine --------------------------------------------------------------------------


def _arrow_rows(
    body: _Body, source: Path, header: _Header, columns: list[str], damage: list[_Damage]
) -> pa.Table:
    """Rows parsed by PyArrow with an explicit schema; ragged and non-numeric rows dropped."""
    import pyarrow as pa  # noqa: PLC0415 - only this engine needs it (see the imports)

    if body.end <= body.start:
        empty = {c: pa.array([], pa.float64()) for c in columns}
        return pa.table({"timestamp": pa.array([], pa.string()), **empty})
    reader = _ArrowReader(pa.py_buffer(body.data[body.start : body.end]), source, header.separator, columns)
    try:
        table = reader.read(pa.float64())
        if _has_non_finite(table):
            raise _NotANumber  # PyArrow reads "inf" and "nan"; no sample can be either
    except _NotANumber:
        # A cell that is not a number: read the cells as text and keep the rows that all convert.
        text_table = reader.read(pa.string())
        damage.extend(_ragged_damage(body, reader.ragged, len(columns) + 1))
        table, bad_rows = _convert_leniently(text_table, body.lines.remaining(damage))
        if bad_rows is not None:
            damage.append(bad_rows)
        return table
    if reader.ragged:
        damage.extend(_ragged_damage(body, reader.ragged, len(columns) + 1))
    return table


def _has_non_finite(table: pa.Table) -> bool:
    frame = pl.from_arrow(table.drop_columns(["timestamp"]), rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    if frame.width == 0:
        return False
    return bool(frame.select(pl.any_horizontal(~pl.all().is_finite()).any()).item())


class _ArrowReader:
    """PyArrow's CSV reader over the data rows; rows with the wrong number of fields are skipped."""

    def __init__(self, body: Any, source: Path, separator: str, columns: list[str]) -> None:
        self.body = body
        self.source = source
        self.separator = separator
        self.names = ["timestamp", *columns]
        self.block_size = _block_size(body.size, len(self.names))
        self.ragged: list[tuple[int, str]] = []  # (fields found, row text) of skipped rows

    def _on_invalid(self, row: Any) -> str:
        self.ragged.append((int(row.actual_columns), str(row.text)))
        return "skip"

    def read(self, sample_type: Any) -> pa.Table:
        import pyarrow as pa  # noqa: PLC0415 - only this engine needs it (see the imports)
        import pyarrow.csv as pacsv  # noqa: PLC0415 - as above

        types = {"timestamp": pa.string(), **dict.fromkeys(self.names[1:], sample_type)}
        while True:
            self.ragged.clear()
            try:
                return pacsv.read_csv(
                    pa.BufferReader(self.body),
                    read_options=pacsv.ReadOptions(column_names=self.names, block_size=self.block_size),
                    parse_options=pacsv.ParseOptions(
                        delimiter=self.separator, quote_char='"', invalid_row_handler=self._on_invalid
                    ),
                    convert_options=pacsv.ConvertOptions(
                        column_types=types, null_values=[" ", ""], strings_can_be_null=True
                    ),
                )
            except pa.ArrowInvalid as exc:
                message = str(exc)
                if "straddling" in message and self.block_size <= self.body.size:
                    self.block_size = self.body.size + 1  # a row longer than a block: one block
                elif "invalid UTF8" in message:
                    raise _NotUtf8 from None
                elif "conversion error" in message:
                    raise _NotANumber from None
                else:
                    raise CounterLogError(
                        self.source, f"unreadable rows: {message}", location="line 2", expected=_EXPECTED_ROW
                    ) from None


def _block_size(body: int, fields: int) -> int:
    """Blocks small enough to keep every core busy, large enough to hold most rows whole."""
    per_core = body // (4 * (os.cpu_count() or 1)) + 1
    return max(1 << 20, 256 * fields, min(per_core, 16 << 20))


def _ragged_damage(body: _Body, ragged: list[tuple[int, str]], expected: int) -> list[_Damage]:
    located = body.lines.find([text for _, text in ragged])
    return _field_count_damage([(n, line) for (n, _), line in zip(ragged, located, strict=True)], expected)


def _convert_leniently(
    text_table: pa.Table, row_lines: np.ndarray[Any, Any]
) -> tuple[pa.Table, _Damage | None]:
    """Cast text cells to float; a row with a cell that is neither missing nor a number is dropped."""
    frame = pl.from_arrow(text_table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    values = frame.columns[1:]
    cast = frame.select(
        pl.col("timestamp"), *[pl.col(c).str.strip_chars().cast(pl.Float64, strict=False) for c in values]
    )
    # Not finite counts as not a number, as in the compiled engine: no sample can be infinite.
    cast = cast.with_columns(pl.when(pl.col(c).is_finite()).then(pl.col(c)).alias(c) for c in values)
    failed = frame.select([(pl.col(c).is_not_null() & cast.get_column(c).is_null()).alias(c) for c in values])
    bad = failed.select(pl.any_horizontal(pl.all())).to_series()
    if not bad.any():
        return cast.to_arrow(), None
    stamped = (
        frame.get_column("timestamp")
        .str.strip_chars()
        .str.strptime(pl.Datetime("us"), TIMESTAMP_FORMAT, strict=False)
    )
    counted = bad & stamped.is_not_null()  # a row without a time stamp is lost whole instead
    if not counted.any():
        return cast.to_arrow(), None
    first_row = int(counted.arg_max() or 0)
    position = failed.row(first_row).index(True)
    value = frame.get_column(values[position])[first_row]
    mask = counted.to_numpy()
    lines = row_lines[mask].tolist() if len(row_lines) == len(mask) else []
    per_column = failed.filter(counted).sum().row(0)
    cells = {index + 2: int(n) for index, n in enumerate(per_column) if n}
    # The cells stay empty (null) and the rows are kept.
    return cast.to_arrow(), _not_a_number(str(value), position + 2, lines, cells)


def _number(column: str) -> pl.Expr:
    """A text cell as a finite float; null where it is empty, not a number or not finite."""
    value = pl.col(column).str.strip_chars().cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value).alias(column)


def _bad_cells(lines: _Lines, bad_lines: list[int], header: _Header) -> dict[int, int]:
    """File column (1-based) -> cells that are not finite numbers, in the rows at ``bad_lines``."""
    columns = [f"c{i}" for i in range(len(header.paths))]
    text = lines.rows(bad_lines, header, columns)
    written = [pl.col(c).str.strip_chars().str.len_chars().fill_null(0) > 0 for c in columns]
    counted = [(w & _number(c).is_null()).sum().alias(c) for w, c in zip(written, columns, strict=True)]
    bad = text.select(counted)
    return {index + 2: int(n) for index, n in enumerate(bad.row(0)) if n}


def log_damage(columns: list[str], damage: list[_Damage], lost_maxima: dict[str, float]) -> LogDamage:
    """What the verdicts need of the damage: empty cells per sample column, samples lost whole."""
    cells: dict[str, int] = {}
    for item in damage:
        for column, n in item.cells.items():
            if 2 <= column < len(columns) + 2:
                name = columns[column - 2]
                cells[name] = cells.get(name, 0) + n
    rows = sum(item.count for item in damage if item.drops_rows)
    return LogDamage(cells=cells, rows_lost=rows, lost_maxima=dict(lost_maxima))


def _lost_maxima(body: _Body, header: _Header, columns: list[str], damage: list[_Damage]) -> dict[str, float]:
    """Per column, the largest number read from rows dropped whole whose cells still line up
    (a time stamp that is unreadable, a row with too few fields): a value that may hide a
    failure. A short row's last cell may be cut, so it is not taken."""
    # A cut last line lies past the body and cannot be read again; only these rows can.
    lines = [line for item in damage if item.kind in ("stamp", "too few") for line in item.lines]
    if not lines or not columns:
        return {}
    text = body.lines.rows(lines, header, columns)
    present = pl.sum_horizontal(pl.col(columns).is_not_null())
    last_of_short = [(present < len(columns)) & (present == index + 1) for index in range(len(columns))]
    maxima = text.select(
        pl.when(cut).then(None).otherwise(_number(c)).max().alias(c)
        for cut, c in zip(last_of_short, columns, strict=True)
    ).row(0, named=True)
    return {name: float(value) for name, value in maxima.items() if value is not None}


def _samples_frame(table: pa.Table, header: _Header, body: _Body, damage: list[_Damage]) -> pl.DataFrame:
    frame = pl.from_arrow(table, rechunk=False)  # keep PyArrow's blocks: no copy of every column
    assert isinstance(frame, pl.DataFrame)
    raw = frame.get_column("timestamp")
    stamps = raw.str.strip_chars().str.strptime(pl.Datetime("us"), TIMESTAMP_FORMAT, strict=False)
    if header.bias is not None:
        stamps = stamps + timedelta(minutes=header.bias)
    stamps = stamps.dt.replace_time_zone("UTC")
    unreadable = stamps.is_null()
    if unreadable.any():
        mask = unreadable.to_numpy()
        row_lines = body.lines.remaining(damage)
        lines = row_lines[mask].tolist() if len(row_lines) == len(mask) else []
        damage.append(_unreadable_stamp(int(mask.sum()), raw.filter(unreadable)[0] or "", lines))
        frame = frame.filter(~unreadable)
        stamps = stamps.filter(~unreadable)
    return frame.replace_column(0, stamps.alias("timestamp"))


# --- small helpers -------------------------------------------------------------------------------


def _count_newlines(data: memoryview) -> int:
    window = 16 << 20  # a window at a time: no temporary as large as the file
    return sum(bytes(data[at : at + window]).count(b"\n") for at in range(0, len(data), window))


def _find(data: memoryview, needle: bytes) -> int:
    # A window at a time, so a file without line ends is never copied whole.
    window = 1 << 20
    for position in range(0, len(data), window):
        found = bytes(data[position : position + window]).find(needle)
        if found >= 0:
            return position + found
    return -1


def _rfind(data: memoryview, needle: bytes, start: int) -> int:
    window = 1 << 20
    end = len(data)
    while end > start:
        begin = max(start, end - window)
        found = bytes(data[begin:end]).rfind(needle)
        if found >= 0:
            return begin + found
        end = begin
    return -1


# --- inspect ------------------------------------------------------------------------------------


def describe_counter_file(
    path: str | Path,
    *,
    stream_bytes: int | None = None,
    batch_bytes: int | None = None,
    encoding: str | None = None,
) -> dict[str, object]:
    """What ``inspect`` prints about a perfmon CSV/TSV. A log up to ``stream_bytes`` is read whole
    (the quickest for the logs people usually have); a larger one is described in one pass of the
    stream ``check`` reads it through, so memory follows the batch, not the file."""
    source = Path(path)
    try:
        size = source.stat().st_size
    except OSError:
        size = 0  # read_counter_csv says why it cannot be read
    if size <= (STREAM_BYTES if stream_bytes is None else stream_bytes):
        return describe_counter_log(read_counter_csv(source, encoding=encoding))
    stream = CounterCsvStream(source, batch_bytes=batch_bytes, encoding=encoding)
    while True:
        try:
            summary = summarise(stream.batches())
            break
        except ReadAgain:
            continue  # not UTF-8 after all: summed again from the start, decoded leniently
    if stream.samples_read == 0:
        raise stream.no_samples()
    return describe_log(
        dialect=stream.format,
        time_zone=stream.header.zone,
        utc_offset_minutes=stream.utc_offset_minutes,
        counters=stream.counters,
        summary=summary,
        problems=stream.problems,
        encoding=stream.text_encoding.name,
        encoding_basis=stream.text_encoding.basis,
    )
