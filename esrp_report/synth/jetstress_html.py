"""Write Jetstress-style HTML reports from a :class:`~esrp_report.model.Run`.

The default markup follows what is known of real reports (facts §2.1): sections are fieldsets
with a legend, label cells ``<td class="grid_row_header">`` with the value cell on the next line,
``<td class="success">Pass</td>``, per-instance tables headed "MSExchange Database ==> Instances".
:class:`ReportStyle` varies everything a reader must not depend on. Numbers are written in
shortest round-trip form so they read back exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape

from esrp_report import model as m
from esrp_report.model import Run, TableKind, TestKind

KIND_TITLES = {
    TestKind.PERFORMANCE: "Performance",
    TestKind.STRESS: "Stress",
    TestKind.DATABASE_BACKUP: "Database Backup",
    TestKind.SOFT_RECOVERY: "SoftRecovery",
    TestKind.DB_CHECKSUM: "DBChecksum",
}

WIDE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("I/O Database Reads Average Latency{msec}", m.DB_READ_LATENCY),
    ("I/O Database Writes Average Latency{msec}", m.DB_WRITE_LATENCY),
    ("I/O Database Reads{persec}", m.DB_READS),
    ("I/O Database Writes{persec}", m.DB_WRITES),
    ("I/O Database Reads Average Bytes", m.DB_READ_BYTES),
    ("I/O Database Writes Average Bytes", m.DB_WRITE_BYTES),
    ("I/O Log Reads Average Latency{msec}", m.LOG_READ_LATENCY),
    ("I/O Log Writes Average Latency{msec}", m.LOG_WRITE_LATENCY),
    ("I/O Log Reads{persec}", m.LOG_READS),
    ("I/O Log Writes{persec}", m.LOG_WRITES),
    ("I/O Log Reads Average Bytes", m.LOG_READ_BYTES),
    ("I/O Log Writes Average Bytes", m.LOG_WRITE_BYTES),
)
BDM_COLUMNS = (
    ("Database Maintenance {io} Reads/sec", m.BDM_READS),
    ("Database Maintenance {io} Reads Average Bytes", m.BDM_READ_BYTES),
)
REPLICATION_COLUMNS = (("I/O Log Reads/sec", m.LOG_READS), ("I/O Log Reads Average Bytes", m.LOG_READ_BYTES))

TABLE_TITLES = {
    TableKind.TRANSACTIONAL: "Transactional I/O Performance",
    TableKind.BACKGROUND_MAINTENANCE: "Background Database Maintenance I/O Performance",
    TableKind.LOG_REPLICATION: "Log Replication I/O Performance",
    TableKind.TOTAL: "Total I/O Performance",
}


@dataclass(frozen=True)
class ReportStyle:
    upper_tags: bool = False
    quote: str = '"'  # '"', "'" or "" (unquoted attributes)
    newline: str = "\n"
    indent: str = "  "
    title_tag: str = "legend"  # legend | h2 | h3 | b | div | td (a one-cell row inside the table)
    header_cell: str = "th"
    bold_labels: bool = False
    first_header: str = "MSExchange Database ==> Instances"
    msec_suffix: bool = True
    per_sec: str = "/sec"  # "/sec", " /sec", "/ sec", "/s"
    bdm_io: str = "IO"  # "IO" or "I/O"
    log_path_label: bool = True
    total_heading: bool = True
    replication_repeats_bdm_header: bool = False
    title_case: bool = True


def number(value: float | None) -> str:
    if value is None:
        return ""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def timestamp(value: datetime | None) -> str:
    if value is None:
        return ""
    hour = value.hour % 12 or 12
    return f"{value.month}/{value.day}/{value.year} {hour}:{value:%M:%S} {'AM' if value.hour < 12 else 'PM'}"


class _Writer:
    def __init__(self, style: ReportStyle) -> None:
        self.style = style
        self.parts: list[str] = []

    def tag(self, name: str, attrs: dict[str, str] | None = None, close: bool = False) -> str:
        s = self.style
        name = name.upper() if s.upper_tags else name
        if close:
            return f"</{name}>"
        text = "".join(f" {k}={s.quote}{v}{s.quote}" for k, v in (attrs or {}).items())
        return f"<{name}{text}>"

    def line(self, text: str, depth: int = 0) -> None:
        self.parts.append(self.style.indent * depth + text + self.style.newline)

    def element(self, name: str, content: str, attrs: dict[str, str] | None = None, depth: int = 0) -> None:
        self.line(f"{self.tag(name, attrs)}{content}{self.tag(name, close=True)}", depth)

    def title(self, text: str) -> str:
        return text if self.style.title_case else text.lower()

    def section(
        self, title: str, rows: list[list[str]], header: bool = False, label_class: bool = True
    ) -> None:
        s = self.style
        title = self.title(title)
        if s.title_tag == "legend":
            self.line(self.tag("fieldset"))
            self.element("legend", escape(title), depth=1)
        elif s.title_tag != "td":
            self.element(s.title_tag, escape(title))
        self.line(self.tag("table", {"class": "grid"}), 1)
        if s.title_tag == "td":
            self.line(
                self.tag("tr")
                + self.tag("td", {"colspan": str(max(len(r) for r in rows))})
                + escape(title)
                + self.tag("td", close=True)
                + self.tag("tr", close=True),
                2,
            )
        for index, row in enumerate(rows):
            self.line(self.tag("tr"), 2)
            for column, cell in enumerate(row):
                is_header = header and index == 0
                cell_tag = s.header_cell if is_header else "td"
                attrs = (
                    {"class": "grid_row_header"} if (column == 0 and label_class and not is_header) else {}
                )
                if not is_header and cell in ("Pass", "Fail") and column == 1:
                    attrs = {"class": "success" if cell == "Pass" else "failure"}
                content = escape(cell)
                if s.bold_labels and column == 0 and not is_header:
                    content = f"{self.tag('b')}{content}{self.tag('b', close=True)}"
                # The value cell goes on its own line, as real reports have it.
                self.line(f"{self.tag(cell_tag, attrs)}{content}{self.tag(cell_tag, close=True)}", 3)
            self.line(self.tag("tr", close=True), 2)
        self.line(self.tag("table", close=True), 1)
        if s.title_tag == "legend":
            self.line(self.tag("fieldset", close=True))


def _headers(columns: tuple[tuple[str, str], ...], style: ReportStyle) -> list[str]:
    return [
        c.format(msec=" (msec)" if style.msec_suffix else "", persec=style.per_sec, io=style.bdm_io)
        for c, _ in columns
    ]


def write_report_html(run: Run, style: ReportStyle | None = None) -> str:
    s = style or ReportStyle()
    w = _Writer(s)
    version = "2013" if (run.jetstress_version or "").startswith("15") else "2010"
    kind_title = KIND_TITLES[run.kind]
    w.line("<!DOCTYPE html>")
    w.line(w.tag("html"))
    w.line(
        w.tag("head")
        + w.tag("meta", {"charset": "utf-8"})
        + w.tag("title")
        + escape(f"{kind_title} Test Result Report")
        + w.tag("title", close=True)
        + w.tag("head", close=True)
    )
    w.line(w.tag("body"))
    w.element("h1", escape(f"Microsoft Exchange Jetstress {version}"))
    from_server = f" (from server {run.machine})" if run.machine else ""
    w.element("h2", escape(f"{kind_title} Test Result Report{from_server}"))

    summary = [
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
    if run.kind in (TestKind.PERFORMANCE, TestKind.STRESS) or run.overall_result:
        w.section("Test Summary", [[label, value or ""] for label, value in summary])
    if run.backup:
        rows = [
            ["Database Instance", "Database Size (MBytes)", "Elapsed Backup Time", "MBytes Transferred/sec"]
        ]
        for b in run.backup:
            elapsed = ""
            if b.elapsed_seconds is not None:
                secs = int(b.elapsed_seconds)
                elapsed = f"{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"
            rows.append([b.instance, number(b.database_size_mb), elapsed, number(b.mb_per_sec)])
        w.section("Database Backup Statistics - All", rows, header=True)
    if run.soft_recovery:
        rows = [["Database Instance", "Log files replayed", "Elapsed seconds"]]
        rows += [[r.instance, number(r.logs_replayed), number(r.elapsed_seconds)] for r in run.soft_recovery]
        w.section("Soft Recovery Statistics - All", rows, header=True)
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
            length = (
                f"{number(c.file_length_mb)} MB/{number(c.seconds_taken)} sec"
                if c.file_length_mb is not None
                else ""
            )
            rows.append(
                [
                    c.database,
                    number(c.seen_pages),
                    number(c.bad_pages),
                    number(c.correctable_pages),
                    number(c.wrong_page_number_pages),
                    length,
                ]
            )
        w.section("Checksum Statistics - All", rows, header=True)
    sizing = run.sizing
    if any(v is not None for v in vars(sizing).values()):
        w.section(
            "Database Sizing and Throughput",
            [
                ["Achieved Transactional I/O per Second", number(sizing.achieved_iops)],
                ["Target Transactional I/O per Second", number(sizing.target_iops)],
                ["Initial Database Size (bytes)", number(sizing.initial_database_bytes)],
                ["Final Database Size (bytes)", number(sizing.final_database_bytes)],
                ["Database Files (Count)", number(sizing.database_files)],
            ],
        )
    if run.parameters:
        w.section("Jetstress System Parameters", [[k, v] for k, v in run.parameters.items()])
    if run.databases:
        rows = []
        for db in run.databases:
            log_part = f"Log path: {db.log_path}" if s.log_path_label else (db.log_path or "")
            rows.append([db.instance, f"{log_part} Database: {';'.join(db.database_paths)}".strip()])
        w.section("Database Configuration", rows)
    for kind in TableKind:
        table = run.tables.get(kind)
        if table is None:
            continue
        columns = (
            WIDE_COLUMNS
            if kind in (TableKind.TRANSACTIONAL, TableKind.TOTAL)
            else BDM_COLUMNS
            if kind is TableKind.BACKGROUND_MAINTENANCE
            else REPLICATION_COLUMNS
        )
        headers = _headers(columns, s)
        if kind is TableKind.LOG_REPLICATION and s.replication_repeats_bdm_header:
            headers = _headers(BDM_COLUMNS, s)
        rows = [[s.first_header, *headers]]
        rows += [[r.instance, *(number(r.values.get(key)) for _, key in columns)] for r in table.rows]
        if kind is TableKind.TOTAL and not s.total_heading:
            w.line(w.tag("table", {"class": "grid"}), 1)
            for index, row in enumerate(rows):
                cell = s.header_cell if index == 0 else "td"
                w.line(
                    w.tag("tr")
                    + "".join(w.tag(cell) + escape(c) + w.tag(cell, close=True) for c in row)
                    + w.tag("tr", close=True),
                    2,
                )
            w.line(w.tag("table", close=True), 1)
        else:
            w.section(TABLE_TITLES[kind], rows, header=True, label_class=False)
    if run.host:
        rows = [["Counter", "Average", "Minimum", "Maximum"]]
        rows += [[h.name, number(h.average), number(h.minimum), number(h.maximum)] for h in run.host]
        w.section("Host System Performance", rows, header=True, label_class=False)
    if run.test_log is not None:
        w.element("h3" if s.title_tag in ("legend", "td") else s.title_tag, escape(w.title("Test Log")))
        lines = [f"{timestamp(e.timestamp)} -- {escape(e.message)}" for e in run.test_log.entries]
        w.line(w.tag("div", {"class": "test_log"}) + w.tag("br").join(lines) + w.tag("div", close=True))
    w.line(w.tag("body", close=True))
    w.line(w.tag("html", close=True))
    return "".join(w.parts)
