"""Assessment of whole solutions built from model objects (readers are tested elsewhere)."""

from __future__ import annotations

from esrp_report import model as m
from esrp_report.analysis.assess import assess
from esrp_report.analysis.rules import Status, load_rules
from esrp_report.model import InstanceRow, InstanceTable, Run, Solution, TableKind, TestKind


def _server_run(name: str, latencies: list[float], result: str = "Pass") -> Run:
    rows = [
        InstanceRow(
            f"Instance9.{i}",
            {
                m.DB_READ_LATENCY: lat,
                m.DB_WRITE_LATENCY: 3.0,
                m.DB_READS: 44.0,
                m.DB_WRITES: 28.0,
                m.LOG_WRITE_LATENCY: 0.9,
                m.LOG_WRITES: 25.0,
            },
        )
        for i, lat in enumerate(latencies, 1)
    ]
    run = Run(
        TestKind.PERFORMANCE,
        name,
        sources=[f"{name}/Performance_2011_3_11_13_27_46.html"],
        jetstress_version="14.01.0225.017",
        overall_result=result,
    )
    run.tables[TableKind.TRANSACTIONAL] = InstanceTable(TableKind.TRANSACTIONAL, rows)
    run.sizing.target_iops = 140.0
    return run


def _solution(*runs: Run) -> Solution:
    solution = Solution("design")
    for run in runs:
        solution.server(run.machine).runs.append(run)
    return solution


def test_one_slow_instance_fails_instance_server_and_solution_only_there() -> None:
    solution = _solution(_server_run("MBX1", [18.0, 20.4]), _server_run("MBX2", [18.0, 18.5]))
    result = assess(solution, load_rules())
    assert result.status is Status.FAIL
    mbx1, mbx2 = result.servers
    # Reports alone: the maxima need counter logs, so what did not fail is incomplete, not PASS.
    assert mbx1.status is Status.FAIL and mbx2.status is Status.INCOMPLETE
    run = mbx1.runs[0]
    assert run.instance_status("Instance9.2") is Status.FAIL
    assert run.instance_status("Instance9.1") is Status.INCOMPLETE
    failed = [
        (r.server, r.instance, r.rule_id, r.value, r.threshold)
        for r in result.results
        if r.status is Status.FAIL
    ]
    assert failed == [("MBX1", "Instance9.2", "db-read-latency-avg", 20.4, 20.0)]


def test_summaries_and_aggregate_across_servers() -> None:
    result = assess(
        _solution(_server_run("MBX1", [18.0, 19.0]), _server_run("MBX2", [17.0, 18.0])), load_rules()
    )
    s1 = result.servers[0].summaries["Performance"]
    assert s1.achieved_iops == 144.0
    agg = result.aggregates["Performance"]
    assert agg.target_iops == 280.0
    assert agg.achieved_iops == 288.0
    assert agg.conventions["transactional"].read_latency_ms == 18.0
    assert result.servers[0].missing_kinds == ["Stress", "DatabaseBackup", "SoftRecovery"]


def test_target_override_wins_and_a_config_disagreement_is_reported() -> None:
    run = _server_run("MBX1", [18.0])
    run.config = m.ConfigProfile("cfg.xml", mailbox_count=1000, mailbox_iops=0.15)
    result = assess(_solution(run), load_rules(), target_override=100.0)
    ra = result.servers[0].runs[0]
    assert ra.evidence.target_iops == 100.0
    assert ra.evidence.target_source == "--target-iops"
    assert any("target IOPS differs" in p.message for p in ra.problems)
