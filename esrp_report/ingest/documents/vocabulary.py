"""The labels and phrases a published document is read by: which row is which metric, which
label is which fact, which header names a server, which columns a per-instance table has.

Data only (plain Python for now): the passes that use it are ``tables.py`` (summary rows, header
lines), ``facts.py`` (label/value facts, the stated ESRP version), ``cells.py`` (labels whose
separator from their value was lost) and ``appendix.py`` (per-instance table headings). Matching
a printed label against a list (normalised, then by similarity) is ``matching.py``. The appendix
reports' own labels are the Jetstress report reader's (``ingest/jetstress/labels.py``).
"""

from __future__ import annotations

import re

from esrp_report import model as m
from esrp_report.ingest.jetstress import labels as L

# --- summary tables -------------------------------------------------------------------------

# Summary rows, by metric: the labels seen in ESRP 3.0 and 4.0 documents (and in ours).
SUMMARY_METRICS: dict[str, str] = {
    "achieved transactional i/o per sec": "achieved",
    "achieved transactional i/o per second": "achieved",
    "database disks transfers/sec": "transfers",
    "database disk transfers/sec": "transfers",
    "database reads/sec": "reads",
    "i/o database disk reads/sec": "reads",
    "i/o database reads/sec": "reads",
    "database disks reads/sec": "reads",
    "database disk reads/sec": "reads",
    "database writes/sec": "writes",
    "i/o database disk writes/sec": "writes",
    "i/o database writes/sec": "writes",
    "database disks writes/sec": "writes",
    "database disk writes/sec": "writes",
    "i/o database reads average latency": "read_latency",
    "average database disk read latency": "read_latency",
    "i/o database writes average latency": "write_latency",
    "average database disk write latency": "write_latency",
    "log writes/sec": "log_writes",
    "i/o log disk writes/sec": "log_writes",
    "log disks writes/sec": "log_writes",
    "log disk writes/sec": "log_writes",
    "i/o log writes/sec": "log_writes",
    "i/o log writes average latency": "log_latency",
    "average log disk write latency": "log_latency",
    "mb read/sec per database": "backup_per_database",
    "mb read/sec total per server": "backup_per_server",
    "average time to play one log file": "replay_seconds",
}
BACKUP_METRICS = frozenset({"backup_per_database", "backup_per_server"})

# --- facts ------------------------------------------------------------------------------------

# Label/value facts of the simulated configuration and storage tables.
FACTS: dict[str, str] = {
    "number of exchange mailboxes simulated": "mailboxes",
    "number of database availability groups (dags)": "dags",
    "number of dags": "dags",
    "number of servers/dag": "servers_per_dag",
    "number of active mailboxes/server": "mailboxes_per_server",
    "number of databases/host": "databases_per_host",
    "number of copies/database": "copies_per_database",
    "number of mailboxes/database": "mailboxes_per_database",
    # ESRP 4.0 wordings (seed 002's "Simulated Exchange configuration").
    "exchange mailboxes simulated": "mailboxes",
    "database availability groups (dags)": "dags",
    "servers per dag": "servers_per_dag",
    "active mailboxes per server": "mailboxes_per_server",
    "databases per host": "databases_per_host",
    "copies per database": "copies_per_database",
    "mailboxes per database": "mailboxes_per_database",
    "simulated profile i/os per second per mailbox (iops, includes 20% headroom)": "iops_per_mailbox",
    "simulated profile i/os per second per mailbox (iops include 20% head room)": "iops_per_mailbox",
    "simulated profile i/os per second per mailbox": "iops_per_mailbox",
    "host server type": "host_server",
    "number of physical disks in test": "disks",
    "total number of disks tested in solution": "disks_tested",
    "raw capacity per disk": "raw_capacity_per_disk",
    "raw capacity per disk (gb)": "raw_capacity_per_disk",
    "total raw storage capacity": "raw_capacity",
    "total raw storage capacity (gb)": "raw_capacity",
    "number of databases": "databases",
    "log files size": "log_files_size",
    "databases size": "database_size",
    "search catalog": "search_catalog",
}


# --- header lines, the stated version, the appendix's start ------------------------------------

# A column of a per-server table: "Server 4", "Host 3650-4".
SERVER_TOKEN = re.compile(r"\b(Server)\s+(\d+)\b|\bHost\s+(\S+)", re.IGNORECASE)
# The other words a per-server header line may hold beside its servers.
HEADER_WORDS = re.compile(r"database i/o|target values?|values|for \w+ servers|\*", re.IGNORECASE)
# A table's caption ("Table 5 Server 1 test results"): the number prefix, then what it holds.
CAPTION = re.compile(r"^(?:table|figure)\s+\d+[.:]?\s+", re.IGNORECASE)
# The header of a vertical label/value table ("Database I/O | Value", "Performance item | Detail"):
# its second cell.
VALUE_HEADERS = frozenset({"value", "values", "detail"})
# The ESRP version a document states ("ESRP - Storage Version 3.0").
# ("ESRP - Storage Version 3.0", "Microsoft ESRP 4.0", "ESRP v4.0", "ESRP-Storage 4.0")
CONVENTION = re.compile(
    r"ESRP\s*[-–]?\s*(?:Storage\s+(?:Version\s+|v)?|v\s*)?(\d\.\d)\b(?!\.)", re.IGNORECASE
)
# The heading (or short line) that starts the appendix.
APPENDIX_START = re.compile(r"^appendix\b", re.IGNORECASE)

# --- labels whose value follows on the same line, the separator lost ("Machine Name EMAIL2") ----

PAIR_LABELS = frozenset({*L.SUMMARY_LABELS, *L.SIZING_LABELS, *L.PARAMETER_LABELS, "host server type"})
PAIR_FIRST_WORDS = frozenset(L.normalize_label(label).split(" ")[0] for label in PAIR_LABELS)

# --- appendix reports: per-instance tables ----------------------------------------------------

# The sections of a report whose tables have a row per database instance.
INSTANCE_SECTIONS = frozenset(kind.value for kind in m.TableKind) | {"backup", "recovery"}
# The standard Jetstress column order of each per-instance table, used when a table's heading
# is missing or wrapped beyond repair and the row width matches.
STANDARD_COLUMNS: dict[str, list[str]] = {
    "wide": [
        "I/O Database Reads Average Latency (msec)",
        "I/O Database Writes Average Latency (msec)",
        "I/O Database Reads/sec",
        "I/O Database Writes/sec",
        "I/O Database Reads Average Bytes",
        "I/O Database Writes Average Bytes",
        "I/O Log Reads Average Latency (msec)",
        "I/O Log Writes Average Latency (msec)",
        "I/O Log Reads/sec",
        "I/O Log Writes/sec",
        "I/O Log Reads Average Bytes",
        "I/O Log Writes Average Bytes",
    ],
    m.TableKind.BACKGROUND_MAINTENANCE.value: [
        "Database Maintenance IO Reads/sec",
        "Database Maintenance IO Reads Average Bytes",
    ],
    m.TableKind.LOG_REPLICATION.value: ["I/O Log Reads/sec", "I/O Log Reads Average Bytes"],
    "backup": ["Database Size (MBytes)", "Elapsed Backup Time", "MBytes Transferred/sec"],
    "recovery": ["Log files replayed", "Elapsed seconds"],
}
# The column headings of the tables of a report: a row most of whose cells are these is a header.
KNOWN_HEADERS = frozenset(
    {*L.INSTANCE_COLUMNS, *L.BACKUP_COLUMNS, *L.RECOVERY_COLUMNS, *L.CHECKSUM_COLUMNS, *L.HOST_HEADER}
)
