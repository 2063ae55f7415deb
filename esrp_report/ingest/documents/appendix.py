"""The appendix's test reports: cut at their titles, each turned into the Jetstress HTML report
reader's stream of texts and tables and read by it, so that each becomes a
:class:`~esrp_report.model.Run`. A per-instance table whose heading is missing or wrapped beyond
repair gets the standard Jetstress column order when its width matches."""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import TIMESTAMP_LINE, is_number
from esrp_report.ingest.documents.cut import CUT_MARK, is_cut
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import (
    APPENDIX_START,
    INSTANCE_SECTIONS,
    KNOWN_HEADERS,
    STANDARD_COLUMNS,
)
from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress import report_html as rh
from esrp_report.model import DocLine, PublishedDocument, PublishedReport
from esrp_report.model.errors import ReportFormatError, UnsupportedFormatError

_DATABASE_PATH = re.compile(r"^database:", re.IGNORECASE)
_INSTANCE_ROW = re.compile(r"^instance\d*\.\d+$", re.IGNORECASE)
# A section heading naming one server: "A.1 Server 1", "Server 2 (JS17)".
_SERVER_HEADING = re.compile(r"^(?:[a-z](?:\.\d+)*\s+)?(?:server|host)\s+\S+(?:\s+\([^)]*\))?$")


