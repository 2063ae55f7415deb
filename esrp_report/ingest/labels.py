"""Spellings seen in Jetstress reports and published appendices, mapped to canonical keys.

Data only. Header texts are compared after :func:`normalize_header`; section titles and row
labels after :func:`normalize_label`.
"""

from __future__ import annotations

import re

from esrp_report import model as m
from esrp_report.model import TableKind, TestKind


def normalize_label(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split()).strip(" :").casefold()


def normalize_header(text: str) -> str:
    text = normalize_label(text)
    text = re.sub(r"\((?:msec|ms|attached)\)", "", text)
    text = re.sub(r"\s*/\s*", "/", text)
    text = re.sub(r"/s$", "/sec", text)
    return " ".join(text.split())


# First header cell of a per-instance table: "MSExchange Database ==> Instances" and the
# misspellings of facts §9 (MSEXchange, MExchange), compared case-insensitively.
INSTANCE_TABLE_FIRST_HEADER = re.compile(r"^m\w*exchange database\s*==>\s*instances$")

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
    "i/o log i/o reads average bytes": m.LOG_READ_BYTES,
    "i/o log writes average bytes": m.LOG_WRITE_BYTES,
    "database maintenance io reads/sec": m.BDM_READS,
    "database maintenance i/o reads/sec": m.BDM_READS,
    "database maintenance io reads average bytes": m.BDM_READ_BYTES,
    "database maintenance i/o reads average bytes": m.BDM_READ_BYTES,
}

# The log replication table's header sometimes repeats the maintenance column names (facts §9).
REPLICATION_ALIASES = {m.BDM_READS: m.LOG_READS, m.BDM_READ_BYTES: m.LOG_READ_BYTES}

SECTION_TITLES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("summary", r"^test summary$"),
        ("sizing", r"^database sizing and throughput$"),
        ("parameters", r"^jetstress system parameters$"),
        ("databases", r"^database configuration$"),
        (TableKind.TRANSACTIONAL.value, r"^transactional i/o performance$"),
        (TableKind.BACKGROUND_MAINTENANCE.value, r"^background database maintenance i/o performance$"),
        (TableKind.LOG_REPLICATION.value, r"^log replication i/o performance$"),
        (TableKind.TOTAL.value, r"^total i/o performance$"),
        ("host", r"^(host|memory) system performance( \(of .*\))?$"),
        ("disks", r"^disk subsystem performance( \(of .*\))?$"),
        ("backup", r"^database backup statistics( - .*)?$"),
        ("recovery", r"^soft[- ]?recovery statistics( - .*)?$"),
        ("checksum", r"^checksum statistics( - .*)?$"),
        ("log", r"^test log$"),
        ("errors", r"^(test issues|error (counts|summary).*)$"),
    )
)

REPORT_KINDS: tuple[tuple[re.Pattern[str], TestKind], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"\bperformance test result report\b", TestKind.PERFORMANCE),
        (r"\bstress test result report\b", TestKind.STRESS),
        (r"\bdatabase ?backup test result report\b", TestKind.DATABASE_BACKUP),
        (r"\bsoft ?recovery test result report\b", TestKind.SOFT_RECOVERY),
        (r"\b(db ?checksum|checksum) test result report\b", TestKind.DB_CHECKSUM),
        (r"jetstress\W+db ?checksum\b", TestKind.DB_CHECKSUM),
    )
)

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

HOST_HEADER = ("counter", "average", "minimum", "maximum")
BACKUP_HEADER_MARK = "mbytes transferred/sec"
RECOVERY_HEADER_MARK = "log files replayed"
CHECKSUM_HEADER_MARK = "bad pages"
