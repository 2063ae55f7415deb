"""Summary tables outside the appendix: per-server tables (one per test: 2-hour performance,
24-hour stress), whatever their column names ("Server 4", "Host 3650-4"), aggregate tables
("Values across all servers"), backup and replay figures. A table starts at a header line naming
its columns; its rows are those whose label is a known metric (``vocabulary.SUMMARY_METRICS``),
labels wrapped over two lines joined to the figures that follow. A row whose figures cannot be
matched to the columns is not read, and says so.

A table may also be vertical, one server's label/value table ("Database I/O | Value", as ESRP 4.0
documents print them), found by its header and its rows' labels whatever is printed around it.
Its column is the server named nearest before it (:class:`_Servers`): a caption ("Table 5 Server 1
test results", "Results for mailbox server JS16"), a heading or short line ("Mailbox server
EXCH-01"), the sentence just before ("The following table shows the results of server JS16."),
or the header's own first cell ("JS16 | Value"); a name holds for every "... | Value" block until
the next caption, heading or paragraph. A server is a "Server N" or "Host X" token, or a machine
name the document's appendix reports print. A vertical table naming no server is the document's
one server's when it has one (one machine in its reports, or a configuration of one server), with
a note saying so; with several servers it is an unnamed server's (``UNNAMED_SERVER``, one column
per table), never a guessed one's."""

from __future__ import annotations

import re
from collections.abc import Sequence

from esrp_report import model as m
from esrp_report.ingest.documents.cells import number
from esrp_report.ingest.documents.cut import is_cut
from esrp_report.ingest.documents.matching import fuzzy_key, normalize
from esrp_report.ingest.documents.problems import problem
from esrp_report.ingest.documents.vocabulary import (
    BACKUP_METRICS,
    CAPTION,
    FACTS,
    HEADER_WORDS,
    SERVER_TOKEN,
    SUMMARY_METRICS,
    VALUE_HEADERS,
)
from esrp_report.model import UNNAMED_SERVER, DocLine, PublishedDocument, SummaryRow, SummaryTable

# A target cell ahead of the figures: "< 20 msec", "<20 msec**", "N/A", "1400".
_TARGET_PREFIX = re.compile(r"^(?:[<>≤≥]=?\s*\d+(?:\.\d+)?\s*(?:msec|ms)?\s*\**|n/a)\s*", re.IGNORECASE)
_BULLET = re.compile(r"^[-•*]\s+")
# A numbered section heading in a text without Markdown ("4.3 Database backup and recovery
# performance"): a caption's server is not carried past it.
_NUMBERED_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+[A-Z][A-Za-z]")
_LABEL_TARGET = re.compile(r"^(.*?)\s*((?:[<>]=?\s*\d+\s*msec\**)|n/a)$", re.IGNORECASE)


def _wrapped_label(parts: list[str]) -> str:
    """The label a row's lines wrapped over, joined by content: the fewest last lines that join into
    a known metric's label as printed ("MB read/sec" + "total per" + "server"), however many that
    takes; else the fewest that join into one closely enough (a label spelt otherwise, or a word
    damaged, as ``fuzzy_key`` reads it); when none does, the last two, as a label wrapped once."""
    joins = [" ".join(parts[-count:]) for count in range(1, len(parts) + 1)]
    exact = next((j for j in joins if normalize(j) in SUMMARY_METRICS), None)
    if exact is not None:
        return exact
    return next((j for j in joins if fuzzy_key(j, SUMMARY_METRICS) is not None), " ".join(parts[-2:]))