def report_segments(lines: list[DocLine]) -> list[tuple[int, int, str]]:
    """(first line index, end index, title) of each test report in the appendix."""
    starts: list[tuple[int, str]] = []
    appendix = next(
        (i for i, line in enumerate(lines) if line.heading and APPENDIX_START.match(line.text)),
        None,
    )
    if appendix is None:
        appendix = next(
            (
                i
                for i, line in enumerate(lines)
                if APPENDIX_START.match(line.text) and len(line.text) < 60 and i > len(lines) // 5
            ),
            None,
        )
    first = appendix or 0
    tables_since = True
    for i in range(first, len(lines)):
        line = lines[i]
        if line.cells is not None:
            tables_since = tables_since or bool(line.cells)
            continue
        label = L.normalize_label(line.text)
        if not label or TIMESTAMP_LINE.match(line.text) or len(label) > 120:
            continue
        # Every title pattern needs one of these words: most lines are ruled out by them
        # before the dozen regexes (which took a fifth of a junk document's reading).
        is_title = ("report" in label or "jetstress" in label or "): " in label) and (
            any(p.search(label) for p, _k in L.REPORT_KINDS) or bool(L.REPORT_TITLE.search(label))
        )
        if is_title and tables_since:
            starts.append((i, line.text))
            tables_since = False
        elif is_title and starts:
            starts[-1] = (starts[-1][0], starts[-1][1] + " / " + line.text)
    if not starts:
        starts = _untitled_reports(lines, first if appendix is not None else len(lines) // 5)
    if not starts:
        return []
    bounds = [s for s, _t in starts] + [len(lines)]
    return [(bounds[k], bounds[k + 1], starts[k][1]) for k in range(len(starts))]


_KIND_WORDS = ("performance", "stress", "backup", "recovery", "checksum")


def _untitled_reports(lines: list[DocLine], first: int) -> list[tuple[int, str]]:
    """Reports without a title line (ESRP 4.0 appendices: "A Performance testing", "A.1 Server 1",
    "Table 9 Test Summary"): each begins at the server's section heading before its Test Summary
    (or at the Test Summary), titled by the nearest heading above that names a test and that
    server heading."""
    starts: list[tuple[int, str]] = []
    test_heading: str | None = None
    for i in range(first, len(lines)):
        line = lines[i]
        if line.cells or not line.text or len(line.text) > 80:
            continue
        low = line.text.casefold()
        # Every kind pattern names its test, and a Test Summary says so: most lines are ruled
        # out by these words before a regex runs.
        if any(word in low for word in _KIND_WORDS) and any(
            p.search(L.normalize_label(line.text)) for p, _k in L.REPORT_KINDS
        ):
            test_heading = line.text
            continue
        if "summary" not in low or rh._section_of(line.text) != "summary":
            continue
        start, server = i, None
        for j in range(i - 1, max(first, i - 8) - 1, -1):
            if lines[j].cells:
                break
            if _SERVER_HEADING.match(L.normalize_label(lines[j].text)):
                start, server = j, lines[j].text
                break
        if starts and start <= starts[-1][0]:
            continue
        starts.append((start, " / ".join(t for t in (test_heading, server) if t) or line.text))
    return starts


UNMODELLED = (
    "a table of the report that no relation reads (per-disk, error or report-against-counter-log figures): "
    "not modelled"
)


def read_report(doc: PublishedDocument, start: int, end: int, title: str) -> None:
    """Read the report of lines [start, end) into ``doc.reports``; one that cannot be read is a problem."""
    lines = doc.lines
    items = report_items(lines, start, end, title)
    source = f"{doc.source}, lines {lines[start].no}-{lines[end - 1].no}"
    report = PublishedReport(title=title, first_line=lines[start].no, last_line=lines[end - 1].no)
    try:
        reader = rh._Reader(source, cells=report.cells)
        report.run = reader.read(items)
        for line in sorted(set(reader.unmodelled)):
            problem(doc, UNMODELLED, f"line {line}", severity="note")
        # Cells the reader could not use (OCR damage, "18.47l") are left out: say so (a figure cut
        # at its row's end is already named, with why, by cut.py).
        doc.problems.extend(
            p
            for p in report.run.problems
            if p.lost and p.severity != "note" and f"{CUT_MARK}'" not in p.message
        )
    except (ReportFormatError, UnsupportedFormatError) as exc:
        report.problem = exc.detail
        problem(doc, f"test report '{title}' could not be read: {exc.detail}", f"line {lines[start].no}")
    doc.reports.append(report)


def report_items(lines: list[DocLine], start: int, end: int, title: str) -> list[rh._Text | rh._Table]:
    """The report's lines as the HTML report reader's stream of texts and tables."""
    items: list[rh._Text | rh._Table] = []
    section: str | None = None
    heading_text: str | None = None
    rows: list[list[str]] = []
    numbers: list[int] = []
    pending_header: list[DocLine] = []
    tables = 0

    def emit() -> None:
        nonlocal tables
        if rows:
            tables += 1
            items.append(rh._Table(list(rows), list(rows), list(numbers), section, heading_text, tables))
        rows.clear()
        numbers.clear()

    items.extend(rh._Text(part, part, lines[start].no, None, False) for part in title.split(" / "))
    for line in lines[start:end]:
        if not line.text:
            continue
        found = rh._section_of(line.text)
        if section == "log" and found is None and not line.heading:
            items.append(rh._Text(line.text, line.raw.strip(), line.no, "log", False))
            continue
        if found is not None:
            emit()
            section, heading_text = found, line.text
            items.append(rh._Text(line.text, line.text, line.no, section, True))
            pending_header.clear()
            continue
        cells = line.cells
        if (
            cells
            and section in INSTANCE_SECTIONS
            and not rows
            and not _looks_like_instance_row(cells)
            and not _is_table_header(cells)
        ):
            pending_header.append(line)
            continue
        if rows and _DATABASE_PATH.match(line.text) and "database:" not in rows[-1][-1].casefold():
            rows[-1][-1] += " " + line.text  # "Log path: G:\log" / "Database: E:\db\x.edb" on two lines
            continue
        if rows and cells and _is_table_header(cells):
            emit()  # a new table starts (its heading may come after it, facts §9)
        if cells and len(cells) >= 2 and not TIMESTAMP_LINE.match(line.text):
            if not rows and section in INSTANCE_SECTIONS and _looks_like_instance_row(cells):
                if not rows:
                    rows.append(_canonical_header(section, len(cells)))
                    numbers.append(pending_header[0].no if pending_header else line.no)
                pending_header.clear()
            rows.append(list(cells))  # a copy: a wrapped path is joined onto the row, not the line
            numbers.append(line.no)
            continue
        if section in INSTANCE_SECTIONS and not rows and not line.heading:
            emit()
            pending_header.append(line)
            continue
        emit()
        items.append(rh._Text(line.text, line.raw.strip(), line.no, section, False))
    emit()
    # A wrapped multi-line heading ahead of an instance table (our PDF listings, OCR) is dropped
    # by the loop above; the rows then get the standard Jetstress column order by width.
    return items


def _canonical_header(section: str | None, width: int) -> list[str]:
    if section in ("backup", "recovery"):
        return ["Database Instance", *STANDARD_COLUMNS[section]][:width]
    columns = STANDARD_COLUMNS.get(section or "", STANDARD_COLUMNS["wide"])
    if width - 1 == 12:
        columns = STANDARD_COLUMNS["wide"]
    return ["MSExchange Database ==> Instances", *columns][:width]


def _is_table_header(cells: list[str]) -> bool:
    """A whole header row (not a fragment of a wrapped one): most of its cells are known columns."""
    first = L.normalize_header(cells[0])
    if not (
        L.INSTANCE_TABLE_FIRST_HEADER.match(first) or first in ("database instance", "database", "counter")
    ):
        return False
    known = sum(1 for c in cells[1:] if L.normalize_header(c) in KNOWN_HEADERS)
    return len(cells) >= 2 and known * 2 >= len(cells) - 1


def _looks_like_instance_row(cells: list[str]) -> bool:
    return bool(_INSTANCE_ROW.match(cells[0])) and all(
        is_number(c) or ":" in c or is_cut(c) for c in cells[1:]
    )
