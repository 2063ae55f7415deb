"""The appendix's test reports: cut at their titles, else at their Test Summary headings, else
where their own tables say a report starts (a Test Summary row, a statistics table); each turned
into the Jetstress HTML report reader's stream of texts and tables and read by it, so that each
becomes a :class:`~esrp_report.model.Run`. A per-instance table whose heading is missing or
wrapped beyond repair gets the standard Jetstress column order when its width matches, and
Jetstress's order of tables decides which table it is when no heading says."""

from __future__ import annotations

import re
from bisect import bisect_right, insort
from itertools import accumulate

from esrp_report.ingest.documents.cells import TIMESTAMP_LINE, is_number
from esrp_report.ingest.documents.cut import CUT_MARK, is_cut
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import (
    APPENDIX_START,
    INSTANCE_SECTIONS,
    INSTANCE_TABLE_ORDER,
    KNOWN_HEADERS,
    STANDARD_COLUMNS,
)
from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress import report_html as rh
from esrp_report.model import DocLine, PublishedDocument, PublishedReport, TableKind
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
        start_at = first if appendix is not None else len(lines) // 5
        starts = _untitled_reports(lines, start_at)
        by_content = _reports_by_content(lines, start_at)
        # Some reports under a Test Summary heading, others (a backup or soft-recovery report,
        # which has no summary) found only by their tables: both kinds are reports.
        starts = _also_unheaded(lines, starts, by_content) if starts else by_content
    if not starts:
        return []
    bounds = [s for s, _t in starts] + [len(lines)]
    return [(bounds[k], bounds[k + 1], starts[k][1]) for k in range(len(starts))]


_KIND_WORDS = ("performance", "stress", "backup", "recovery", "checksum")


def _also_unheaded(
    lines: list[DocLine], headed: list[tuple[int, str]], by_content: list[tuple[int, str]]
) -> list[tuple[int, str]]:
    """The reports found under Test Summary headings, and those their own tables open where no
    heading did: a start found by content is a new report when the report before it already
    printed table rows between its start and this one (else it is that report's first table)."""
    # Linear in lines and n·log n in reports: the table rows before each line are counted once,
    # and the starts kept sorted so the one before a start is found by bisection.
    rows_before = list(accumulate((1 if line.cells else 0 for line in lines), initial=0))
    merged = sorted(headed)
    starts = [s for s, _t in merged]
    for start, title in by_content:
        at = bisect_right(starts, start)
        if at and rows_before[start] == rows_before[starts[at - 1]]:
            continue
        if bisect_right(starts, start + 2) > bisect_right(starts, start):
            continue  # the same report, its heading a line or two below where its tables begin
        insort(merged, (start, title))
        starts.insert(at, start)
    return merged


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


