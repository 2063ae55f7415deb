"""The tables of one appendix test report, as printed text, ready for either layout.

The screen HTML shows them as ordinary tables. The PDF shows them as listings: one monospaced
line per row, column headings wrapped above their columns. A 10-server appendix holds some 30,000
table cells, and a page layout engine spends most of its time on cells, so a listing with one line
per row lays out several times faster (measured in docs/benchmarks.md) with the same figures.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from esrp_report import model as m
from esrp_report.model.numbers import fmt_number
from esrp_report.render.document import RunView
from esrp_report.render.jetstress_text import (
    TABLE_COLUMNS,
    TABLE_TITLES,
    duration,
    figure_name,
    table_name,
    timestamp,
)

HEADING_WIDTH = 10  # characters per heading line above a numeric column in a listing


@dataclass(frozen=True)
class AppendixRow:
    """One row of an appendix table as printed text; ``failing`` marks a row that failed a rule."""

    cells: tuple[str, ...]
    failing: bool = False


@dataclass(frozen=True)
class AppendixTable:
    """One table of an appendix test report as printed text: title, column headings (none for a key/value
    table), which columns are figures, rows."""

    title: str
    headings: tuple[str, ...]  # empty: a key/value table without a heading row
    numeric: tuple[bool, ...]  # per column: right-aligned figures
    rows: tuple[AppendixRow, ...]
    wide: bool = False  # a per-instance table with many columns

    def listing(self) -> Listing:
        """The table as a monospaced listing, for the PDF."""
        return listing(self)


@dataclass(frozen=True)
class Listing:
    """An appendix table as monospaced text: the heading lines, then one line per row with whether it
    failed."""

    head: str  # heading lines, columns aligned with the body
    lines: tuple[tuple[str, bool], ...]  # (row text, failing)


def instance_columns(kind: m.TableKind) -> list[tuple[str, str]]:
    """(heading, metric key) in Jetstress report order, headings as Jetstress prints them."""
    return [(c.format(msec=" (msec)", persec="/sec", io="I/O"), key) for c, key in TABLE_COLUMNS[kind]]


def _kv(title: str, pairs: list[tuple[str, str]], numeric: bool = False) -> AppendixTable:
    return AppendixTable(title, (), (False, numeric), tuple(AppendixRow((k, v)) for k, v in pairs))


def _plain(title: str, headings: tuple[str, ...], rows: list[AppendixRow]) -> AppendixTable:
    return AppendixTable(title, headings, (False,) + (True,) * (len(headings) - 1), tuple(rows))


def appendix_tables(rv: RunView) -> list[AppendixTable]:
    """Every table of one test report, in the order Jetstress prints them."""
    run = rv.run
    tables: list[AppendixTable] = []
    if run.summary:
        tables.append(_kv("Test summary", list(run.summary.items())))
    s = run.sizing
    if s.achieved_iops is not None or s.target_iops is not None:
        tables.append(
            _kv(
                "Database sizing and throughput",
                [
                    ("Achieved Transactional I/O per Second", fmt_number(s.achieved_iops, 3)),
                    ("Target Transactional I/O per Second", fmt_number(s.target_iops, 0)),
                    ("Initial Database Size (bytes)", fmt_number(s.initial_database_bytes, 0)),
                    ("Final Database Size (bytes)", fmt_number(s.final_database_bytes, 0)),
                    ("Database Files (Count)", "—" if s.database_files is None else str(s.database_files)),
                ],
                numeric=True,
            )
        )
    if run.parameters:
        tables.append(_kv("Jetstress system parameters", list(run.parameters.items())))
    if run.databases:
        tables.append(
            _kv(
                "Database configuration",
                [
                    (db.instance, f"Log path: {db.log_path or '—'}; Database: {', '.join(db.database_paths)}")
                    for db in run.databases
                ],
            )
        )
    for kind in m.TableKind:
        table = run.tables.get(kind)
        if table is None:
            continue
        columns = instance_columns(kind)
        rows = [
            AppendixRow(
                (
                    row.instance + (" (Fail)" if row.instance in rv.failing_instances else ""),
                    *(fmt_number(row.values.get(key), 3) for _, key in columns),
                ),
                failing=row.instance in rv.failing_instances,
            )
            for row in table.rows
        ]
        headings = ("MSExchange Database ==> Instances", *(h for h, _ in columns))
        tables.append(
            AppendixTable(
                TABLE_TITLES[kind], headings, (False,) + (True,) * len(columns), tuple(rows), wide=True
            )
        )
    if run.backup:
        tables.append(
            _plain(
                "Database backup statistics",
                (
                    "Database instance",
                    "Database size (MBytes)",
                    "Elapsed backup time",
                    "MBytes transferred/sec",
                ),
                [
                    AppendixRow(
                        (
                            b.instance,
                            fmt_number(b.database_size_mb, 2),
                            duration(b.elapsed_seconds),
                            fmt_number(b.mb_per_sec, 2),
                        )
                    )
                    for b in run.backup
                ],
            )
        )
    if run.soft_recovery:
        tables.append(
            _plain(
                "Soft-recovery statistics",
                ("Database instance", "Log files replayed", "Elapsed seconds", "Seconds per log"),
                [
                    AppendixRow(
                        (
                            r.instance,
                            fmt_number(r.logs_replayed, 0),
                            fmt_number(r.elapsed_seconds, 3),
                            fmt_number(r.seconds_per_log, 3),
                        )
                    )
                    for r in run.soft_recovery
                ],
            )
        )
    if run.checksum:
        tables.append(
            _plain(
                "Checksum statistics",
                ("Database", "Seen pages", "Bad pages", "Correctable pages", "Wrong page-number pages"),
                [
                    AppendixRow(
                        (
                            c.database,
                            fmt_number(c.seen_pages, 0),
                            fmt_number(c.bad_pages, 0),
                            fmt_number(c.correctable_pages, 0),
                            fmt_number(c.wrong_page_number_pages, 0),
                        ),
                        failing=bool(c.bad_pages),
                    )
                    for c in run.checksum
                ],
            )
        )
    if run.host:
        tables.append(
            _plain(
                "Host system performance",
                ("Counter", "Average", "Minimum", "Maximum"),
                [
                    AppendixRow(
                        (h.name, fmt_number(h.average, 3), fmt_number(h.minimum, 3), fmt_number(h.maximum, 3))
                    )
                    for h in run.host
                ],
            )
        )
    if rv.disagreements:
        tables.append(
            _plain(
                "Where the report and its counter log disagree",
                ("Table", "Instance", "Figure", "Report", "Counter log"),
                [
                    AppendixRow(
                        (
                            table_name(d.table),
                            d.instance,
                            figure_name(d.metric),
                            fmt_number(d.first_value, 3),
                            fmt_number(d.second_value, 3),
                        )
                    )
                    for d in rv.disagreements
                ],
            )
        )
    return tables


def test_log_lines(run: m.Run) -> list[str]:
    """The run's test log as printed lines ("M/D/YYYY h:mm:ss AM -- message"); empty when the run has no test
    log."""
    if run.test_log is None:
        return []
    return [f"{timestamp(e.timestamp)} -- {e.message}" for e in run.test_log.entries]


def listing(table: AppendixTable) -> Listing:
    """Monospaced rows: the first column left-aligned, figures right-aligned, headings wrapped
    into lines no wider than their column and stacked bottom-aligned above it."""
    width = len(table.numeric)
    gap = " " if table.wide else "  "  # 13 columns of figures must fit an A4 text width
    cells = [row.cells for row in table.rows]
    widths = [max((len(c[i]) for c in cells if i < len(c)), default=0) for i in range(width)]
    if table.headings:
        wrapped = []
        for i, heading in enumerate(table.headings):
            longest_word = max((len(word) for word in heading.split()), default=0)
            limit = max(widths[i], HEADING_WIDTH if table.numeric[i] else 24, longest_word)
            lines = textwrap.wrap(heading, limit) or [""]
            widths[i] = max(widths[i], *(len(line) for line in lines))
            wrapped.append(lines)
        depth = max(len(lines) for lines in wrapped)
        head_lines = []
        for level in range(depth):
            parts = []
            for i, lines in enumerate(wrapped):
                offset = depth - len(lines)
                text = lines[level - offset] if level >= offset else ""
                parts.append(text.rjust(widths[i]) if table.numeric[i] else text.ljust(widths[i]))
            head_lines.append(gap.join(parts).rstrip())
        head = "\n".join(head_lines)
    else:
        head = ""

    def line(row: AppendixRow) -> str:
        parts = []
        for i in range(width):
            text = row.cells[i] if i < len(row.cells) else ""
            if table.numeric[i]:
                parts.append(text.rjust(widths[i]))
            elif i == width - 1:
                parts.append(text)  # a trailing text column (paths, values) is not padded
            else:
                parts.append(text.ljust(widths[i]))
        return gap.join(parts).rstrip()

    return Listing(head=head, lines=tuple((line(row), row.failing) for row in table.rows))
