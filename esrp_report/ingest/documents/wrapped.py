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

A header of server names wrapped over lines ("Server 1 ... Server 4" over "Server 5"; a PDF's
"... Server 9 Server" over "10"; a layout's words under the cells they belong to) is joined by
its own pattern, the numbering going on, and states its table's column count where too few of
the table's records agree on one (a table of one row).

A note names each table whose rows were joined (its first line and how many rows), and each
header joined.
"""

from __future__ import annotations

import re
from collections import Counter

from esrp_report.ingest.documents.cells import clean_line, is_number
from esrp_report.ingest.documents.problems import problem
from esrp_report.model import DocLine, PublishedDocument

# A figure-only continuation: figures and the values a row prints among them.
_VALUES = frozenset(("n/a", "pass", "fail", "-"))
# Two records sharing a width establish it: one record alone (a chart's axis under its legend,
# a label and a list of figures) establishes nothing.
_MIN_RECORDS = 2
# A column heading that names a server, and a line of them only (a header's wrapped rest).
_SERVER = re.compile(r"\bServer\s*(\d+)", re.IGNORECASE)
_SERVER_END = re.compile(r"\bServer(?:\s*\d+)?\s*$", re.IGNORECASE)
_SERVERS_ONLY = re.compile(r"^(?:Server\s*\d+\s*)+$", re.IGNORECASE)
# The widest row, 13 cells of up to 12 characters, wraps at 72 columns onto at most three lines.
_MAX_CONTINUATIONS = 3


def join_wrapped(doc: PublishedDocument) -> None:
    """Join the wrapped rows of ``doc.lines`` in place (the lines keep their numbers; a joined
    continuation line is left empty)."""
    lines = _join_pipe_rows(doc, doc.lines)
    _join_server_headers(doc, lines)
    at = 0
    while at < len(lines):
        if lines[at].cells is None:
            at += 1
            continue
        end = at
        while end < len(lines) and (lines[end].cells is not None or _joined_away(lines[end])):
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


def _join_server_headers(doc: PublishedDocument, lines: list[DocLine]) -> None:
    """Headers of server names wrapped over lines joined back: "Server 1 ... Server 3" over
    "Server 4  Server 5" (a copy's wrap), or "Server 6 ... Server 9 Server" over "10" (a PDF's
    narrow last header cell). The header's own pattern says what belongs to it: the lines below
    that go on with the next server numbers and hold nothing else."""
    joined: list[int] = []
    for at, head in enumerate(lines):
        text = head.raw.strip()
        names = _server_numbers(text)
        # A header names at least two servers on its line: one name alone on a line is a column
        # of names, one a line (a PDF's header of narrow cells), which its reader takes as it is.
        if len(names) < 2 or not _SERVER_END.search(text) or names != _run(names[0], len(names)):
            continue
        raw, stop = head.raw.rstrip(), at + 1
        while stop < len(lines) and stop - at <= _MAX_CONTINUATIONS:
            below = lines[stop].raw.strip()
            if _SERVERS_ONLY.match(below) or below.isdigit():
                # A bare number finishes a name cut after its "Server"; names go on in their own
                # cells, parted as the line parts its cells (a tab, or a run of spaces).
                part = " " if below.isdigit() else "\t" if "\t" in raw else "    "
                candidate = f"{raw}{part}{below}"
            else:
                candidate = _under_cells(raw, lines[stop].raw) or ""
            numbers = _server_numbers(candidate)
            if numbers != _run(names[0], len(numbers)) or len(numbers) <= len(names):
                break
            raw, names, stop = candidate, numbers, stop + 1
        if stop == at + 1:
            continue
        lines[at] = clean_line(DocLine(head.no, raw, page=head.page))
        for i in range(at + 1, stop):
            lines[i] = DocLine(lines[i].no, lines[i].raw, page=lines[i].page, text="", cells=None)
        joined.append(head.no)
    if joined:
        problem(
            doc,
            f"{len(joined)} header(s) of server names wrapped over lines joined back by their numbering "
            f"(the first at line {joined[0]})",
            f"line {joined[0]}",
            severity="note",
        )


# A layout's header cell: words parted by single spaces; cells are parted by runs of spaces.
_LAYOUT_CELL = re.compile(r"\S+(?: \S+)*")
# How far a word wrapped in a cell may start right of the cell's own start (centred text).
_CELL_SLACK = 3


def _under_cells(raw: str, below: str) -> str | None:
    """A layout's header wrapped in its cells ("Target   Server 9   Server" over "values   10",
    each word under the cell it ends): every word of the line below joined to the cell it stands
    under, the cells parted by runs of spaces again. None when the header shows no layout (cells
    of a tab or none) or a word of the line below stands left of every cell."""
    if "\t" in raw or "\t" in below:
        return None
    cells = [(m.start(), m.group(0)) for m in _LAYOUT_CELL.finditer(raw)]
    words = [(m.start(), m.group(0)) for m in _LAYOUT_CELL.finditer(below)]
    if len(cells) < 2 or not words:
        return None
    texts = [text for _start, text in cells]
    for start, word in words:
        under = [k for k, (cell_start, _t) in enumerate(cells) if cell_start <= start + _CELL_SLACK]
        if not under:
            return None
        texts[under[-1]] += f" {word}"
    return "    ".join(texts)


def _server_numbers(text: str) -> list[int]:
    return [int(match.group(1)) for match in _SERVER.finditer(text)]


def _run(first: int, count: int) -> list[int]:
    return list(range(first, first + count))


def _header_width(line: DocLine) -> int | None:
    """The column count a header of server names states: its label cells, one per server, and
    the label column (its cell may be empty, and lost to a copy's wrap)."""
    numbers = _server_numbers(line.text)
    if not numbers or not _SERVER_END.search(line.text) or numbers != _run(numbers[0], len(numbers)):
        return None
    labels = [c for c in _cells(line) if not _SERVER.search(c)]
    return max(len(labels), 1) + len(numbers)


def _joined_away(line: DocLine) -> bool:
    """A line whose text was joined into the row above it (its cells are that row's now)."""
    return line.cells is None and not line.text and bool(line.raw.strip())


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
    header = _header_width(lines[start])
    at = start if header is None else start + 1
    while at < end:
        stop = at + 1
        if _joined_away(lines[at]):
            at = stop
            continue
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
        if header is None:
            return
        width = header  # too few records to agree on a width: the header states it
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
