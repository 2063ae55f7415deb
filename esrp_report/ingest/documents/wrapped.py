"""Table rows wrapped over lines joined back, from the column count their table established.

A PDF viewer's copy re-wraps every line at 72 to 100 columns: a per-instance row of 12 figures
becomes "Instance2756.2  18.353  2.982  44.293  27.818  35837.119  36401.048" and, on the next
line, "0.000  0.857  0.000  24.974  0.000  4568.232". Read as they stand, the second line is no
row and the first is one with six figures, which a reader that takes columns by position reads
into the wrong columns, or not at all.

Two forms are joined, each by what the text itself shows, never by a width guessed:

- a Markdown row cut before its closing pipe ("| a | b" then "c | d |"): the pipes say where the
  row ends, and the lines up to it are one row;
- a labelled row followed by lines of figures only: a *record*. The number of cells of a record
  does not depend on where the wrap fell, so the records of one table (rows with no blank line
  between them) agree on it: the count that at least two of them share, the most common, is the
  table's column count. A record is joined when its cells make exactly that count; one that makes
  another count is left as it is and named (its figures after its first line are then not read:
  the coverage counts them), never joined into a row whose columns would be shifted.

A note names each table whose rows were joined (its first line and how many rows).
"""

from __future__ import annotations

from collections import Counter

from esrp_report.ingest.documents.cells import clean_line, is_number
from esrp_report.ingest.documents.problems import problem
from esrp_report.model import DocLine, PublishedDocument

# A figure-only continuation: figures and the values a row prints among them.
_VALUES = frozenset(("n/a", "pass", "fail", "-"))
# Two records sharing a width establish it: one record alone (a chart's axis under its legend,
# a label and a list of figures) establishes nothing.
_MIN_RECORDS = 2
# The widest row, 13 cells of up to 12 characters, wraps at 72 columns onto at most three lines.
_MAX_CONTINUATIONS = 3


def join_wrapped(doc: PublishedDocument) -> None:
    """Join the wrapped rows of ``doc.lines`` in place (the lines keep their numbers; a joined
    continuation line is left empty)."""
    lines = _join_pipe_rows(doc, doc.lines)
    at = 0
    while at < len(lines):
        if lines[at].cells is None:
            at += 1
            continue
        end = at
        while end < len(lines) and lines[end].cells is not None:
            end += 1
        _join_records(doc, lines, at, end)
        at = end
    doc.lines = lines


def _join_pipe_rows(doc: PublishedDocument, lines: list[DocLine]) -> list[DocLine]:
    out = list(lines)
    joined = 0
    first = 0
    at = 0
    while at < len(out):
        text = out[at].raw.strip()
        follows = out[at + 1].raw.strip() if at + 1 < len(out) else ""
        # A row whose wrap fell just after a pipe looks closed; the line below then holds the
        # rest of its cells, and shows it by starting with no pipe and ending with one.
        closed_early = (
            text.startswith("|")
            and text.endswith("|")
            and text.count("|") >= 2
            and bool(follows)
            and not follows.startswith("|")
            and follows.endswith("|")
        )
        cut_open = text.startswith("|") and not text.endswith("|") and text.count("|") >= 2
        if not (closed_early or cut_open):
            at += 1
            continue
        # The rest of the row: the next lines up to one that ends with the closing pipe, none of
        # them starting a row of its own (a row cut and never closed is left as it is).
        end = at + 1
        while end < len(out) and end - at <= 4:
            rest = out[end].raw.strip()
            if not rest or (rest.startswith("| ") and rest.endswith("|") and rest.count("|") >= 3):
                end = -1
                break
            if rest.endswith("|"):
                break
            end += 1
        if end < 0 or end >= len(out) or end - at > 4:
            at += 1
            continue
        raw = " ".join(out[i].raw.strip() for i in range(at, end + 1))
        first = first or out[at].no
        out[at] = clean_line(DocLine(out[at].no, raw, page=out[at].page))
        for i in range(at + 1, end + 1):
            out[i] = DocLine(out[i].no, out[i].raw, page=out[i].page, text="", cells=None)
        joined += 1
        at = end + 1
    joined, first = _join_to_header_width(out, joined, first)
    if joined:
        problem(
            doc,
            f"{joined} Markdown table row(s) wrapped over lines joined up to their closing '|' "
            f"(the first at line {first})",
            f"line {first}",
            severity="note",
        )
    return out


