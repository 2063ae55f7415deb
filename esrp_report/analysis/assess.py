"""Judge a solution: verdicts per instance, run, server and solution, and summary figures.

Pure: takes the model, returns typed results. The CLI and the documents render them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from esrp_report.analysis import aggregate as agg
from esrp_report.analysis import compare, metrics, vetting
from esrp_report.analysis.rules import (
    JUDGED_METRICS,
    Rule,
    RuleResult,
    RunEvidence,
    Status,
    evaluate_run,
    loosened_problems,
    roll_up,
    verdict_reason,
)
from esrp_report.model import Problem, Run, Server, Solution, TableKind, TestKind

EXPECTED_KINDS = (TestKind.PERFORMANCE, TestKind.STRESS, TestKind.DATABASE_BACKUP, TestKind.SOFT_RECOVERY)


@dataclass
class RunAssessment:
    """One run judged: the evidence the rules saw, counter-log figures, disagreements between report and
    counter log, rule results and problems."""

    server: str
    run: Run
    evidence: RunEvidence
    counter: metrics.CounterMetrics | None
    disagreements: list[compare.Disagreement]
    results: list[RuleResult]
    problems: list[Problem]

    @property
    def unread(self) -> bool:
        """Was part of this run's evidence unreadable, damaged or contradictory (a required section
        missing, a figure that cannot exist, two sources of one figure that disagree)?"""
        return any(p.blocks_pass for p in self.problems)

    @property
    def status(self) -> Status:
        return _unless_unread(roll_up(self.results), self.unread)

    def instance_status(self, instance: str) -> Status:
        """The verdict of one instance: its rule results rolled up (NOT_EVALUATED when it has none)."""
        return roll_up(r for r in self.results if r.instance == instance)


@dataclass
class ServerAssessment:
    """One server judged: its runs, summaries per test type, backup and soft recovery figures, and the test
    types missing from its evidence."""

    name: str
    runs: list[RunAssessment] = field(default_factory=list)
    summaries: dict[str, agg.ServerSummary] = field(default_factory=dict)  # by test kind
    backup: agg.BackupFigures | None = None
    recovery: agg.RecoveryFigures | None = None
    missing_kinds: list[str] = field(default_factory=list)

    @property
    def status(self) -> Status:
        unread = any(run.unread for run in self.runs)
        return _unless_unread(roll_up(r for run in self.runs for r in run.results), unread)

    @property
    def results(self) -> list[RuleResult]:
        return [r for run in self.runs for r in run.results]


@dataclass
class SolutionAssessment:
    """The whole solution judged: servers, aggregates per test type, backup across servers, and problems not
    tied to a run."""

    name: str
    servers: list[ServerAssessment]
    aggregates: dict[str, agg.AggregateSummary]  # by test kind
    backup: agg.BackupFigures | None
    problems: list[Problem]

    @property
    def status(self) -> Status:
        unread = any(p.blocks_pass for p in self.problems) or any(
            r.unread for s in self.servers for r in s.runs
        )
        return _unless_unread(roll_up(r for s in self.servers for r in s.results), unread)

    @property
    def reason(self) -> str:
        """Why the verdict is not PASS, in one line ("" for PASS)."""
        parts = [verdict_reason(self.results)] if self.status is not Status.PASS else []
        unread = self.unread_reasons
        if unread:
            parts.append(
                f"{len(unread)} part(s) of the evidence not read, damaged or contradictory "
                f"(first: {unread[0]})"
            )
        return "; ".join(p for p in parts if p)

    @property
    def blocking(self) -> list[str]:
        """What keeps the verdict from PASS, one line each: each rule not evaluated (its servers
        gathered under one reason), each result that passed only on damaged evidence, each part
        of the evidence not read. A failure is not repeated here: the failed results say it.
        Empty for PASS."""
        if self.status is Status.PASS:
            return []
        lines: list[str] = []
        unevaluated: dict[tuple[str, str], list[str]] = {}
        for r in self.results:
            if r.status is Status.NOT_EVALUATED:
                where = unevaluated.setdefault((r.rule_id, r.reason or "no value in the evidence"), [])
                if f"{r.server} {r.run_kind}" not in where:
                    where.append(f"{r.server} {r.run_kind}")
            elif r.status is Status.INCOMPLETE:
                lines.append(
                    f"passed only on damaged evidence: {r.rule_id} on {r.subject} {r.run_kind}: {r.caveat}"
                )
        for (rule, why), runs in unevaluated.items():
            lines.append(f"not evaluated: {rule} on {', '.join(runs)}: {why}")
        lines += [f"not read: {reason}" for reason in self.unread_reasons]
        return lines

    @property
    def unread_reasons(self) -> list[str]:
        """What could not be read: each file or section, with why."""
        problems = list(self.problems) + [p for s in self.servers for r in s.runs for p in r.problems]
        return [p.describe() for p in problems if p.blocks_pass]

    @property
    def results(self) -> list[RuleResult]:
        return [r for s in self.servers for r in s.results]


def _unless_unread(status: Status, unread: bool) -> Status:
    """A verdict judged without part of its evidence is INCOMPLETE at best."""
    return Status.INCOMPLETE if unread and status is Status.PASS else status


def _target(run: Run, override: float | None) -> tuple[float | None, str, list[Problem]]:
    # Report and configuration disagreeing on the target is in doubt (analysis/vetting.py); judged
    # against the higher of them, so that the disagreement can never make a run pass.
    candidates = [
        (run.sizing.target_iops, "report"),
        (run.config.target_iops if run.config else None, "config XML"),
    ]
    known = [(v, origin) for v, origin in candidates if v is not None and math.isfinite(v) and v > 0]
    if override is not None:
        return override, "--target-iops", []
    if not known:
        return None, "", []
    first, origin = known[0]
    if len(known) == 2 and not vetting.agree(first, known[1][0]):
        first, origin = max(known, key=lambda k: k[0])
    return first, origin, []


def assess_run(
    server: str, run: Run, rules: list[Rule], target_override: float | None = None
) -> RunAssessment:
    """Judge one run with these rules: the target IOPS (``target_override`` wins over report and config XML),
    counter-log figures and their disagreements with the report, rule results, and every problem met."""
    vetting.vet_once(run)  # a run assembled from files is vetted already; one made by a caller now
    target, target_source, problems = _target(run, target_override)
    evidence = RunEvidence(run=run, server=server, target_iops=target, target_source=target_source)
    counter = None
    disagreements: list[compare.Disagreement] = []
    log = run.counter_log
    if log is not None:
        counter = metrics.counter_metrics(run, log)
        vetted = vetting.vet_counter_log(run, log, counter, JUDGED_METRICS)
        problems.extend(vetted.problems)
        problems.extend(counter.problems)
        if vetted.usable:
            # A log that cannot be of this run (another machine) is read and described, never judged.
            evidence.counter_tables = counter.tables
            evidence.counter_maxima = counter.maxima
            evidence.counter_host = counter.host
            evidence.counter_source = log.source
            evidence.counter_damaged = counter.damaged
            evidence.counter_host_damaged = counter.host_damaged
            evidence.counter_lost_maxima = counter.lost_maxima
            evidence.counter_caveats = counter.caveats()
        if run.tables:
            report_source = run.sources[0] if run.sources else "report"
            disagreements = compare.compare_tables(run.tables, report_source, counter.tables, log.source)
            disagreements += compare.compare_host(run.host, report_source, counter.host, log.source)
    results = evaluate_run(evidence, rules)
    carried = list(run.problems)
    for part in (run.counter_log, run.test_log):
        if part is not None:
            carried.extend(part.problems)
    return RunAssessment(server, run, evidence, counter, disagreements, results, problems + carried)


def assess(solution: Solution, rules: list[Rule], target_override: float | None = None) -> SolutionAssessment:
    """Judge every server of the solution with these rules and combine them into the solution's verdict."""
    servers = [assess_server(server, rules, target_override) for server in solution.servers]
    return combine(solution.name, servers, [*solution.problems, *loosened_problems(rules)])


