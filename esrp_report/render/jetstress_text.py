"""How Jetstress writes values and table titles in its HTML reports.

The appendix of a document reproduces the reports' tables, so the renderer needs the same column
headers, time stamps and durations as the reports themselves; the synthetic report writer
(``esrp_synth.jetstress_html``) imports them from here so that both agree. The table titles are
the model's (``model.TABLE_TITLES``), which the report reader matches too.
"""

from __future__ import annotations

from datetime import datetime

from esrp_report import model as m
from esrp_report.model import TableKind

# Header templates: {msec} is " (msec)" or nothing, {persec} a "/sec" spelling, {io} "IO" or "I/O".
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
BDM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Database Maintenance {io} Reads{persec}", m.BDM_READS),
    ("Database Maintenance {io} Reads Average Bytes", m.BDM_READ_BYTES),
)
REPLICATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("I/O Log Reads{persec}", m.LOG_READS),
    ("I/O Log Reads Average Bytes", m.LOG_READ_BYTES),
)
TABLE_COLUMNS = {
    TableKind.TRANSACTIONAL: WIDE_COLUMNS,
    TableKind.BACKGROUND_MAINTENANCE: BDM_COLUMNS,
    TableKind.LOG_REPLICATION: REPLICATION_COLUMNS,
    TableKind.TOTAL: WIDE_COLUMNS,
}

# A figure's name in readers' words: the report's own column header, by canonical key.
FIGURE_NAMES = {
    key: header.format(msec=" (msec)", persec="/sec", io="I/O")
    for header, key in (*WIDE_COLUMNS, *BDM_COLUMNS, *REPLICATION_COLUMNS)
}
HOST_TABLE = "host"  # the disagreements of the host counters (analysis.compare)


def figure_name(key: str) -> str:
    """A canonical figure key ("db_reads_avg_bytes") as the report's column header ("I/O
    Database Reads Average Bytes"); a key with no header as words ("average" -> "Average")."""
    return FIGURE_NAMES.get(key) or key.replace("_", " ").capitalize()


def table_name(key: str) -> str:
    """A table key ("total", "host") as the report's title ("Total I/O Performance")."""
    if key == HOST_TABLE:
        return m.HOST_TABLE_TITLE
    try:
        return m.TABLE_TITLES[TableKind(key)]
    except ValueError:
        return key.replace("_", " ").capitalize()


def number(value: float | None, decimals: int | None = None) -> str:
    """Text that reads back to exactly ``value``: fixed decimals when they are exact, else the
    shortest round-trip form."""
    if value is None:
        return ""
    value = float(value)
    if decimals is not None:
        fixed = f"{value:.{decimals}f}"
        if float(fixed) == value:
            return fixed
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def timestamp(value: datetime | None) -> str:
    """``M/D/YYYY h:mm:ss AM``, as Jetstress prints times."""
    if value is None:
        return ""
    hour = value.hour % 12 or 12
    return f"{value.month}/{value.day}/{value.year} {hour}:{value:%M:%S} {'AM' if value.hour < 12 else 'PM'}"


def duration(seconds: float | None) -> str:
    """``HH:MM:SS`` for whole seconds; other values as plain seconds (still exact)."""
    if seconds is None:
        return ""
    if seconds < 0 or not float(seconds).is_integer():
        return number(seconds)
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
