"""The catalog's schema, as an ordered list of named migrations.

A catalog records which migrations it has (``schema_migrations``); opening it applies the missing
ones in order, each in its own transaction. Never edit a migration that has shipped: add one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One step of the catalog schema: its version number, name and the SQL that applies it."""

    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs, sources, instance values, verdicts, problems and counters",
        """
        CREATE TABLE archives (
            name TEXT PRIMARY KEY,          -- the .zip as the catalog names it
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL
        );
        CREATE TABLE folders (
            location TEXT PRIMARY KEY,      -- '<input>/<relative folder>'
            fingerprint TEXT NOT NULL,      -- SHA-256 over its files' names and hashes
            runs INTEGER NOT NULL
        );
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            run_key TEXT NOT NULL UNIQUE,   -- '<folder location>/<report stem>'
            location TEXT NOT NULL,
            design TEXT NOT NULL,
            server TEXT NOT NULL,
            kind TEXT NOT NULL,
            test_start TIMESTAMP,
            test_end TIMESTAMP,
            overall_result TEXT,            -- as Jetstress printed it
            verdict TEXT NOT NULL,          -- this tool's: pass / fail / not evaluated
            jetstress_version TEXT,
            ese_version TEXT,
            operating_system TEXT,
            mailboxes INTEGER,
            iops_per_mailbox DOUBLE,
            target_iops DOUBLE,
            achieved_iops DOUBLE,
            figures_source TEXT,            -- 'report' or 'counter log'
            instances INTEGER,
            db_reads DOUBLE,
            db_writes DOUBLE,
            db_read_latency_ms DOUBLE,
            db_write_latency_ms DOUBLE,
            log_writes DOUBLE,
            log_write_latency_ms DOUBLE,
            total_reads DOUBLE,             -- the Total I/O table (transactional + maintenance + replication)
            total_writes DOUBLE,
            total_log_reads DOUBLE,
            total_log_writes DOUBLE,
            backup_mb_per_sec DOUBLE,       -- per database, mean
            replay_seconds_per_log DOUBLE,
            samples BIGINT,                 -- counter-log samples stored
            content_sha256 TEXT NOT NULL,   -- over the run's files and its folder's shared files
            series_file TEXT                -- relative to the catalog, or NULL without a counter log
        );
        CREATE TABLE sources (
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            role TEXT NOT NULL,             -- report / result xml / counter log / test log / config / shared
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL
        );
        CREATE TABLE instance_values (
            run_id TEXT NOT NULL,
            origin TEXT NOT NULL,           -- 'report' or 'counter log'
            table_kind TEXT NOT NULL,
            instance TEXT NOT NULL,
            metric TEXT NOT NULL,
            value DOUBLE NOT NULL
        );
        CREATE TABLE verdicts (
            run_id TEXT NOT NULL,
            rule_id TEXT NOT NULL,
            instance TEXT,
            status TEXT NOT NULL,
            value DOUBLE,
            threshold DOUBLE,
            operator TEXT NOT NULL,
            unit TEXT NOT NULL,
            evidence TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE TABLE problems (
            run_id TEXT,                    -- NULL: a folder or archive problem
            location TEXT NOT NULL,
            source TEXT NOT NULL,
            severity TEXT NOT NULL,
            message TEXT NOT NULL,
            lost BIGINT NOT NULL
        );
        CREATE TABLE counters (
            run_id TEXT NOT NULL,
            counter_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            machine TEXT,
            object TEXT,
            instance TEXT,
            counter TEXT
        );
        """,
    ),
    Migration(
        2,
        "refusals: archives and files the catalog would not read, and why",
        """
        CREATE TABLE refusals (
            source TEXT PRIMARY KEY,
            reason TEXT NOT NULL
        );
        """,
    ),
)

LATEST = MIGRATIONS[-1].version
