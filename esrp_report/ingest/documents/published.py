"""Published ESRP documents as users have them: PDF, HTML, or text/Markdown pasted from a PDF.

The document is reduced to numbered lines, each either prose or a table row (cells split on
tabs, Markdown pipes, runs of spaces, or — for a PDF's single-spaced rows — a label followed by
figures). Conversion damage is tolerated: HTML remnants (``<b>``, ``<br>``), Markdown emphasis,
thousands separators, labels wrapped over lines, repeated page headers and footers.

Structure is then rebuilt from those lines (:func:`read_document`): the per-server and aggregate
summary tables, backup and replay figures, label/value facts (simulated configuration, storage
tables), trend tables of the form ``percentage [absolute]``, worked formulas, and the appendix's
test reports, which go through the same reader as Jetstress's own HTML reports so that they
become :class:`~esrp_report.model.Run` objects. What cannot be read is recorded as a problem,
never guessed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

from esrp_report import model as m
from esrp_report.ingest.guards import require_regular_file
from esrp_report.ingest.jetstress import labels as L
from esrp_report.ingest.jetstress import report_html as rh
from esrp_report.ingest.text import decode_bytes
from esrp_report.model import (
    DocLine,
    DocNumber,
    Formula,
    PublishedDocument,
    PublishedReport,
    SummaryRow,
    SummaryTable,
    TrendCell,
    TrendTable,
)
from esrp_report.model.errors import InputError, ReportFormatError, UnsupportedFormatError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
# A PDF's pages are extracted one by one: a 5,000-page file of anything would take minutes before
# a line is read. The largest ESRP documents seen run to about 1,200 pages (ten servers' appendix).
MAX_PDF_PAGES = 3000
# The text extracted from a PDF is held to the same bound as a text file's bytes.
MAX_PDF_TEXT_CHARS = MAX_DOCUMENT_BYTES
# Table rows and labels of ESRP documents are at most about 1,200 characters (a wide appendix
# row); a longer line is prose, or no document at all (a file without newlines). Splitting it into
# cells would build one string per word of it, all of them useless.
MAX_ROW_CHARS = 8192
# Lines are cut from a text this many characters at a time (at a newline), so that the whole
# list of raw lines never exists beside the cleaned ones.
_CHUNK_CHARS = 1 << 20
_TAG = re.compile(r"</?(?:b|i|u|em|strong|span|font|sup|sub|a|p|div|ul|li|ol|code)\b[^>]*>", re.IGNORECASE)
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_PAGE_FOOTER = re.compile(r"\bpage \d+ of \d+\b", re.IGNORECASE)
_PAIR_LABELS = frozenset({*L.SUMMARY_LABELS, *L.SIZING_LABELS, *L.PARAMETER_LABELS, "host server type"})
_PAIR_FIRST_WORDS = frozenset(L.normalize_label(label).split(" ")[0] for label in _PAIR_LABELS)
_CLOCK = re.compile(r"\d+:\d{2}:\d{2}")
_TIMESTAMP_LINE = re.compile(r"^\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2} [AP]M -- ")
# A target cell ahead of the figures: "< 20 msec", "<20 msec**", "N/A", "1400".
_TARGET_PREFIX = re.compile(r"^(?:[<>≤≥]=?\s*\d+(?:\.\d+)?\s*(?:msec|ms)?\s*\**|n/a)\s*", re.IGNORECASE)
_SERVER_TOKEN = re.compile(r"\b(Server)\s+(\d+)\b|\bHost\s+(\S+)", re.IGNORECASE)
# Compiled once: every line of a document goes through these (re's own cache costs a lookup each).
_MARKDOWN = re.compile(r"^\s*(#{1,6} |\|.*\|\s*$)", re.M)
_HEADING = re.compile(r"^(#{1,6})\s+")
_RULE_ROW = re.compile(r"\|?[\s:|-]+\|?")
_SPACES = re.compile(r"\s{2,}")
_WHITESPACE = re.compile(r"\s+")
_LEADING_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.lstrip() strips
_INSTANCE_LABEL = re.compile(r"instance\d*\.\d+", re.IGNORECASE)
_UNIT = re.compile(r"\((?:msec|ms|sec)\)")
_SLASH = re.compile(r"\s*/\s*")
_STAR_COLON = re.compile(r"[*:]")
_CONVENTION = re.compile(r"ESRP\s*[-–]?\s*Storage\s+Version\s+(\d\.\d)", re.IGNORECASE)
_DATABASE_PATH = re.compile(r"^database:", re.IGNORECASE)
_BULLET = re.compile(r"^[-•*]\s+")
_LABEL_TARGET = re.compile(r"^(.*?)\s*((?:[<>]=?\s*\d+\s*msec\**)|n/a)$", re.IGNORECASE)
# "39% [360 IOPS]". The absolute figure is digits and commas, then a fraction or a last digit:
# written "[\d,]*\.?\d+\s*", a long run of digits could be split between the three in every way,
# and the unit tried after each split (cubic: minutes for a cell of a few thousand digits).
_TREND_CELL = re.compile(r"^(?P<pct>\d+(?:\.\d+)?)%\s*\[(?P<abs>[\d,]*(?:\.\d+|\d))(?P<unit>[^\]]*)\]$")
MAX_TREND_CELL_CHARS = 80  # "39% [360 IOPS]": longer cells are not trend cells, and not matched
_TABLE_TITLE = re.compile(r"^(?:\*\*)?(Table \d+)\b")
_SECTION_NUMBER = re.compile(r"^(\d+\.\d+)\s")
_TABLE_START = re.compile(r"^Table \d+")
_SERIES_LABEL = re.compile(r"(?:series\s*)?(#\d+)", re.IGNORECASE)
_COUNT = re.compile(r"\d[\d,]*")
_USERS_HEAD = re.compile(r"^([\d,]+) users")
_COUNT_CELL = re.compile(r"[\d,]+")
_INSTANCE_ROW = re.compile(r"^instance\d*\.\d+$", re.IGNORECASE)
_HEADER_WORDS = re.compile(r"database i/o|target values?|values|for \w+ servers|\*", re.IGNORECASE)


# --- loading -----------------------------------------------------------------------------------


def read_document(path: str | Path) -> PublishedDocument:
    """Read a published document (PDF, HTML, text or Markdown) and rebuild its structure."""
    path = Path(path)
    # The bytes are not kept in this frame: parse_document lets them go once they are decoded.
    return parse_document(_document_bytes(path), str(path))


def _document_bytes(path: Path) -> bytes:
    size = require_regular_file(path).st_size  # a FIFO or /dev/zero is refused, never opened
    try:
        if size > MAX_DOCUMENT_BYTES:
            raise InputError(path, f"the document is {size:,} bytes; at most {MAX_DOCUMENT_BYTES:,} are read")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc


def parse_document(data: bytes, source: str) -> PublishedDocument:
    """Rebuild the structure of a published document from its bytes (PDF, HTML, Markdown or text, told by
    content); ``source`` names it in problems."""
    lines, kind = _document_lines(data, source)
    del data  # the file's bytes and decoded text are not held while the structure is rebuilt
    doc = PublishedDocument(source=source, format=kind)
    doc.lines = lines
    _Structure(doc).build()
    return doc


def _document_lines(data: bytes, source: str) -> tuple[list[DocLine], str]:
    """The cleaned lines and the format. A text's lines are cut and cleaned one at a time, so the
    list of raw lines never exists beside the cleaned ones."""
    start = _LEADING_SPACE.match(data)
    at = start.end() if start else 0
    if data[at : at + 5] == b"%PDF-":  # not data.lstrip(): a copy of the whole file
        return [_clean(line) for line in _pdf_lines(data, source)], "pdf"
    text, _encoding = decode_bytes(data, source)
    head = text[:4096].casefold()
    if any(mark in head for mark in ("<html", "<body", "<!doctype html")):
        return [_clean(line) for line in _html_lines(text, source)], "html"
    kind = "markdown" if _MARKDOWN.search(text[:200_000]) else "text"
    return [_clean(DocLine(no, raw)) for no, raw in enumerate(_text_lines(text), start=1)], kind


def _text_lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, a chunk at a time: the chunks end just after a newline, where
    splitlines would cut too, so the lines (and their numbers) are the same."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start + _CHUNK_CHARS) if size - start > _CHUNK_CHARS else -1
        end = size if end < 0 else end + 1
        yield from text[start:end].splitlines()
        start = end


def _pdf_lines(data: bytes, source: str) -> list[DocLine]:
    # PDFium (through pypdfium2) extracts a 100-page document in about a second; pure-Python
    # extractors take ten to twenty times longer (benchmarks/audit_document.py).
    import pypdfium2 as pdfium  # noqa: PLC0415 - only PDF input needs it

    try:
        document = pdfium.PdfDocument(data)
        try:
            count = len(document)
            if count > MAX_PDF_PAGES:
                # Refused before any page is extracted: the page count is in the file's page tree.
                raise InputError(
                    source, f"the PDF has {count:,} pages; at most {MAX_PDF_PAGES:,} are read (MAX_PDF_PAGES)"
                )
            pages = []
            extracted = 0
            for index in range(count):
                page = document[index]
                textpage = page.get_textpage()
                pages.append(textpage.get_text_bounded() or "")
                textpage.close()
                page.close()
                extracted += len(pages[-1])
                if extracted > MAX_PDF_TEXT_CHARS:
                    raise InputError(
                        source,
                        f"the PDF's text passes {MAX_PDF_TEXT_CHARS:,} characters by page {index + 1:,}; "
                        "no more is read",
                    )
        finally:
            document.close()
    except (pdfium.PdfiumError, ValueError, OSError) as exc:
        raise UnsupportedFormatError(
            source, f"the PDF cannot be read: {exc}", location="whole file"
        ) from None
    # Running headers and footers repeat at the top or bottom of most pages: they would break
    # tables split over pages. Only the first and last lines of a page are candidates.
    edges = [
        {line.strip() for line in (text.splitlines()[:2] + text.splitlines()[-3:]) if line.strip()}
        for text in pages
    ]
    counts = Counter(line for page_edges in edges for line in page_edges)
    repeated = {line for line, n in counts.items() if len(pages) >= 4 and n >= max(3, len(pages) // 3)}
    lines: list[DocLine] = []
    number = 0
    for page_number, text in enumerate(pages, start=1):
        page_lines = text.splitlines()
        for index, raw in enumerate(page_lines):
            number += 1
            stripped = raw.strip()
            at_edge = index < 2 or index >= len(page_lines) - 3
            if (at_edge and stripped in repeated) or _PAGE_FOOTER.search(stripped) or stripped == "•":
                continue
            if (
                lines
                and re.fullmatch(r"\d{1,3}", stripped)
                and re.search(r"\b(?:Server|Host)$", lines[-1].raw)
            ):
                lines[-1] = DocLine(lines[-1].no, f"{lines[-1].raw} {stripped}", page=lines[-1].page)
                continue  # "Server\n10": a header cell wrapped in a narrow column
            lines.append(DocLine(number, raw.rstrip(), page=page_number))
    return lines


def _html_lines(text: str, source: str) -> list[DocLine]:
    try:
        root = rh._parse_html(text, source)
        items = rh._Linearizer.run(root)
    except (UnsupportedFormatError, RecursionError) as exc:
        raise UnsupportedFormatError(
            source, f"the HTML cannot be read: {exc}", location="whole file"
        ) from None
    lines: list[DocLine] = []
    for item in items:
        if isinstance(item, rh._Text):
            lines.extend(DocLine(item.line, part) for part in item.raw.splitlines() if part.strip())
        else:
            lines.extend(DocLine(no, "\t".join(row)) for row, no in zip(item.rows, item.lines, strict=True))
    return lines


# --- one line: markup away, cells split ---------------------------------------------------------


def _strip_markup(text: str) -> str:
    if "<" in text:  # tags and <br> (most lines have neither: no regex run for them)
        text = _BR.sub(" ", text)
        text = _TAG.sub("", text)
    if "[" in text:
        text = _MD_LINK.sub(r"\1", text)
    return text.replace("\\*", "*").replace("\\_", "_").replace("**", "").replace("\u00a0", " ")


def _clean(line: DocLine) -> DocLine:
    raw = line.raw
    if len(raw) > MAX_ROW_CHARS:
        return _prose(line)
    text = raw.rstrip()
    heading = 0
    # The first character rules out most lines before a regex is run (once per line of 50 MB).
    match = _HEADING.match(text) if text[:1] == "#" else None
    if match:
        heading = len(match.group(1))
        text = text[match.end() :]
    cells: list[str] | None = None
    stripped = text.strip()
    if stripped.startswith("|") and stripped.count("|") >= 2:
        if _RULE_ROW.fullmatch(stripped):
            return DocLine(line.no, raw, page=line.page, text="", cells=None, heading=0)
        cells = [_strip_markup(c).strip() for c in stripped.strip("|").split("|")]
    elif "\t" in text:
        cells = [_strip_markup(c).strip() for c in text.split("\t")]
    text = (
        " ".join(_strip_markup(text).replace("|", " ").split())
        if cells is None
        else " ".join(c for c in cells if c)
    )
    # isdigit() is true of every character \d matches (and of a few more): only a prefilter.
    stamped = text[:1].isdigit() and _TIMESTAMP_LINE.match(text) is not None
    if cells is None and not heading and not stamped:
        spaced = [c.strip() for c in _SPACES.split(_strip_markup(raw).strip()) if c.strip()]
        figures = _label_and_figures(text)
        # A listing's columns may touch ("41617.708 32145.823"): figures split on any space.
        cells = figures if figures and len(figures) > len(spaced) else spaced if len(spaced) >= 2 else figures
    if cells is None and not heading and not stamped:
        cells = _known_label_and_value(text)
    if cells is not None:
        cells = [" ".join(c.split()) for c in cells]
        while cells and not cells[-1]:
            cells.pop()
        if len(cells) < 2 and not (cells and any(c for c in cells)):
            cells = None
    if text == raw:
        text = raw  # one string for both, not two: most lines of a text need no cleaning
    return DocLine(line.no, raw, page=line.page, text=text, cells=cells, heading=heading)


def _prose(line: DocLine) -> DocLine:
    """A line too long to be a table row or a label: prose, never split into cells, and only its
    first MAX_ROW_CHARS characters looked at. Every later pass works on ``text``, some of them with
    a split or a copy per line: bounded here, their cost stays linear in the document whatever
    its line lengths (a 50 MB file with no newline is one line)."""
    head = line.raw[: 8 * MAX_ROW_CHARS]  # enough for MAX_ROW_CHARS once markup and spaces go
    text = _WHITESPACE.sub(" ", _strip_markup(head).replace("|", " ")).strip()[:MAX_ROW_CHARS]
    return DocLine(line.no, line.raw, page=line.page, text=text, cells=None, heading=0)


def _known_label_and_value(text: str) -> list[str] | None:
    """'Machine Name EMAIL2' -> ['Machine Name', 'EMAIL2']: pairs whose separator was lost (a
    PDF's text, a paste), split after a label the report reader knows."""
    words = text.split(" ")
    if len(words) < 2:
        return None
    if _INSTANCE_LABEL.fullmatch(words[0]) and ":" in text:
        return [words[0], " ".join(words[1:])]  # database configuration
    if words[0].strip(" :").casefold() not in _PAIR_FIRST_WORDS:
        return None  # no known label starts so: the eight joins and normalisations below are spared
    for count in range(min(len(words) - 1, 8), 0, -1):
        if L.normalize_label(" ".join(words[:count])) in _PAIR_LABELS:
            return [" ".join(words[:count]), " ".join(words[count:])]
    return None


def _label_and_figures(text: str) -> list[str] | None:
    """ "Database reads/sec N/A 877.436 891.734" -> label, then each figure: a PDF's row."""
    tokens = text.split(" ")
    values: list[str] = []  # from the end: reversed below (inserting at the front is quadratic)
    while tokens and (
        is_number(tokens[-1])
        or _CLOCK.fullmatch(tokens[-1])
        or tokens[-1].casefold() in ("n/a", "pass", "fail")
    ):
        values.append(tokens.pop())
    values.reverse()
    if not values:
        return None
    label = " ".join(tokens).rstrip(" -–:")
    return [label, *values]


def is_number(text: str) -> bool:
    """Is the text a printed number ("14,422.400", "39%")?"""
    return DocNumber.parse(text.strip()) is not None


def number(text: str) -> DocNumber | None:
    """A printed number with its precision (decimals), or None."""
    return DocNumber.parse(text)


def normalize(label: str) -> str:
    """A label as the tables are looked up by: case, spacing, units in parentheses, "*" and ":" do not
    matter."""
    label = L.normalize_label(label)
    label = _UNIT.sub("", label)
    label = _SLASH.sub("/", label)
    return " ".join(_STAR_COLON.sub(" ", label).split())


def fuzzy_key(label: str, table: dict[str, str], cutoff: float = 0.86) -> str | None:
    """The key of the closest known label; OCR damage ("Achieved transactlonal") still matches."""
    text = normalize(label)
    if text in table:
        return table[text]
    return _labels_of(table).closest(text, cutoff)


# The tables asked about are module constants: found by identity, not by hashing a tuple of
# their thirty items on every call (once per table row of a document).
_BY_TABLE: dict[int, tuple[dict[str, str], _KnownLabels]] = {}


def _labels_of(table: dict[str, str]) -> _KnownLabels:
    entry = _BY_TABLE.get(id(table))
    if entry is None or entry[0] is not table:  # kept alive by the entry: its id is not reused
        if len(_BY_TABLE) >= 32:
            _BY_TABLE.clear()
        entry = (table, _known_labels(tuple(table.items())))
        _BY_TABLE[id(table)] = entry
    return entry[1]


class _KnownLabels:
    """One table's labels, with their lengths and letter counts worked out once, and the answers
    already given (a document repeats its labels; so do a fuzzer's mutants of one document)."""

    MAX_ANSWERS = 8192  # forgotten all at once past this
    MAX_TEXT = 256  # longer texts are not remembered (the lengths alone rule them out at once)

    def __init__(self, items: tuple[tuple[str, str], ...]) -> None:
        self.labels = tuple((known, key, len(known), Counter(known)) for known, key in items)
        self.answers: dict[tuple[str, float], str | None] = {}

    def closest(self, text: str, cutoff: float) -> str | None:
        remembered = len(text) <= self.MAX_TEXT
        if remembered:
            answer = self.answers.get((text, cutoff), _UNKNOWN)  # one lookup: safe if cleared meanwhile
            if answer is not _UNKNOWN:
                return answer
        best, score = None, cutoff
        length_a = len(text)
        counts: Counter[str] | None = None
        for known, key, length_b, known_counts in self.labels:
            # SequenceMatcher(None, text, known)'s quick ratios, computed as difflib does without
            # building a matcher for every label: upper bounds of ratio(), they rule out most
            # labels on the lengths or the letter counts alone.
            length = length_a + length_b
            if _ratio(min(length_a, length_b), length) <= score:
                continue  # real_quick_ratio()
            if counts is None:
                counts = Counter(text)
            if _ratio(sum(min(n, known_counts[c]) for c, n in counts.items()), length) <= score:
                continue  # quick_ratio()
            ratio = SequenceMatcher(None, text, known).ratio()
            if ratio > score:
                best, score = key, ratio
        if remembered:
            if len(self.answers) >= self.MAX_ANSWERS:
                self.answers.clear()
            self.answers[text, cutoff] = best
        return best


_UNKNOWN = "\0not yet asked"  # not a key of any table


def _ratio(matches: int, length: int) -> float:
    """difflib's ratio of matches to the two lengths, to the same float."""
    return 2.0 * matches / length if length else 1.0


@lru_cache(maxsize=32)
def _known_labels(items: tuple[tuple[str, str], ...]) -> _KnownLabels:
    return _KnownLabels(items)


# --- structure --------------------------------------------------------------------------------

# Summary rows, by metric: the labels seen in ESRP 3.0 and 4.0 documents (and in ours).
SUMMARY_METRICS: dict[str, str] = {
    "achieved transactional i/o per sec": "achieved",
    "achieved transactional i/o per second": "achieved",
    "database disks transfers/sec": "transfers",
    "database disk transfers/sec": "transfers",
    "database reads/sec": "reads",
    "i/o database disk reads/sec": "reads",
    "i/o database reads/sec": "reads",
    "database disks reads/sec": "reads",
    "database disk reads/sec": "reads",
    "database writes/sec": "writes",
    "i/o database disk writes/sec": "writes",
    "i/o database writes/sec": "writes",
    "database disks writes/sec": "writes",
    "database disk writes/sec": "writes",
    "i/o database reads average latency": "read_latency",
    "average database disk read latency": "read_latency",
    "i/o database writes average latency": "write_latency",
    "average database disk write latency": "write_latency",
    "log writes/sec": "log_writes",
    "i/o log disk writes/sec": "log_writes",
    "log disks writes/sec": "log_writes",
    "log disk writes/sec": "log_writes",
    "i/o log writes/sec": "log_writes",
    "i/o log writes average latency": "log_latency",
    "average log disk write latency": "log_latency",
    "mb read/sec per database": "backup_per_database",
    "mb read/sec total per server": "backup_per_server",
    "average time to play one log file": "replay_seconds",
}
BACKUP_METRICS = frozenset({"backup_per_database", "backup_per_server"})

# Label/value facts of the simulated configuration and storage tables.
FACTS: dict[str, str] = {
    "number of exchange mailboxes simulated": "mailboxes",
    "number of database availability groups (dags)": "dags",
    "number of dags": "dags",
    "number of servers/dag": "servers_per_dag",
    "number of active mailboxes/server": "mailboxes_per_server",
    "number of databases/host": "databases_per_host",
    "number of copies/database": "copies_per_database",
    "number of mailboxes/database": "mailboxes_per_database",
    "simulated profile i/os per second per mailbox (iops, includes 20% headroom)": "iops_per_mailbox",
    "simulated profile i/os per second per mailbox (iops include 20% head room)": "iops_per_mailbox",
    "simulated profile i/os per second per mailbox": "iops_per_mailbox",
    "host server type": "host_server",
    "number of physical disks in test": "disks",
    "total number of disks tested in solution": "disks_tested",
    "raw capacity per disk": "raw_capacity_per_disk",
    "raw capacity per disk (gb)": "raw_capacity_per_disk",
    "total raw storage capacity": "raw_capacity",
    "total raw storage capacity (gb)": "raw_capacity",
    "number of databases": "databases",
    "log files size": "log_files_size",
    "databases size": "database_size",
    "search catalog": "search_catalog",
}

_APPENDIX_START = re.compile(r"^appendix\b", re.IGNORECASE)


class _Structure:
    def __init__(self, doc: PublishedDocument) -> None:
        self.doc = doc
        self.lines = doc.lines

    def problem(self, message: str, location: str, severity: str = "warning", lost: int = 0) -> None:
        self.doc.problems.append(
            m.Problem(self.doc.source, message, location=location, severity=severity, lost=lost)
        )

    def build(self) -> None:
        segments = self.report_segments()
        in_report = {i for start, end, _title in segments for i in range(start, end)}
        self.doc.convention = self.find_convention()
        self.summaries(in_report)
        self.facts(in_report)
        self.trend_tables()
        self.formulas(in_report)
        self.series()
        for start, end, title in segments:
            self.report(start, end, title)
        if not self.doc.summary_tables and not self.doc.trend_tables and not self.doc.formulas:
            self.problem(
                "no per-server or aggregate summary table was found",
                "Test results summary",
                severity="note",
            )

    def find_convention(self) -> str | None:
        for line in self.lines[:400]:
            match = _CONVENTION.search(line.text)
            if match:
                return match.group(1)
        return None

    # -- appendix reports

    def report_segments(self) -> list[tuple[int, int, str]]:
        """(first line index, end index, title) of each test report in the appendix."""
        starts: list[tuple[int, str]] = []
        appendix = next(
            (i for i, line in enumerate(self.lines) if line.heading and _APPENDIX_START.match(line.text)),
            None,
        )
        if appendix is None:
            appendix = next(
                (
                    i
                    for i, line in enumerate(self.lines)
                    if _APPENDIX_START.match(line.text) and len(line.text) < 60 and i > len(self.lines) // 5
                ),
                None,
            )
        first = appendix or 0
        tables_since = True
        for i in range(first, len(self.lines)):
            line = self.lines[i]
            if line.cells is not None:
                tables_since = tables_since or bool(line.cells)
                continue
            label = L.normalize_label(line.text)
            if not label or _TIMESTAMP_LINE.match(line.text) or len(label) > 120:
                continue
            # Every title pattern needs one of these words: most lines are ruled out by them
            # before the dozen regexes (which took a fifth of a junk document's reading).
            is_title = ("report" in label or "jetstress" in label or label.startswith("server ")) and (
                any(p.search(label) for p, _k in L.REPORT_KINDS) or bool(L.REPORT_TITLE.search(label))
            )
            if is_title and tables_since:
                starts.append((i, line.text))
                tables_since = False
            elif is_title and starts:
                starts[-1] = (starts[-1][0], starts[-1][1] + " / " + line.text)
        if not starts:
            return []
        bounds = [s for s, _t in starts] + [len(self.lines)]
        return [(bounds[k], bounds[k + 1], starts[k][1]) for k in range(len(starts))]

    def report(self, start: int, end: int, title: str) -> None:
        items = self.items(start, end, title)
        source = f"{self.doc.source}, lines {self.lines[start].no}-{self.lines[end - 1].no}"
        report = PublishedReport(
            title=title, first_line=self.lines[start].no, last_line=self.lines[end - 1].no
        )
        try:
            report.run = rh._Reader(source).read(items)
            # Cells the reader could not use (OCR damage, "18.47l") are left out: say so.
            self.doc.problems.extend(p for p in report.run.problems if p.lost and p.severity != "note")
        except (ReportFormatError, UnsupportedFormatError) as exc:
            report.problem = exc.detail
            self.problem(
                f"test report '{title}' could not be read: {exc.detail}", f"line {self.lines[start].no}"
            )
        self.doc.reports.append(report)

    def items(self, start: int, end: int, title: str) -> list[rh._Text | rh._Table]:
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

        items.extend(rh._Text(part, part, self.lines[start].no, None, False) for part in title.split(" / "))
        for line in self.lines[start:end]:
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
                and section in _INSTANCE_SECTIONS
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
            if cells and len(cells) >= 2 and not _TIMESTAMP_LINE.match(line.text):
                if not rows and section in _INSTANCE_SECTIONS and _looks_like_instance_row(cells):
                    if not rows:
                        rows.append(_canonical_header(section, len(cells)))
                        numbers.append(pending_header[0].no if pending_header else line.no)
                    pending_header.clear()
                rows.append(cells)
                numbers.append(line.no)
                continue
            if section in _INSTANCE_SECTIONS and not rows and not line.heading:
                emit()
                pending_header.append(line)
                continue
            emit()
            items.append(rh._Text(line.text, line.raw.strip(), line.no, section, False))
        emit()
        # A wrapped multi-line heading ahead of an instance table (our PDF listings, OCR) is dropped
        # by the loop above; the rows then get the standard Jetstress column order by width.
        return items

    # -- summary tables

    def summaries(self, in_report: set[int]) -> None:
        current: SummaryTable | None = None
        header_cols: list[str] = []
        header_target = False
        header_line = -10
        test = m.TestKind.PERFORMANCE
        label_parts: list[tuple[int, str]] = []
        for i, line in enumerate(self.lines):
            if i in in_report:
                continue
            text = line.text
            low = text.casefold()
            if line.heading or (line.cells is None and len(text) < 100):
                if "stress" in low and ("result" in low or "hour" in low) and test is not m.TestKind.STRESS:
                    test = m.TestKind.STRESS
                    header_cols, header_target, current = [], False, None
                elif "performance" in low and ("result" in low or "metrics" in low or "server" in low):
                    test = m.TestKind.PERFORMANCE if "stress" not in low else test
            if line.heading:
                header_cols, header_target, current = [], False, None
            columns, target = _header_columns(line)
            if columns:
                if i - header_line <= 2 and header_cols and not current and columns != header_cols:
                    header_cols += columns
                else:
                    header_cols = columns
                header_target = (header_target or target) if i - header_line <= 2 else target
                header_line = i
                current = None
                label_parts.clear()
                continue
            cells = line.cells
            if not cells and len(text) > 100:
                header_cols, header_target, current = [], False, None  # prose ends a table's heading
            if not cells:
                if text and len(text) < 70 and not line.heading:
                    label_parts.append((i, text))
                    label_parts[:] = label_parts[-2:]
                else:
                    label_parts.clear()
                continue
            label, values = _BULLET.sub("", cells[0]), cells[1:]
            if (not label or _TARGET_PREFIX.fullmatch(label + " ")) and label_parts:
                values = ([label] if label else []) + values
                label = " ".join(t for _i, t in label_parts)
            key = fuzzy_key(label, SUMMARY_METRICS)
            if key is None:
                label_match = _LABEL_TARGET.match(label)
                if label_match:
                    key = fuzzy_key(label_match.group(1), SUMMARY_METRICS)
                    values = [label_match.group(2), *values]
            label_parts.clear()
            if key is None:
                continue
            if key in BACKUP_METRICS and not header_cols:
                cols = ["all servers"]
            elif header_cols:
                cols = header_cols
            else:
                self.doc.unread_summary_rows += 1
                self.problem(
                    f"summary row {label!r} has no column heading; the row is not read", f"line {line.no}"
                )
                continue
            figures = [(v, number(v)) for v in values]
            numeric = [(t, n) for t, n in figures if n is not None]
            take = numeric[-len(cols) :] if len(numeric) >= len(cols) else numeric
            row_target = numeric[-len(cols) - 1][1] if len(numeric) > len(cols) else None
            if len(take) < len(cols):
                # Which figure belongs to which column cannot be known: none is used.
                self.doc.unread_summary_rows += 1
                self.problem(
                    f"summary row {label!r} has {len(take)} figure(s) for {len(cols)} column(s) "
                    f"({', '.join(cols)}); the row is not read",
                    f"line {line.no}",
                    lost=len(take),
                )
                label_parts.clear()
                continue
            aggregate = cols == ["all servers"] and key not in BACKUP_METRICS
            kind = (
                "backup"
                if key in BACKUP_METRICS
                else "replay"
                if key == "replay_seconds"
                else ("aggregate" if aggregate else "server")
            )
            if current is None or current.kind != kind or current.columns != cols or current.test != test:
                current = SummaryTable(kind=kind, test=test, columns=list(cols), first_line=line.no)
                current.has_target = header_target
                self.doc.summary_tables.append(current)
            row = SummaryRow(key, label, line.no, [n for _t, n in take], row_target)
            current.rows.append(row)

    # -- label/value facts

    def facts(self, in_report: set[int]) -> None:
        for i, line in enumerate(self.lines):
            if i in in_report or not line.cells or len(line.cells) < 2:
                continue
            key = fuzzy_key(line.cells[0], FACTS, cutoff=0.9)
            if key is None:
                continue
            self.doc.all_facts.append((key, line.cells[1], line.no))
            self.doc.facts.setdefault(key, (line.cells[1], line.no))

    # -- trend tables: "percentage [absolute]" cells (004)

    def trend_tables(self) -> None:
        cell = _TREND_CELL
        title = ""
        current: TrendTable | None = None
        header: list[str] = []
        for line in self.lines:
            table_title = _TABLE_TITLE.match(line.text)
            if table_title:
                title = line.text
                current = None
            cells = line.cells
            if not cells or len(cells) < 3:
                if not cells:
                    current = None if line.text else current
                continue
            parsed = [cell.match(c.strip()) if len(c) <= MAX_TREND_CELL_CHARS else None for c in cells[1:]]
            if not any(parsed):
                header = cells
                if current is not None and current.rows:
                    current = None
                continue
            trend = [
                (number(p.group("pct")), number(p.group("abs")), p.group("unit").strip()) if p else None
                for p in parsed
            ]
            figures = [
                TrendCell(pct, absolute, unit)
                for item in trend
                if item is not None
                for pct, absolute, unit in [item]
                if pct is not None and absolute is not None
            ]
            if len(figures) < len(parsed):
                self.problem(
                    f"trend row {cells[0]!r}: {len(parsed) - len(figures)} cell(s) not of the form "
                    "'percentage [absolute]'; the row is not read",
                    f"line {line.no}",
                    lost=len(figures),
                )
                continue
            if current is None:
                current = TrendTable(title=title, columns=header[1:] if header else [], first_line=line.no)
                self.doc.trend_tables.append(current)
            current.rows.append((cells[0], line.no, figures))

    # -- test series: which user counts each table gives "#1", "#2" (004 §5.6)

    def series(self) -> None:
        section, title, users_column = "", "", False
        current: tuple[str, list[int], int] | None = None

        def close() -> None:
            nonlocal current
            if current is not None and len(current[1]) >= 2:
                label, users, line = current
                self.doc.series.append(m.SeriesUsers(section, label, tuple(users), title, line))
            current = None

        for line in self.lines:
            numbered = _SECTION_NUMBER.match(line.text) if line.heading else None
            if numbered:
                close()
                section = numbered.group(1)
            if _TABLE_START.match(line.text):
                close()
                title, users_column = line.text, False
            cells = line.cells
            if not cells:
                if line.text:
                    close()
                continue
            first = cells[0].strip()
            label = _SERIES_LABEL.fullmatch(first)
            if len(cells) >= 2 and "concurrent users" in cells[1].casefold() and not label:
                users_column = True
                continue
            if (
                label
                and len(cells) >= 3
                and "users" in cells[1].casefold()
                and not cells[1].strip()[:1].isdigit()
                and " / " in cells[2]
            ):
                close()
                counts = [
                    _whole(n, self.doc.source, line.no)
                    for n in _COUNT.findall(cells[2].split("concurrent")[0])
                ]
                self.doc.series.append(m.SeriesUsers(section, label.group(1), tuple(counts), title, line.no))
                continue
            if label and first.casefold().startswith("series"):
                close()
                heads = [_USERS_HEAD.match(c) for c in cells[1:]]
                if all(heads):
                    values = tuple(_whole(h.group(1), self.doc.source, line.no) for h in heads if h)
                    self.doc.series.append(m.SeriesUsers(section, label.group(1), values, title, line.no))
                continue
            if users_column and len(cells) >= 2 and _COUNT_CELL.fullmatch(cells[1].strip()):
                if label:
                    close()
                    current = (label.group(1), [], line.no)
                if current is not None:
                    current[1].append(_whole(cells[1], self.doc.source, line.no))
        close()

    # -- worked formulas: "Name = expression = ... = value unit"

    def formulas(self, in_report: set[int]) -> None:
        for i, line in enumerate(self.lines):
            if (
                i in in_report
                or line.cells
                or "=" not in line.text
                or len(line.text) > 400
                or "://" in line.text
            ):
                continue
            text = _latex_to_text(line.raw)
            parts = [p.strip() for p in text.split("=")]
            if len(parts) < 2 or not parts[0] or not re.search(r"\d", parts[-1]):
                continue
            name = parts[0].strip(" *$")
            if len(name) > 80 or not re.search(r"[A-Za-z]", name):
                continue
            self.doc.formulas.append(Formula(name, parts[1:], line.no))


_INSTANCE_SECTIONS = frozenset(kind.value for kind in m.TableKind) | {"backup", "recovery"}
# The standard Jetstress column order of each per-instance table, used when a table's heading
# is missing or wrapped beyond repair and the row width matches.
_STANDARD_COLUMNS: dict[str, list[str]] = {
    "wide": [
        "I/O Database Reads Average Latency (msec)",
        "I/O Database Writes Average Latency (msec)",
        "I/O Database Reads/sec",
        "I/O Database Writes/sec",
        "I/O Database Reads Average Bytes",
        "I/O Database Writes Average Bytes",
        "I/O Log Reads Average Latency (msec)",
        "I/O Log Writes Average Latency (msec)",
        "I/O Log Reads/sec",
        "I/O Log Writes/sec",
        "I/O Log Reads Average Bytes",
        "I/O Log Writes Average Bytes",
    ],
    m.TableKind.BACKGROUND_MAINTENANCE.value: [
        "Database Maintenance IO Reads/sec",
        "Database Maintenance IO Reads Average Bytes",
    ],
    m.TableKind.LOG_REPLICATION.value: ["I/O Log Reads/sec", "I/O Log Reads Average Bytes"],
    "backup": ["Database Size (MBytes)", "Elapsed Backup Time", "MBytes Transferred/sec"],
    "recovery": ["Log files replayed", "Elapsed seconds"],
}


def _whole(text: str, source: str, line: int) -> int:
    """A printed count ("12,500"); past Python's 4,300-digit limit, an InputError, not ValueError."""
    digits = text.replace(",", "").strip()
    if len(digits) > 4000:
        raise InputError(source, f"a count of {len(digits):,} digits", location=f"line {line}")
    return int(digits)


def _canonical_header(section: str | None, width: int) -> list[str]:
    if section in ("backup", "recovery"):
        return ["Database Instance", *_STANDARD_COLUMNS[section]][:width]
    columns = _STANDARD_COLUMNS.get(section or "", _STANDARD_COLUMNS["wide"])
    if width - 1 == 12:
        columns = _STANDARD_COLUMNS["wide"]
    return ["MSExchange Database ==> Instances", *columns][:width]


_KNOWN_HEADERS = frozenset(
    {*L.INSTANCE_COLUMNS, *L.BACKUP_COLUMNS, *L.RECOVERY_COLUMNS, *L.CHECKSUM_COLUMNS, *L.HOST_HEADER}
)


def _is_table_header(cells: list[str]) -> bool:
    """A whole header row (not a fragment of a wrapped one): most of its cells are known columns."""
    first = L.normalize_header(cells[0])
    if not (
        L.INSTANCE_TABLE_FIRST_HEADER.match(first) or first in ("database instance", "database", "counter")
    ):
        return False
    known = sum(1 for c in cells[1:] if L.normalize_header(c) in _KNOWN_HEADERS)
    return len(cells) >= 2 and known * 2 >= len(cells) - 1


def _looks_like_instance_row(cells: list[str]) -> bool:
    return bool(_INSTANCE_ROW.match(cells[0])) and all(is_number(c) or ":" in c for c in cells[1:])


def _header_columns(line: DocLine) -> tuple[list[str], bool]:
    """Column names of a summary table's header line: servers, hosts or 'all servers'."""
    text = line.text
    low = text.casefold()
    target = "target" in low
    if ("across all servers" in low or "values across" in low) and (line.cells or len(text) < 80):
        return ["all servers"], target
    # Every other answer needs a short line naming a server or host: most lines are ruled out
    # by these two checks before the substitutions below.
    if len(text) > 160 or not _SERVER_TOKEN.search(text):
        return [], False
    residue = _SERVER_TOKEN.sub(" ", text)
    residue = _HEADER_WORDS.sub(" ", residue)
    if len(" ".join(residue.split())) > 12:
        return [], False
    servers = [
        f"Server {m2.group(2)}" if m2.group(1) else f"Host {m2.group(3)}"
        for m2 in _SERVER_TOKEN.finditer(text)
    ]
    if not servers:
        return [], False
    if len(servers) == 1 and not (
        line.heading or (line.cells and len(line.cells) <= 2) or text.startswith(("Host", "Server"))
    ):
        return [], False
    return servers, target


def _latex_to_text(raw: str) -> str:
    text = raw.strip().strip("$").strip()
    text = re.sub(r"\\text\{([^}]*)\}", r"\1", text)
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1) / (\2)", text)
    text = text.replace("\\ ", " ").replace("\\&", "&").replace("\\*", "*").replace("\\", "")
    text = text.replace("*", " * ").replace("{", "").replace("}", "")
    return " ".join(_strip_markup(text).split())
