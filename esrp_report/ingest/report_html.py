"""Jetstress HTML test reports (Jetstress 2010 and 2013/2016).

The document is reduced to a stream of text pieces and tables (rows of cell texts) in document
order; sections and tables are then recognised by their titles, header texts and row labels,
never by tags, classes, attribute quoting, case or line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import lxml.html
from lxml import etree

from esrp_report.errors import InputError, ReportFormatError, UnsupportedFormatError
from esrp_report.ingest import labels as L
from esrp_report.ingest.names import kind_from_name
from esrp_report.ingest.test_log import parse_test_log
from esrp_report.ingest.text import decode_bytes
from esrp_report.model import (
    BackupRow,
    ChecksumRow,
    DatabaseConfig,
    HostCounter,
    InstanceRow,
    InstanceTable,
    Problem,
    Run,
    SoftRecoveryRow,
    TableKind,
    TestKind,
)

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_DATABASE_CONFIG = re.compile(
    r"^(?:log path:\s*)?(?P<log>.*?)\s*database:\s*(?P<db>.+)$", re.IGNORECASE | re.DOTALL
)
_FROM_SERVER = re.compile(r"\(from server (?P<name>[^)]+)\)", re.IGNORECASE)
_CHECKSUM_LENGTH = re.compile(r"(?P<mb>[\d.,]+)\s*MB\s*/\s*(?P<sec>[\d.,]+)\s*sec", re.IGNORECASE)


def sniff_report_html(head: str) -> bool:
    """Is this text the start of a Jetstress HTML report?"""
    folded = head.casefold()
    return "jetstress" in folded and ("<html" in folded or "<table" in folded or "<body" in folded)


@dataclass
class _Table:
    rows: list[list[str]]
    raw_rows: list[list[str]]  # cell texts keeping line breaks (for the test log)
    section: str | None
    index: int


@dataclass
class _Stream:
    texts: list[tuple[int, str]] = field(default_factory=list)  # (order, text)
    tables: list[_Table] = field(default_factory=list)


def _cell_text(cell: lxml.html.HtmlElement) -> tuple[str, str]:
    raw = cell.text_content()
    return " ".join(raw.split()), raw


def _section_of(text: str) -> str | None:
    label = L.normalize_label(text)
    for name, pattern in L.SECTION_TITLES:
        if pattern.match(label):
            return name
    return None


def _linearise(root: lxml.html.HtmlElement) -> tuple[_Stream, list[str]]:
    """Text pieces and tables in document order, each table tagged with the section it follows."""
    for br in root.iter("br"):
        br.tail = "\n" + (br.tail or "")
    stream = _Stream()
    titles: list[str] = []
    section: str | None = None
    order = 0

    def add_table(element: lxml.html.HtmlElement) -> None:
        nonlocal section, order
        rows: list[list[str]] = []
        raw_rows: list[list[str]] = []
        for tr in element.iter("tr"):
            cells = [c for c in tr if isinstance(c.tag, str) and c.tag.lower() in ("td", "th")]
            texts = [_cell_text(c) for c in cells]
            if any(t for t, _ in texts):
                rows.append([t for t, _ in texts])
                raw_rows.append([r for _, r in texts])
        # A one-cell row naming a section is a title inside the table (some layouts do that).
        if rows and len(rows[0]) == 1 and _section_of(rows[0][0]):
            section = _section_of(rows[0][0])
            rows, raw_rows = rows[1:], raw_rows[1:]
        if rows:
            stream.tables.append(_Table(rows, raw_rows, section, order))
            order += 1

    def add_text(text: str) -> None:
        nonlocal section, order
        clean = " ".join(text.split())
        if not clean:
            return
        stream.texts.append((order, clean))
        order += 1
        found = _section_of(clean)
        if found:
            section = found
            titles.append(clean)

    def walk(element: lxml.html.HtmlElement) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag.lower() in ("script", "style", "head"):
            return
        if tag.lower() == "table":
            add_table(element)
            return
        for line in (element.text or "").split("\n"):
            add_text(line)
        for child in element:
            walk(child)
            for line in (child.tail or "").split("\n"):
                add_text(line)

    walk(root)
    return stream, titles


def _number(text: str) -> float | None:
    value = text.strip().replace("\u00a0", "")
    if _NUMBER.match(value):
        return float(value.replace(",", ""))
    return None


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.strptime(" ".join(text.split()).upper(), "%m/%d/%Y %I:%M:%S %p")
    except ValueError:
        return None


def _duration_seconds(text: str) -> float | None:
    parts = text.strip().split(":")
    if len(parts) == 3 and all(p.strip().replace(".", "", 1).isdigit() for p in parts):
        hours, minutes, seconds = (float(p) for p in parts)
        return hours * 3600 + minutes * 60 + seconds
    return _number(text)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def cell_number(self, text: str, where: str) -> float | None:
        if not text.strip() or text.strip().upper() == "N/A":
            return None
        value = _number(text)
        if value is None:
            self.problems.append(
                Problem(self.source, f"not a number: {text!r}; cell left empty", location=where)
            )
        return value

    def instance_table(self, table: _Table, kind: TableKind) -> InstanceTable:
        header = [L.normalize_header(h) for h in table.rows[0]]
        keys: list[str | None] = []
        for text in header[1:]:
            key = L.INSTANCE_COLUMNS.get(text)
            if kind is TableKind.LOG_REPLICATION and key in L.REPLICATION_ALIASES:
                key = L.REPLICATION_ALIASES[key]
            keys.append(key)
        unknown = [table.rows[0][i + 1] for i, k in enumerate(keys) if k is None]
        if unknown:
            self.problems.append(
                Problem(
                    self.source,
                    f"columns not recognised and not used: {unknown}",
                    location=f"table '{kind.value}'",
                    severity="note",
                )
            )
        result = InstanceTable(kind, source=self.source)
        for row_number, row in enumerate(table.rows[1:], start=2):
            values: dict[str, float] = {}
            for column, (key, cell) in enumerate(zip(keys, row[1:], strict=False), start=2):
                if key is None:
                    continue
                number = self.cell_number(cell, f"table '{kind.value}', row {row_number}, column {column}")
                if number is not None:
                    values[key] = number
            if len(row) - 1 < len(keys):
                self.problems.append(
                    Problem(
                        self.source,
                        f"row has {len(row)} cells, expected {len(keys) + 1}",
                        location=f"table '{kind.value}', row {row_number}",
                    )
                )
            result.rows.append(InstanceRow(row[0], values))
        return result


def _is_instance_table(table: _Table) -> bool:
    return bool(L.INSTANCE_TABLE_FIRST_HEADER.match(L.normalize_label(table.rows[0][0])))


def parse_report_html(text: str, source: str) -> Run:
    text = _XML_DECLARATION.sub("", text.lstrip("\ufeff"))
    if not sniff_report_html(text[:65536]) and "jetstress" not in text.casefold():
        raise UnsupportedFormatError(
            source,
            "not a Jetstress report",
            location="start of file",
            expected="an HTML page mentioning Jetstress with its result tables",
        )
    try:
        parser = lxml.html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True, recover=True)
        root = lxml.html.document_fromstring(text.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ReportFormatError(source, f"unreadable HTML: {exc}") from None
    stream, _titles = _linearise(root)
    reader = _Reader(source)
    run = Run(kind=TestKind.PERFORMANCE, machine="", sources=[source])
    all_text = " ".join(t for _, t in stream.texts)

    kind: TestKind | None = None
    for pattern, candidate in L.REPORT_KINDS:
        if pattern.search(all_text.casefold()):
            kind = candidate
            break

    instance_tables: list[tuple[_Table, TableKind | None]] = []
    log_lines: list[str] = []
    for table in stream.tables:
        header = [L.normalize_header(h) for h in table.rows[0]]
        if _is_instance_table(table):
            section = table.section
            explicit = TableKind(section) if section in {k.value for k in TableKind} else None
            instance_tables.append((table, explicit))
        elif tuple(header[:4]) == L.HOST_HEADER:
            for row in table.rows[1:]:
                cells = [*row[1:4], "", "", ""][:3]
                where = f"table 'host', row {row[0]!r}"
                run.host.append(HostCounter(row[0], *(reader.cell_number(c, where) for c in cells)))
        elif L.BACKUP_HEADER_MARK in header:
            kind = kind or TestKind.DATABASE_BACKUP
            for row in table.rows[1:]:
                cells = [*row, "", "", ""]
                run.backup.append(
                    BackupRow(
                        row[0],
                        reader.cell_number(cells[1], f"table 'backup', row {row[0]!r}"),
                        _duration_seconds(cells[2]),
                        reader.cell_number(cells[3], f"table 'backup', row {row[0]!r}"),
                    )
                )
        elif L.RECOVERY_HEADER_MARK in header:
            kind = kind or TestKind.SOFT_RECOVERY
            for row in table.rows[1:]:
                cells = [*row, "", ""]
                where = f"table 'soft recovery', row {row[0]!r}"
                run.soft_recovery.append(
                    SoftRecoveryRow(
                        row[0], reader.cell_number(cells[1], where), reader.cell_number(cells[2], where)
                    )
                )
        elif L.CHECKSUM_HEADER_MARK in header:
            kind = kind or TestKind.DB_CHECKSUM
            for row in table.rows[1:]:
                cells = [*row, "", "", "", "", ""]
                where = f"table 'checksum', row {row[0]!r}"
                length = _CHECKSUM_LENGTH.search(cells[5])
                seen, bad, correctable, wrong = (reader.cell_number(c, where) for c in cells[1:5])
                run.checksum.append(
                    ChecksumRow(
                        row[0],
                        seen_pages=seen,
                        bad_pages=bad,
                        correctable_pages=correctable,
                        wrong_page_number_pages=wrong,
                        file_length_mb=_number(length.group("mb")) if length else None,
                        seconds_taken=_number(length.group("sec")) if length else None,
                        is_sum=row[0].strip().casefold() == "(sum)",
                    )
                )
        elif table.section == "log":
            log_lines.extend(line for row in table.raw_rows for cell in row for line in cell.split("\n"))
        else:
            _key_values(table, run, reader)

    _assign_instance_tables(instance_tables, run, reader)
    log_text = "\n".join(log_lines) or _log_text(stream)
    if log_text.strip():
        try:
            run.test_log = parse_test_log(log_text, source)
        except InputError:
            reader.problems.append(Problem(source, "test log section holds no log entries", severity="note"))

    if kind is None and run.performance_log:
        kind = kind_from_name(run.performance_log)
    if kind is None:
        kind = TestKind.STRESS if "stress" in all_text.casefold() else None
    if kind is None and run.tables:
        kind = TestKind.PERFORMANCE
    if kind is None:
        raise ReportFormatError(
            source,
            "cannot tell which Jetstress test this report is about",
            location="title",
            expected="'... Test Result Report', a statistics table or a performance log name",
        )
    run.kind = kind
    if not run.machine:
        found = _FROM_SERVER.search(all_text)
        run.machine = found.group("name").strip() if found else ""
    _require_sections(run, source)
    run.problems.extend(reader.problems)
    return run


def _log_text(stream: _Stream) -> str:
    lines: list[str] = []
    in_log = False
    for _, text in stream.texts:
        section = _section_of(text)
        if section is not None:
            in_log = section == "log"
            continue
        if in_log:
            lines.append(text)
    return "\n".join(lines)


def _key_values(table: _Table, run: Run, reader: _Reader) -> None:
    for row in table.rows:
        if len(row) < 2:
            continue
        label, value = L.normalize_label(row[0]), row[1].strip()
        if label in L.SUMMARY_LABELS:
            run.summary[row[0].strip()] = value
            attr = L.SUMMARY_LABELS[label]
            if attr in ("test_start", "test_end", "collection_start", "collection_end"):
                stamp = _timestamp(value)
                if stamp is None and value:
                    reader.problems.append(
                        Problem(
                            reader.source,
                            f"{row[0].strip()}: not a time: {value!r}",
                            location="table 'test summary'",
                        )
                    )
                setattr(run, attr, stamp)
            else:
                setattr(run, attr, value or None)
        elif label in L.SIZING_LABELS:
            number = reader.cell_number(value, f"table 'database sizing', row {row[0].strip()!r}")
            attr = L.SIZING_LABELS[label]
            setattr(
                run.sizing, attr, int(number) if attr == "database_files" and number is not None else number
            )
        elif label in L.PARAMETER_LABELS or table.section == "parameters":
            run.parameters[row[0].strip()] = value
        elif table.section == "databases" or _DATABASE_CONFIG.match(value):
            match = _DATABASE_CONFIG.match(value)
            if match:
                run.databases.append(
                    DatabaseConfig(
                        row[0].strip(),
                        match.group("log").strip() or None,
                        [p.strip() for p in match.group("db").split(";") if p.strip()],
                    )
                )
    if run.machine is None:
        run.machine = ""


def _assign_instance_tables(found: list[tuple[_Table, TableKind | None]], run: Run, reader: _Reader) -> None:
    """A title decides when it fits the table's shape and is still free (an untitled table
    inherits the previous title); otherwise the first kind its shape allows that is still free."""
    wide_order = [TableKind.TRANSACTIONAL, TableKind.TOTAL]
    narrow_order = [TableKind.BACKGROUND_MAINTENANCE, TableKind.LOG_REPLICATION]
    taken: set[TableKind] = set()
    for table, titled in found:
        allowed = wide_order if len(table.rows[0]) > 3 else narrow_order
        kind = titled if titled in allowed and titled not in taken else None
        if kind is None:
            # Reports order them Transactional, maintenance, replication, Total: an untitled wide
            # table after any other per-instance table is the Total table.
            if allowed is wide_order and taken:
                allowed = [TableKind.TOTAL, TableKind.TRANSACTIONAL]
            candidates = [k for k in allowed if k not in taken]
            if not candidates:
                reader.problems.append(
                    Problem(
                        reader.source,
                        "an extra per-instance table was not used",
                        location=f"table {table.index + 1}",
                        severity="warning",
                    )
                )
                continue
            kind = candidates[0]
        taken.add(kind)
        run.tables[kind] = reader.instance_table(table, kind)


def _require_sections(run: Run, source: str) -> None:
    if run.kind in (TestKind.PERFORMANCE, TestKind.STRESS) and not run.summary:
        raise ReportFormatError(
            source,
            "required section missing: Test Summary",
            location="whole document",
            expected="a 'Test Summary' table with 'Overall Test Result'",
        )
    if run.kind is TestKind.DATABASE_BACKUP and not run.backup:
        raise ReportFormatError(
            source,
            "required section missing: Database Backup Statistics",
            expected="a table with 'MBytes Transferred/sec'",
        )
    if run.kind is TestKind.SOFT_RECOVERY and not run.soft_recovery:
        raise ReportFormatError(
            source,
            "required section missing: Soft Recovery Statistics",
            expected="a table with 'Log files replayed'",
        )
    if run.kind is TestKind.DB_CHECKSUM and not run.checksum:
        raise ReportFormatError(
            source, "required section missing: Checksum Statistics", expected="a table with 'Bad pages'"
        )


def read_report(path: str | Path) -> Run:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    text, _encoding = decode_bytes(data, path)
    return parse_report_html(text, str(path))
