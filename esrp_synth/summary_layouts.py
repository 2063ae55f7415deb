"""The seeds' summary tables laid out as other vendors print them, for the audit's tests: the
per-server tables' captions removed or reworded, their server named elsewhere (a heading above,
the header row, the first cell, the sentence before) or by its machine name, a single-server
document whose table names no server, the table cells separated by pipes or runs of spaces, and
the metrics' labels in other spellings the vocabulary knows.

Each variant is a function of a seed's text (``tests/data/published/``) and the seed's machine
names (:func:`machine_names`); it changes only the summary tables outside the appendix (and, for
the single-server document, drops the other servers), so the same figures stand in the same rows.

Not part of the product: nothing under ``esrp_report/`` imports this.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from esrp_report.analysis.rules import load_rules
from esrp_report.audit.context import build_context, run_for
from esrp_report.audit.result import AuditResult
from esrp_report.ingest.documents.published import parse_document
from esrp_report.model import TestKind

# "Table 5 Server 1 test results" [002]: the caption of a vertical per-server table.
_CAPTION = re.compile(r"^Table (\d+) (Server \d+) test results$")
# A heading over one of 000's horizontal per-server tables, or 001's host line over its table.
_HORIZONTAL_HEADING = re.compile(r"^(?:### Individual server metrics for Server \d+ through Server \d+)$")
_HOST_LINE = re.compile(r"^Host (\S+)$")
_SERVER = re.compile(r"\bServer (\d+)\b")
# Where the appendix starts in each seed (the summary tables are before it).
_APPENDIX = re.compile(
    r"^(?:A Performance testing|Appendix|## Appendix|Microsoft Exchange Server \*\*Jetstress)"
)


def machine_names(text: str, source: str = "seed.txt") -> dict[str, str]:
    """Each per-server column's machine name: that of the appendix report the audit matches to the
    column ("Server 1" -> "JS16"); a column no report matches is given "MBX-<its number>"."""
    doc = parse_document(text.encode("utf-8"), source)
    ctx = build_context(doc, load_rules(None), AuditResult(source, doc.format, doc.convention))
    names: dict[str, str] = {}
    for column in ctx.columns[TestKind.PERFORMANCE]:
        run = run_for(ctx, TestKind.PERFORMANCE, column)
        if run is not None and run.machine:
            names[column.name] = run.machine
        else:
            number = _SERVER.search(column.name)
            names[column.name] = f"MBX-{number.group(1)}" if number else column.name.removeprefix("Host ")
    return names


def _appendix_start(lines: list[str]) -> int:
    for index, line in enumerate(lines):
        if index > 100 and _APPENDIX.match(line):
            return index
    return len(lines)


def _in_summary(text: str, change: Callable[[str, int], list[str] | str | None]) -> str:
    """``text`` with each line before the appendix changed by ``change`` (a line, lines, or None to
    drop it; the line's index is given too)."""
    lines = text.splitlines()
    end = _appendix_start(lines)
    out: list[str] = []
    for index, line in enumerate(lines):
        if index >= end:
            out.append(line)
            continue
        changed = change(line, index)
        if changed is None:
            continue
        out.extend([changed] if isinstance(changed, str) else changed)
    return "\n".join(out) + "\n"


def _vertical(text: str, caption: Callable[[str, str, str], list[str]], machines: dict[str, str]) -> str:
    """002's captions "Table N Server k test results" replaced by ``caption(number, server,
    machine)``'s lines."""

    def change(line: str, _index: int) -> list[str]:
        found = _CAPTION.match(line)
        if found is None:
            return [line]
        server = found.group(2)
        return caption(found.group(1), server, machines.get(server, server))

    return _in_summary(text, change)


def _header_named(text: str, machines: dict[str, str], first_cell: bool) -> str:
    """002's captions dropped; each vertical table's header names its server in the value column
    ("Database I/O | JS16") or in the first cell ("JS16 — Database I/O | Value")."""
    server = ""

    def change(line: str, _index: int) -> list[str] | str | None:
        nonlocal server
        found = _CAPTION.match(line)
        if found is not None:
            server = machines.get(found.group(2), found.group(2))
            return None
        if server and line.endswith("\tValue") and line.startswith(("Database I/O", "Transaction Log I/O")):
            section = line.partition("\t")[0]
            if first_cell:
                return f"{server} — {section}\tValue" if section == "Database I/O" else line
            return f"{section}\t{server}"
        return line

    return _in_summary(text, change)


def _horizontal(text: str, machines: dict[str, str], *, drop_headings: bool, rename: bool) -> str:
    """000's and 001's per-server tables: their headings dropped (000's "Individual server metrics
    for ...", 001's "Host 3650-4" over its per-server table), or their servers renamed to the
    machine names (000's header rows; 001's host line becomes "Mailbox server 3650-4")."""
    hosts = 0

    def change(line: str, _index: int) -> str | None:
        nonlocal hosts
        host = _HOST_LINE.match(line)
        if host is not None:
            hosts += 1
            if hosts == 1 and drop_headings:
                return None
            return f"Mailbox server {host.group(1)}" if hosts == 1 and rename else line
        if drop_headings and _HORIZONTAL_HEADING.match(line):
            return None
        if rename and "\tServer " in line:
            for name in sorted(machines, key=len, reverse=True):
                line = re.sub(rf"\b{re.escape(name)}\b(?!\d)", machines[name], line)
        return line

    return _in_summary(text, change)


def _separated(text: str, how: str) -> str:
    """The summary tables' cells separated by Markdown pipes or by runs of two or more spaces."""

    def change(line: str, _index: int) -> str:
        if "\t" not in line:
            return line
        cells = [c.strip() for c in line.split("\t")]
        if how == "pipes":
            return "| " + " | ".join(c or " " for c in cells) + " |"
        return "   ".join(c or "-" for c in cells) if cells[-1] else "   ".join(cells[:-1])

    return _in_summary(text, change)


# Other spellings of the seeds' summary labels: each is a label the vocabulary already lists for
# the same metric (summary.toml: another seed's, the singular of a 4.0 label, a Jetstress report
# column) or the same label in another case and unit ("(msec)" for "(ms)").
LABEL_SPELLINGS = {
    "Database Disks Transfers/sec": "Database Disk Transfers/sec",
    "Database Disks Reads/sec": "database disk reads/sec",
    "Database Disks Writes/sec": "I/O Database Writes/sec",
    "Average Database Disk Read Latency (ms)": "Average database disk read latency (msec)",
    "Average Database Disk Write Latency (ms)": "AVERAGE DATABASE DISK WRITE LATENCY (MSEC)",
    "Log Disks Writes/sec": "Log Disk Writes/sec",
    "Database reads/sec": "I/O Database Reads/sec",
    "Database writes/sec": "Database Disks Writes/sec",
    "I/O database reads average latency (msec)": "I/O Database Reads Average Latency (msec)",
    "Log writes/sec": "I/O Log Writes/sec",
}


def _relabelled(text: str) -> str:
    def change(line: str, _index: int) -> str:
        label, tab, rest = line.partition("\t")
        return LABEL_SPELLINGS[label] + tab + rest if tab and label in LABEL_SPELLINGS else line

    return _in_summary(text, change)


def single_server(text: str) -> str:
    """002 reduced to one server: Server 1's table (its caption dropped, so no server is named near
    it) and Server 1's appendix report; the other servers' tables and reports, and the contents'
    lines for them, are gone."""
    out: list[str] = []
    table = report = False  # within another server's table, within another server's report
    for line in text.splitlines():
        found = _CAPTION.match(line)
        if found is not None:
            table = found.group(2) != "Server 1"
            continue
        if _OTHER_SERVER.match(line):
            report = report or "\t" not in line  # a contents line ("A.2 Server 2<tab>22") goes alone
            continue
        table = table and not _NUMBERED_HEADING.match(line)
        report = report and not line.startswith("B Technical")
        if not (table or report):
            out.append(line)
    return "\n".join(out) + "\n"


_OTHER_SERVER = re.compile(r"^A\.[2-9]\b")
_NUMBERED_HEADING = re.compile(r"^\d+(?:\.\d+)* [A-Z]")


def variants(name: str, text: str) -> dict[str, str]:
    """Every summary-table layout variant of one seed (``vmax-000``, ``netapp-001``,
    ``dellemc-002``), by variant name."""
    machines = machine_names(text, f"{name}.txt")
    out = {
        "pipes": _separated(text, "pipes"),
        "spaces": _separated(text, "spaces"),
        "labels": _relabelled(text),
    }
    if name.endswith("002"):
        out |= {
            "caption-removed": _vertical(text, lambda _n, _s, _m: [], machines),
            "caption-results-for": _vertical(
                text, lambda n, _s, m: [f"Table {n} Results for mailbox server {m}"], machines
            ),
            "caption-dash": _vertical(
                text, lambda _n, _s, m: [f"Mailbox server {m} — two-hour performance"], machines
            ),
            "caption-unnamed": _vertical(text, lambda n, _s, _m: [f"Table {n} Test results"], machines),
            "heading-above": _vertical(text, lambda _n, _s, m: [f"#### {m}"], machines),
            "prose-before": _vertical(
                text, lambda _n, _s, m: [f"The following table shows the results of server {m}."], machines
            ),
            "machine-names": _vertical(text, lambda n, _s, m: [f"Table {n} {m} test results"], machines),
            "header-row": _header_named(text, machines, first_cell=False),
            "first-cell": _header_named(text, machines, first_cell=True),
        }
    else:
        out |= {
            "caption-removed": _horizontal(text, machines, drop_headings=True, rename=False),
            "machine-names": _horizontal(text, machines, drop_headings=False, rename=True),
        }
    return out
