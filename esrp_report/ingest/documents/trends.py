"""Trend tables and test series of a sizing study (004): cells of the form ``percentage
[absolute]``, titled by the last "Table N" line; which user counts each table gives a test series
("#1", "#2")."""

from __future__ import annotations

import re

from esrp_report import model as m
from esrp_report.ingest.documents import limits
from esrp_report.ingest.documents.cells import number, whole
from esrp_report.ingest.documents.problems import problem
from esrp_report.model import PublishedDocument, TrendCell, TrendTable

# "39% [360 IOPS]". The absolute figure is digits and commas, then a fraction or a last digit:
# written "[\d,]*\.?\d+\s*", a long run of digits could be split between the three in every way,
# and the unit tried after each split (cubic: minutes for a cell of a few thousand digits).
_TREND_CELL = re.compile(r"^(?P<pct>\d+(?:\.\d+)?)%\s*\[(?P<abs>[\d,]*(?:\.\d+|\d))(?P<unit>[^\]]*)\]$")
_TABLE_TITLE = re.compile(r"^(?:\*\*)?(Table \d+)\b")
_SECTION_NUMBER = re.compile(r"^(\d+\.\d+)\s")
_TABLE_START = re.compile(r"^Table \d+")
_SERIES_LABEL = re.compile(r"(?:series\s*)?(#\d+)", re.IGNORECASE)
_COUNT = re.compile(r"\d[\d,]*")
_USERS_HEAD = re.compile(r"^([\d,]+) users")
_COUNT_CELL = re.compile(r"[\d,]+")


def trend_tables(doc: PublishedDocument) -> None:
    """Tables of "percentage [absolute]" cells (004), anywhere in the document."""
    cell = _TREND_CELL
    title = ""
    current: TrendTable | None = None
    header: list[str] = []
    for line in doc.lines:
        table_title = _TABLE_TITLE.match(line.text)
        if table_title:
            title = line.text
            current = None
        cells = line.cells
        if not cells or len(cells) < 3:
            if not cells:
                current = None if line.text else current
            continue
        parsed = [cell.match(c.strip()) if len(c) <= limits.MAX_TREND_CELL_CHARS else None for c in cells[1:]]
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
            TrendCell(pct.at(line.no, column), absolute.at(line.no, column), unit)
            for column, item in enumerate(trend, start=1)
            if item is not None
            for pct, absolute, unit in [item]
            if pct is not None and absolute is not None
        ]
        if len(figures) < len(parsed):
            problem(
                doc,
                f"trend row {cells[0]!r}: {len(parsed) - len(figures)} cell(s) not of the form "
                "'percentage [absolute]'; the row is not read",
                f"line {line.no}",
                lost=len(figures),
            )
            continue
        if current is None:
            current = TrendTable(title=title, columns=header[1:] if header else [], first_line=line.no)
            doc.trend_tables.append(current)
        current.rows.append((cells[0], line.no, figures))


def series(doc: PublishedDocument) -> None:
    """Which user counts each table gives a test series "#1", "#2" (004 §5.6)."""
    section, title, users_column = "", "", False
    current: tuple[str, list[int], int] | None = None

    def close() -> None:
        nonlocal current
        if current is not None and len(current[1]) >= 2:
            label, users, line = current
            doc.series.append(m.SeriesUsers(section, label, tuple(users), title, line))
        current = None

    for line in doc.lines:
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
            counts = [whole(n, doc.source, line.no) for n in _COUNT.findall(cells[2].split("concurrent")[0])]
            doc.series.append(m.SeriesUsers(section, label.group(1), tuple(counts), title, line.no))
            continue
        if label and first.casefold().startswith("series"):
            close()
            heads = [_USERS_HEAD.match(c) for c in cells[1:]]
            if all(heads):
                values = tuple(whole(h.group(1), doc.source, line.no) for h in heads if h)
                doc.series.append(m.SeriesUsers(section, label.group(1), values, title, line.no))
            continue
        if users_column and len(cells) >= 2 and _COUNT_CELL.fullmatch(cells[1].strip()):
            if label:
                close()
                current = (label.group(1), [], line.no)
            if current is not None:
                current[1].append(whole(cells[1], doc.source, line.no))
    close()
