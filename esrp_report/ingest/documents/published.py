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

This module is the entry; the reading itself is in the modules beside it:

- lines: ``lines.py`` (the kind told by content, text lines), ``pdf.py``, ``html.py``;
  ``cells.py`` (one line: markup away, cells split, figures read); ``limits.py`` (every bound);
- labels: ``vocabulary.py`` (the label lists and phrases, read from ``vocabulary/*.toml``),
  ``matching.py`` (a label against a list);
- structure: ``structure.py`` (the passes in order), ``appendix.py`` (test reports),
  ``tables.py`` (summary tables), ``facts.py``, ``trends.py`` (trend tables, test series),
  ``formulas.py``; ``problems.py`` (what could not be read).
"""

from __future__ import annotations

from pathlib import Path

from esrp_report.ingest.documents import limits
from esrp_report.ingest.documents.cells import clean_line, is_number, number
from esrp_report.ingest.documents.limits import (
    MAX_DOCUMENT_BYTES,
    MAX_PDF_PAGES,
    MAX_PDF_TEXT_CHARS,
    MAX_ROW_CHARS,
    MAX_TREND_CELL_CHARS,
)
from esrp_report.ingest.documents.lines import document_lines
from esrp_report.ingest.documents.marks import find_marks, rewrite
from esrp_report.ingest.documents.matching import fuzzy_key, normalize
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.structure import build
from esrp_report.ingest.documents.vocabulary import BACKUP_METRICS, FACTS, SUMMARY_METRICS
from esrp_report.ingest.guards import require_regular_file
from esrp_report.model import DocLine, PublishedDocument
from esrp_report.model.errors import InputError

__all__ = [
    "BACKUP_METRICS",
    "FACTS",
    "MAX_DOCUMENT_BYTES",
    "MAX_PDF_PAGES",
    "MAX_PDF_TEXT_CHARS",
    "MAX_ROW_CHARS",
    "MAX_TREND_CELL_CHARS",
    "SUMMARY_METRICS",
    "fuzzy_key",
    "is_number",
    "normalize",
    "number",
    "parse_document",
    "parse_lines",
    "read_document",
]


def read_document(path: str | Path) -> PublishedDocument:
    """Read a published document (PDF, HTML, text or Markdown) and rebuild its structure."""
    path = Path(path)
    # The bytes are not kept in this frame: parse_document lets them go once they are decoded.
    return parse_document(_document_bytes(path), str(path))


def _document_bytes(path: Path) -> bytes:
    size = require_regular_file(path).st_size  # a FIFO or /dev/zero is refused, never opened
    try:
        if size > limits.MAX_DOCUMENT_BYTES:
            raise InputError(
                path, f"the document is {size:,} bytes; at most {limits.MAX_DOCUMENT_BYTES:,} are read"
            )
        return path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc


def parse_document(data: bytes, source: str) -> PublishedDocument:
    """Rebuild the structure of a published document from its bytes (PDF, HTML, Markdown or text, told by
    content); ``source`` names it in problems."""
    lines, kind = document_lines(data, source)
    del data  # the file's bytes and decoded text are not held while the structure is rebuilt
    return parse_lines(lines, source, kind)


def parse_lines(lines: list[DocLine], source: str, kind: str) -> PublishedDocument:
    """Rebuild the structure of a document from its cleaned lines (``lines.document_lines``), read as
    ``kind`` (pdf, html, markdown, text): the seam where a line can be changed after extraction."""
    doc = PublishedDocument(source=source, format=kind)
    doc.lines = _in_point_form(doc, lines)
    build(doc)
    return doc


def _in_point_form(doc: PublishedDocument, lines: list[DocLine]) -> list[DocLine]:
    """The lines with their figures in decimal-point form (``marks.py``): a decimal-comma document's
    lines are rewritten and cleaned again, since its cells were split as if "0,873" were 873; an
    undecidable or mixed one is named, its ambiguous figures marked not read."""
    found = find_marks(lines)
    if found.decimal == "." and not found.space_groups:
        return lines
    trouble = found.problem
    if trouble is None:
        mark = {".": "'.'", ",": "','", "thin": "a thin space", "space": "a space", "": "none"}[
            found.thousands
        ]
        decimal = (
            f"decimal comma: the figures print ',' as their decimal mark ({found.comma_votes} figure(s) "
            f"say so, {found.point_votes} the other way)"
            if found.decimal == ","
            else "decimal point"
        )
        grouped = f" ({found.space_groups} cell(s) such as '8 000')" if found.space_groups else ""
        problem(
            doc,
            f"{decimal}, thousands mark {mark}{grouped}; read so throughout",
            "number convention",
            severity="note",
        )
    else:
        problem(doc, trouble, "number convention")
    return [clean_line(DocLine(line.no, rewrite(line.raw, found), page=line.page)) for line in lines]
