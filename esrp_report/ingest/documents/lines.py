"""A document's bytes reduced to numbered, cleaned lines: the kind told by content (PDF, HTML,
else text or Markdown), each kind's lines read by its module (``pdf.py``, ``html.py``, or here for
text), then every line cleaned and split into cells (``cells.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from esrp_report.ingest.documents.cells import clean_line
from esrp_report.ingest.documents.html import html_lines
from esrp_report.ingest.documents.pdf import paged_lines, pdf_lines, text_pages
from esrp_report.ingest.text import binary_kind, decode_bytes
from esrp_report.model import DocLine
from esrp_report.model.errors import InputError

# Lines are cut from a text this many characters at a time (at a newline), so that the whole
# list of raw lines never exists beside the cleaned ones.
_CHUNK_CHARS = 1 << 20
_MARKDOWN = re.compile(r"^\s*(#{1,6} |\|.*\|\s*$)", re.M)
_LEADING_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.lstrip() strips


def document_lines(data: bytes, source: str) -> tuple[list[DocLine], str]:
    """The cleaned lines and the format. A text's lines are cut and cleaned one at a time, so the
    list of raw lines never exists beside the cleaned ones."""
    start = _LEADING_SPACE.match(data)
    at = start.end() if start else 0
    if data[at : at + 5] == b"%PDF-":  # not data.lstrip(): a copy of the whole file
        return [clean_line(line) for line in pdf_lines(data, source)], "pdf"
    binary = binary_kind(data[:64])
    if binary is not None:
        raise InputError(
            source,
            f"not a text or PDF document (looks like {binary})",
            expected="a published ESRP document: PDF, HTML, or text/Markdown",
        )
    text, _encoding = decode_bytes(data, source)
    head = text[:4096].casefold()
    if any(mark in head for mark in ("<html", "<body", "<!doctype html")):
        return [clean_line(line) for line in html_lines(text, source)], "html"
    kind = "markdown" if _MARKDOWN.search(text[:200_000]) else "text"
    pages = text_pages(text)
    if pages is not None:
        # Copied out of a PDF: its pages' running titles and footers, and a table's header printed
        # again on the next page, are left out as the PDF reader leaves them out.
        return [clean_line(line) for line in paged_lines(pages)], kind
    return [clean_line(DocLine(no, raw)) for no, raw in enumerate(text_lines(text), start=1)], kind


def text_lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, a chunk at a time: the chunks end just after a newline, where
    splitlines would cut too, so the lines (and their numbers) are the same."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start + _CHUNK_CHARS) if size - start > _CHUNK_CHARS else -1
        end = size if end < 0 else end + 1
        yield from text[start:end].splitlines()
        start = end
