"""A PDF's lines: its text extracted page by page through PDFium (up to a page's width past its
right edge, where a wide table's last figures may run), running headers and footers dropped,
header cells wrapped in a narrow column ("Server\n10") joined, and a table's header row repeated
over its rows on the next page dropped."""

from __future__ import annotations

import re
from collections import Counter

from esrp_report.ingest.documents import limits
from esrp_report.model import DocLine
from esrp_report.model.errors import InputError, UnsupportedFormatError

_PAGE_FOOTER = re.compile(r"\bpage \d+ of \d+\b", re.IGNORECASE)


_WORD = re.compile(r"[^\W\d_]{2,}")  # two letters: a word, not a figure or a unit mark
_TITLE_PREFIX = 48  # characters a running title shares on every page (a section's name may follow)


class _Furniture:
    """The running headers and footers of a document's pages: lines at the top or bottom of most
    pages, which would break tables split over pages. A line the same on most pages is one; so is
    a long line whose start is the same on most pages ("<document title> 3 Tested deployment",
    "<document title> 4 Test results summary": the ESRP 4.0 form's running title names the
    section). Only the first and last lines of a page are candidates."""

    def __init__(self, pages: list[str]) -> None:
        edges = [
            {line.strip() for line in (text.splitlines()[:2] + text.splitlines()[-3:]) if line.strip()}
            for text in pages
        ]
        least = max(3, len(pages) // 3)
        counts = Counter(line for page_edges in edges for line in page_edges)
        self.lines = {line for line, n in counts.items() if len(pages) >= 4 and n >= least}
        starts: dict[str, set[str]] = {}
        pages_of: Counter[str] = Counter()
        for page_edges in edges:
            long = [line for line in page_edges if len(line) > _TITLE_PREFIX]
            pages_of.update({line[:_TITLE_PREFIX] for line in long})
            for line in long:
                starts.setdefault(line[:_TITLE_PREFIX], set()).add(line)
        # A running title goes on with words (a section's name) after what its lines share; a table
        # row whose long label repeats at many pages' edges goes on with its figure: kept.
        shared = {key: _shared_start(lines) for key, lines in starts.items()}
        self.prefixes = tuple(
            shared[key]
            for key, n in pages_of.items()
            if len(pages) >= 4
            and n >= least
            and all(_WORD.search(line[len(shared[key]) :]) for line in starts[key])
        )

    def holds(self, line: str) -> bool:
        return line in self.lines or (bool(self.prefixes) and line.startswith(self.prefixes))


def _shared_start(lines: set[str]) -> str:
    """The characters every one of ``lines`` starts with (the first and last in sort order share
    no more than all of them do)."""
    first, last = min(lines), max(lines)
    size = next(
        (k for k, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last))
    )
    return first[:size]


def pdf_lines(data: bytes, source: str) -> list[DocLine]:
    """The PDF's text lines, numbered across pages, running headers and footers left out."""
    # PDFium (through pypdfium2) extracts a 100-page document in about a second; pure-Python
    # extractors take ten to twenty times longer (benchmarks/audit_document.py).
    import pypdfium2 as pdfium  # noqa: PLC0415 - only PDF input needs it

    try:
        document = pdfium.PdfDocument(data)
        try:
            count = len(document)
            if count > limits.MAX_PDF_PAGES:
                # Refused before any page is extracted: the page count is in the file's page tree.
                raise InputError(
                    source,
                    f"the PDF has {count:,} pages; at most {limits.MAX_PDF_PAGES:,} are read (MAX_PDF_PAGES)",
                )
            pages = []
            extracted = 0
            for index in range(count):
                page = document[index]
                textpage = page.get_textpage()
                left, _bottom, right, _top = page.get_bbox()
                # Past the right edge too: a wide table's last figures run off the page, and the
                # page's own bounds cut them ("14,422." of "14,422.400"); their characters are
                # still in the page's text, so they are read whole (docs/audit.md, "Damaged input").
                pages.append(textpage.get_text_bounded(right=right + (right - left)) or "")
                textpage.close()
                page.close()
                extracted += len(pages[-1])
                if extracted > limits.MAX_PDF_TEXT_CHARS:
                    raise InputError(
                        source,
                        f"the PDF's text passes {limits.MAX_PDF_TEXT_CHARS:,} characters "
                        f"by page {index + 1:,}; no more is read",
                    )
        finally:
            document.close()
    except (pdfium.PdfiumError, ValueError, OSError) as exc:
        raise UnsupportedFormatError(
            source, f"the PDF cannot be read: {exc}", location="whole file"
        ) from None
    return paged_lines(pages)