def assess_server(
    server: Server, rules: list[Rule], target_override: float | None = None
) -> ServerAssessment:
    """One server on its own: nothing in it depends on the other servers (``combine`` adds the
    figures across them), so a build can assess each server as soon as its evidence is read."""
    assessed = ServerAssessment(server.name)
    for run in server.runs:
        ra = assess_run(server.name, run, rules, target_override)
        assessed.runs.append(ra)
        if run.kind in (TestKind.PERFORMANCE, TestKind.STRESS) and run.kind.value not in assessed.summaries:
            counter_tables = ra.counter.tables if ra.counter else None
            if run.tables.get(TableKind.TRANSACTIONAL) or counter_tables:
                assessed.summaries[run.kind.value] = agg.server_summary(
                    server.name, run, ra.evidence.target_iops, counter_tables
                )
        if run.kind is TestKind.DATABASE_BACKUP and assessed.backup is None:
            assessed.backup = agg.backup_figures(run)
        if run.kind is TestKind.SOFT_RECOVERY and assessed.recovery is None:
            assessed.recovery = agg.recovery_figures(run)
    present = {run.kind for run in server.runs}
    assessed.missing_kinds = [k.value for k in EXPECTED_KINDS if k not in present]
    return assessed


def combine(name: str, servers: list[ServerAssessment], problems: list[Problem]) -> SolutionAssessment:
    """The servers' assessments as one solution's, with the aggregates across them."""
    aggregates: dict[str, agg.AggregateSummary] = {}
    for kind in (TestKind.PERFORMANCE.value, TestKind.STRESS.value):
        per_server = [s.summaries[kind] for s in servers if kind in s.summaries]
        combined = agg.aggregate(per_server)
        if combined is not None:
            aggregates[kind] = combined
    backup = agg.backup_across_servers([s.backup for s in servers if s.backup is not None])
    return SolutionAssessment(name, servers, aggregates, backup, problems)
