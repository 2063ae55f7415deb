"""Figures cut at a row's end: the page edge of a PDF, an OCR's or a paste's lost margin.

A wide table (the per-instance tables of a Jetstress report run to 13 columns) can lose the end of
its last column. In extracted text the damage shows three ways:

- the figure ends in a separator or in a short thousands group ("14,422.", "14,", "14,42"): cut,
  by its form;
- the figure goes on at the next line, alone there ("14,422." then "400", "14,4" then "22.400"):
  a line break inside it;
- the figure is well formed but printed with fewer decimals than every other figure of its row
  ("4570.83" among three-decimal figures): cut after a digit, or printed without its trailing
  zero. Which, the text cannot say, unless the rows around it print a short figure elsewhere:
  then the table drops trailing zeros (or slips) and the figure is read as printed. (A whole
  number is read as printed too: a count column ends a row so.)

A figure whose rest is on the next line, and whose two parts make the one well-formed figure
the row's precision allows, is joined (the next line is emptied) and noted. A figure cut
without its rest is **not read**: it is never read as another number ("14,422.4" of a cut
"14,422.456" would claim 14,422.35 to 14,422.45, a range that misses it). Its cell is marked
(``CUT_MARK`` appended) so that every reader leaves it out, as a cell that is not a number, while
the columns stay aligned; a warning names the line, the cell and why.
"""

from __future__ import annotations

import re

from esrp_report.ingest.documents.cells import is_number
from esrp_report.ingest.documents.problems import problem
from esrp_report.model import DocLine, PublishedDocument

CUT_MARK = "\u2026"  # "…": the figure went on past what was printed
_CUT_FORM = re.compile(r"^\d[\d,]*[.,]$|^\d{1,3}(?:,\d{3})*,\d{1,2}$")  # "14,422." "14," "14,42"
_FRAGMENT = re.compile(r"^[.,]?\d[\d,.]*$")
# A row's precision is told by its other figures: at least this many, all with one number of decimals.
_MIN_OTHERS = 3
_GAP = 2


def is_cut(text: str) -> bool:
    """Is this cell a figure marked as cut (not read)?"""
    return text.endswith(CUT_MARK)


def mend_cut_figures(doc: PublishedDocument) -> None:
    """Join each figure whose rest is on the next line; mark each figure cut without its rest."""
    lines = doc.lines
    for i, line in enumerate(lines):
        cells = line.cells
        if not cells or len(cells) < 2 or not cells[-1] or not cells[-1][0].isdigit():
            continue
        last = cells[-1]
        # Every cut form ends in a separator or has one in its last three characters.
        cut_form = (last[-1] in ".," or "," in last[-3:]) and bool(_CUT_FORM.match(last))
        if not cut_form:
            if "." not in last:  # a whole number is read as printed, unless its rest is below
                if i + 1 >= len(lines) or lines[i + 1].text[:1] not in (".", ","):
                    continue
            # Most rows end as the cell before ends: no more decimals there, no short figure here.
            elif _decimals(cells[-2]) <= _decimals(last):
                continue
        precision = _row_precision(cells)
        # A row closed by its pipe ("| 498.52 |") was printed past its last figure: no page edge cut
        # that figure, and it does not go on below.
        closed = line.raw.rstrip().endswith("|")
        # A whole number ends a row as a count column would: read as printed.
        short = (
            not cut_form
            and not closed
            and precision is not None
            and is_number(last)
            and 0 < _decimals(last) < precision
        )
        rest = None if closed else _rest(lines, i)
        # A next line that starts with a separator goes on from the figure above, whatever it is.
        goes_on = rest is not None and rest.text[:1] in ".,"
        if not (cut_form or short or goes_on):
            continue
        if rest is not None:
            joined = last + rest.text
            if is_number(joined) and (precision is None or _decimals(joined) == precision):
                lines[i] = _with_last(line, joined)
                lines[i + 1] = DocLine(rest.no, rest.raw, page=rest.page, text="", cells=None)
                problem(
                    doc,
                    f"the figure {last!r} at the row's end goes on at line {rest.no} ({rest.text!r}): "
                    f"read as {joined}",
                    f"line {line.no}",
                    severity="note",
                )
                continue
        if not (cut_form or short) or (short and _drops_zeros(lines, i)):
            continue  # whole; or the table prints short figures elsewhere: its writer drops zeros
        lines[i] = _with_last(line, last + CUT_MARK)
        why = (
            "its form shows it is cut (it ends in a separator or a short thousands group)"
            if cut_form
            else f"it has {_decimals(last)} decimal(s) where the row's other figures have {precision}: "
            "cut at the page edge, or printed without its trailing zeros; the text cannot tell which"
        )
        problem(
            doc,
            f"the figure {last!r} ending the row (cell {len(cells) - 1}) is not read: {why}",
            f"line {line.no}",
            lost=1,
        )


def _rest(lines: list[DocLine], i: int) -> DocLine | None:
    """The next line when it holds only the rest of a figure ("400", ".400", "22.400"), and is not
    one of a column of bare figures (a chart's axis)."""
    if i + 1 >= len(lines):
        return None
    rest = lines[i + 1]
    if not _FRAGMENT.match(rest.text):
        return None
    after = lines[i + 2].text if i + 2 < len(lines) else ""
    return None if _FRAGMENT.match(after) else rest


def _row_precision(cells: list[str]) -> int | None:
    """The decimals every other figure of the row is printed with, when at least three share one
    and that is at least one decimal."""
    others = {_decimals(c) for c in cells[:-1] if is_number(c)}
    count = sum(1 for c in cells[:-1] if is_number(c))
    if count < _MIN_OTHERS or len(others) != 1:
        return None
    precision = others.pop()
    return precision if precision >= 1 else None


def _drops_zeros(lines: list[DocLine], i: int) -> bool:
    """Does the table of row ``i`` print a short figure (with decimals, but fewer than its row's
    others) somewhere else than at a row's end? A table is a run of rows whose number of cells
    changes by at most one from row to row (a target run into its label has one cell less); up to
    ``_GAP`` lines without cells (a blank, a section's title) may sit between them."""
    return any(_short_inside(lines[j].cells or []) for j in _table_of(lines, i))


def _table_of(lines: list[DocLine], i: int) -> list[int]:
    """The indices of the rows of row ``i``'s table, walking up and down from it."""
    rows = [i]
    for step in (-1, 1):
        width, gap, j = len(lines[i].cells or []), 0, i + step
        while 0 <= j < len(lines) and gap <= _GAP:
            cells = lines[j].cells
            if not cells:
                gap += 1
            elif abs(len(cells) - width) > 1:
                break
            else:
                rows.append(j)
                width, gap = len(cells), 0
            j += step
    return rows


def _short_inside(cells: list[str]) -> bool:
    """Does the row print a figure with fewer decimals than most of its figures, not at its end?
    (A whole number is left out: a target or a count is printed so.)"""
    decimals = [_decimals(c) for c in cells if is_number(c)]
    if len(decimals) < _MIN_OTHERS + 1:
        return False
    most = max(set(decimals), key=decimals.count)
    return most >= 1 and any(0 < d < most for d in decimals[:-1])


def _decimals(text: str) -> int:
    dot = text.find(".")
    return len(text.rstrip("%*").rstrip()) - dot - 1 if dot >= 0 else 0


def _with_last(line: DocLine, last: str) -> DocLine:
    cells = [*(line.cells or [])[:-1], last]
    return DocLine(
        line.no,
        line.raw,
        page=line.page,
        text=" ".join(c for c in cells if c),
        cells=cells,
        heading=line.heading,
    )