def paged_lines(pages: list[str]) -> list[DocLine]:
    """The lines of a document's pages, numbered across them, its running headers and footers
    left out and a table's header row printed again over its rows on the next page read once.
    A PDF's pages are its own; a text's are found by its page-number lines (``text_pages``)."""
    furniture = _Furniture(pages)
    lines: list[DocLine] = []
    number = 0
    for page_number, text in enumerate(pages, start=1):
        page_lines = text.splitlines()
        repeat = _repeated_header(lines, page_lines, furniture)
        for index, raw in enumerate(page_lines):
            number += 1
            stripped = raw.strip()
            at_edge = index < 2 or index >= len(page_lines) - 3
            if (at_edge and furniture.holds(stripped)) or _PAGE_FOOTER.search(stripped) or stripped == "•":
                continue
            if repeat and stripped:
                repeat -= 1
                continue  # a table's header row printed again over its rows on this page
            if (
                lines
                and re.fullmatch(r"\d{1,3}", stripped)
                and re.search(r"\b(?:Server|Host)$", lines[-1].raw)
            ):
                lines[-1] = DocLine(lines[-1].no, f"{lines[-1].raw} {stripped}", page=lines[-1].page)
                continue  # "Server\n10": a header cell wrapped in a narrow column
            lines.append(DocLine(number, raw.rstrip(), page=page_number))
    return lines


def text_pages(text: str) -> list[str] | None:
    """A text's pages when it shows them — a text copied out of a PDF viewer or a converter keeps
    each page's "Page n of N" line, or a form feed between pages — else None. A page ends after
    its form feed or its page-number line; the lines (and their numbers) are those of
    ``str.splitlines``."""
    footers = len(_PAGE_FOOTER.findall(text, 0, limits.MAX_DOCUMENT_BYTES))
    if footers < _LEAST_PAGES and text.count("\f") < _LEAST_PAGES:
        return None
    pages: list[str] = []
    page: list[str] = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n\f\v\x1c\x1d\x1e\x85\u2028\u2029")
        page.append(bare)
        if line.endswith("\f") or _PAGE_FOOTER.search(bare):
            pages.append("\n".join(page))
            page = []
    if page:
        pages.append("\n".join(page))
    return pages


_LEAST_PAGES = 3  # page-number lines (or form feeds) that make a text's pages worth finding


_HEADER_LINES = 64  # the most lines a wide table's header row wraps over, a word or two a line
_ROWS_BACK = 5000  # how far back a table's header is looked for: its rows on the pages between


def _repeated_header(before: list[DocLine], page: list[str], edges: _Furniture) -> int:
    """How many lines at the top of ``page`` (after its running header) repeat the header row of a
    table the pages before end inside: the same lines as those read last before the table's rows,
    where nothing but rows (lines holding figures) follows them. A table split over pages prints
    its header again; read again, it would start a table of no title whose rows go unread. Two
    tables alike, heading and header, the second starting a page, would read as one: a Jetstress
    report never prints a table twice in a row."""
    top = [
        text
        for line in page
        if (text := line.strip()) and not edges.holds(text) and text != "•" and not _PAGE_FOOTER.search(text)
    ]
    texts = [line.raw.strip() for line in before[-_ROWS_BACK:]]
    end = len(texts)
    while end and any(ch.isdigit() for ch in texts[end - 1]):
        end -= 1  # back over the rows the pages before end with
    if end == len(texts) or not top:
        return 0  # the page before does not end inside a table's rows
    for count in range(min(_HEADER_LINES, len(top) - 1, end), 0, -1):
        if texts[end - count : end] == top[:count] and any(ch.isdigit() for ch in top[count]):
            return count
    return 0
