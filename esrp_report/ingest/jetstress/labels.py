"""Spellings seen in Jetstress reports and published appendices, mapped to canonical keys.

Data only: the HTML report reader, the result-XML reader and the sample builder share these
tables, so a new spelling found in a real file is added here once. Header texts are compared
after :func:`normalize_header`; section titles and row labels after :func:`normalize_label`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from esrp_report import model as m
from esrp_report.model import TestKind


# Cached: a document repeats its labels (every report's rows, every server's tables), and an
# audit of 50 MB of text asks for hundreds of thousands; bounded, so junk cannot grow it.
@lru_cache(maxsize=16384)
def normalize_label(text: str) -> str:
    """Case, non-breaking spaces, runs of whitespace and a trailing colon do not matter."""
    return " ".join(text.replace("\u00a0", " ").split()).strip(" :").casefold()


def normalize_header(text: str) -> str:
    """As :func:`normalize_label`, and "(msec)" is optional, "Reads /sec", "Reads/ sec" and
    "Reads/s" are the same column (facts §9)."""
    text = normalize_label(text)
    if "(" in text:
        text = _HEADER_UNIT.sub("", text)
    if "/" in text:
        text = _HEADER_SLASH.sub("/", text)
        text = _HEADER_PER_SECOND.sub("/sec", text)
    return " ".join(text.split())


# Compiled once: every header cell and every candidate header line of a document passes here.
_HEADER_UNIT = re.compile(r"\((?:msec|ms|attached)\)")
_HEADER_SLASH = re.compile(r"\s*/\s*")
_HEADER_PER_SECOND = re.compile(r"/s$")


# First header cell of a per-instance table: "MSExchange Database ==> Instances" and the
# misspellings of facts §9 (MSEXchange, MExchange, MSEExchange), compared case-insensitively.
INSTANCE_TABLE_FIRST_HEADER = re.compile(r"^m\w*exchange database\s*=+>\s*instances$")

INSTANCE_COLUMNS: dict[str, str] = {
    "i/o database reads average latency": m.DB_READ_LATENCY,
    "i/o database writes average latency": m.DB_WRITE_LATENCY,
    "i/o database reads/sec": m.DB_READS,
    "i/o database writes/sec": m.DB_WRITES,
    "i/o database reads average bytes": m.DB_READ_BYTES,
    "i/o database writes average bytes": m.DB_WRITE_BYTES,
    "i/o log reads average latency": m.LOG_READ_LATENCY,
    "i/o log writes average latency": m.LOG_WRITE_LATENCY,
    "i/o log reads/sec": m.LOG_READS,
    "i/o log writes/sec": m.LOG_WRITES,
    "i/o log reads average bytes": m.LOG_READ_BYTES,
    "i/o log i/o reads average bytes": m.LOG_READ_BYTES,  # 000 appendix, log replication table
    "i/o log writes average bytes": m.LOG_WRITE_BYTES,
    "database maintenance io reads/sec": m.BDM_READS,
    "database maintenance i/o reads/sec": m.BDM_READS,
    "database maintenance io reads average bytes": m.BDM_READ_BYTES,
    "database maintenance i/o reads average bytes": m.BDM_READ_BYTES,
}

# The log replication table's header sometimes repeats the maintenance column names (facts §9).
REPLICATION_ALIASES = {m.BDM_READS: m.LOG_READS, m.BDM_READ_BYTES: m.LOG_READ_BYTES}

# Keys that only the two wide tables (Transactional, Total) carry.
WIDE_TABLE_KEYS = frozenset(
    {m.DB_READ_LATENCY, m.DB_WRITE_LATENCY, m.DB_READS, m.DB_WRITES, m.LOG_WRITES, m.LOG_WRITE_LATENCY}
)

# Section titles, as printed by Jetstress and as seen in converted appendices.
# A caption's number ahead of a section title ("table 9 test summary", normalised).
CAPTION_PREFIX = re.compile(r"^(?:table|figure)\s+\d+[.:]?\s+")
SECTION_TITLES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("summary", r"^test summary$"),
        ("sizing", r"^database sizing and throughput$"),
        ("parameters", r"^jetstress system parameters$"),
        ("databases", r"^database configuration$"),
        # The per-instance tables by the titles Jetstress prints (model.TABLE_TITLES), normalised.
        *((kind.value, rf"^{re.escape(normalize_label(title))}$") for kind, title in m.TABLE_TITLES.items()),
        ("host", r"^(host|memory) system performance( \(of .*\))?$"),
        ("disks", r"^disk subsystem performance( \(of .*\))?$"),
        ("backup", r"^database backup statistics( - .*)?$"),
        ("recovery", r"^soft[- ]?recovery statistics( - .*)?$"),
        ("checksum", r"^checksum statistics( - .*)?$"),
        ("log", r"^test log$"),
        ("errors", r"^(test issues|error (counts|summary).*)$"),
        # Not Jetstress's: the table esrp-report's own appendix adds (render/appendix.py).
        ("disagreements", r"^where the report and its counter log disagree$"),
    )
)

_KIND_WORDS = (
    (r"performance", TestKind.PERFORMANCE),
    (r"stress", TestKind.STRESS),
    (r"database ?backup", TestKind.DATABASE_BACKUP),
    (r"soft ?recovery", TestKind.SOFT_RECOVERY),
    (r"db ?checksum|checksum", TestKind.DB_CHECKSUM),
)

_KIND_WORD_PATTERNS = tuple((re.compile(rf"\b(?:{word})\b"), kind) for word, kind in _KIND_WORDS)


def kind_named(text: str) -> TestKind | None:
    """The one Jetstress test a title names by its word ("... Jetstress – 24-hour stress"), or
    None when it names none or several."""
    kinds = {kind for pattern, kind in _KIND_WORD_PATTERNS if pattern.search(text)}
    return kinds.pop() if len(kinds) == 1 else None


# Report titles naming the test: "Stress Test Result Report (from server X)", the heading lines
# "Microsoft Exchange Server Jetstress - DBChecksum" and "... Jetstress – 24-hour stress" of
# converted appendices, and "Server 4 (EMAIL5): Stress" as esrp-report's documents print it.
# Matched against title-like text outside the test log only (log lines name other tests' files).
REPORT_KINDS: tuple[tuple[re.Pattern[str], TestKind], ...] = tuple(
    (re.compile(pattern), kind)
    for word, kind in _KIND_WORDS
    for pattern in (
        rf"\b(?:{word}) test result report\b",
        rf"\bjetstress(?: \d{{4}})?\s*[-–—:]\s*(?:\d+-hour )?(?:{word})$",
        # "Server 4 (EMAIL5): Stress", "3650-4 (3650-4): DatabaseBackup": a server, its machine.
        rf"^[^():]{{1,40}} \([^)]+\): (?:{word})$",
        # An appendix heading naming the test ("A Performance testing", "B.2 Stress test results"),
        # over reports that carry no title of their own.
        rf"^(?:[a-z](?:\.\d+)*\s+)?(?:{word}) test(?:s|ing)?(?: results?)?$",
        # An appendix heading naming the server and its test ("Appendix C – EXMBX01 database
        # backup test", "B.2 JS16 stress test results").
        rf"^(?:appendix [a-z0-9]{{1,3}}\s*[-–—:.]?\s*|[a-z](?:\.\d+)*\s+)[\w.-]{{1,40}}\s+(?:{word})"
        r" test(?:s|ing)?(?: results?)?$",
    )
)

# A report title without a test name still marks the page as a Jetstress report.
REPORT_TITLE = re.compile(r"\btest result report\b")
FROM_SERVER = re.compile(r"(?:\(from server |^server \d+ \()(?P<name>[^)]+)\)", re.IGNORECASE)

SUMMARY_LABELS: dict[str, str] = {
    "overall test result": "overall_result",
    "machine name": "machine",
    "test description": "test_description",
    "test start time": "test_start",
    "test end time": "test_end",
    "collection start time": "collection_start",
    "collection end time": "collection_end",
    "jetstress version": "jetstress_version",
    "ese version": "ese_version",
    "operating system": "operating_system",
    "performance log": "performance_log",
}
SUMMARY_TIMES = frozenset({"test_start", "test_end", "collection_start", "collection_end"})

SIZING_LABELS: dict[str, str] = {
    "achieved transactional i/o per second": "achieved_iops",
    "target transactional i/o per second": "target_iops",
    "initial database size (bytes)": "initial_database_bytes",
    "final database size (bytes)": "final_database_bytes",
    "database files (count)": "database_files",
}

PARAMETER_LABELS = frozenset(
    {
        "thread count",
        "minimum database cache",
        "maximum database cache",
        "insert operations",
        "delete operations",
        "replace operations",
        "read operations",
        "lazy commits",
        "run background database maintenance",
        "number of copies per database",
        "capacity percentage",
        "throughput percentage",
    }
)

# "Log path: G:\log Database: E:\db\x.edb" — the "Log path:" label may be missing (facts §9).
DATABASE_CONFIG = re.compile(r"^(?:log path:\s*)?(?P<log>.*?)\s*database:\s*(?P<db>.+)$", re.IGNORECASE)
DATABASE_PATH_SEPARATOR = re.compile(r"\s*(?:;|\bdatabase:)\s*", re.IGNORECASE)

HOST_HEADER = ("counter", "average", "minimum", "maximum")
DISK_TABLE_FIRST_HEADER = "logicaldisk"

# Statistics tables of the backup, soft-recovery and checksum reports: normalised header → field.
BACKUP_COLUMNS: dict[str, str] = {
    "database instance": "instance",
    "database size (mbytes)": "database_size_mb",
    "database size (mb)": "database_size_mb",
    "elapsed backup time": "elapsed",
    "mbytes transferred/sec": "mb_per_sec",
    "mb transferred/sec": "mb_per_sec",
}
RECOVERY_COLUMNS: dict[str, str] = {
    "database instance": "instance",
    "log files replayed": "logs_replayed",
    "elapsed seconds": "elapsed_seconds",
}
CHECKSUM_COLUMNS: dict[str, str] = {
    "database": "database",
    "seen pages": "seen_pages",
    "bad pages": "bad_pages",
    "correctable pages": "correctable_pages",
    "wrong page-number pages": "wrong_page_number_pages",
    "wrong page number pages": "wrong_page_number_pages",
    "file length/seconds taken": "length",
}
# A column only that table has: it tells the table apart from the others.
BACKUP_MARKS = frozenset({"elapsed backup time", "mbytes transferred/sec", "mb transferred/sec"})
RECOVERY_MARKS = frozenset({"log files replayed"})
CHECKSUM_MARKS = frozenset({"seen pages", "bad pages"})

# "1003146 MB/25030 sec" in the checksum table.
CHECKSUM_LENGTH = re.compile(
    r"^(?P<mb>[-+]?[\d.,]+(?:[eE][-+]?\d+)?)\s*MB\s*/\s*(?P<sec>[-+]?[\d.,]+(?:[eE][-+]?\d+)?)\s*sec$",
    re.IGNORECASE,
)
# Checksum rows that add up the databases above them.
SUM_ROW_LABELS = frozenset({"(sum)", "sum", "(total)", "total"})
# Rows of backup and soft-recovery tables that summarise the instances rather than being one.
SUMMARY_ROW_LABELS = frozenset({"(sum)", "sum", "(total)", "total", "(average)", "average", "(avg)"})

# Cell texts that mean "no value" rather than a damaged value.
EMPTY_CELLS = frozenset({"", "n/a", "-", "--"})
