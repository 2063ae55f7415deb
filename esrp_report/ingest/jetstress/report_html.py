"""Jetstress HTML test reports: Performance, Stress, DatabaseBackup, SoftRecovery and DBChecksum,
from Jetstress 2010 (14.01.x) and 2013/2016 (15.00.x/15.01.x).

The page is reduced to a stream of text lines and tables (rows of cell texts) in document order;
sections and tables are then recognised by their titles, header texts and row labels
(:mod:`esrp_report.ingest.jetstress.labels`), never by tags, classes, attribute quoting, case or line
breaks. Parsing is lxml's HTML parser without network access; HTML has no entity loading, so a
DOCTYPE that declares external entities stays inert text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import lxml.html
from lxml import etree

from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress import times
from esrp_report.ingest.jetstress.names import kind_from_name
from esrp_report.ingest.jetstress.test_log import parse_test_log
from esrp_report.ingest.text import decode_bytes
from esrp_report.model import (
    HOST_TABLE_TITLE,
    TABLE_TITLES,
    BackupRow,
    ChecksumRow,
    DatabaseConfig,
    DocNumber,
    HostCounter,
    InstanceRow,
    InstanceTable,
    Problem,
    Run,
    SoftRecoveryRow,
    TableKind,
    TestKind,
)
from esrp_report.model.errors import InputError, ReportFormatError, UnsupportedFormatError

# Tags that do not start a new line of text; everything else is treated as a block.
_INLINE_TAGS = frozenset(
    {
        "a", "abbr", "acronym", "b", "big", "cite", "code", "em", "font", "i", "kbd", "label", "nobr",
        "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var", "wbr",
    }
)  # fmt: skip
# An inline SVG is a drawing (a chart's tick labels and legend), not the document's text: its
# words read as text made rows of "Server 10", "0", "500", ... that no table holds.
_SKIPPED_TAGS = frozenset({"script", "style", "head", "noscript", "template", "title", "caption", "svg"})
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_DURATION = re.compile(r"^(?:(?P<d>\d+)\.)?(?P<h>\d+):(?P<m>\d{1,2}):(?P<s>\d{1,2}(?:\.\d+)?)$")
_SNIFF_MARKUP = ("<html", "<body", "<table", "<fieldset", "<!doctype html")
_SNIFF_WORDS = ("jetstress", "test result report", "==> instances", "==&gt; instances")
_INSTANCE_KINDS = {kind.value: kind for kind in TableKind}
# Sections whose tables this reader knows and deliberately does not model.
_KNOWN_UNMODELLED = frozenset({"disks", "errors", "disagreements"})


def sniff_report_html(head: str) -> bool:
    """Is this text (the start of a file) a Jetstress HTML report?"""
    folded = head.casefold()
    return any(mark in folded for mark in _SNIFF_MARKUP) and any(word in folded for word in _SNIFF_WORDS)


def read_report(path: str | Path) -> Run:
    """Read a Jetstress HTML report in UTF-8 (with or without BOM), UTF-16 or Windows-1252."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    text, _encoding = decode_bytes(data, path)
    return parse_report_html(text, str(path))


def parse_report_html(text: str, source: str) -> Run:
    """Read a report's decoded text; ``source`` names it in the run and in every message."""
    root = _parse_html(text, source)
    try:
        items = _Linearizer.run(root)
    except RecursionError:
        raise ReportFormatError(
            source, "elements are nested too deeply to read", expected="a Jetstress report page"
        ) from None
    return _Reader(source).read(items)


# --- markup to a stream of lines and tables -------------------------------------------------


@dataclass
class _Text:
    text: str  # whitespace collapsed
    raw: str  # line breaks kept
    line: int  # source line of the first character (approximate inside long inline runs)
    section: str | None  # the section in force; for a title, the section it opens
    is_title: bool


@dataclass
class _Table:
    rows: list[list[str]]
    raw_rows: list[list[str]]
    lines: list[int]
    section: str | None
    title: str | None  # the nearest preceding section title, as printed
    number: int  # 1-based among the document's tables


