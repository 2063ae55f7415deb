"""The tables of one appendix test report, as printed text, for the screen and the PDF alike.

Both show them as ordinary HTML tables. In print they keep to the text block with set column
widths (``AppendixTable.widths``) and a fixed table layout: the layout engine then takes each
column's width as given instead of measuring every cell of a table first. The PDF used to show
monospaced listings (one line of text per row), chosen because a 10-server appendix holds some
30,000 cells and laid out several times faster as lines; docs/benchmarks.md has what the real
tables cost against them.
"""

from __future__ import annotations

from dataclasses import dataclass

from esrp_report import model as m
from esrp_report.model.numbers import fmt_number
from esrp_report.render.document import RunView
from esrp_report.render.jetstress_text import (
    TABLE_COLUMNS,
    duration,
    timestamp,
)


@dataclass(frozen=True)
class AppendixRow:
    """One row of an appendix table as printed text, as Jetstress prints it: the vendor's document
    carries no mark of the tool's verdict (a failed rule is the reviewer's report's)."""

    cells: tuple[str, ...]


@dataclass(frozen=True)
class AppendixTable:
    """One table of an appendix test report as printed text: title, column headings (none for a key/value
    table), which columns are figures, rows."""

    title: str
    headings: tuple[str, ...]  # empty: a key/value table without a heading row
    numeric: tuple[bool, ...]  # per column: right-aligned figures
    rows: tuple[AppendixRow, ...]
    wide: bool = False  # a per-instance table with many columns

    @property
    def widths(self) -> tuple[float, ...]:
        """Each column's share of the text block's width, in percent: with set widths a fixed
        table layout neither measures every cell first nor runs past the text block. A
        per-instance table of 12 figures gives them equal columns beside the instance names; a
        key/value table gives the value the larger part; other tables give a text column about
        twice a figure's room (counter names, paths and figure names wrap within it)."""
        count = len(self.numeric)
        if count == 1:
            return (100.0,)
        if self.wide:
            first = 11.5
            return (first, *([(100.0 - first) / (count - 1)] * (count - 1)))
        if not self.headings:
            return (38.0, *([62.0 / (count - 1)] * (count - 1)))
        weights = [1.4 if numeric else 3.0 for numeric in self.numeric]
        total = sum(weights)
        return tuple(100.0 * weight / total for weight in weights)


def instance_columns(kind: m.TableKind) -> list[tuple[str, str]]:
    """(heading, metric key) in Jetstress report order, headings as Jetstress prints them."""
    return [(c.format(msec=" (msec)", persec="/sec", io="I/O"), key) for c, key in TABLE_COLUMNS[kind]]


def _kv(title: str, pairs: list[tuple[str, str]], numeric: bool = False) -> AppendixTable:
    return AppendixTable(title, (), (False, numeric), tuple(AppendixRow((k, v)) for k, v in pairs))


def _plain(
    title: str,
    headings: tuple[str, ...],
    rows: list[AppendixRow],
) -> AppendixTable:
    numeric = (False,) + (True,) * (len(headings) - 1)
    return AppendixTable(title, headings, numeric, tuple(rows))


def appendix_tables(rv: RunView) -> list[AppendixTable]:
    """Every table of one test report, in the order Jetstress prints them (where its figures and a
    counter log's differ is the reviewer's report's, render/review.py)."""
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
            AppendixRow((row.instance, *(fmt_number(row.values.get(key), 3) for _, key in columns)))
            for row in table.rows
        ]
        headings = ("MSExchange Database ==> Instances", *(h for h, _ in columns))
        tables.append(
            AppendixTable(
                m.TABLE_TITLES[kind],
                headings,
                (False,) + (True,) * len(columns),
                tuple(rows),
                wide=len(columns) > 4,  # the transactional and total tables: 12 figures a row
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
                        )
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
    return tables


def test_log_lines(run: m.Run) -> list[str]:
    """The run's test log as printed lines ("M/D/YYYY h:mm:ss AM -- message"); empty when the run has no test
    log."""
    if run.test_log is None:
        return []
    return [f"{timestamp(e.timestamp)} -- {e.message}" for e in run.test_log.entries]
