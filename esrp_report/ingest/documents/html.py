"""An HTML document's lines: the Jetstress report reader's linearizer, each table row's cells
joined with tabs, the source's line numbers kept."""

from __future__ import annotations

from esrp_report.ingest.jetstress import report_html as rh
from esrp_report.model import DocLine
from esrp_report.model.errors import UnsupportedFormatError


def html_lines(text: str, source: str) -> list[DocLine]:
    """The document's texts and table rows (cells joined with tabs), numbered by source line."""
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
