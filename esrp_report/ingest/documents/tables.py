"""Summary tables outside the appendix: per-server tables (one per test: 2-hour performance,
24-hour stress), whatever their column names ("Server 4", "Host 3650-4"), aggregate tables
("Values across all servers"), backup and replay figures. A table starts at a header line naming
its columns; its rows are those whose label is a known metric (``vocabulary.SUMMARY_METRICS``),
labels wrapped over two lines joined to the figures that follow. A row whose figures cannot be
matched to the columns is not read, and says so.

A table may also be vertical, one server's label/value table under a caption naming the server
("Table 5 Server 1 test results", then "Database I/O | Value", as ESRP 4.0 documents print them):
its column is the caption's server, for every "... | Value" block until the next caption,
heading or paragraph."""

from __future__ import annotations

import re
from collections.abc import Sequence

from esrp_report import model as m
from esrp_report.ingest.documents.cells import number
from esrp_report.ingest.documents.cut import is_cut
from esrp_report.ingest.documents.matching import fuzzy_key
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import (
    BACKUP_METRICS,
    CAPTION,
    HEADER_WORDS,
    SERVER_TOKEN,
    SUMMARY_METRICS,
    VALUE_HEADERS,
)
from esrp_report.model import DocLine, PublishedDocument, SummaryRow, SummaryTable

# A target cell ahead of the figures: "< 20 msec", "<20 msec**", "N/A", "1400".
_TARGET_PREFIX = re.compile(r"^(?:[<>≤≥]=?\s*\d+(?:\.\d+)?\s*(?:msec|ms)?\s*\**|n/a)\s*", re.IGNORECASE)
_BULLET = re.compile(r"^[-•*]\s+")
# A numbered section heading in a text without Markdown ("4.3 Database backup and recovery
# performance"): a caption's server is not carried past it.
_NUMBERED_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+[A-Z][A-Za-z]")
_LABEL_TARGET = re.compile(r"^(.*?)\s*((?:[<>]=?\s*\d+\s*msec\**)|n/a)$", re.IGNORECASE)