def summary_tables(doc: PublishedDocument, in_report: set[int]) -> None:
    """The per-server, aggregate, backup and replay summary tables outside the appendix's reports:
    a header line naming the columns, then rows whose label is a known metric."""
    lines = doc.lines
    servers = _Servers.of(lines, in_report)
    current: SummaryTable | None = None
    header_cols: list[str] = []
    header_target = False
    header_line = -10
    test = m.TestKind.PERFORMANCE
    label_parts: list[tuple[int, str]] = []
    near: str | None = None  # the one server named nearest before, for a vertical table
    vertical = ""  # how a vertical table's column was found when no line named it: its note
    for i, line in enumerate(lines):
        if i in in_report:
            continue
        text = line.text
        low = text.casefold()
        caption = _caption_server(line, servers)
        if caption is not None:
            near = caption or None
            header_cols, header_target, current, vertical = [], False, None, ""
            label_parts.clear()
            continue
        if _value_header(line, header_cols):
            first = (line.cells or [line.text])[0]
            own = servers.named(first)
            if own:
                header_cols, vertical, near = [own], "", own
            elif near:
                header_cols, vertical = [near], ""
            elif len(header_cols) == 1 and (
                current is None or not normalize(first).startswith(_FIRST_COLUMN)
            ):
                # The one column a line just before named ("Host 3650-4", "across all servers"),
                # or the table's next block ("Transaction Log I/O | Value"): the same column.
                pass
            else:
                # A table of its own (a first block, or "Database I/O" again): its column is the one
                # server of the document, or an unnamed server of this table.
                header_cols, vertical = servers.unnamed(line.no)
                current = None
            header_target, header_line = False, i
            continue
        if line.heading or (line.cells is None and len(text) < 100):
            if "stress" in low and ("result" in low or "hour" in low) and test is not m.TestKind.STRESS:
                test = m.TestKind.STRESS
                header_cols, header_target, current = [], False, None
            elif "performance" in low and ("result" in low or "metrics" in low or "server" in low):
                test = m.TestKind.PERFORMANCE if "stress" not in low else test
        if line.heading or (line.cells is None and _NUMBERED_HEADING.match(text)):
            header_cols, header_target, current, vertical = [], False, None, ""
            near = None
        if line.cells is None and text and len(text) < 300:
            # A heading or sentence naming one server (or all: "Aggregate performance across all
            # servers") names the vertical table that follows.
            named = "all servers" if _AGGREGATE_HEADING.search(text) else servers.named(text)
            if named:
                near = named
        columns, target = _header_columns(line)
        if not columns:
            columns = _server_columns(line, servers)
        if columns:
            if i - header_line <= 2 and header_cols and not current and columns != header_cols:
                header_cols += columns
            else:
                header_cols = columns
            header_target = (header_target or target) if i - header_line <= 2 else target
            header_line = i
            current, vertical = None, ""
            near = None  # a name before a table with its own header is that table's, not the next's
            label_parts.clear()
            continue
        cells = line.cells
        if not cells and len(text) > 100:
            header_cols, header_target, current, vertical = [], False, None, ""  # prose ends a table
            near = near if len(text) < 300 and servers.named(text) == near else None
        if not cells:
            if text and len(text) < 70 and not line.heading:
                # Every short line since the last row: a narrow label column wraps a label over as
                # many lines as it needs; which of them the label is, the row's reading decides.
                label_parts.append((i, text))
            else:
                label_parts.clear()
            continue
        label, values = _BULLET.sub("", cells[0]), cells[1:]
        if (not label or _TARGET_PREFIX.fullmatch(label + " ")) and label_parts:
            values = ([label] if label else []) + values
            label = _wrapped_label([t for _i, t in label_parts])
        key = fuzzy_key(label, SUMMARY_METRICS)
        if key is None:
            label_match = _LABEL_TARGET.match(label)
            if label_match:
                key = fuzzy_key(label_match.group(1), SUMMARY_METRICS)
                values = [label_match.group(2), *values]
        label_parts.clear()
        if key is None:
            continue
        if (key in BACKUP_METRICS or key == "replay_seconds") and (not header_cols or vertical):
            # A backup or replay figure under no server's name is the document's ("Performance
            # item | Detail" [002]): the backup relations read it so.
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
            if kind == "server" and vertical:
                problem(doc, vertical, f"line {line.no}", severity="note")
        row = SummaryRow(key, label, line.no, _placed(line, take), row_target)
        current.rows.append(row)


