"""Plain-dict views of assessments and inputs, for --json and for templates.

Figures are kept at full precision; rounding belongs to whoever prints them.
The schema is documented in docs/check-json.md; bump SCHEMA when a field changes meaning.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from esrp_report import __version__

if TYPE_CHECKING:  # types only: `inspect` of one file must not import the analysis (start-up)
    from datetime import datetime

    from esrp_report.analysis.aggregate import (
        AggregateSummary,
        BackupFigures,
        IoFigures,
        RecoveryFigures,
        ServerSummary,
    )
    from esrp_report.analysis.assess import RunAssessment, ServerAssessment, SolutionAssessment
    from esrp_report.analysis.compare import Disagreement
    from esrp_report.analysis.metrics import CounterMetrics
    from esrp_report.analysis.rules import RuleResult
    from esrp_report.audit import AuditResult
    from esrp_report.model import Problem

SCHEMA = "esrp-report/check/2"


def _coverage_dict(counter: CounterMetrics) -> dict[str, Any] | None:
    """How the window's samples are spaced: what the verdict needs to trust a maximum."""
    from esrp_report.analysis import vetting  # noqa: PLC0415 - only a check's payload needs it

    cover = counter.coverage
    if cover is None:
        return None
    interval = cover.interval
    gap_limit = vetting.limits().max_gap_intervals * interval.total_seconds() if interval else None
    return {
        "first": stamp(cover.first, counter.time_basis),
        "last": stamp(cover.last, counter.time_basis),
        "interval_seconds": interval.total_seconds() if interval else None,
        "largest_gap_seconds": cover.largest_gap.total_seconds() if cover.largest_gap else None,
        "repeated_time_stamps": cover.repeated,
        "share_of_window": cover.share(counter.window, gap_limit) if counter.window.start else None,
    }


def stamp(moment: datetime | None, basis: str) -> str | None:
    """ISO-8601 with the offset the source stated; a local time (``basis`` "local": the log states
    no offset) carries none, never an invented +00:00."""
    if moment is None:
        return None
    return (moment.replace(tzinfo=None) if basis == "local" else moment).isoformat()


def problem_dict(p: Problem) -> dict[str, Any]:
    """A problem as a plain dict (the model's own form: :meth:`Problem.as_dict`)."""
    return p.as_dict()


def io_dict(f: IoFigures) -> dict[str, Any]:
    """One convention's I/O figures as a plain dict: rates per second, latencies in milliseconds, instance
    count."""
    return {
        "instances": f.instances,
        "transfers_per_sec": f.transfers,
        "reads_per_sec": f.reads,
        "writes_per_sec": f.writes,
        "read_latency_ms": f.read_latency_ms,
        "write_latency_ms": f.write_latency_ms,
        "log_writes_per_sec": f.log_writes,
        "log_write_latency_ms": f.log_write_latency_ms,
    }


def summary_dict(s: ServerSummary | AggregateSummary) -> dict[str, Any]:
    """A server's or the aggregate's summary as a plain dict: target and achieved IOPS and the figures per
    convention, with the server's source or the aggregate's server count."""
    out: dict[str, Any] = {
        "target_iops": s.target_iops,
        "achieved_iops": s.achieved_iops,
        "conventions": {name: io_dict(f) for name, f in s.conventions.items()},
    }
    from esrp_report.analysis.aggregate import ServerSummary  # noqa: PLC0415 - see the imports

    if isinstance(s, ServerSummary):
        out["source"] = s.source
    else:
        out["servers"] = s.servers
    return out


def backup_dict(b: BackupFigures | None) -> dict[str, Any] | None:
    """The backup figures as a plain dict, or None when there are none."""
    return None if b is None else asdict(b)


def recovery_dict(r: RecoveryFigures | None) -> dict[str, Any] | None:
    """The soft recovery figures as a plain dict, or None when there are none."""
    return None if r is None else asdict(r)


def result_dict(r: RuleResult) -> dict[str, Any]:
    """One rule result as a plain dict: the rule, instance, status, value against threshold, margin, evidence
    and reason."""
    return {
        "rule": r.rule_id,
        "description": r.description,
        "instance": r.instance,
        "status": r.status.value,
        "value": r.value,
        "operator": r.operator,
        "threshold": r.threshold,
        "unit": r.unit,
        "margin": r.margin,
        "evidence": r.evidence,
        "reason": r.reason,
        "damaged_samples": r.damaged,
        "caveat": r.caveat,
    }


def disagreement_dict(d: Disagreement) -> dict[str, Any]:
    """Two sources that disagree on one figure, as a plain dict with both values and their relative
    difference."""
    return {
        "table": d.table,
        "instance": d.instance,
        "metric": d.metric,
        "first": {"source": d.first_source, "value": d.first_value},
        "second": {"source": d.second_source, "value": d.second_value},
        "relative_difference": d.relative_difference,
    }