def summary_tables(doc: PublishedDocument, in_report: set[int]) -> None:
    """The per-server, aggregate, backup and replay summary tables outside the appendix's reports:
    a header line naming the columns, then rows whose label is a known metric."""
    lines = doc.lines
    current: SummaryTable | None = None
    header_cols: list[str] = []
    header_target = False
    header_line = -10
    test = m.TestKind.PERFORMANCE
    label_parts: list[tuple[int, str]] = []
    caption_server: str | None = None  # the one server a caption names, for a vertical table
    for i, line in enumerate(lines):
        if i in in_report:
            continue
        text = line.text
        low = text.casefold()
        caption = _caption_server(line)
        if caption is not None:
            caption_server = caption or None
            header_cols, header_target, current = [], False, None
            label_parts.clear()
            continue
        if caption_server and _value_header(line):
            header_cols, header_target, header_line = [caption_server], False, i
            continue
        if line.heading or (line.cells is None and len(text) < 100):
            if "stress" in low and ("result" in low or "hour" in low) and test is not m.TestKind.STRESS:
                test = m.TestKind.STRESS
                header_cols, header_target, current = [], False, None
            elif "performance" in low and ("result" in low or "metrics" in low or "server" in low):
                test = m.TestKind.PERFORMANCE if "stress" not in low else test
        if line.heading or (line.cells is None and _NUMBERED_HEADING.match(text)):
            header_cols, header_target, current = [], False, None
            caption_server = None
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
            caption_server = None
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
        if (key in BACKUP_METRICS or key == "replay_seconds") and not header_cols:
            cols = ["all servers"]
        elif header_cols:
            cols = header_cols
        else:
            doc.unread_summary_rows += 1
            problem(
                doc, f"summary row {label!r} has no column heading; the row is not read", f"line {line.no}"
            )
            continue
        figures = [(v, number(v)) for v in values]
        # A figure cut at the row's end is a column's slot, unread: the columns stay aligned.
        numeric = [(t, n) for t, n in figures if n is not None or is_cut(t)]
        take = numeric[-len(cols) :] if len(numeric) >= len(cols) else numeric
        row_target = numeric[-len(cols) - 1][1] if len(numeric) > len(cols) else None
        if len(take) < len(cols):
            # Which figure belongs to which column cannot be known: none is used.
            doc.unread_summary_rows += 1
            problem(
                doc,
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
            doc.summary_tables.append(current)
        row = SummaryRow(key, label, line.no, _placed(line, take), row_target)
        current.rows.append(row)


def _placed(line: DocLine, take: Sequence[tuple[str, m.DocNumber | None]]) -> list[m.DocNumber | None]:
    """The row's figures, each placed at its cell of the line: the figures are the line's last
    numeric cells, so they are matched from the right."""
    cells = line.cells or []
    placed: list[m.DocNumber | None] = []
    at = len(cells)
    for text, figure in reversed(take):
        at -= 1
        while at >= 0 and cells[at] != text:
            at -= 1
        placed.append(None if figure is None else figure.at(line.no, at) if at >= 0 else figure)
        at = max(at, 0)
    placed.reverse()
    return placed


def _caption_server(line: DocLine) -> str | None:
    """For a table caption ("Table 5 Server 1 test results"): the one server it names, or ""
    when it names none or several; None for a line that is not a caption."""
    if line.cells or len(line.text) > 100:
        return None
    caption = CAPTION.match(line.text)
    if caption is None:
        return None
    servers = list(SERVER_TOKEN.finditer(line.text[caption.end() :]))
    if len(servers) != 1:
        return ""
    found = servers[0]
    return f"Server {found.group(2)}" if found.group(1) else f"Host {found.group(3)}"


def _value_header(line: DocLine) -> bool:
    """Is this the header of a vertical label/value table ("Database I/O | Value")?"""
    cells = line.cells
    return cells is not None and len(cells) == 2 and cells[1].strip().casefold() in VALUE_HEADERS


def _named_columns(line: DocLine) -> list[str]:
    """The columns of a per-server table headed by its servers' own names ("Database I/O | Target
    values | 3650-4"): a header line that starts with the table's first column, "Database I/O",
    and holds beside the known header words only names (no figure, no "Value" of a vertical
    table). A PDF's single-spaced header gives its names split on spaces."""
    text = line.text
    if not text.casefold().startswith(_FIRST_COLUMN) or len(text) > 120:
        return []
    if line.cells and len(line.cells) >= 2:
        rest = [c for c in line.cells[1:] if c and not HEADER_WORDS.fullmatch(c.strip())]
    else:
        rest = HEADER_WORDS.sub(" ", text[len(_FIRST_COLUMN) :]).split()
    names = [" ".join(name.split()) for name in rest]
    if not 1 <= len(names) <= 16 or any(
        number(n) is not None or n.casefold() in _NOT_NAMES or len(n) > 24 or not n for n in names
    ):
        return []
    return names


_FIRST_COLUMN = "database i/o"
# Words of a header wrapped over lines ("Database I/O Target" / "values"), never a server's name.
_NOT_NAMES = VALUE_HEADERS | {"target", "targets"}


def _header_columns(line: DocLine) -> tuple[list[str], bool]:
    """Column names of a summary table's header line: servers, hosts or 'all servers'."""
    text = line.text
    low = text.casefold()
    target = "target" in low
    if ("across all servers" in low or "values across" in low) and (line.cells or len(text) < 80):
        return ["all servers"], target
    # Every other answer needs a short line naming a server or host: most lines are ruled out
    # by these two checks before the substitutions below.
    if len(text) > 160:
        return [], False
    if not SERVER_TOKEN.search(text):
        return _named_columns(line), target
    residue = SERVER_TOKEN.sub(" ", text)
    residue = HEADER_WORDS.sub(" ", residue)
    if len(" ".join(residue.split())) > 12:
        return [], False
    servers = [
        f"Server {m2.group(2)}" if m2.group(1) else f"Host {m2.group(3)}"
        for m2 in SERVER_TOKEN.finditer(text)
    ]
    if not servers:
        return [], False
    if len(servers) == 1 and not (
        line.heading or (line.cells and len(line.cells) <= 2) or text.startswith(("Host", "Server"))
    ):
        return [], False
    return servers, target