def _reports_by_content(lines: list[DocLine], first: int) -> list[tuple[int, str]]:
    """Reports with neither title nor Test Summary heading, found by their own tables: a report
    opens at a Test Summary row ("Overall Test Result", "Machine Name", ...) or, for a backup,
    soft-recovery or checksum report (which has none), at its statistics table's header. The
    report open goes on until one of those opens another: a summary row after the open report
    showed anything past its summary (or a label its summary already had: a second Test
    Summary), or a statistics header after anything. An instance table's header, a sizing row or
    the host counters' header after a report's test log opens one too (a report whose Test Summary
    is missing), as it does before any report. Each starts
    at the server heading just above it ("A.1 Server 1"), when there is one."""
    starts: list[tuple[int, str]] = []
    marks: list[int] = []  # each start's rows a report opens with (summary, sizing, table headers)
    opened = body = logged = False
    seen: set[str] = set()
    for i in range(first, len(lines)):
        line = lines[i]
        cells = line.cells
        if not cells:
            if opened and line.text and TIMESTAMP_LINE.match(line.text):
                body = logged = True
            continue
        label = L.normalize_label(cells[0])
        if label in L.SUMMARY_LABELS:  # "Test Description" may have no value cell
            new = not opened or body or label in seen
        elif _statistics_kind(cells) is not None:
            new = not opened or body
        elif (
            L.INSTANCE_TABLE_FIRST_HEADER.match(L.normalize_header(cells[0]))
            or label in L.SIZING_LABELS
            or tuple(L.normalize_header(c) for c in cells[:4]) == L.HOST_HEADER
        ):
            new = not opened or logged
        else:
            body = body or opened
            continue
        if new:
            start, title = i, f"untitled report (line {line.no})"
            for j in range(i - 1, max(first, i - 8) - 1, -1):
                above = lines[j]
                if not above.text:
                    continue
                if (
                    above.cells
                    and start == i
                    and label in L.SUMMARY_LABELS
                    and len(above.cells) == 2
                    and not any(is_number(c) or _INSTANCE_ROW.match(c) for c in above.cells)
                    and L.normalize_label(above.cells[0]) not in L.SUMMARY_LABELS
                ):
                    start = j  # the summary table's own header row ("Parameter | Detail")
                    continue
                if above.cells or TIMESTAMP_LINE.match(above.text):
                    break
                normalized = L.normalize_label(above.text)
                if _SERVER_HEADING.match(normalized) or (
                    len(above.text) <= 80
                    and any(word in normalized for word in _KIND_WORDS)
                    and any(p.search(normalized) for p, _k in L.REPORT_KINDS)
                ):
                    start, title = j, above.text  # "A.1 Server 1", "Appendix C – EXMBX01 backup test"
                    break
            if starts and start <= starts[-1][0]:
                start = i
            starts.append((start, title))
            marks.append(0)
            opened, body, logged = True, False, False
            seen.clear()
        marks[-1] += 1
        if label in L.SUMMARY_LABELS:
            seen.add(label)
        else:
            body = True
    # One report label alone ("Jetstress Version" in a configuration table) is no report.
    return [start for start, count in zip(starts, marks, strict=True) if count >= _REPORT_MARKS]


# The rows of its own a report found by content must show: a summary block has several, and so
# has any report past its first table (a statistics table is followed by the host counters).
_REPORT_MARKS = 2


def _statistics_kind(cells: list[str]) -> str | None:
    """ "backup", "recovery" or "checksum" for a statistics table's header row, else None."""
    first = L.normalize_header(cells[0])
    others = {L.normalize_header(c) for c in cells[1:]}
    if first == "database instance":
        if others & (set(L.BACKUP_COLUMNS) - {first}):
            return "backup"
        if others & (set(L.RECOVERY_COLUMNS) - {first}):
            return "recovery"
    if first == "database" and others & (set(L.CHECKSUM_COLUMNS) - {first}):
        return "checksum"
    return None


UNMODELLED = (
    "a table of the report that no relation reads (per-disk, error or report-against-counter-log figures): "
    "not modelled"
)


def name_machines(doc: PublishedDocument) -> None:
    """A report that names no machine (a backup or soft-recovery report has no Test Summary) is
    the machine its title or heading names, when that is one of the machines the document's other
    reports name ("Appendix C – EXMBX01 database backup test"); a note says so."""
    known = {r.run.machine.casefold(): r.run.machine for r in doc.reports if r.run and r.run.machine}
    if not known:
        return
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, known)) + r")(?![\w-])", re.IGNORECASE)
    for report in doc.reports:
        if report.run is None or report.run.machine:
            continue
        named = {known[m.group(1).casefold()] for m in pattern.finditer(report.title)}
        if len(named) == 1:
            report.run.machine = named.pop()
            problem(
                doc,
                f"the {report.run.kind.value} report names no machine; its heading names "
                f"{report.run.machine}, a machine of the other reports: taken as its",
                f"line {report.first_line}",
                severity="note",
            )


def read_report(doc: PublishedDocument, start: int, end: int, title: str) -> None:
    """Read the report of lines [start, end) into ``doc.reports``; one that cannot be read is a problem."""
    lines = doc.lines
    notes: list[tuple[str, int]] = []
    items = report_items(lines, start, end, title, notes)
    for message, line in notes:
        problem(doc, message, f"line {line}", severity="note")
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