def _join_to_header_width(out: list[DocLine], joined: int, first: int) -> tuple[int, int]:
    """Rows of a pipe table cut into two lines that each look like a row ("| a | 39%" over
    "| 80% | 100% |"): joined when the two together make exactly the pipes of the table's first
    row (its header), and neither does alone. A row of the header's width is never touched."""

    def pipe_row(index: int) -> str:
        line = out[index]
        return line.raw.strip() if line.text else ""  # a line joined into the one above is blank

    at = 0
    while at < len(out):
        if not pipe_row(at).startswith("|"):
            at += 1
            continue
        width = pipe_row(at).count("|")
        rows: list[int] = []
        end = at + 1
        while end < len(out) and (
            pipe_row(end).startswith("|") or (not out[end].text and out[end].raw.strip())
        ):
            if out[end].text:
                rows.append(end)
            end += 1
        k = 0
        while k + 1 < len(rows):
            top, below = pipe_row(rows[k]), pipe_row(rows[k + 1])
            both = f"{top} {below[1:]}" if top.endswith("|") else f"{top} {below}"
            if top.count("|") < width and below.count("|") < width and both.count("|") == width:
                row, rest = out[rows[k]], out[rows[k + 1]]
                first = first or row.no
                out[rows[k]] = clean_line(DocLine(row.no, both, page=row.page))
                out[rows[k + 1]] = DocLine(rest.no, rest.raw, page=rest.page, text="", cells=None)
                joined += 1
                k += 2
                continue
            k += 1
        at = end
    return joined, first


def _figures_only(line: DocLine) -> bool:
    cells = _cells(line)
    return bool(cells) and all(is_number(c) or c.casefold() in _VALUES for c in cells)


def _cells(line: DocLine) -> list[str]:
    """A line's cells without the empty ones its wrap left at its ends (a continuation keeps the
    tab or the spaces it was cut after)."""
    cells = list(line.cells or [])
    while cells and not cells[0]:
        cells.pop(0)
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _join_records(doc: PublishedDocument, lines: list[DocLine], start: int, end: int) -> None:
    """Join the records of one table (``lines[start:end]``, every one a row)."""
    records: list[tuple[int, int, int]] = []  # (first line index, last line index, cells)
    at = start
    while at < end:
        stop = at + 1
        if not _figures_only(lines[at]):
            while stop < end and _figures_only(lines[stop]):
                stop += 1
            if stop - at - 1 > _MAX_CONTINUATIONS:
                stop = at + 1  # a label over a column of figures (a listing, a chart's ticks): no wrap
        records.append(
            (at, stop, len(lines[at].cells or []) + sum(len(_cells(lines[i])) for i in range(at + 1, stop)))
        )
        at = stop
    wrapped = [r for r in records if r[1] - r[0] > 1]
    if not wrapped:
        return
    widths = Counter(width for _a, _b, width in records)
    width, count = max(widths.items(), key=lambda item: (item[1], item[0]))
    if count < _MIN_RECORDS:
        return
    joined = 0
    for first, stop, cells in wrapped:
        if cells != width:
            if sum(len(_cells(lines[i])) for i in range(first + 1, stop)) < 2:
                continue  # a lone figure under a row: the rest of a figure cut at the row's end (cut.py)
            problem(
                doc,
                f"a row wrapped over lines {lines[first].no}-{lines[stop - 1].no} makes {cells} cells where "
                f"its table's rows have {width}: not joined, the figures after its first line are not read",
                f"line {lines[first].no}",
            )
            continue
        head = lines[first]
        parts = [lines[i] for i in range(first, stop)]
        lines[first] = DocLine(
            head.no,
            " ".join(p.raw.strip() for p in parts),
            page=head.page,
            text=" ".join(p.text for p in parts),
            cells=[*(head.cells or []), *(c for p in parts[1:] for c in _cells(p))],
            heading=head.heading,
        )
        for i in range(first + 1, stop):
            lines[i] = DocLine(lines[i].no, lines[i].raw, page=lines[i].page, text="", cells=None)
        joined += 1
    if joined:
        problem(
            doc,
            f"{joined} row(s) wrapped over lines joined back to the {width} cells of their table "
            f"(lines {lines[start].no}-{lines[end - 1].no})",
            f"line {lines[wrapped[0][0]].no}",
            severity="note",
        )