class _Servers:
    """The servers a document names, as the summary tables are matched to them: the machine names
    its appendix reports print ("Machine Name | JS16"), and how many servers its configuration
    says were tested."""

    def __init__(self, machines: list[str], count: int | None, numbered: int = 0) -> None:
        self.machines = machines
        self.count = count
        self.numbered = numbered  # how many "Server N" the text outside the reports names
        self._machine = (
            re.compile(
                r"(?<![\w-])(" + "|".join(re.escape(n) for n in machines) + r")(?![\w-])", re.IGNORECASE
            )
            if machines
            else None
        )

    @classmethod
    def of(cls, lines: Sequence[DocLine], in_report: set[int]) -> _Servers:
        machines: list[str] = []
        count: int | None = None
        numbered: set[str] = set()
        for i, line in enumerate(lines):
            if i not in in_report and "Server" in line.text:
                numbered.update(_NUMBERED_SERVER.findall(line.text))
            cells = line.cells
            if not cells or len(cells) < 2:
                continue
            label = normalize(cells[0])
            if i in in_report:
                name = cells[1].strip()
                if label == "machine name" and name and name.casefold() not in map(str.casefold, machines):
                    machines.append(name)
            elif FACTS.get(label) in _SERVER_COUNTS and (figure := number(cells[1])) is not None:
                count = int(figure.value)
        return cls(machines, count, len(numbered))

    def named(self, text: str) -> str:
        """The one server a line names ("Results for mailbox server JS16", "Server 1", "Host
        3650-4"), or "" when it names none or several."""
        found: set[str] = set()
        if self._machine is not None:
            by_case = {n.casefold(): n for n in self.machines}
            found.update(by_case[f.group(1).casefold()] for f in self._machine.finditer(text))
        for token in SERVER_TOKEN.finditer(text):
            if token.group(1):
                # "Windows Server 2016" is a product, not a server: servers are numbered from 1;
                # "mailboxes per server 1,750" is a figure.
                if int(token.group(2)) < _PRODUCT_YEAR and not _FIGURE_GOES_ON.match(text, token.end()):
                    found.add(f"Server {token.group(2)}")
            elif any(c.isdigit() for c in token.group(3)):
                # "Host 3650-4", named as the tables' headers name it; "Host OS" names no server.
                found.discard(
                    next((n for n in self.machines if n.casefold() == token.group(3).casefold()), "")
                )
                found.add(f"Host {token.group(3)}")
        if not found and not self.machines and (word := _SERVER_WORD.search(text)):
            found.add(word.group(1))
        return found.pop() if len(found) == 1 else ""

    def unnamed(self, line: int) -> tuple[list[str], str]:
        """The column of a vertical table no line names, and the note that says whose it is taken as."""
        # One machine in the reports is one server only if nothing says there are more: 000's
        # appendix holds one server's reports of ten.
        if len(self.machines) == 1 and self.count in (None, 1) and self.numbered <= 1:
            name = self.machines[0]
            return [name], (
                f"the per-server table names no server; the document has one, {name} (its appendix "
                "reports' machine name), so the table is taken as that server's"
            )
        if not self.machines and self.count == 1 and self.numbered <= 1:
            return ["Server 1"], (
                "the per-server table names no server; the configuration states one server tested, "
                "so the table is taken as that server's (Server 1)"
            )
        column = f"{UNNAMED_SERVER} at line {line}"
        return [column], (
            f"the per-server table names no server and the document has "
            f"{max(self.count or 0, len(self.machines), self.numbered) or 'an unknown number of'} "
            f"server(s): it is read as "
            f"'{column}', checked by the relations that need no server and matched to no appendix report"
        )