def report_items(
    lines: list[DocLine], start: int, end: int, title: str, notes: list[tuple[str, int]] | None = None
) -> list[rh._Text | rh._Table]:
    """The report's lines as the HTML report reader's stream of texts and tables. Where the
    report prints no section headings, its test log is known by its timestamped lines and each
    per-instance table is placed by its header and the order Jetstress prints them in; a table
    whose header was lost is said so in ``notes`` (message, line number)."""
    items: list[rh._Text | rh._Table] = []
    section: str | None = None
    heading_text: str | None = None
    rows: list[list[str]] = []
    numbers: list[int] = []
    pending_header: list[DocLine] = []
    tables = 0
    # Without section headings: the report's kind so far (a statistics table says backup or
    # recovery), the instance tables already placed, the kind of the table being built.
    report_kind = "performance"
    taken: list[str] = []
    table_kind: str | None = None
    texts_since_table: list[DocLine] = []

    def emit() -> None:
        nonlocal tables, table_kind
        if rows:
            tables += 1
            kind = table_kind or section
            if kind not in INSTANCE_SECTIONS and L.INSTANCE_TABLE_FIRST_HEADER.match(
                L.normalize_header(rows[0][0])
            ):
                kind = _placed(rows[0], report_kind, taken)
                if report_kind == "backup" and kind is not None:
                    note(_BACKUP_WIDE.format(kind=kind), numbers[0])
            if kind in _ORDERED_KINDS:
                taken.append(kind)
            items.append(rh._Table(list(rows), list(rows), list(numbers), kind, heading_text, tables))
            texts_since_table.clear()
        rows.clear()
        numbers.clear()
        table_kind = None

    def note(message: str, line: int) -> None:
        if notes is not None:
            notes.append((message, line))

    items.extend(rh._Text(part, part, lines[start].no, None, False) for part in title.split(" / "))
    for line in lines[start:end]:
        if not line.text:
            continue
        found = rh._section_of(line.text)
        if found is None and section != "log" and not line.cells and TIMESTAMP_LINE.match(line.text):
            emit()  # a test log with no "Test log" heading: its timestamped lines say what it is
            section, heading_text = "log", None
        if section == "log" and found is None and not line.heading:
            items.append(rh._Text(line.text, line.raw.strip(), line.no, "log", False))
            continue
        if found is not None:
            emit()
            section, heading_text = found, line.text
            if found in ("backup", "recovery"):
                report_kind = found
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
        if rows and cells and (_is_table_header(cells) or _is_disk_header(cells)):
            emit()  # a new table starts (its heading may come after it, facts §9)
        if cells and section is None and _is_table_header(cells):
            statistics = _statistics_kind(cells)
            if statistics in ("backup", "recovery"):
                report_kind = statistics
        if rows and cells and section is None and _is_pair(cells) and not _is_pair(rows[-1]):
            emit()  # "Thread Count | 10" after a statistics table: the parameters table
        if (
            rows
            and cells
            and section is None
            and _is_figure_row(cells)
            and (len(cells) != len(rows[-1]) or cells[0] in {row[0] for row in rows})
        ):
            emit()  # instance rows of another width, or an instance again: the next table
        if cells and len(cells) >= 2 and not TIMESTAMP_LINE.match(line.text):
            if not rows and section in INSTANCE_SECTIONS and _looks_like_instance_row(cells):
                if not rows:
                    rows.append(_canonical_header(section, len(cells)))
                    numbers.append(pending_header[0].no if pending_header else line.no)
                pending_header.clear()
            elif not rows and section is None and _is_figure_row(cells):
                header, first = _header_above(texts_since_table, len(cells))
                if header is not None:
                    del items[len(items) - (len(cells)) :]  # the header's cells, each read as a text
                    table_kind = _placed(header, report_kind, taken)
                    note(
                        f"the instance table's header row was printed one cell a line (lines "
                        f"{first}-{first + len(cells) - 1}); joined into one row of {len(cells)} cells",
                        first,
                    )
                else:
                    table_kind = _placed(None, report_kind, taken, width=len(cells) - 1)
                    if table_kind is None:
                        note(
                            f"rows of an instance and {len(cells) - 1} figures with no header row: no "
                            f"table of that width is left in a {report_kind} report's order; not read",
                            line.no,
                        )
                    else:
                        header = _canonical_header(table_kind, len(cells))
                        if report_kind == "backup":
                            note(_BACKUP_WIDE.format(kind=table_kind), line.no)
                        note(
                            f"an instance table with no header row: read as Jetstress's "
                            f"{table_kind.replace('_', ' ')} table, by its width ({len(cells) - 1} figures) "
                            f"and its place among the {report_kind} report's tables",
                            line.no,
                        )
                    first = line.no
                if header is not None:
                    rows.append(header)
                    numbers.append(first)
            rows.append(list(cells))  # a copy: a wrapped path is joined onto the row, not the line
            numbers.append(line.no)
            continue
        if section in INSTANCE_SECTIONS and not rows and not line.heading:
            emit()
            pending_header.append(line)
            continue
        emit()
        items.append(rh._Text(line.text, line.raw.strip(), line.no, section, False))
        if not cells:
            texts_since_table.append(line)
    emit()
    # A wrapped multi-line heading ahead of an instance table (our PDF listings, OCR) is dropped
    # by the loop above; the rows then get the standard Jetstress column order by width.
    return items