def _parse_html(text: str, source: str) -> etree._Element:
    text = _XML_DECLARATION.sub("", text.lstrip("\ufeff"), count=1)
    # The text is already decoded; an explicit encoding keeps a <meta charset> from re-decoding it.
    parser = lxml.html.HTMLParser(
        encoding="utf-8", no_network=True, remove_comments=True, remove_pis=True, recover=True
    )
    try:
        return lxml.html.document_fromstring(text.encode("utf-8"), parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise UnsupportedFormatError(
            source, f"not a Jetstress report: no readable HTML ({exc})", location="start of file"
        ) from None


def _line_of(element: etree._Element) -> int:
    line = getattr(element, "sourceline", None)  # the stubs leave it untyped
    return line if isinstance(line, int) else 0


def _tag(element: etree._Element) -> str:
    return element.tag.lower() if isinstance(element.tag, str) else ""


@lru_cache(maxsize=16384)  # the same titles and row labels, report after report
def _section_of(text: str) -> str | None:
    # A converted document may number its sections as captions ("Table 9 Test Summary").
    label = L.CAPTION_PREFIX.sub("", L.normalize_label(text))
    for name, pattern in L.SECTION_TITLES:
        if pattern.match(label):
            return name
    return None


def _raw_text(element: etree._Element, skip: bool = True) -> str:
    """Text of an element with line breaks at <br> and around block elements; ``skip`` leaves out
    scripts, styles and the like below the element."""
    parts: list[str] = []

    def visit(node: etree._Element, top: bool) -> None:
        tag = _tag(node)
        if tag == "br":
            parts.append("\n")
            return
        if not tag or (skip and not top and tag in _SKIPPED_TAGS):
            return
        block = not top and tag not in _INLINE_TAGS
        if block:
            parts.append("\n")
        parts.append(node.text or "")
        for child in node:
            visit(child, False)
            parts.append(child.tail or "")
        if block:
            parts.append("\n")

    visit(element, True)
    return "".join(parts)


def _has_nested_table(table: etree._Element) -> bool:
    return next(table.iterdescendants("table"), None) is not None


class _Linearizer:
    def __init__(self) -> None:
        self.items: list[_Text | _Table] = []
        self.section: str | None = None
        self.title: str | None = None
        self.tables = 0
        self._parts: list[str] = []
        self._started = False  # the current line has non-blank text
        self._line = 0

    @classmethod
    def run(cls, root: etree._Element) -> list[_Text | _Table]:
        self = cls()
        title = root.find(".//title")
        if title is not None:
            self._feed(_raw_text(title, skip=False), _line_of(title))
            self._flush()
        self._walk(root)
        self._flush()
        return self.items

    def _feed(self, text: str | None, line: int) -> None:
        if not text:
            return
        if not self._started:
            stripped = text.lstrip()
            if stripped:
                self._started = True
                self._line = line + text[: len(text) - len(stripped)].count("\n")
        self._parts.append(text)

    def _flush(self) -> None:
        raw = "".join(self._parts).strip()
        self._parts = []
        self._started = False
        text = " ".join(raw.split())
        if not text:
            return
        self._add_text(text, raw, self._line)

    def _add_text(self, text: str, raw: str, line: int) -> None:
        section = _section_of(text)
        if section is not None:
            self.section, self.title = section, text
        self.items.append(_Text(text, raw, line, self.section, section is not None))

    def _walk(self, element: etree._Element) -> None:
        tag = _tag(element)
        if tag in _SKIPPED_TAGS:
            return
        if tag == "br":
            self._flush()
            return
        if tag == "table" and not _has_nested_table(element):
            self._flush()
            self._table(element)
            return
        block = tag not in _INLINE_TAGS
        if block:
            self._flush()
        if tag:
            self._feed(element.text, _line_of(element))
        for child in element:
            self._walk(child)
            if child.tail and child.tail.strip():
                self._feed(child.tail, _tail_line(child))
            elif child.tail:
                self._parts.append(child.tail)
        if block:
            self._flush()

    def _table(self, element: etree._Element) -> None:
        caption = element.find("caption")
        if caption is not None:
            text = " ".join(_raw_text(caption).split())
            if text:
                self._add_text(text, text, _line_of(caption))
        rows: list[list[str]] = []
        raw_rows: list[list[str]] = []
        lines: list[int] = []

        def emit() -> None:
            if rows:
                self.tables += 1
                self.items.append(
                    _Table(list(rows), list(raw_rows), list(lines), self.section, self.title, self.tables)
                )
            rows.clear()
            raw_rows.clear()
            lines.clear()

        for tr in element.iter("tr"):
            raws = [_raw_text(cell) for cell in tr if _tag(cell) in ("td", "th")]
            texts = [" ".join(raw.split()) for raw in raws]
            if not any(texts):
                continue
            # A one-cell row naming a section is a title inside the table (some layouts do that).
            if len([t for t in texts if t]) == 1 and _section_of(next(t for t in texts if t)):
                emit()
                title = next(t for t in texts if t)
                self._add_text(title, title, _line_of(tr))
                continue
            rows.append(texts)
            raw_rows.append(raws)
            lines.append(_line_of(tr))
        emit()


def _tail_line(child: etree._Element) -> int:
    """Source line where the text after ``child`` starts (lxml only records start tags)."""
    start = _line_of(child)
    if _tag(child) in ("br", "img", "hr", "input", "meta", "link"):
        return start
    return start + sum(text.count("\n") for text in child.itertext() if isinstance(text, str))


# --- values ----------------------------------------------------------------------------------


def _number(text: str) -> float | None:
    value = text.strip()
    if _NUMBER.match(value):
        return float(value.replace(",", ""))
    return None


def _duration_seconds(text: str) -> float | None:
    """'08:35:15' (hours may pass 24, a day prefix 'd.' is allowed) or plain seconds."""
    match = _DURATION.match(text.strip())
    if match is None:
        return _number(text)
    try:
        days = int(match.group("d") or 0)
        return ((days * 24 + int(match.group("h"))) * 60 + int(match.group("m"))) * 60 + float(
            match.group("s")
        )
    except (ValueError, OverflowError):  # hours of 4,300+ digits; or past float range
        return None


def _is_empty(text: str) -> bool:
    return text.strip().casefold() in L.EMPTY_CELLS


# --- tables to the model ---------------------------------------------------------------------


@dataclass
class _Found:
    jetstress: bool = False  # something only a Jetstress report has
    summary: bool = False
    backup: bool = False
    recovery: bool = False
    checksum: bool = False
    log_texts: list[_Text] = field(default_factory=list)


class _Reader:
    def __init__(self, source: str, cells: dict[tuple[str, ...], DocNumber] | None = None) -> None:
        self.source = source
        self.problems: list[Problem] = []
        # When given, every figure read is also kept as printed, at its line and cell: a published
        # document's audit names the cells its relations use ("instance", kind, instance, field),
        # ("sizing", field), ("host", counter, statistic), ("backup" | "recovery" | "checksum",
        # row, field).
        self.cells = cells
        self.unmodelled: list[int] = []  # lines of the tables read past (per-disk, errors)
        # The Test Summary's times as printed, read once the whole report has decided the order of
        # day and month (times.day_first_of): attribute -> (text, where).
        self.stamps: dict[str, tuple[str, str]] = {}

    def keep(
        self,
        key: tuple[str, ...],
        text: str,
        table: _Table,
        row: int,
        column: int,
        *,
        value: float | None = None,
    ) -> None:
        """Keep a figure as printed at row ``row`` (0 = the header) and cell ``column`` of a table
        (``value``: the figure the cell was already read as, when it is a plain number)."""
        if self.cells is None or row >= len(table.lines):
            return
        if value is not None:  # a per-instance figure: no second parse (a 50 MB text has 600,000)
            printed = text.strip()
            dot = printed.find(".")
            decimals = len(printed) - dot - 1 if dot >= 0 else 0
            self.cells[key] = DocNumber(value, decimals, printed, False, table.lines[row], column)
            return
        figure = DocNumber.parse(text)
        if figure is not None:
            self.cells[key] = figure.at(table.lines[row], column)

    # -- messages

    def problem(
        self, message: str, location: str, severity: str = "warning", lost: int = 0, *, doubt: bool = False
    ) -> None:
        self.problems.append(
            Problem(self.source, message, location=location, severity=severity, lost=lost, doubt=doubt)
        )

    def number(self, text: str, where: str, what: str = "a number") -> float | None:
        """A numeric cell; empty → None; damaged → None plus a problem naming the cell."""
        if _is_empty(text):
            return None
        value = _number(text)
        if value is None:
            # A figure Jetstress printed that is no number: no other source may silently stand in.
            self.problem(f"not {what}: {text.strip()!r}; cell left empty", where, "error", 1, doubt=True)
        return value

    # -- the whole report

    def read(self, items: list[_Text | _Table]) -> Run:
        run = Run(kind=TestKind.PERFORMANCE, machine="", sources=[self.source])
        found = _Found()
        instance_tables: list[_Table] = []
        for item in items:
            if isinstance(item, _Text):
                if item.section == "log" and not item.is_title:
                    found.log_texts.append(item)
                continue
            shape = _shape(item)
            if shape == "instance":
                instance_tables.append(item)
            elif shape == "host":
                self.host(item, run)
            elif shape == "backup":
                found.backup = True
                self.backup(item, run)
            elif shape == "recovery":
                found.recovery = True
                self.recovery(item, run)
            elif shape == "checksum":
                found.checksum = True
                self.checksum(item, run)
            elif shape == "disks" or item.section in _KNOWN_UNMODELLED:
                # Read past on purpose; a published document's audit says so at its rows.
                self.unmodelled.extend(item.lines[1:])
                continue
            elif item.section == "log":
                found.log_texts.extend(
                    _Text(" ".join(raw.split()), raw, line, "log", False)
                    for raw_row, line in zip(item.raw_rows, item.lines, strict=True)
                    for raw in raw_row
                    if raw.strip()
                )
            else:
                self.pairs(item, run, found)
        self.assign_instance_tables(instance_tables, run)
        found.jetstress = bool(
            found.jetstress or instance_tables or found.backup or found.recovery or found.checksum
        )

        titles = [i.text for i in items if isinstance(i, _Text) and i.section != "log"]
        title_kind = _kind_from_titles(titles)
        if not (found.jetstress or title_kind or any(L.REPORT_TITLE.search(t.casefold()) for t in titles)):
            raise UnsupportedFormatError(
                self.source,
                "not a Jetstress report",
                location="whole document",
                expected="a Jetstress test result report (Test Summary, per-instance or statistics tables)",
            )
        run.kind = self.kind(run, title_kind, found)
        self.require_sections(run, found)
        if not run.machine:
            run.machine = _machine_from_titles(titles)
            if not run.machine:
                self.problem("the report does not name its server", "Test Summary", severity="note")
        self.summary_times(run, found.log_texts)
        self.test_log(run, found.log_texts)
        run.problems.extend(self.problems)
        return run

    def summary_times(self, run: Run, log_texts: list[_Text]) -> None:
        """The Test Summary's times, in the order of day and month its own stamps and its log's
        decide (a British "04/09/2012" is September when any stamp of the report says so)."""
        printed = [text for text, _where in self.stamps.values()]
        printed += [m.group("stamp") for t in log_texts if (m := times.LOG_ENTRY.match(t.text)) is not None]
        day_first = times.day_first_of(printed)
        if times.contradicts(printed):
            self.problem(
                "the report's dates disagree on the order of day and month; slashed dates are read "
                "month first",
                "Test Summary",
            )
        for attr, (text, where) in self.stamps.items():
            stamp = times.parse_stamp(text, day_first)
            if stamp is None:
                self.problem(f"not a time: {text!r}; expected {times.EXPECTED}", where, lost=1)
            setattr(run, attr, stamp)

    def kind(self, run: Run, title_kind: TestKind | None, found: _Found) -> TestKind:
        log_kind = kind_from_name(run.performance_log) if run.performance_log else None
        table_kind = (
            TestKind.DATABASE_BACKUP
            if found.backup
            else TestKind.SOFT_RECOVERY
            if found.recovery
            else TestKind.DB_CHECKSUM
            if found.checksum
            else None
        )
        # Last, the test its own log names: a report printed without title or Performance Log row.
        kind = title_kind or log_kind or table_kind or _kind_from_log(found.log_texts)
        if title_kind and log_kind and title_kind is not log_kind:
            self.problem(
                f"the title says {title_kind.value} but the performance log "
                f"{run.performance_log!r} is named for {log_kind.value}; the title is used",
                "Test Summary, 'Performance Log'",
            )
        if kind is not None:
            return kind
        if not found.summary:
            raise _missing(self.source, "Test Summary", "a 'Test Summary' table with 'Overall Test Result'")
        raise ReportFormatError(
            self.source,
            "cannot tell which Jetstress test this report is about",
            location="report title",
            expected="'<Test> Test Result Report', a statistics table or a performance log named <Test>_... "
            "(in the Test Summary or the test log)",
        )

    def require_sections(self, run: Run, found: _Found) -> None:
        """A report missing a required section keeps what it has: the section is named as a
        problem that leaves the run INCOMPLETE, and the rules that needed it are not evaluated.
        Only a report with nothing else to give is refused."""
        required = {
            TestKind.PERFORMANCE: (found.summary, "Test Summary", "'Overall Test Result'"),
            TestKind.STRESS: (found.summary, "Test Summary", "'Overall Test Result'"),
            TestKind.DATABASE_BACKUP: (
                found.backup,
                "Database Backup Statistics",
                "'MBytes Transferred/sec'",
            ),
            TestKind.SOFT_RECOVERY: (found.recovery, "Soft Recovery Statistics", "'Log files replayed'"),
            TestKind.DB_CHECKSUM: (found.checksum, "Checksum Statistics", "'Seen pages' and 'Bad pages'"),
        }
        if run.kind not in required:
            return
        present, name, columns = required[run.kind]
        if present:
            return
        has_other = bool(run.tables or run.host or run.databases or found.summary or found.backup)
        has_other = has_other or found.recovery or found.checksum
        if not has_other:
            raise _missing(self.source, name, f"a '{name}' table with {columns}")
        self.problems.append(
            Problem(
                self.source,
                f"required section missing: {name} (expected a table with {columns}); what the "
                "report holds is used, the rules that need this section are not evaluated",
                location="whole document",
                severity="error",
                unread=True,
            )
        )

    # -- label/value tables: summary, sizing, parameters, database configuration

    def pairs(self, table: _Table, run: Run, found: _Found) -> None:
        used = False
        for row_number, row in enumerate(table.rows, start=1):
            if len(row) < 2:
                continue
            label_text, value = row[0].strip(), row[1].strip()
            label = L.normalize_label(label_text)
            where = f"table '{table.title or 'untitled'}', row {row_number} ({label_text!r})"
            kept = ("pair", label_text), value, table, row_number - 1, 1  # a row the reader uses
            if label in L.SUMMARY_LABELS or table.section == "summary":
                if label_text:  # a row's figure wrapped onto a line of its own is not a pair
                    self.keep(*kept)
                used = found.summary = True
                if label in ("overall test result", "jetstress version"):
                    found.jetstress = True
                self.summary_row(run, label_text, label, value, where)
            elif label in L.SIZING_LABELS:
                used = True
                self.sizing_row(run, label, value, where)
                self.keep(("sizing", L.SIZING_LABELS[label]), value, table, row_number - 1, 1)
            elif label in L.PARAMETER_LABELS or table.section == "parameters":
                used = True
                if label_text:
                    self.keep(*kept)
                run.parameters[label_text] = value
            elif table.section == "databases" or L.DATABASE_CONFIG.match(value):
                used = True
                self.database_row(run, label_text, value, where)
        if not used:
            self.problem(
                f"table not recognised, not used: first row {table.rows[0][:4]}",
                f"table {table.number}" + (f" after '{table.title}'" if table.title else ""),
                severity="note",
            )

    def summary_row(self, run: Run, label_text: str, label: str, value: str, where: str) -> None:
        run.summary[label_text] = value
        attr = L.SUMMARY_LABELS.get(label)
        if attr is None:
            return
        if attr in L.SUMMARY_TIMES:
            if not _is_empty(value):
                self.stamps[attr] = (value, where)
            setattr(run, attr, None)
        elif attr == "machine":
            run.machine = value
        else:
            setattr(run, attr, value or None)

    def sizing_row(self, run: Run, label: str, value: str, where: str) -> None:
        attr = L.SIZING_LABELS[label]
        number = self.number(value, where)
        if attr == "database_files" and number is not None:
            if not number.is_integer():
                self.problem(f"a file count must be whole: {value!r}; left empty", where, lost=1)
                return
            setattr(run.sizing, attr, int(number))
            return
        setattr(run.sizing, attr, number)

    def database_row(self, run: Run, instance: str, value: str, where: str) -> None:
        match = L.DATABASE_CONFIG.match(value)
        if match is None:
            if not _is_empty(value):
                self.problem(f"not 'Log path: ... Database: ...': {value!r}", where, lost=1)
            run.databases.append(DatabaseConfig(instance, None, []))
            return
        paths = [p for p in L.DATABASE_PATH_SEPARATOR.split(match.group("db")) if p.strip()]
        run.databases.append(DatabaseConfig(instance, match.group("log").strip() or None, paths))

    # -- per-instance tables

    def assign_instance_tables(self, tables: list[_Table], run: Run) -> None:
        """A title decides when it fits the table's shape and that kind is still free (an untitled
        table inherits the title before it). Otherwise the shape and the report order decide:
        Transactional, maintenance, replication, Total — so an untitled wide table after any other
        per-instance table is the Total table (facts §9)."""
        taken: set[TableKind] = set()
        for table in tables:
            keys = {L.INSTANCE_COLUMNS.get(L.normalize_header(h)) for h in table.rows[0][1:]}
            wide = bool(keys & L.WIDE_TABLE_KEYS)
            titled = _INSTANCE_KINDS.get(table.section or "")
            if wide:
                allowed = [TableKind.TRANSACTIONAL, TableKind.TOTAL]
                order = [TableKind.TOTAL, TableKind.TRANSACTIONAL] if taken else allowed
            else:
                allowed = [TableKind.BACKGROUND_MAINTENANCE, TableKind.LOG_REPLICATION]
                reads_log = "i/o log reads/sec" in {L.normalize_header(h) for h in table.rows[0][1:]}
                order = allowed[::-1] if reads_log else allowed
            if titled in allowed and titled not in taken:
                kind = titled
            else:
                candidates = [k for k in order if k not in taken]
                if not candidates:
                    self.problem(
                        "a further per-instance table of the same shape was not used",
                        f"table {table.number}" + (f" after '{table.title}'" if table.title else ""),
                    )
                    continue
                kind = candidates[0]
            taken.add(kind)
            run.tables[kind] = self.instance_table(table, kind)
        # Report order, whatever order the tables were recognised in.
        run.tables = {kind: run.tables[kind] for kind in TableKind if kind in run.tables}

    def instance_table(self, table: _Table, kind: TableKind) -> InstanceTable:
        name = TABLE_TITLES[kind]
        header = table.rows[0]
        keys: list[str | None] = []
        unknown: list[str] = []
        for text in header[1:]:
            key = L.INSTANCE_COLUMNS.get(L.normalize_header(text))
            if kind is TableKind.LOG_REPLICATION and key is not None:
                key = L.REPLICATION_ALIASES.get(key, key)
            if key is None or key in keys:
                unknown.append(text)
                key = None
            keys.append(key)
        if unknown:
            self.problem(
                f"columns not recognised or repeated, not used: {unknown}", f"table '{name}'", "note"
            )
        result = InstanceTable(kind, source=self.source)
        empty = 0
        for row_number, row in enumerate(table.rows[1:], start=2):
            instance = row[0].strip()
            if not instance:
                self.problem(
                    "row without an instance name skipped", f"table '{name}', row {row_number}", lost=1
                )
                continue
            self.check_width(row, header, f"table '{name}', row {row_number} ({instance!r})")
            values: dict[str, float] = {}
            for column, (key, cell) in enumerate(zip(keys, row[1:], strict=False), start=2):
                if key is None:
                    continue
                if _is_empty(cell):
                    empty += 1
                    continue
                column_name = header[column - 1]
                where = f"table '{name}', row {row_number} ({instance!r}), column {column} ({column_name!r})"
                number = self.number(cell, where)
                if number is not None:
                    values[key] = number
                    at = (row_number - 1, column - 1)
                    self.keep(("instance", kind.value, instance, key), cell, table, *at, value=number)
            result.rows.append(InstanceRow(instance, values))
        if empty:
            self.problem(f"{empty} empty cell(s) left without a value", f"table '{name}'", "note")
        return result

    def check_width(self, row: list[str], header: list[str], where: str) -> None:
        if len(row) < len(header):
            missing = len(header) - len(row)
            self.problem(f"row has {len(row)} cells, the header {len(header)}", where, lost=missing)
        elif len(row) > len(header):
            self.problem(f"{len(row) - len(header)} cell(s) beyond the header not used", where, "note")

    # -- host, backup, soft recovery and checksum tables

    def host(self, table: _Table, run: Run) -> None:
        name = table.title or HOST_TABLE_TITLE
        for row_number, row in enumerate(table.rows[1:], start=2):
            where = f"table '{name}', row {row_number} ({row[0]!r})"
            self.check_width(row, table.rows[0][:4], where)
            cells = [*row[1:4], "", "", ""][:3]
            average, minimum, maximum = (self.number(cell, where) for cell in cells)
            for column, (statistic, cell) in enumerate(
                zip(("average", "minimum", "maximum"), cells, strict=True), 1
            ):
                self.keep(("host", row[0], statistic), cell, table, row_number - 1, column)
            run.host.append(HostCounter(row[0], average, minimum, maximum))

    def columns(
        self, table: _Table, mapping: dict[str, str], kind: str
    ) -> Iterator[tuple[str, dict[str, str]]]:
        """Each data row's first cell and its cells by field name, mapped from the header (and kept
        as printed, under ``kind``)."""
        header = table.rows[0]
        fields = [mapping.get(L.normalize_header(text)) for text in header]
        name = table.title or "statistics"
        unknown = [text for text, f in zip(header[1:], fields[1:], strict=True) if f is None]
        if unknown:
            self.problem(f"columns not recognised, not used: {unknown}", f"table '{name}'", "note")
        for row_number, row in enumerate(table.rows[1:], start=2):
            where = f"table '{name}', row {row_number} ({row[0]!r})"
            self.check_width(row, header, where)
            cells = {f: cell for f, cell in zip(fields[1:], row[1:], strict=False) if f is not None}
            if self.cells is not None:
                for column, (f, cell) in enumerate(zip(fields[1:], row[1:], strict=False), start=1):
                    if f is not None:
                        self.keep((kind, row[0].strip(), f), cell, table, row_number - 1, column)
            yield where, {"": row[0].strip(), **cells}

    def skip_summary_row(self, label: str, where: str) -> bool:
        if label.casefold() in L.SUMMARY_ROW_LABELS:
            self.problem("summary row skipped; per-server figures come from the instance rows", where, "note")
            return True
        return False

    def backup(self, table: _Table, run: Run) -> None:
        for where, cells in self.columns(table, L.BACKUP_COLUMNS, "backup"):
            if self.skip_summary_row(cells[""], where):
                continue
            elapsed_text = cells.get("elapsed", "")
            elapsed = None if _is_empty(elapsed_text) else _duration_seconds(elapsed_text)
            if elapsed is None and not _is_empty(elapsed_text):
                self.problem(f"not a duration 'HH:MM:SS': {elapsed_text!r}; cell left empty", where, lost=1)
            run.backup.append(
                BackupRow(
                    cells[""],
                    self.number(cells.get("database_size_mb", ""), where),
                    elapsed,
                    self.number(cells.get("mb_per_sec", ""), where),
                )
            )

    def recovery(self, table: _Table, run: Run) -> None:
        for where, cells in self.columns(table, L.RECOVERY_COLUMNS, "recovery"):
            if self.skip_summary_row(cells[""], where):
                continue
            run.soft_recovery.append(
                SoftRecoveryRow(
                    cells[""],
                    self.number(cells.get("logs_replayed", ""), where),
                    self.number(cells.get("elapsed_seconds", ""), where),
                )
            )

    def checksum(self, table: _Table, run: Run) -> None:
        for where, cells in self.columns(table, L.CHECKSUM_COLUMNS, "checksum"):
            length_text = cells.get("length", "").strip()
            length = L.CHECKSUM_LENGTH.match(length_text)
            mb = seconds = None
            if length is not None:
                mb, seconds = self.number(length.group("mb"), where), self.number(length.group("sec"), where)
                # One cell holds both figures; each is kept at it, so a relation names its line.
                if self.cells is not None:
                    self.keep_length(table, cells[""], length)
            elif not _is_empty(length_text):
                self.problem(f"not '<n> MB/<n> sec': {length_text!r}; cell left empty", where, lost=1)
            run.checksum.append(
                ChecksumRow(
                    cells[""],
                    seen_pages=self.number(cells.get("seen_pages", ""), where),
                    bad_pages=self.number(cells.get("bad_pages", ""), where),
                    correctable_pages=self.number(cells.get("correctable_pages", ""), where),
                    wrong_page_number_pages=self.number(cells.get("wrong_page_number_pages", ""), where),
                    file_length_mb=mb,
                    seconds_taken=seconds,
                    is_sum=cells[""].casefold() in L.SUM_ROW_LABELS,
                )
            )

    def keep_length(self, table: _Table, database: str, length: re.Match[str]) -> None:
        """Keep the two figures of a checksum row's "<n> MB/<n> sec" cell, at that cell."""
        header = [L.CHECKSUM_COLUMNS.get(L.normalize_header(text)) for text in table.rows[0]]
        if "length" not in header:
            return
        column = header.index("length")
        row = next((i for i, cells in enumerate(table.rows) if i and cells[0].strip() == database), None)
        if row is None:
            return
        for group, field_name in (("mb", "file_length_mb"), ("sec", "seconds_taken")):
            self.keep(("checksum", database, field_name), length.group(group), table, row, column)

    # -- test log

    def test_log(self, run: Run, texts: list[_Text]) -> None:
        if not texts:
            return
        # Blank lines keep each piece at its source line, so log problems point into the report.
        first_line = max(texts[0].line, 1)
        lines: list[str] = []
        for piece in texts:
            while first_line + len(lines) < piece.line:
                lines.append("")
            lines.extend(piece.raw.split("\n"))
        try:
            run.test_log = parse_test_log("\n".join(lines), self.source, first_line)
        except InputError:
            self.problem("the Test Log section holds no log entries", f"line {first_line}", "note")


def _shape(table: _Table) -> str:
    header = [L.normalize_header(cell) for cell in table.rows[0]]
    if L.INSTANCE_TABLE_FIRST_HEADER.match(header[0]):
        return "instance"
    if tuple(header[:4]) == L.HOST_HEADER:
        return "host"
    columns = set(header)
    if columns & L.BACKUP_MARKS:
        return "backup"
    if columns & L.RECOVERY_MARKS:
        return "recovery"
    if columns & L.CHECKSUM_MARKS:
        return "checksum"
    if header[0] == L.DISK_TABLE_FIRST_HEADER:
        return "disks"
    return "pairs"


# A Jetstress file a test log names ("...\\Stress_2012_4_23_8_6_56.blg has 5754 samples.").
_LOGGED_FILE = re.compile(r"([A-Za-z]+[ _]\d{4}(?:[ _]\d{1,2}){5})\.(?:blg|xml|html)\b")


def _kind_from_log(texts: list[_Text]) -> TestKind | None:
    """The test of the first Jetstress file the log names (a Stress run's log goes on to name
    the checksum run after it: the first is the report's own)."""
    for text in texts:
        for match in _LOGGED_FILE.finditer(text.text):
            kind = kind_from_name(match.group(1))
            if kind is not None:
                return kind
    return None


def _kind_from_titles(titles: list[str]) -> TestKind | None:
    for text in titles:
        label = L.normalize_label(text)
        for pattern, kind in L.REPORT_KINDS:
            if pattern.search(label):
                return kind
    return None


def _machine_from_titles(titles: list[str]) -> str:
    for text in titles:
        found = L.FROM_SERVER.search(text)
        if found:
            return found.group("name").strip()
    return ""


def _missing(source: str, section: str, expected: str) -> ReportFormatError:
    return ReportFormatError(
        source, f"required section missing: {section}", location="whole document", expected=expected
    )