# A server's number in a heading or header, "Server 4" (capitalised, as a name; never "per server
# 1,750" or "Windows Server 2016").
_NUMBERED_SERVER = re.compile(r"\bServer\s+(\d{1,3})\b(?![.,]\d)")
_FIGURE_GOES_ON = re.compile(r"[.,]\d")
# The configuration facts that count the servers tested (facts.toml).
_SERVER_COUNTS = frozenset({"servers_tested"})
# "Server 2016": a product's year, not a server's number.
_PRODUCT_YEAR = 1990
# A server named by a word of letters and digits after "server" ("mailbox server EXCH-01"), when
# the document's reports print no machine names to match it against (where they do, such a word
# that is none of them is more likely a model: "each server R740xd").
_SERVER_WORD = re.compile(r"\bserver\s+([A-Za-z][\w-]*\d[\w-]*)\b", re.IGNORECASE)


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


# The first cell of a header whose other cells name servers ("| Soft recovery | EXMBX01 |"): with
# one server named, only these words say the line is a header and not a fact ("Machine | EXMBX01").
_HEADER_FIRST_WORDS = re.compile(
    r"^(?:database i/o|backup|database backup|soft recovery|recovery|replay|performance item|metric|"
    r"counter|test|item|server|results?)$"
)


def _server_columns(line: DocLine, servers: _Servers) -> list[str]:
    """A header row naming its columns by the document's servers, whatever its first cell says
    ("| Soft recovery | EXMBX01 | EXMBX02 | EXMBX03 |"): every cell after the first names one
    server, each a different one, and none is a figure."""
    cells = line.cells
    if not cells or len(cells) < 2 or len(line.text) > 200:
        return []
    names = [servers.named(c) for c in cells[1:]]
    if not all(names) or len(set(names)) != len(names) or any(number(c) is not None for c in cells[1:]):
        return []
    if len(names) == 1 and not _HEADER_FIRST_WORDS.match(normalize(cells[0])):
        return []
    return names


def _caption_server(line: DocLine, servers: _Servers) -> str | None:
    """For a table caption ("Table 5 Server 1 test results", "Table 5 Results for server JS16"):
    the one server it names, or "" when it names none or several; None for a line that is not a
    caption."""
    if line.cells or len(line.text) > 100:
        return None
    caption = CAPTION.match(line.text)
    if caption is None:
        return None
    return servers.named(line.text[caption.end() :])


def _value_header(line: DocLine, header_cols: list[str]) -> bool:
    """Is this the header of a vertical label/value table: "Database I/O | Value", or a section's
    name over an empty column ("Database I/O |" [001]) where no table's header holds (within one,
    it is the table's section row: "Transaction log I/O" [000])?"""
    cells = line.cells
    if cells is None and len(line.text) < 40:
        # Its empty column dropped with the trailing tab, or its spacing collapsed to one space
        # ("Database I/O Value").
        section, _space, value = line.text.rpartition(" ")
        if value.casefold() in VALUE_HEADERS and normalize(section) in _SECTIONS:
            return True
        return not header_cols and normalize(line.text) in _SECTIONS
    if cells is None or not 1 <= len(cells) <= 2:
        return False
    second = cells[1].strip().casefold() if len(cells) == 2 else ""
    return second in VALUE_HEADERS or (not second and not header_cols and normalize(cells[0]) in _SECTIONS)


# Words that name every server at once: an aggregate table's column or heading.
_AGGREGATE = re.compile(r"\b(?:aggregate|all servers|total)\b", re.IGNORECASE)
_AGGREGATE_HEADING = re.compile(r"\b(?:aggregate|across all servers)\b", re.IGNORECASE)
# The sections of a per-server table, each its own "... | Value" block.
_SECTIONS = frozenset({"database i/o", "transaction log i/o"})


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
    if low.startswith(_FIRST_COLUMN) and line.cells and any(_AGGREGATE.search(c) for c in line.cells[1:]):
        return ["all servers"], target  # "Database I/O | Aggregate", "Database I/O | Total"
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