# A backup report's one wide table is headed "Total I/O performance" in 000 and "Transactional I/O
# Performance" in 001 (each prints only the one): without its heading, the order's choice is said.
_BACKUP_WIDE = (
    "a backup report's instance table with no heading: taken as the {kind} table by Jetstress's order, "
    "though some documents head this table Transactional and others Total"
)

# The per-instance tables a report's order places (INSTANCE_TABLE_ORDER names them).
_ORDERED_KINDS = frozenset(kind.value for kind in TableKind)


def _width(kind: str) -> int:
    return len(STANDARD_COLUMNS[kind] if kind in STANDARD_COLUMNS else STANDARD_COLUMNS["wide"])


def _placed(header: list[str] | None, report_kind: str, taken: list[str], width: int = 0) -> str | None:
    """Which of the report's instance tables one with no section heading is: the first of its
    width not yet taken in Jetstress's order for the report's kind, unless its header names a
    narrower choice (a Log Replication header after no Background Maintenance table). A Log
    Replication header may repeat the maintenance columns (facts §9): the order then decides."""
    hint = None
    if header is not None:
        width = len(header) - 1
        names = {L.normalize_header(h) for h in header[1:]}
        keys = {L.INSTANCE_COLUMNS.get(name) for name in names}
        if not keys & L.WIDE_TABLE_KEYS:
            hint = "log_replication" if "i/o log reads/sec" in names else "background_maintenance"
    order = INSTANCE_TABLE_ORDER[report_kind]
    candidates = [kind for kind in order if kind not in taken and _width(kind) == width]
    if hint in candidates:
        return hint
    return candidates[0] if candidates else None


def _header_above(texts: list[DocLine], width: int) -> tuple[list[str] | None, int]:
    """A header row printed one cell a line just above a table's first row (a PDF copy): the
    last ``width`` text lines, when they are the instance column and known columns."""
    cells = texts[-width:]
    if len(cells) != width or not L.INSTANCE_TABLE_FIRST_HEADER.match(L.normalize_header(cells[0].text)):
        return None, 0
    if not all(L.normalize_header(c.text) in KNOWN_HEADERS for c in cells[1:]):
        return None, 0
    return [c.text for c in cells], cells[0].no


_PAIR_LABELS = frozenset({*L.SUMMARY_LABELS, *L.SIZING_LABELS, *L.PARAMETER_LABELS})


def _is_pair(cells: list[str]) -> bool:
    """A row of the report's label/value tables (summary, sizing, parameters)."""
    return L.normalize_label(cells[0]) in _PAIR_LABELS


def _is_disk_header(cells: list[str]) -> bool:
    """The per-disk table's header ("LogicalDisk | Avg. Disk sec/Read | ..."): a table of its own
    even where no heading comes before it."""
    return L.normalize_header(cells[0]) == L.DISK_TABLE_FIRST_HEADER and len(cells) >= 2


def _is_figure_row(cells: list[str]) -> bool:
    """An instance's row of figures only (not a database configuration row of paths)."""
    return (
        len(cells) >= 3
        and bool(_INSTANCE_ROW.match(cells[0]))
        and all(is_number(c) or is_cut(c) or (":" in c and c[:1].isdigit()) for c in cells[1:])
    )


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
