"""What ``inspect`` shows of a Jetstress file (a report, a result or config XML, a test log):
plain data at full precision, read from the model the reader made.

These are the ``describe`` parts of the Jetstress formats (ingest/formats.py); a counter log's
and a binary log's live with their readers (perfmon/describe.py, perfmon/blg/reading.py), since
those are described while streaming, never read whole.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from esrp_report.model import ConfigProfile, Problem, Run, TestLog


def describe_run(run: Run) -> dict[str, Any]:
    """One report or result XML: versions, times (ISO), sizing, instances, how many rows each
    table holds, and problems."""
    return {
        "kind": run.kind.value,
        "machine": run.machine,
        "overall_result": run.overall_result,
        "jetstress_version": run.jetstress_version,
        "generation": run.generation.value,
        "ese_version": run.ese_version,
        "test_start": run.test_start.isoformat() if run.test_start else None,
        "test_end": run.test_end.isoformat() if run.test_end else None,
        "collection_start": run.collection_start.isoformat() if run.collection_start else None,
        "collection_end": run.collection_end.isoformat() if run.collection_end else None,
        "performance_log": run.performance_log,
        "sizing": asdict(run.sizing),
        "instances": run.instance_names(),
        "tables": {kind.value: len(table.rows) for kind, table in run.tables.items()},
        "host_counters": [c.name for c in run.host],
        "backup_rows": len(run.backup),
        "soft_recovery_rows": len(run.soft_recovery),
        "checksum_rows": len(run.checksum),
        "test_log_entries": len(run.test_log.entries) if run.test_log else 0,
        "problems": [p.as_dict() for p in run.problems],
    }


def describe_test_log(log: TestLog) -> dict[str, Any]:
    """A test log: entry count, first and last times (ISO), thresholds, intervals, operation mix,
    sample counts, errors and problems."""
    return {
        "entries": len(log.entries),
        "first": log.entries[0].timestamp.isoformat() if log.entries else None,
        "last": log.entries[-1].timestamp.isoformat() if log.entries else None,
        "thresholds_ms": asdict(log.thresholds),
        "logging_intervals_ms": log.logging_intervals_ms,
        "operation_mix": log.operation_mix,
        "sample_counts": [{"file": f, "samples": n} for f, n in log.sample_counts],
        "prerequisites_attained_at": log.prerequisites_attained_at.isoformat()
        if log.prerequisites_attained_at
        else None,
        "errors": [{"line": e.line, "message": e.message} for e in log.errors],
        "problems": [p.as_dict() for p in log.problems],
    }


def describe_config(profile: ConfigProfile, problems: list[Problem]) -> dict[str, Any]:
    """A Jetstress configuration XML: the test it sets up, its threshold sets and problems."""
    return {
        "test_type": profile.test_type,
        "duration": profile.duration,
        "mailbox_count": profile.mailbox_count,
        "mailbox_iops": profile.mailbox_iops,
        "target_iops": profile.target_iops,
        "mailbox_quota_mb": profile.mailbox_quota_mb,
        "thread_count": profile.thread_count,
        "log_interval_ms": profile.log_interval_ms,
        "threshold_sets": {
            name: {"thresholds_ms": vars(t), "test_run_types": kinds}
            for name, (t, kinds) in profile.threshold_sets.items()
        },
        "instances": len(profile.instances),
        "problems": [p.as_dict() for p in problems],
    }
