"""Write Jetstress-style HTML test reports from a :class:`~esrp_report.model.Run`.

The default markup follows what is known of real reports (facts §2.1): sections are fieldsets
with a legend title, label cells ``<td class="grid_row_header">`` with the value cell on the
next line, ``<td class="success">Pass</td>``, per-instance tables whose header row starts with
"MSExchange Database ==> Instances", test-log lines separated by ``<br>``.
:class:`ReportStyle` varies everything a reader must not depend on: tag and attribute case,
quoting, line breaks, title elements, header cells, header spellings and the layout variants
of facts §9. Numbers are written so that they read back to the same float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

from esrp_report.model import HOST_TABLE_TITLE, TABLE_TITLES, DatabaseConfig, Run, TableKind, TestKind
from esrp_report.render.jetstress_text import (
    BDM_COLUMNS,
    TABLE_COLUMNS,
    duration,
    number,
    timestamp,
)

_UNQUOTABLE = re.compile(r"[A-Za-z0-9_.:/\\-]+")

KIND_TITLES = {
    TestKind.PERFORMANCE: "Performance",
    TestKind.STRESS: "Stress",
    TestKind.DATABASE_BACKUP: "Database Backup",
    TestKind.SOFT_RECOVERY: "SoftRecovery",
    TestKind.DB_CHECKSUM: "DBChecksum",
}


@dataclass(frozen=True)
class ReportStyle:
    """How a report is marked up. Every field is something real reports (or pasted copies of
    them) vary, or a layout variant seen in published appendices."""

    upper_tags: bool = False
    upper_attributes: bool = False
    quote: str = '"'  # '"', "'" or "" (unquoted attributes)
    newline: str = "\n"  # "" puts the whole page on one line
    indent: str = "  "
    title_tag: str = "legend"  # legend (in a fieldset) | h2 | h3 | b | div | td (one-cell row in the table)
    title_case: str = "title"  # title | lower | upper
    header_cell: str = "th"  # th | td
    label_class: bool = True  # class="grid_row_header" on label cells
    bold_labels: bool = False  # <b> around label cells
    layout_table: bool = False  # the whole body inside one layout table
    first_header: str = "MSExchange Database ==> Instances"
    msec_suffix: bool = True
    per_sec: str = "/sec"  # "/sec", " /sec", "/ sec", "/s"
    bdm_io: str = "IO"  # "IO" or "I/O"
    replication_repeats_bdm_header: bool = False  # facts §9
    # Header texts per table, replacing the templates above (same number and order of columns).
    column_headers: tuple[tuple[TableKind, tuple[str, ...]], ...] = ()
    log_path_label: bool = True  # "Log path:" before the log path (facts §9: may be missing)
    unlabelled_log_paths: tuple[str, ...] = ()  # instances whose line lacks "Log path:" anyway
    total_heading: bool = True  # False: the Total table has no title (facts §9)
    decimals: int | None = None  # fixed decimals in instance and host tables, when exact


DEFAULT_STYLE = ReportStyle()


def _version_name(version: str | None) -> str:
    parts = (version or "").split(".")
    if parts[0].lstrip("0") == "15":
        return "2016" if len(parts) > 1 and parts[1].lstrip("0") == "1" else "2013"
    return "2010"


class _Writer:
    def __init__(self, style: ReportStyle) -> None:
        self.style = style
        self.parts: list[str] = []

    def open(self, name: str, attrs: dict[str, str] | None = None) -> str:
        s = self.style
        text = ""
        for attribute, value in (attrs or {}).items():
            key = attribute.upper() if s.upper_attributes else attribute
            # An unquoted value cannot hold spaces or quotes; such values get quotes anyway.
            quote = s.quote or ("" if _UNQUOTABLE.fullmatch(value) else '"')
            text += f" {key}={quote}{escape(value, quote=True)}{quote}"
        return f"<{name.upper() if s.upper_tags else name}{text}>"

    def close(self, name: str) -> str:
        return f"</{name.upper() if self.style.upper_tags else name}>"

    def wrap(self, name: str, content: str, attrs: dict[str, str] | None = None) -> str:
        return f"{self.open(name, attrs)}{content}{self.close(name)}"

    def line(self, text: str, depth: int = 0) -> None:
        self.parts.append(self.style.indent * depth + text + self.style.newline)

    def title_text(self, text: str) -> str:
        case = self.style.title_case
        return text.lower() if case == "lower" else text.upper() if case == "upper" else text

    def title(self, text: str) -> None:
        """A title outside a table (the fieldset legend is written by :meth:`section`)."""
        tag = self.style.title_tag if self.style.title_tag not in ("legend", "td") else "h3"
        self.line(self.wrap(tag, escape(self.title_text(text))))

    def section(
        self,
        title: str | None,
        rows: list[list[str]],
        *,
        header: bool = False,
        labels: bool = True,
        escaped: bool = False,
    ) -> None:
        """A titled table. ``header``: the first row is a header row; ``labels``: the first cell
        of each row is a row label; ``escaped``: cells are markup already."""
        s = self.style
        fieldset = title is not None and s.title_tag == "legend"
        if fieldset:
            self.line(self.open("fieldset"))
            self.line(self.wrap("legend", escape(self.title_text(title or ""))), 1)
        elif title is not None and s.title_tag != "td":
            self.title(title)
        self.line(self.open("table", {"class": "grid"}), 1)
        if title is not None and s.title_tag == "td":
            width = str(max(len(r) for r in rows))
            cell = self.wrap("td", escape(self.title_text(title)), {"colspan": width})
            self.line(self.wrap("tr", cell), 2)
        for index, row in enumerate(rows):
            self.line(self.open("tr"), 2)
            for column, text in enumerate(row):
                is_header = header and index == 0
                tag = s.header_cell if is_header else "td"
                attrs: dict[str, str] = {}
                content = text if escaped else escape(text)
                if not is_header and column == 0 and labels:
                    if s.label_class:
                        attrs = {"class": "grid_row_header"}
                    if s.bold_labels:
                        content = self.wrap("b", content)
                elif not is_header and column == 1 and text in ("Pass", "Fail"):
                    attrs = {"class": "success" if text == "Pass" else "failure"}
                # One cell per line: the value cell on the line after its label, as real reports.
                self.line(self.wrap(tag, content, attrs), 3)
            self.line(self.close("tr"), 2)
        self.line(self.close("table"), 1)
        if fieldset:
            self.line(self.close("fieldset"))


def _summary_rows(run: Run) -> list[list[str]]:
    standard = [
        ("Overall Test Result", run.overall_result),
        ("Machine Name", run.machine),
        ("Test Description", run.test_description),
        ("Test Start Time", timestamp(run.test_start)),
        ("Test End Time", timestamp(run.test_end)),
        ("Collection Start Time", timestamp(run.collection_start)),
        ("Collection End Time", timestamp(run.collection_end)),
        ("Jetstress Version", run.jetstress_version),
        ("Ese Version", run.ese_version),
        ("Operating System", run.operating_system),
        ("Performance Log", run.performance_log),
    ]
    # The run's own spelling of a label ("ESE Version") wins; its other rows follow, raw.
    printed = {label.casefold(): label for label in run.summary}
    rows = [[printed.get(label.casefold(), label), value or ""] for label, value in standard]
    known = {label.casefold() for label, _ in standard}
    rows += [[label, value] for label, value in run.summary.items() if label.casefold() not in known]
    return rows


def _has_summary(run: Run) -> bool:
    fields = (run.overall_result, run.test_start, run.collection_start, run.jetstress_version)
    return run.kind in (TestKind.PERFORMANCE, TestKind.STRESS) or any(f is not None for f in fields)


def _database_cell(w: _Writer, db: DatabaseConfig) -> str:
    s = w.style
    lines = []
    if db.log_path is not None:
        labelled = s.log_path_label and db.instance not in s.unlabelled_log_paths
        lines.append(escape(f"Log path: {db.log_path}" if labelled else db.log_path))
    lines += [escape(f"Database: {path}") for path in db.database_paths]
    return w.open("br").join(lines)


def _instance_headers(kind: TableKind, style: ReportStyle) -> list[str]:
    for table_kind, texts in style.column_headers:
        if table_kind is kind:
            return list(texts)
    columns = TABLE_COLUMNS[kind]
    if kind is TableKind.LOG_REPLICATION and style.replication_repeats_bdm_header:
        columns = BDM_COLUMNS
    headers = [
        c.format(msec=" (msec)" if style.msec_suffix else "", persec=style.per_sec, io=style.bdm_io)
        for c, _ in columns
    ]
    return [style.first_header, *headers]


def _instance_tables(w: _Writer, run: Run) -> None:
    s = w.style
    for kind in TableKind:
        table = run.tables.get(kind)
        if table is None:
            continue
        columns = TABLE_COLUMNS[kind]
        headers = _instance_headers(kind, s)
        if len(headers) != len(columns) + 1:
            raise ValueError(f"column_headers for {kind.value} need {len(columns) + 1} texts")
        rows = [headers]
        rows += [
            [r.instance, *(number(r.values.get(key), s.decimals) for _, key in columns)] for r in table.rows
        ]
        title = TABLE_TITLES[kind] if (kind is not TableKind.TOTAL or s.total_heading) else None
        w.section(title, rows, header=True, labels=False)


def _statistics(w: _Writer, run: Run) -> None:
    if run.backup:
        rows = [
            ["Database Instance", "Database Size (MBytes)", "Elapsed Backup Time", "MBytes Transferred/sec"]
        ]
        rows += [
            [b.instance, number(b.database_size_mb), duration(b.elapsed_seconds), number(b.mb_per_sec)]
            for b in run.backup
        ]
        w.section("Database Backup Statistics - All", rows, header=True, labels=False)
    if run.soft_recovery:
        rows = [["Database Instance", "Log files replayed", "Elapsed seconds"]]
        rows += [[r.instance, number(r.logs_replayed), number(r.elapsed_seconds)] for r in run.soft_recovery]
        w.section("Soft Recovery Statistics - All", rows, header=True, labels=False)
    if run.checksum:
        rows = [
            [
                "Database",
                "Seen pages",
                "Bad pages",
                "Correctable pages",
                "Wrong page-number pages",
                "File length / seconds taken",
            ]
        ]
        for c in run.checksum:
            length = ""
            if c.file_length_mb is not None and c.seconds_taken is not None:
                length = f"{number(c.file_length_mb)} MB/{number(c.seconds_taken)} sec"
            counts = (c.seen_pages, c.bad_pages, c.correctable_pages, c.wrong_page_number_pages)
            rows.append([c.database, *(number(v) for v in counts), length])
        w.section("Checksum Statistics - All", rows, header=True, labels=False)


def write_report_html(run: Run, *, style: ReportStyle = DEFAULT_STYLE) -> str:
    """The report as text; the caller chooses the encoding (the page declares none)."""
    s = style
    w = _Writer(s)
    kind_title = KIND_TITLES[run.kind]
    from_server = f" (from server {run.machine})" if run.machine else ""
    w.line("<!DOCTYPE html>")
    w.line(w.open("html"))
    w.line(w.wrap("head", w.wrap("title", escape(f"{kind_title} Test Result Report{from_server}"))))
    w.line(w.open("body"))
    if s.layout_table:
        w.line(w.open("table") + w.open("tr") + w.open("td"))
    w.line(w.wrap("h1", escape(f"Microsoft Exchange Jetstress {_version_name(run.jetstress_version)}")))
    w.line(w.wrap("h2", escape(f"{kind_title} Test Result Report{from_server}")))
    if _has_summary(run):
        cells = [
            [
                escape(label),
                # Jetstress links the counter log it names.
                w.wrap("a", escape(value), {"href": value})
                if value and label.casefold() == "performance log"
                else escape(value),
            ]
            for label, value in _summary_rows(run)
        ]
        w.section("Test Summary", cells, escaped=True)
    _statistics(w, run)
    sizing = run.sizing
    if any(v is not None for v in vars(sizing).values()):
        figures = [
            ("Achieved Transactional I/O per Second", sizing.achieved_iops),
            ("Target Transactional I/O per Second", sizing.target_iops),
            ("Initial Database Size (bytes)", sizing.initial_database_bytes),
            ("Final Database Size (bytes)", sizing.final_database_bytes),
            ("Database Files (Count)", sizing.database_files),
        ]
        w.section("Database Sizing and Throughput", [[label, number(value)] for label, value in figures])
    if run.parameters:
        w.section("Jetstress System Parameters", [[k, v] for k, v in run.parameters.items()])
    if run.databases:
        rows = [[escape(db.instance), _database_cell(w, db)] for db in run.databases]
        w.section("Database Configuration", rows, escaped=True)
    _instance_tables(w, run)
    if run.host:
        rows = [["Counter", "Average", "Minimum", "Maximum"]]
        rows += [
            [h.name, *(number(v, s.decimals) for v in (h.average, h.minimum, h.maximum))] for h in run.host
        ]
        w.section(HOST_TABLE_TITLE, rows, header=True, labels=False)
    if run.test_log is not None and run.test_log.entries:
        w.title("Test Log")
        w.line(w.open("div", {"class": "test_log"}))
        for entry in run.test_log.entries:
            w.line(f"{timestamp(entry.timestamp)} -- {escape(entry.message)}{w.open('br')}", 1)
        w.line(w.close("div"))
    if s.layout_table:
        w.line(w.close("td") + w.close("tr") + w.close("table"))
    w.line(w.close("body"))
    w.line(w.close("html"))
    return "".join(w.parts)