def run_dict(ra: RunAssessment) -> dict[str, Any]:
    """One run's assessment for --json: status, target, counter window (ISO times, sample counts),
    per-instance status, rule results, disagreements and problems."""
    run = ra.run
    window = None
    if ra.counter is not None:
        w = ra.counter.window
        basis = ra.counter.time_basis
        window = {
            "start": stamp(w.start, basis),
            "end": stamp(w.end, basis),
            "time_basis": basis,
            "origin": w.origin,
            "samples": ra.counter.samples_in_window,
            "samples_lost": ra.counter.samples_lost,
            "backward_time_stamps": ra.counter.backward_stamps,
            "damaged_samples": ra.counter.damaged,
            "lost_maxima": ra.counter.lost_maxima,
            "coverage": _coverage_dict(ra.counter),
        }
    instances = run.instance_names()
    return {
        "kind": run.kind.value,
        "machine": run.machine,
        "jetstress_version": run.jetstress_version,
        "generation": run.generation.value,
        "sources": list(run.sources),
        "status": ra.status.value,
        "reported_result": run.overall_result,
        "collection_start": run.collection_start.isoformat() if run.collection_start else None,
        "collection_end": run.collection_end.isoformat() if run.collection_end else None,
        "target_iops": ra.evidence.target_iops,
        "target_source": ra.evidence.target_source or None,
        "counter_window": window,
        "instances": [{"name": name, "status": ra.instance_status(name).value} for name in instances],
        "results": [result_dict(r) for r in ra.results],
        "disagreements": [disagreement_dict(d) for d in ra.disagreements],
        "problems": [problem_dict(p) for p in ra.problems],
    }


def server_dict(s: ServerAssessment) -> dict[str, Any]:
    """One server's assessment for --json: status, missing tests, summaries per test type, backup, soft
    recovery and runs."""
    return {
        "name": s.name,
        "status": s.status.value,
        "missing_tests": s.missing_kinds,
        "summaries": {kind: summary_dict(v) for kind, v in s.summaries.items()},
        "backup": backup_dict(s.backup),
        "soft_recovery": recovery_dict(s.recovery),
        "runs": [run_dict(r) for r in s.runs],
    }


def unusable_payload(name: str, error: Exception) -> dict[str, Any]:
    """``check --json``'s document when nothing could be evaluated: the same schema, no servers,
    the reason as the solution's and as a problem."""
    path = getattr(error, "path", name)
    location = getattr(error, "location", None)
    message = getattr(error, "detail", str(error))
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "solution": {"name": name, "status": "not evaluated", "reason": str(error)},
        "servers": [],
        "aggregates": {},
        "backup": None,
        "problems": [
            {"source": str(path), "location": location, "severity": "error", "message": message, "lost": 0}
        ],
    }


def check_payload(a: SolutionAssessment) -> dict[str, Any]:
    """The whole `check --json` document (schema SCHEMA): the solution's status and reason, servers,
    aggregates, backup and problems."""
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "solution": {"name": a.name, "status": a.status.value, "reason": a.reason},
        "servers": [server_dict(s) for s in a.servers],
        "aggregates": {kind: summary_dict(v) for kind, v in a.aggregates.items()},
        "backup": backup_dict(a.backup),
        "problems": [problem_dict(p) for p in a.problems],
    }


def audit_payload(result: AuditResult) -> dict[str, Any]:
    """The audit for --json: every finding with its location, printed and expected values."""
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in ("error", "warning", "note")}

    def finite(value: float | None) -> float | str | None:
        return value if value is None or math.isfinite(value) else str(value)

    return {
        "tool": f"esrp-report {__version__}",
        "source": result.source,
        "format": result.format,
        "esrp_version": result.esrp_version,
        "summary_convention": result.summary_convention,
        "relations_checked": result.checked,
        "results_read": result.results_read,
        "counts": counts,
        "findings": [
            {**asdict(f), "relative_difference": finite(f.relative_difference)} for f in result.findings
        ],
        "not_read": [problem_dict(p) for p in result.unread],
        "coverage": _coverage(result),
        "recomputed": [asdict(r) for r in result.recomputed],
    }


def _coverage(result: AuditResult) -> dict[str, Any] | None:
    """Every table read with its numbers checked and vouched for, every block of figures not read."""
    coverage = result.coverage
    if coverage is None:
        return None
    return {
        "numbers": coverage.numbers,
        "checked": coverage.checked,
        "vouched_to_last_digit": coverage.vouched,
        # The share of the result figures read, which decides whether a verdict is given at all.
        "result_figures_not_read": coverage.unread_numbers,
        "read_share": coverage.read_share,
        "tables": [asdict(t) for t in coverage.tables],
        "unread_blocks": [asdict(b) for b in coverage.unread],
        "more_unread_blocks": coverage.more_unread_blocks,  # past the first 1,000: counted only
        "more_unread_numbers": coverage.more_unread_numbers,
        # What the document promises and does not hold (a truncated text): never a verdict.
        "missing": [asdict(m) for m in coverage.missing],
    }
